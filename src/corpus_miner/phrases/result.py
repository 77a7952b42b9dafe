"""PhraseTable: the answer of a mining run, shared by every algorithm, the report and the cleaner.

Phrases are stored flat (one uint32 token-id array plus offsets) so that millions of phrases cost
a few arrays, not millions of Python objects. Files: `.jsonl` (also `.jsonl.gz`), `.tsv`,
`.parquet`, one row per phrase with `phrase` (the tokens as text, `corpus.join_tokens`: no space
between two CJK/kana/Thai... characters, one space elsewhere; it tokenizes back to the same
tokens), `length`, `df`, `occurrences`.
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


@dataclass(frozen=True)
class PhraseTable:
    """Phrases as token-id sequences with their support.

    tokens:      uint32, the token ids of all phrases, concatenated
    offsets:     int64, len(phrases) + 1; phrase i is tokens[offsets[i]:offsets[i+1]]
    df:          int64, number of documents containing the phrase at least once
    occurrences: int64, number of (document, start) positions where the phrase occurs
                 (overlapping occurrences counted)
    vocab:       token id -> token string
    """

    tokens: np.ndarray
    offsets: np.ndarray
    df: np.ndarray
    occurrences: np.ndarray
    vocab: Sequence[str]

    @classmethod
    def from_lists(cls, phrases, df, occurrences, vocab) -> PhraseTable:
        lengths = np.fromiter((len(p) for p in phrases), dtype=np.int64, count=len(phrases))
        offsets = np.zeros(len(phrases) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.fromiter((t for p in phrases for t in p), dtype=np.uint32, count=int(offsets[-1]))
        return cls(flat, offsets, np.asarray(df, dtype=np.int64),
                   np.asarray(occurrences, dtype=np.int64), vocab)

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
        return PhraseTable(flat, offsets, self.df[order], self.occurrences[order], self.vocab)

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

    def rows(self) -> Iterator[dict]:
        lengths = self.lengths
        for i in range(len(self)):
            yield {"phrase": self.text(i), "length": int(lengths[i]), "df": int(self.df[i]),
                   "occurrences": int(self.occurrences[i])}


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
            pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema([
                ("phrase", pa.string()), ("length", pa.int64()), ("df", pa.int64()),
                ("occurrences", pa.int64())])), tmp)
        elif fmt == "tsv":
            with open(tmp, "w", encoding="utf-8", newline="\n") as out:
                out.write("\t".join(COLUMNS) + "\n")
                for row in table.rows():
                    out.write("\t".join(str(row[c]) for c in COLUMNS) + "\n")
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
