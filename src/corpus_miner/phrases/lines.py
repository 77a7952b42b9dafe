"""Whole-line phrases: lines that recur, whole, in at least sigma documents.

Definition (docs/how-it-works/line-aware-phrases.md). A line of a document is the run of its
tokens from one line start (TokenCorpus.line_starts) to the next line start or the document's
end; it *stands alone* when it is a paragraph of its own: it starts a paragraph
(TokenCorpus.paragraph_starts) and the next line of the document, if any, starts one too. A token
sequence Q is a *whole-line phrase* at (sigma, min_line_length, min_length) when min_line_length
<= |Q| < min_length and at least sigma documents have a standing-alone line equal to Q. Its df
is that number of documents and its occurrences the number of such lines (all documents).
Lines of min_length tokens or more are left to the ordinary maximal phrases, which find every
frequent sequence of that length. A line cannot grow without crossing a line boundary, so every
whole-line phrase is maximal as a line; it is reported even where it also lies inside a longer
maximal phrase (both mark the same tokens there, and a token is covered once).

How. Every line whose length is in range gets a 64-bit hash of its tokens; the lines are sorted by
hash (stably, so each group keeps corpus order and its documents never decrease) and each group
of equal hashes is checked token by token against its first line. A group that is not one
sequence (a hash collision, which tests force with a weak hash) is regrouped exactly in Python.
So the answer is exact whatever the hash does; the hash only makes it fast.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from corpus_miner._numba.hashing import splitmix64
from corpus_miner._numba.readonly import read_only
from corpus_miner.errors import InputError
from corpus_miner.phrases.result import PhraseTable

_SEED = np.uint64(0x243F6A8885A308D3)
FULL_HASH = np.uint64(0xFFFFFFFFFFFFFFFF)  # tests pass a narrower mask to force collisions


def line_ends(line_starts: np.ndarray, doc_offsets: np.ndarray) -> np.ndarray:
    """End (exclusive token index) of each line: the next line start in its document, else the
    document's end."""
    # both are sorted: binary searches, not a sort of their union
    doc_end = doc_offsets[np.searchsorted(doc_offsets, line_starts, side="right")]
    following = np.empty_like(line_starts)
    following[:-1] = line_starts[1:]
    following[-1:] = doc_offsets[-1]
    return np.minimum(following, doc_end)


def corpus_lines(corpus) -> tuple[np.ndarray, np.ndarray]:
    """(line starts, paragraph starts) of a TokenCorpus, or InputError when it has none."""
    starts = getattr(corpus, "line_starts", None)
    if starts is None:
        raise InputError("this corpus has no line starts (built from arrays, or saved by an older "
                         "corpus-miner): whole-line phrases need them; tokenize the original "
                         "documents again (`corpus-miner tokenize INPUT -o DIR`)")
    return (np.ascontiguousarray(starts, dtype=np.int64),
            np.ascontiguousarray(corpus.paragraph_starts, dtype=np.int64))


@njit(cache=True, nogil=True)
def sequence_hashes(tokens, starts, ends, mask):
    """A 64-bit hash of each tokens[starts[i]:ends[i]] (its length included), AND mask."""
    out = np.empty(len(starts), dtype=np.uint64)
    for i in range(len(starts)):
        h = _SEED ^ np.uint64(ends[i] - starts[i])
        for p in range(starts[i], ends[i]):
            h = splitmix64(h ^ np.uint64(tokens[p]))
        out[i] = h & mask
    return out


@njit(cache=True, inline="always")
def _equal(tokens_a, a, tokens_b, b, n):
    for k in range(n):
        if tokens_a[a + k] != tokens_b[b + k]:
            return False
    return True


@njit(cache=True, nogil=True)
def hash_groups(tokens, starts, lengths, docs, order, hashes):
    """Groups of equal hash in `order` (line indices sorted by hash, stably).

    Returns (first, size, df, exact): group g is order[first[g]:first[g] + size[g]]; df[g] its
    distinct documents; exact[g] False when some line of it differs from its first line (then
    df is not meaningful and the caller regroups it)."""
    n = len(order)
    first = np.empty(n, dtype=np.int64)
    size = np.empty(n, dtype=np.int64)
    df = np.empty(n, dtype=np.int64)
    exact = np.empty(n, dtype=np.bool_)
    groups = 0
    i = 0
    while i < n:
        head = order[i]
        j = i + 1
        same = True
        distinct = 1
        while j < n and hashes[order[j]] == hashes[head]:
            line = order[j]
            if same and not (lengths[line] == lengths[head] and _equal(
                    tokens, starts[line], tokens, starts[head], lengths[head])):
                same = False
            if docs[line] != docs[order[j - 1]]:
                distinct += 1
            j += 1
        first[groups] = i
        size[groups] = j - i
        df[groups] = distinct
        exact[groups] = same
        groups += 1
        i = j
    return first[:groups].copy(), size[:groups].copy(), df[:groups].copy(), exact[:groups].copy()


def paragraph_firsts(line_starts: np.ndarray, paragraph_starts: np.ndarray) -> np.ndarray:
    """bool per line: it starts a paragraph."""
    if not len(paragraph_starts):
        return np.zeros(len(line_starts), dtype=bool)
    at = np.searchsorted(paragraph_starts, line_starts)  # both sorted (a subset of the other)
    return paragraph_starts[np.minimum(at, len(paragraph_starts) - 1)] == line_starts


def paragraph_lasts(line_starts: np.ndarray, paragraph_starts: np.ndarray,
                    doc_offsets: np.ndarray) -> np.ndarray:
    """bool per line: it ends a paragraph (the next line of its document, if there is one,
    starts a paragraph)."""
    last = np.ones(len(line_starts), dtype=bool)
    if len(line_starts) > 1:
        same_doc = (np.searchsorted(doc_offsets, line_starts[1:], side="right")
                    == np.searchsorted(doc_offsets, line_starts[:-1], side="right"))
        last[:-1] = ~same_doc | paragraph_firsts(line_starts, paragraph_starts)[1:]
    return last


def standing_alone(line_starts: np.ndarray, paragraph_starts: np.ndarray,
                   doc_offsets: np.ndarray) -> np.ndarray:
    """bool per line: it is a paragraph of its own (it starts a paragraph, and so does the next
    line of its document, if there is one)."""
    return (paragraph_firsts(line_starts, paragraph_starts)
            & paragraph_lasts(line_starts, paragraph_starts, doc_offsets))


def frequent_sequences(tokens: np.ndarray, doc_offsets: np.ndarray, starts: np.ndarray,
                       lengths: np.ndarray, sigma: int, hash_mask: np.uint64 = FULL_HASH
                       ) -> tuple[list[int], list[int], list[int]]:
    """(heads, df, occurrences) of every distinct sequence tokens[starts[i]:starts[i] +
    lengths[i]] found in at least sigma documents: heads[j] is the index i of its first copy,
    df[j] its documents, occurrences[j] its copies. starts ascending (corpus order). Exact
    whatever the hash does (module docstring)."""
    starts = read_only(np.ascontiguousarray(starts, dtype=np.int64))
    lengths = read_only(np.ascontiguousarray(lengths, dtype=np.int64))
    if len(starts) < sigma:  # fewer copies than sigma cannot have sigma documents
        return [], [], []
    docs = read_only((np.searchsorted(doc_offsets, starts, side="right") - 1).astype(np.int64))
    hashes = sequence_hashes(tokens, starts, read_only(starts + lengths), np.uint64(hash_mask))
    order = read_only(np.argsort(hashes, kind="stable").astype(np.int64))
    first, size, df, exact = hash_groups(tokens, starts, lengths, docs, order, read_only(hashes))
    # a group of fewer than sigma copies cannot have sigma documents, whatever it holds
    chosen = np.flatnonzero(exact & (df >= sigma))
    heads = [int(order[first[g]]) for g in chosen]
    found_df = [int(df[g]) for g in chosen]
    found_occ = [int(size[g]) for g in chosen]
    for g in np.flatnonzero(~exact & (size >= sigma)):  # hash collisions: regroup exactly
        groups: dict[tuple, list[int]] = {}
        for line in order[first[g]:first[g] + size[g]].tolist():
            key = tuple(tokens[starts[line]:starts[line] + lengths[line]].tolist())
            groups.setdefault(key, []).append(line)
        for lines in groups.values():
            n_docs = len({int(docs[line]) for line in lines})
            if n_docs >= sigma:
                heads.append(lines[0])
                found_df.append(n_docs)
                found_occ.append(len(lines))
    return heads, found_df, found_occ


def mine_whole_lines(tokens: np.ndarray, doc_offsets: np.ndarray, line_starts: np.ndarray,
                     paragraph_starts: np.ndarray, sigma: int, min_line_length: int,
                     min_length: int, vocab: Sequence[str],
                     hash_mask: np.uint64 = FULL_HASH) -> PhraseTable:
    """Every whole-line phrase (module docstring), in canonical order, whole_line set.

    tokens, doc_offsets, line_starts, paragraph_starts: a TokenCorpus's arrays."""
    tokens = read_only(np.ascontiguousarray(tokens, dtype=np.uint32))
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    line_starts = np.ascontiguousarray(line_starts, dtype=np.int64)
    ends = line_ends(line_starts, doc_offsets)
    lengths = ends - line_starts
    keep = (lengths >= min_line_length) & (lengths < min_length)
    keep &= standing_alone(line_starts, paragraph_starts, doc_offsets)
    starts, lengths = line_starts[keep], lengths[keep]
    heads, df, occurrences = frequent_sequences(tokens, doc_offsets, starts, lengths, sigma,
                                                hash_mask)
    phrases = [tokens[starts[h]:starts[h] + lengths[h]].tolist() for h in heads]
    return PhraseTable.from_lists(phrases, df, occurrences, vocab).with_whole_line(
        True).sorted()


@njit(cache=True, nogil=True)
def match_lines(tokens, starts, lengths, line_hashes, phrase_tokens, phrase_offsets,
                phrase_order, sorted_hashes):
    """Per line, the index of the phrase equal to it, or -1. sorted_hashes: the phrases' hashes
    in ascending order, phrase_order the phrase of each."""
    out = np.full(len(starts), -1, dtype=np.int64)
    for i in range(len(starts)):
        h = line_hashes[i]
        at = np.searchsorted(sorted_hashes, h)
        while at < len(sorted_hashes) and sorted_hashes[at] == h:
            p = phrase_order[at]
            a = phrase_offsets[p]
            if phrase_offsets[p + 1] - a == lengths[i] and _equal(
                    tokens, starts[i], phrase_tokens, a, lengths[i]):
                out[i] = p
                break
            at += 1
    return out


def whole_line_matches(tokens: np.ndarray, doc_offsets: np.ndarray, line_starts: np.ndarray,
                       paragraph_starts: np.ndarray, table: PhraseTable,
                       hash_mask: np.uint64 = FULL_HASH
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(phrase, document, start) of every standing-alone line equal to a phrase of `table`, in
    corpus order: the whole-line occurrences of its phrases."""
    empty = np.zeros(0, dtype=np.int64)
    if len(table) == 0 or len(line_starts) == 0:
        return empty, empty, empty
    tokens = read_only(np.ascontiguousarray(tokens, dtype=np.uint32))
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    line_starts = np.ascontiguousarray(line_starts, dtype=np.int64)
    lengths = line_ends(line_starts, doc_offsets) - line_starts
    phrase_lengths = table.lengths
    keep = (lengths >= phrase_lengths.min()) & (lengths <= phrase_lengths.max())
    keep &= standing_alone(line_starts, paragraph_starts, doc_offsets)
    starts = read_only(line_starts[keep].copy())
    lengths = read_only(lengths[keep].copy())
    mask = np.uint64(hash_mask)
    line_hashes = sequence_hashes(tokens, starts, read_only(starts + lengths), mask)
    phrase_tokens = read_only(np.ascontiguousarray(table.tokens, dtype=np.uint32))
    phrase_offsets = read_only(np.ascontiguousarray(table.offsets, dtype=np.int64))
    phrase_hashes = sequence_hashes(phrase_tokens, read_only(phrase_offsets[:-1].copy()),
                                    read_only(phrase_offsets[1:].copy()), mask)
    phrase_order = np.argsort(phrase_hashes, kind="stable").astype(np.int64)
    phrase = match_lines(tokens, starts, lengths, read_only(line_hashes), phrase_tokens,
                         phrase_offsets, read_only(phrase_order),
                         read_only(phrase_hashes[phrase_order]))
    hit = phrase >= 0
    start = starts[hit]
    doc = (np.searchsorted(doc_offsets, start, side="right") - 1).astype(np.int64)
    return phrase[hit], doc, start.astype(np.int64)
