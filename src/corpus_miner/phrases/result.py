"""PhraseTable: the answer of a mining run, shared by every algorithm, the report and the cleaner.

Phrases are stored flat (one uint32 token-id array plus offsets) so that millions of phrases cost
a few arrays, not millions of Python objects. Files: `.jsonl` (also `.jsonl.gz`), `.tsv`,
`.parquet`, one row per phrase with `phrase` (the tokens as text, `corpus.join_tokens`: no space
between two CJK/kana/Thai... characters, one space elsewhere; it tokenizes back to the same
tokens), `length`, `df`, `occurrences`, `whole_line` when the table was mined with
whole-line phrases (phrases/lines.py: true for a phrase that counts only where it is a whole
line; its df and occurrences count those lines), and `edge` when it was mined with edge phrases
(phrases/edges.py: "start" or "end" for a phrase that counts only at that edge of a paragraph,
"" for the others).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TextIO

import numpy as np

from corpus_miner.corpus.tokenizer import join_with_kinds, token_kind
from corpus_miner.errors import FormatError, InputError, ParameterError
from corpus_miner.io.atomic import atomic_path, text_output
from corpus_miner.io.locations import base_name, is_remote

COLUMNS = ("phrase", "length", "df", "occurrences")
WHOLE_LINE = "whole_line"
EDGE = "edge"
EDGE_SIDES = ("", "start", "end")  # PhraseTable.edge values 0, 1, 2 as the files spell them
START_EDGE, END_EDGE = 1, 2
_TRUE = {"true", "1", "yes"}


@dataclass(frozen=True)
class PhraseTable:
    """Phrases as token-id sequences with their support.

    tokens:      uint32, the token ids of all phrases, concatenated
    offsets:     int64, len(phrases) + 1; phrase i is tokens[offsets[i]:offsets[i+1]]
    df:          int64, number of documents containing the phrase at least once
    occurrences: int64, number of (document, start) positions where the phrase occurs
                 (overlapping occurrences counted)
    vocab:       token id -> token string
    whole_line:  bool per phrase, True for a whole-line phrase (it counts, and is applied, only
                 where it is a whole line); None for a table without any notion of lines (the
                 files then have no whole_line column)
    edge:        int8 per phrase, START_EDGE or END_EDGE for an edge phrase (it counts, and is
                 applied, only at that edge of a paragraph: phrases/edges.py), 0 for the others;
                 None for a table mined without edge phrases (the files have no edge column)
    """

    tokens: np.ndarray
    offsets: np.ndarray
    df: np.ndarray
    occurrences: np.ndarray
    vocab: Sequence[str]
    whole_line: np.ndarray | None = None
    edge: np.ndarray | None = None

    @classmethod
    def from_lists(cls, phrases, df, occurrences, vocab, whole_line=None,
                   edge=None) -> PhraseTable:
        lengths = np.fromiter((len(p) for p in phrases), dtype=np.int64, count=len(phrases))
        offsets = np.zeros(len(phrases) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.fromiter((t for p in phrases for t in p), dtype=np.uint32, count=int(offsets[-1]))
        return cls(flat, offsets, np.asarray(df, dtype=np.int64),
                   np.asarray(occurrences, dtype=np.int64), vocab,
                   None if whole_line is None else np.asarray(whole_line, dtype=bool),
                   None if edge is None else np.asarray(edge, dtype=np.int8))

    @property
    def whole_line_mask(self) -> np.ndarray:
        """bool per phrase: whole_line, all False when the table has none."""
        return (np.zeros(len(self), dtype=bool) if self.whole_line is None
                else np.asarray(self.whole_line, dtype=bool))

    @property
    def edge_sides(self) -> np.ndarray:
        """int8 per phrase: edge, all 0 when the table has none."""
        return (np.zeros(len(self), dtype=np.int8) if self.edge is None
                else np.asarray(self.edge, dtype=np.int8))

    @property
    def line_anchored(self) -> np.ndarray:
        """bool per phrase: a whole-line or edge phrase (matched among the lines of a corpus,
        not anywhere in its tokens)."""
        return self.whole_line_mask | (self.edge_sides != 0)

    def with_whole_line(self, flag) -> PhraseTable:
        """The same phrases with whole_line set to `flag` (a bool for all, or one per phrase)."""
        values = np.broadcast_to(np.asarray(flag, dtype=bool), (len(self),)).copy()
        return PhraseTable(self.tokens, self.offsets, self.df, self.occurrences, self.vocab,
                           values, self.edge)

    def with_edge(self, side) -> PhraseTable:
        """The same phrases with edge set to `side` (0, START_EDGE or END_EDGE, for all or one
        per phrase)."""
        values = np.broadcast_to(np.asarray(side, dtype=np.int8), (len(self),)).copy()
        return PhraseTable(self.tokens, self.offsets, self.df, self.occurrences, self.vocab,
                           self.whole_line, values)

    @staticmethod
    def concatenate(first: PhraseTable, second: PhraseTable) -> PhraseTable:
        """The phrases of `first`, then those of `second` (same vocabulary); whole_line and edge
        kept (False, 0 where a table had none) if either has them."""
        offsets = np.concatenate([first.offsets[:-1], second.offsets + first.offsets[-1]])
        whole_line = edge = None
        if first.whole_line is not None or second.whole_line is not None:
            whole_line = np.concatenate([first.whole_line_mask, second.whole_line_mask])
        if first.edge is not None or second.edge is not None:
            edge = np.concatenate([first.edge_sides, second.edge_sides])
        return PhraseTable(np.concatenate([first.tokens, second.tokens]).astype(np.uint32),
                           offsets.astype(np.int64), np.concatenate([first.df, second.df]),
                           np.concatenate([first.occurrences, second.occurrences]),
                           first.vocab, whole_line, edge)

    @classmethod
    def empty(cls, vocab: Sequence[str] = ()) -> PhraseTable:
        return cls.from_lists([], [], [], vocab)

    def __len__(self) -> int:
        return len(self.df)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def phrase_ids(self, i: int) -> np.ndarray:
        return self.tokens[self.offsets[i]:self.offsets[i + 1]]

    @cached_property
    def _words(self) -> dict[int, str]:
        """The strings of the token ids used by phrases, decoded once (the vocabulary may be a
        memory-mapped StringList whose item access decodes bytes every time)."""
        return {int(t): self.vocab[int(t)] for t in np.unique(self.tokens)}

    @cached_property
    def _kinds(self) -> dict[int, int] | None:
        """token id -> corpus.tokenizer token kind; None when no token is a single character."""
        kinds = {t: token_kind(word) for t, word in self._words.items()}
        return kinds if any(kinds.values()) else None

    def text(self, i: int) -> str:
        words, kinds = self._words, self._kinds
        ids = self.phrase_ids(i).tolist()
        if kinds is None:
            return " ".join([words[t] for t in ids])
        return join_with_kinds([words[t] for t in ids], [kinds[t] for t in ids])

    def key_set(self) -> set[tuple[tuple[int, ...], int, int]]:
        """(token ids, df, occurrences) of every phrase: order-free comparison in tests."""
        return {(tuple(int(t) for t in self.phrase_ids(i)), int(self.df[i]),
                 int(self.occurrences[i]))
                for i in range(len(self))}

    def take(self, order: np.ndarray) -> PhraseTable:
        order = np.asarray(order, dtype=np.int64)
        lengths = self.lengths[order]
        offsets = np.zeros(len(order) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        # gather index: for every output token, its position in self.tokens
        gather = np.repeat(self.offsets[order] - offsets[:-1], lengths) + np.arange(offsets[-1])
        flat = self.tokens[gather].astype(np.uint32, copy=False)
        return PhraseTable(flat, offsets, self.df[order], self.occurrences[order], self.vocab,
                           None if self.whole_line is None else self.whole_line_mask[order],
                           None if self.edge is None else self.edge_sides[order])

    def canonical_order(self) -> np.ndarray:
        """Indices in canonical order: Psi = length x df descending, then longer first, then
        text ascending (Python string order of the phrase texts)."""
        lengths = self.lengths
        psi = lengths * self.df
        return np.lexsort((self._text_ranks(), -lengths, -psi)).astype(np.int64)

    def _text_ranks(self) -> np.ndarray:
        """Per phrase, a rank that orders phrases of equal length by their text (ranks of phrases
        of different lengths are not comparable; the canonical order never needs them to be).

        Phrases are compared word by word through the rank of each word among the words used.
        That equals comparing the texts when they are the words joined by single spaces (no
        single-character CJK/Thai tokens, which join without one) and no word holds a character
        <= " ": a word that is a proper prefix of another is followed by " " or the end, which
        sorts first. Otherwise the texts themselves are sorted."""
        n = len(self)
        ranks = np.zeros(n, dtype=np.int64)
        if n == 0:
            return ranks
        used, inverse = np.unique(self.tokens, return_inverse=True)
        words = [self.vocab[int(t)] for t in used]
        if self._kinds is not None or any(min(w, default=" ") <= " " for w in words):
            texts = [self.text(i) for i in range(n)]
            ranks[sorted(range(n), key=texts.__getitem__)] = np.arange(n)
            return ranks
        word_rank = np.empty(len(words), dtype=np.int64)
        word_rank[sorted(range(len(words)), key=words.__getitem__)] = np.arange(len(words))
        ids = word_rank[inverse.reshape(-1)]
        lengths = self.lengths
        for length in np.unique(lengths):
            members = np.flatnonzero(lengths == length)
            columns = ids[self.offsets[members][:, None] + np.arange(length)[None, :]]
            ranks[members[np.lexsort(columns.T[::-1])]] = np.arange(len(members))
        return ranks

    def sorted(self) -> PhraseTable:
        """The table in canonical order (canonical_order)."""
        return self.take(self.canonical_order())

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns of its rows and files."""
        return COLUMNS + ((WHOLE_LINE,) if self.whole_line is not None else ()) + (
            (EDGE,) if self.edge is not None else ())

    def rows(self) -> Iterator[dict]:
        lengths = self.lengths
        whole_line = None if self.whole_line is None else self.whole_line_mask
        edge = None if self.edge is None else self.edge_sides
        for i in range(len(self)):
            row = {"phrase": self.text(i), "length": int(lengths[i]), "df": int(self.df[i]),
                   "occurrences": int(self.occurrences[i])}
            if whole_line is not None:
                row[WHOLE_LINE] = bool(whole_line[i])
            if edge is not None:
                row[EDGE] = EDGE_SIDES[edge[i]]
            yield row


def is_whole_line(row: dict) -> bool:
    """A phrase-file row's whole_line value (JSON true, TSV "True"/"true"/"1"; absent: False)."""
    value = row.get(WHOLE_LINE, False)
    if isinstance(value, str):
        return value.strip().lower() in _TRUE
    return bool(value)


def edge_side(row: dict) -> int:
    """A phrase-file row's edge value as PhraseTable.edge holds it ("start" 1, "end" 2; "",
    null or absent 0); InputError for any other."""
    value = row.get(EDGE) or ""
    side = str(value).strip().lower()
    if side not in EDGE_SIDES:
        raise InputError(f"phrase {row.get('phrase')!r}: edge {value!r} is none of start, end "
                         "or empty")
    return EDGE_SIDES.index(side)


def _format_of(path) -> str:
    name = base_name(path).lower()
    for suffix, fmt in ((".jsonl", "jsonl"), (".jsonl.gz", "jsonl"), (".json", "jsonl"),
                        (".tsv", "tsv"), (".parquet", "parquet"), (".txt", "txt")):
        if name.endswith(suffix):
            return fmt
    raise ParameterError(f"{path}: unknown phrase file type; use .jsonl, .jsonl.gz, .tsv, .parquet "
                         "or .txt (one phrase per line)")


def write_phrases_jsonl(table: PhraseTable, out: TextIO) -> None:
    for row in table.rows():
        out.write(json.dumps(row, ensure_ascii=False))
        out.write("\n")


def write_phrases(table: PhraseTable, path: str | Path) -> None:
    """Write rows in the table's current order, atomically, in the format given by the extension
    (to a file or a URL)."""
    fmt = _format_of(path)
    if fmt == "txt":
        raise ParameterError(f"{path}: phrases are written as .jsonl, .jsonl.gz, .tsv or .parquet")
    with atomic_path(path) as tmp:
        if fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            rows = list(table.rows())
            schema = [("phrase", pa.string()), ("length", pa.int64()), ("df", pa.int64()),
                      ("occurrences", pa.int64())]
            if table.whole_line is not None:
                schema.append((WHOLE_LINE, pa.bool_()))
            if table.edge is not None:
                schema.append((EDGE, pa.string()))
            pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema(schema)), tmp)
        elif fmt == "tsv":
            columns = table.columns
            with open(tmp, "w", encoding="utf-8", newline="\n") as out:
                out.write("\t".join(columns) + "\n")
                for row in table.rows():
                    out.write("\t".join(str(row[c]).lower() if c == WHOLE_LINE else str(row[c])
                                        for c in columns) + "\n")
        else:
            with text_output(tmp, compress=base_name(path).lower().endswith(".gz")) as out:
                write_phrases_jsonl(table, out)


def read_phrases(path: str | Path) -> list[dict]:
    """Read a phrase list written by `write_phrases` (or reviewed by hand): rows with at least
    `phrase`; `df`, `length`, `occurrences` are kept when present; a `.txt` file holds one phrase
    per non-blank line. Raises InputError on bad rows. A URL is fetched first (lists are small)."""
    if is_remote(path):
        from corpus_miner.io.remote import local_copy

        with local_copy(str(path)) as copy:
            return read_phrases(copy)
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such phrase file")
    fmt = _format_of(path)
    try:
        return _read_phrase_rows(path, fmt)
    except (OSError, EOFError, UnicodeDecodeError) as exc:  # truncated .gz, not UTF-8, ...
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise InputError(f"{path}: cannot read the phrase list ({reason})") from None


def _read_phrase_rows(path: Path, fmt: str) -> list[dict]:
    rows: list[dict] = []
    if fmt == "txt":
        with open(path, encoding="utf-8") as f:
            rows = [{"phrase": line.strip()} for line in f if line.strip()]
    elif fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as exc:  # pyarrow raises several types for corrupt files
            raise FormatError(f"{path}: not a readable Parquet file ({exc})") from exc
        if "phrase" not in table.column_names:
            raise InputError(f"{path}: no 'phrase' column "
                             f"(columns: {', '.join(table.column_names)})")
        rows = table.to_pylist()
    elif fmt == "tsv":
        with open(path, encoding="utf-8") as f:
            header = f.readline().rstrip("\n").split("\t")
            if "phrase" not in header:
                raise InputError(f"{path}:1: header has no 'phrase' column")
            for lineno, line in enumerate(f, start=2):
                if not line.strip():
                    continue
                values = line.rstrip("\n").split("\t")
                if len(values) != len(header):
                    raise InputError(f"{path}:{lineno}: expected {len(header)} "
                                     "tab-separated fields")
                rows.append(dict(zip(header, values)))
    else:
        opener = gzip.open if path.name.lower().endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            for lineno, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}:{lineno}: malformed JSON ({exc.msg})") from exc
                if not isinstance(row, dict) or not isinstance(row.get("phrase"), str):
                    raise InputError(f"{path}:{lineno}: row has no string field 'phrase'")
                rows.append(row)
    return rows
