"""Whole-line phrases: lines that recur, whole, in at least sigma documents.

Definition (docs/how-it-works/line-aware-phrases.md). A line of a document is the run of its
tokens from one line start (TokenCorpus.line_starts) to the next line start or the document's
end. A token sequence Q is a *whole-line phrase* at (sigma, min_line_length, min_length) when
min_line_length <= |Q| < min_length and at least sigma documents have a line equal to Q. Its df is
that number of documents and its occurrences the number of lines equal to Q (all documents).
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
    bounds = np.union1d(line_starts, doc_offsets)
    return bounds[np.searchsorted(bounds, line_starts) + 1]


def corpus_lines(corpus) -> tuple[np.ndarray, np.ndarray]:
    """(line starts, line ends) of a TokenCorpus, or InputError when it has no line starts."""
    starts = getattr(corpus, "line_starts", None)
    if starts is None:
        raise InputError("this corpus has no line starts (built from arrays, or saved by an older "
                         "corpus-miner): whole-line phrases need them; tokenize the original "
                         "documents again (`corpus-miner tokenize INPUT -o DIR`)")
    starts = read_only(np.ascontiguousarray(starts, dtype=np.int64))
    doc_offsets = np.ascontiguousarray(corpus.doc_offsets, dtype=np.int64)
    return starts, read_only(line_ends(starts, doc_offsets))


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


def mine_whole_lines(tokens: np.ndarray, doc_offsets: np.ndarray, line_starts: np.ndarray,
                     sigma: int, min_line_length: int, min_length: int, vocab: Sequence[str],
                     hash_mask: np.uint64 = FULL_HASH) -> PhraseTable:
    """Every whole-line phrase (module docstring), in canonical order, whole_line set.

    tokens, doc_offsets: a TokenCorpus's arrays; line_starts: its line starts."""
    tokens = read_only(np.ascontiguousarray(tokens, dtype=np.uint32))
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    line_starts = np.ascontiguousarray(line_starts, dtype=np.int64)
    ends = line_ends(line_starts, doc_offsets)
    lengths = ends - line_starts
    keep = (lengths >= min_line_length) & (lengths < min_length)
    starts = read_only(line_starts[keep].copy())
    lengths = read_only(lengths[keep].copy())
    if len(starts) < sigma:
        return PhraseTable.empty(vocab).with_whole_line(True)
    docs = read_only((np.searchsorted(doc_offsets, starts, side="right") - 1).astype(np.int64))
    hashes = sequence_hashes(tokens, starts, read_only(starts + lengths), np.uint64(hash_mask))
    order = read_only(np.argsort(hashes, kind="stable").astype(np.int64))
    first, size, df, exact = hash_groups(tokens, starts, lengths, docs, order, read_only(hashes))
    # a group of fewer than sigma lines cannot have sigma documents, whatever it holds
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
    phrases = [tokens[starts[h]:starts[h] + lengths[h]].tolist() for h in heads]
    return PhraseTable.from_lists(phrases, found_df, found_occ, vocab).with_whole_line(
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
                       table: PhraseTable, hash_mask: np.uint64 = FULL_HASH
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(phrase, document, start) of every line equal to a phrase of `table`, in corpus order:
    the whole-line occurrences of its phrases."""
    empty = np.zeros(0, dtype=np.int64)
    if len(table) == 0 or len(line_starts) == 0:
        return empty, empty, empty
    tokens = read_only(np.ascontiguousarray(tokens, dtype=np.uint32))
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    line_starts = np.ascontiguousarray(line_starts, dtype=np.int64)
    lengths = line_ends(line_starts, doc_offsets) - line_starts
    phrase_lengths = table.lengths
    keep = (lengths >= phrase_lengths.min()) & (lengths <= phrase_lengths.max())
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
