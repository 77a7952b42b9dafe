"""Coverage: which tokens of a corpus lie inside repeated phrases, and the figures built from it.

Definition. With a mining result (maximal phrases at threshold sigma, minimum length L), a token is
*covered* when it lies inside an occurrence of a frequent phrase (df >= sigma) of length >= L;
equivalently inside an occurrence of a frequent L-gram. Every frequent L-gram is a window of some
maximal phrase (extend it while it stays frequent) and every L-window of a maximal phrase is
frequent, so the exact mask follows from the L-windows of the maximal phrases alone. It covers
every occurrence of the maximal phrases and every other place where their frequent pieces repeat.

With a phrase *list* (for example a reviewed output of `corpus-miner phrases`), a token is covered
when it lies inside an occurrence of a listed phrase, whatever its length or support here.

Attribution. To rank phrases by tokens actually covered, overlaps counted once, every covered token
is attributed to exactly one phrase: if the token lies inside full occurrences of phrases, the
best-ranked of them in canonical order (Psi = length x df descending, then longer, then text
ascending); otherwise (mining result only: a frequent piece repeated outside a full occurrence) the
best-ranked phrase having an L-window that occurs over the token. The attributed counts add up to
`tokens_covered`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from corpus_miner._numba.readonly import read_only
from corpus_miner.coverage import kernels as kernels
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.io.readers import DocumentBatch
from corpus_miner.io.strings import StringList, arrow_string_buffers
from corpus_miner.phrases.result import PhraseTable
from corpus_miner.phrases.threads import in_parts, mining_threads

HISTOGRAM_BINS = 20
_NO_MARKS = np.zeros(0, dtype=np.uint8)  # find phrases at every position


@dataclass(frozen=True)
class Occurrences:
    """Full occurrences of phrases, in corpus order: phrase index, document, global token start."""

    phrase: np.ndarray
    doc: np.ndarray
    start: np.ndarray


def _as_corpus_arrays(corpus) -> tuple[np.ndarray, np.ndarray]:
    tokens = read_only(np.ascontiguousarray(corpus.tokens, dtype=np.uint32))
    doc_offsets = read_only(np.ascontiguousarray(corpus.doc_offsets, dtype=np.int64))
    return tokens, doc_offsets


class PhraseTables:
    """The lookup tables of a phrase table, built once and applied to any tokens of the same
    ids (a corpus, or one batch of documents after another: both tests below depend on a
    document alone). `min_length`: also index the L-windows of the phrases (mined coverage).
    Whole-line phrases (table.whole_line) are looked up among the lines instead, and only
    count where they are a whole line, and so are edge phrases (table.edge), which count only
    at their edge of a paragraph: their methods then need the corpus's CorpusLines."""

    def __init__(self, table: PhraseTable, min_length: int | None = None):
        self.table = table
        anchored = table.line_anchored
        self._line_index = np.flatnonzero(anchored)
        # indices into `table` of the phrases below (None: all of them, in order)
        self._ordinary_index = np.flatnonzero(~anchored) if len(self._line_index) else None
        self._line_table = table.take(self._line_index) if len(self._line_index) else None
        ordinary = table if self._ordinary_index is None else table.take(self._ordinary_index)
        self.phrase_tokens = read_only(np.ascontiguousarray(ordinary.tokens, dtype=np.uint32))
        self.phrase_offsets = np.ascontiguousarray(ordinary.offsets, dtype=np.int64)
        lengths = table.lengths
        if len(table) and lengths.min() < 1:
            raise ParameterError("phrase table contains an empty phrase; remove it from the list")
        self._n_ordinary = len(ordinary)
        self.k = int(ordinary.lengths.min()) if len(ordinary) else 0
        if len(ordinary):
            slots, slot_hash, prefix_pos, phrase_prefix = kernels.build_prefix_table(
                self.phrase_tokens, self.phrase_offsets, self.k)
            group_offsets = np.zeros(len(prefix_pos) + 1, dtype=np.int64)
            np.cumsum(np.bincount(phrase_prefix, minlength=len(prefix_pos)), out=group_offsets[1:])
            self._prefixes = (slots, slot_hash, prefix_pos, group_offsets,
                              np.argsort(phrase_prefix, kind="stable").astype(np.int64))
        self.min_length = min_length
        if min_length is not None:
            ranks = (np.arange(len(table), dtype=np.int64) if self._ordinary_index is None
                     else self._ordinary_index.astype(np.int64))
            self._windows = kernels.build_window_table(
                self.phrase_tokens, self.phrase_offsets, min_length, ranks)

    @property
    def has_whole_lines(self) -> bool:
        return self._line_table is not None

    def occurrences(self, tokens: np.ndarray, doc_offsets: np.ndarray,
                    window_starts: np.ndarray = _NO_MARKS,
                    lines: CorpusLines | None = None) -> Occurrences:
        """Every full occurrence of every phrase (overlaps included), in corpus order; of a
        whole-line phrase, every standing-alone line equal to it, of an edge phrase every line
        of which it is an edge piece at its side (lines: the corpus's line structure).
        window_starts: mark_windows's mask, to look phrases up only where a window starts."""
        ordinary = self._ordinary_occurrences(tokens, doc_offsets, window_starts)
        if self._line_table is None:
            return ordinary
        if lines is None:
            raise InputError("whole-line and edge phrases need the corpus's line starts "
                             "(tokenize the original documents again)")
        phrase, doc, start = lines.matches(tokens, doc_offsets, self._line_table)
        phrase = np.concatenate([ordinary.phrase, self._line_index[phrase]]).astype(np.int64)
        doc = np.concatenate([ordinary.doc, doc]).astype(np.int64)
        start = np.concatenate([ordinary.start, start]).astype(np.int64)
        order = np.argsort(start, kind="stable")
        return Occurrences(phrase[order], doc[order], start[order])

    def _ordinary_occurrences(self, tokens: np.ndarray, doc_offsets: np.ndarray,
                              window_starts: np.ndarray) -> Occurrences:
        tokens, doc_offsets = read_only(tokens), read_only(doc_offsets)  # one type: a corpus's
        if self._n_ordinary == 0:
            empty = np.empty(0, dtype=np.int64)
            return Occurrences(empty, empty, empty)
        slots, slot_hash, prefix_pos, group_offsets, group_phrases = self._prefixes
        parts: dict[int, tuple] = {}

        def scan(lo: int, hi: int) -> None:  # documents [lo, hi), on one thread
            phrase, doc, start = kernels.find_occurrences(
                tokens, doc_offsets[lo:hi + 1], self.k, slots, slot_hash, prefix_pos,
                group_offsets, group_phrases, self.phrase_tokens, self.phrase_offsets,
                window_starts)
            parts[lo] = (phrase, doc + lo, start)

        in_parts(scan, len(doc_offsets) - 1, mining_threads(len(tokens)))
        found = [parts[lo] for lo in sorted(parts)]  # contiguous document ranges, in order
        if len(found) == 1:
            occ = Occurrences(*found[0])
        else:
            occ = Occurrences(*(np.concatenate([part[i] for part in found]) if found
                                else np.empty(0, dtype=np.int64) for i in range(3)))
        if self._ordinary_index is None:
            return occ
        return Occurrences(self._ordinary_index[occ.phrase], occ.doc, occ.start)

    def mined(self, tokens: np.ndarray, doc_offsets: np.ndarray,
              lines: CorpusLines | None = None
              ) -> tuple[np.ndarray, np.ndarray, Occurrences]:
        """(covered mask, covered tokens attributed to each phrase, full occurrences) with the
        table in canonical order (index = attribution rank; module docstring). Each pass runs
        on ranges of documents, on threads. Whole-line phrases cover their whole-line
        occurrences (lines: the corpus's line structure)."""
        tokens, doc_offsets = read_only(tokens), read_only(doc_offsets)  # one type: a corpus's
        slots, slot_hash, window_pos, window_owner, window_filter = self._windows
        window = self.min_length  # set, with the window table, by __init__
        assert window is not None
        n_docs = len(doc_offsets) - 1
        threads = mining_threads(len(tokens))
        covered = np.zeros(len(tokens), dtype=np.uint8)
        in_parts(lambda lo, hi: kernels.mark_windows(
            tokens, doc_offsets[lo:hi + 1], window, slots, slot_hash, window_pos,
            window_filter, self.phrase_tokens, covered), n_docs, threads)
        # phrases start where their first window does, if none is shorter than a window
        occ = self.occurrences(tokens, doc_offsets,
                               covered if self.k >= window else _NO_MARKS, lines)
        lengths = self.table.lengths
        in_full, by_full = kernels.cover_by_occurrences(
            len(tokens), occ.start, lengths[occ.phrase].astype(np.int64), occ.phrase,
            len(self.table))
        by_window: dict[int, np.ndarray] = {}

        def attribute(lo: int, hi: int) -> None:  # documents [lo, hi), on one thread
            by_window[lo] = kernels.attribute_windows(
                tokens, doc_offsets[lo:hi + 1], window, slots, slot_hash, window_pos,
                window_owner, self.phrase_tokens, len(self.table), in_full, covered)

        in_parts(attribute, n_docs, threads)
        if self._line_table is not None:  # whole-line and edge occurrences are in no window
            np.maximum(covered, in_full, out=covered)
        return covered, by_full + sum(by_window.values(), np.zeros_like(by_full)), occ


@dataclass(frozen=True)
class CorpusLines:
    """What whole-line and edge phrases are matched against: a corpus's line starts, paragraph
    starts and (for edge phrases; else None) sentence starts."""

    line_starts: np.ndarray
    paragraph_starts: np.ndarray
    sentence_starts: np.ndarray | None = None

    def matches(self, tokens: np.ndarray, doc_offsets: np.ndarray, table: PhraseTable
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(phrase, document, start) of the whole-line and edge occurrences of the phrases of
        `table` (all of them whole-line or edge phrases), in corpus order."""
        from corpus_miner.phrases.lines import whole_line_matches

        whole = np.flatnonzero(table.whole_line_mask)
        phrase, doc, start = whole_line_matches(tokens, doc_offsets, self.line_starts,
                                                self.paragraph_starts, table.take(whole))
        phrase = whole[phrase]
        if not (table.edge_sides != 0).any():
            return phrase, doc, start
        if self.sentence_starts is None:
            raise InputError("edge phrases need the corpus's sentence starts (tokenize the "
                             "original documents again, asking for them)")
        from corpus_miner.phrases.edges import edge_matches

        at, in_doc, begins = edge_matches(tokens, doc_offsets, self.line_starts,
                                          self.paragraph_starts, self.sentence_starts, table)
        phrase = np.concatenate([phrase, at]).astype(np.int64)
        start = np.concatenate([start, begins]).astype(np.int64)
        doc = np.concatenate([doc, in_doc]).astype(np.int64)
        order = np.argsort(start, kind="stable")
        return phrase[order], doc[order], start[order]


def line_structure(corpus, table: PhraseTable) -> CorpusLines | None:
    """The corpus's CorpusLines when `table` has whole-line or edge phrases (InputError if the
    corpus lacks what they need), else None."""
    if not table.line_anchored.any():
        return None
    from corpus_miner.phrases.lines import corpus_lines

    sentences = None
    if (table.edge_sides != 0).any():
        from corpus_miner.phrases.edges import corpus_sentences

        sentences = corpus_sentences(corpus)
    return CorpusLines(*corpus_lines(corpus), sentences)


def find_occurrences(corpus, table: PhraseTable) -> Occurrences:
    """Every full occurrence of every phrase of `table` in `corpus` (overlaps included); of a
    whole-line phrase, its whole-line occurrences."""
    return PhraseTables(table).occurrences(*_as_corpus_arrays(corpus),
                                           lines=line_structure(corpus, table))


def phrases_from_texts(texts: Sequence[str], vocab: Sequence[str],
                       tokenize: Callable[[str], list[str]]) -> tuple[PhraseTable, list[str]]:
    """Map phrase texts to token ids of the corpus vocabulary with the corpus tokenizer.

    A phrase with a token the corpus never saw cannot occur; it is left out and returned in the
    second list (with phrases that tokenize to nothing), so callers can report it.
    """
    return phrases_from_rows([{"phrase": text} for text in texts], vocab, tokenize)


def phrases_from_rows(rows: Sequence[dict], vocab: Sequence[str],
                      tokenize: Callable[[str], list[str]]) -> tuple[PhraseTable, list[str]]:
    """phrases_from_texts for rows of a phrase file (result.read_phrases): a row whose
    whole_line is true stays a whole-line phrase (applied only where it is a whole line), one
    whose edge is start or end an edge phrase (applied only at that edge of a paragraph); the
    table has a whole_line (edge) column when some row has the field."""
    from corpus_miner.phrases.result import EDGE, WHOLE_LINE, edge_side, is_whole_line

    index = {token: i for i, token in enumerate(vocab)}
    kept: list[list[int]] = []
    flags: list[bool] = []
    sides: list[int] = []
    unmatched: list[str] = []
    seen: set[tuple[tuple[int, ...], bool, int]] = set()
    for row in rows:
        text = str(row["phrase"])
        ids = [index.get(token, -1) for token in tokenize(text)]
        if not ids or min(ids) < 0:
            unmatched.append(text)
            continue
        key = (tuple(ids), is_whole_line(row), edge_side(row))
        if key not in seen:  # the same phrase twice (e.g. different punctuation) counts once
            seen.add(key)
            kept.append(ids)
            flags.append(key[1])
            sides.append(key[2])
    zeros = [0] * len(kept)
    lined = any(WHOLE_LINE in row for row in rows)
    edged = any(EDGE in row for row in rows)
    return PhraseTable.from_lists(kept, zeros, zeros, vocab, flags if lined else None,
                                  sides if edged else None), unmatched


def _support_from(occ: Occurrences, table: PhraseTable, n_docs: int) -> PhraseTable:
    occurrences = np.bincount(occ.phrase, minlength=len(table)).astype(np.int64)
    n_docs = max(1, n_docs)
    # distinct (phrase, document) pairs, encoded in one int64 so np.unique can count them
    pairs = np.unique(occ.phrase * np.int64(n_docs) + occ.doc)
    df = np.bincount(pairs // n_docs, minlength=len(table)).astype(np.int64)
    return PhraseTable(table.tokens, table.offsets, df, occurrences, table.vocab,
                       table.whole_line, table.edge)


def with_support(corpus, table: PhraseTable) -> PhraseTable:
    """The same phrases with df and occurrences counted in `corpus`."""
    return _support_from(find_occurrences(corpus, table), table, len(corpus.doc_offsets) - 1)


@dataclass(frozen=True)
class Coverage:
    """The coverage mask of a corpus and its figures.

    covered:        uint8 per corpus token, 1 when covered
    doc_offsets:    int64, the corpus document offsets
    doc_covered:    int64 per document, covered tokens
    phrases:        the phrases in canonical order (index = attribution rank)
    tokens_by_phrase: int64 per phrase, covered tokens attributed to it (see module docstring)
    occurrences:    every full occurrence of every phrase, in corpus order
    min_length:     L of the mining run (windows length), or the shortest listed phrase
    sigma:          threshold of the mining run, None for a phrase list
    source:         "mined" (windows of maximal phrases) or "list" (full occurrences)
    min_line_length: shortest whole-line phrase of the mining run (None: none were mined)
    min_edge_length: shortest edge phrase of the mining run (None: none were mined)
    """

    covered: np.ndarray
    doc_offsets: np.ndarray
    doc_covered: np.ndarray
    phrases: PhraseTable
    tokens_by_phrase: np.ndarray
    occurrences: Occurrences
    min_length: int
    sigma: int | None
    source: str
    min_line_length: int | None = None
    min_edge_length: int | None = None

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_phrases(cls, corpus, phrases: PhraseTable, min_length: int,
                     sigma: int | None = None, min_line_length: int | None = None,
                     min_edge_length: int | None = None) -> Coverage:
        """Exact coverage from the maximal phrases of a mining run with this `min_length`, and
        its whole-line and edge phrases (table.whole_line, table.edge; min_line_length,
        min_edge_length: the run's), which cover their whole-line and edge occurrences."""
        if min_length < 1:
            raise ParameterError(f"min_length must be >= 1, got {min_length}")
        table = phrases.sorted()
        ordinary = ~table.line_anchored
        if ordinary.any() and int(table.lengths[ordinary].min()) < min_length:
            raise ParameterError(
                f"phrase table has phrases shorter than min_length {min_length}; pass the "
                "min_length used for mining")
        tokens, doc_offsets = _as_corpus_arrays(corpus)
        covered, by_phrase, occ = PhraseTables(table, int(min_length)).mined(
            tokens, doc_offsets, line_structure(corpus, table))
        return cls(covered, doc_offsets, kernels.count_per_document(covered, doc_offsets), table,
                   by_phrase, occ, int(min_length), sigma, "mined", min_line_length,
                   min_edge_length)

    @classmethod
    def from_miner(cls, miner, corpus) -> Coverage:
        """Coverage of a fitted BloomSpan (or any estimator with phrases_, sigma, min_length)."""
        # an unfitted BloomSpan raises NotFittedError on .phrases_ itself
        return cls.from_phrases(corpus, miner.phrases_, miner.min_length, miner.sigma,
                                getattr(miner, "min_line_length", None),
                                getattr(miner, "min_edge_length", None))

    @classmethod
    def from_phrase_list(cls, corpus, table: PhraseTable) -> Coverage:
        """Coverage by full occurrences of listed phrases (token ids of this corpus' vocabulary).
        df and occurrences are recounted in `corpus`; phrases that never occur stay listed."""
        occ = find_occurrences(corpus, table)  # in corpus order: sorted by start
        counted = _support_from(occ, table, len(corpus.doc_offsets) - 1)
        order = counted.canonical_order()
        table = counted.take(order)
        new_index = np.empty(len(order), dtype=np.int64)
        new_index[order] = np.arange(len(order), dtype=np.int64)
        occ = Occurrences(new_index[occ.phrase], occ.doc, occ.start)
        covered, by_phrase = kernels.cover_by_occurrences(
            len(corpus.tokens), occ.start, table.lengths[occ.phrase].astype(np.int64), occ.phrase,
            len(table))
        doc_offsets = read_only(np.ascontiguousarray(corpus.doc_offsets, dtype=np.int64))
        min_length = int(table.lengths.min()) if len(table) else 1
        return cls(covered, doc_offsets, kernels.count_per_document(covered, doc_offsets), table,
                   by_phrase, occ, min_length, None, "list")

    def recompute(self, corpus, keep: np.ndarray) -> Coverage:
        """The same kind of coverage from the phrases where `keep` (bool per phrase) is True."""
        table = self.phrases.take(np.flatnonzero(keep))
        if self.source == "mined":
            return Coverage.from_phrases(corpus, table, self.min_length, self.sigma,
                                         self.min_line_length, self.min_edge_length)
        return Coverage.from_phrase_list(corpus, table)

    # -- figures --------------------------------------------------------------------------------
    @property
    def n_docs(self) -> int:
        return len(self.doc_offsets) - 1

    @property
    def n_tokens(self) -> int:
        return int(self.doc_offsets[-1])

    @property
    def tokens_covered(self) -> int:
        return int(self.doc_covered.sum())

    @property
    def share(self) -> float:
        """Covered tokens / all tokens (0 for an empty corpus)."""
        return self.tokens_covered / self.n_tokens if self.n_tokens else 0.0

    @property
    def doc_tokens(self) -> np.ndarray:
        return np.diff(self.doc_offsets)

    @property
    def doc_share(self) -> np.ndarray:
        """Covered share of each document (0 for documents without tokens)."""
        tokens = self.doc_tokens
        return np.divide(self.doc_covered, tokens, out=np.zeros(len(tokens)), where=tokens > 0)

    def histogram(self, bins: int = HISTOGRAM_BINS) -> tuple[np.ndarray, np.ndarray]:
        """(counts, edges): documents with tokens per bin of covered share over [0, 1]; the last
        bin is closed, so fully covered documents land in it."""
        shares = self.doc_share[self.doc_tokens > 0]
        counts, edges = np.histogram(shares, bins=bins, range=(0.0, 1.0))
        return counts.astype(np.int64), edges

    def deciles(self) -> np.ndarray:
        """Covered share at the 10th, 20th, ..., 90th percentile of documents with tokens."""
        shares = self.doc_share[self.doc_tokens > 0]
        if len(shares) == 0:
            return np.zeros(9)
        return np.quantile(shares, np.linspace(0.1, 0.9, 9))

    def template_documents(self, threshold: float = 0.9) -> np.ndarray:
        """Indices of documents (with tokens) whose covered share is >= threshold, most covered
        first (ties: longer first, then input order)."""
        shares = self.doc_share
        chosen = np.flatnonzero((shares >= threshold) & (self.doc_tokens > 0))
        order = np.lexsort((chosen, -self.doc_tokens[chosen], -shares[chosen]))
        return chosen[order]

    def hogs(self, top: int = 20, by: str = "psi") -> np.ndarray:
        """Phrase indices of the biggest hogs: by "psi" (length x df, canonical order) or by
        "covered" (tokens attributed, overlaps counted once; ties in canonical order)."""
        live = np.flatnonzero(self.phrases.df > 0)
        if by == "psi":
            return live[:top]
        if by == "covered":
            order = np.lexsort((live, -self.tokens_by_phrase[live]))
            return live[order][:top]
        raise ParameterError(f"hogs(by=...) must be 'psi' or 'covered', got {by!r}")

    def runs(self, doc: int) -> np.ndarray:
        """Maximal covered token runs of a document, as [first, end) token indices in it."""
        return kernels.covered_runs(self.covered, self.doc_offsets[doc], self.doc_offsets[doc + 1])

    def summary(self) -> dict:
        """The headline figures as plain JSON-ready values."""
        counts, edges = self.histogram()
        return {
            "documents": self.n_docs,
            "tokens": self.n_tokens,
            "tokens_covered": self.tokens_covered,
            "coverage": self.share,
            "phrases": len(self.phrases),
            "sigma": self.sigma,
            "min_length": self.min_length,
            "min_line_length": self.min_line_length,
            "whole_line_phrases": int(self.phrases.whole_line_mask.sum()),
            "min_edge_length": self.min_edge_length,
            "edge_phrases": int((self.phrases.edge_sides != 0).sum()),
            "source": self.source,
            "document_share_deciles": [float(x) for x in self.deciles()],
            "document_share_histogram": {"edges": [float(x) for x in edges],
                                         "documents": [int(x) for x in counts]},
        }


def aligned_batches(batches: Iterable[DocumentBatch], doc_ids: Sequence[str] | None,
                    n_docs: int) -> Iterator[tuple[int, DocumentBatch]]:
    """(index of the batch's first document in the corpus, batch) for a second read of the inputs
    the corpus was loaded from; raises InputError as soon as counts or ids disagree."""
    doc = 0
    for batch in batches:
        n = len(batch.texts)
        if doc + n > n_docs:
            raise InputError(f"{batch.source}: more documents than when the corpus was loaded; "
                             "the input changed, run again")
        if doc_ids is not None and not _same_ids(batch.ids, doc_ids, doc):
            ids = batch.ids.to_pylist() if hasattr(batch.ids, "to_pylist") else list(batch.ids)
            for i, found in enumerate(ids):
                if str(found) != str(doc_ids[doc + i]):
                    raise InputError(f"{batch.source}: document {doc + i} has id {found!r}, the "
                                     f"loaded corpus {doc_ids[doc + i]!r}; the input changed, "
                                     "run again")
        yield doc, batch
        doc += n
    if doc != n_docs:
        raise InputError(f"inputs have {doc} documents, the loaded corpus {n_docs}; the input "
                         "changed, run again")


def _same_ids(ids, doc_ids, first: int) -> bool:
    """Whether an Arrow string array of ids (no nulls) has the bytes of the StringList slice
    doc_ids[first:first + len(ids)]: the check of aligned_batches without a Python string per
    document. False also when it cannot tell (other types); the caller then compares one by
    one."""
    if not (isinstance(doc_ids, StringList) and isinstance(ids, pa.Array) and ids.null_count == 0
            and (pa.types.is_string(ids.type) or pa.types.is_large_string(ids.type))
            and first + len(ids) <= len(doc_ids)):
        return False
    offsets, data = arrow_string_buffers(ids)
    expected = doc_ids.offsets[first:first + len(ids) + 1]
    return bool(np.array_equal(np.diff(offsets), np.diff(expected))
                and np.array_equal(data[offsets[0]:offsets[-1]],
                                   doc_ids.data[expected[0]:expected[-1]]))
