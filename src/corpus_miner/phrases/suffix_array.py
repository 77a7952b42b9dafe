"""Suffix array and LCP kernels over a concatenated corpus with one unique terminator per document.

Layout of the text (int32 symbols, length N = n_tokens + n_docs):
    doc 0 tokens, terminator 0, doc 1 tokens, terminator 1, ...
Terminator of document d is the symbol d; token symbols start at n_docs. Because every terminator
is unique, no two distinct suffixes share a prefix that reaches past a document end: the longest
common prefix of two suffixes never crosses a document boundary, which is what makes LCP intervals
equal to phrases inside one document. Terminators also sort before every token, so the first n_docs
entries of the suffix array are the terminator suffixes (in document order).

Construction is prefix doubling in numba: a counting sort by the first symbol, then
Larsson-Sadakane refinement, which re-sorts only the groups of suffixes still tied on their
sorted prefix, by the rank of the suffix k further on, doubling k each round. Ranks equal the
number of suffixes with a strictly smaller sorted prefix (a rank is its group's start). The long
repeats of real corpora (documentation sites: maximum LCP in the thousands) then cost rounds over
the few suffixes inside repeats instead of whole-array rounds over every suffix. Memory: text,
suffix array and ranks (int32 each) plus the tied-group starts (up to 4 bytes per suffix); the
text is not needed while refining, so the miner drops it and rebuilds it for the LCP.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner.errors import ParameterError

MAX_TEXT_LENGTH = 2**31 - 2  # int32 positions and ranks


def build_text(tokens: np.ndarray, doc_offsets: np.ndarray) -> tuple[np.ndarray, int]:
    """The int32 text with terminators, and its alphabet size (symbols are 0..alphabet-1).

    Token ids may be any uint32; ids are compressed to dense ranks first when they are sparse, so
    the alphabet never exceeds N and the initial counting sort stays linear.
    """
    tokens = np.asarray(tokens)
    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    n_docs = len(doc_offsets) - 1
    n_tokens = len(tokens)
    total = n_tokens + n_docs
    if total > MAX_TEXT_LENGTH:
        raise ParameterError(f"corpus has {n_tokens} tokens in {n_docs} documents; "
                             f"the suffix-array miner handles at most {MAX_TEXT_LENGTH} tokens "
                             "plus documents; "
                             "use algorithm='bloomspan' or split the corpus")
    if n_tokens and int(tokens.max()) >= n_tokens + 1:
        _, dense = np.unique(tokens, return_inverse=True)
        dense = dense.astype(np.int64, copy=False)
        alphabet = n_docs + (int(dense.max()) + 1 if n_tokens else 0)
    else:
        dense = tokens
        alphabet = n_docs + (int(tokens.max()) + 1 if n_tokens else 0)
    text = np.empty(total, dtype=np.int32)
    _fill_text(dense, doc_offsets, text)
    return text, alphabet


@njit(cache=True)
def _fill_text(dense_tokens, doc_offsets, text):
    n_docs = len(doc_offsets) - 1
    for d in range(n_docs):
        start = doc_offsets[d]
        end = doc_offsets[d + 1]
        base = start + d  # every earlier document added one terminator
        for i in range(start, end):
            text[base + i - start] = n_docs + dense_tokens[i]
        text[base + end - start] = d


@njit(cache=True)
def suffix_array(text, alphabet):
    """Suffix array (int32) of `text`, whose symbols are in 0..alphabet-1 and whose last symbol is
    unique (guaranteed by the per-document terminators; the empty text gives an empty array).
    Same as initial_order followed by refine_order (which need not keep the text alive)."""
    sa, rank = initial_order(text, alphabet)
    refine_order(sa, rank)
    return sa


@njit(cache=True)
def initial_order(text, alphabet):
    """Suffixes sorted by their first symbol, and their ranks (int32 each)."""
    n = len(text)
    sa = np.empty(n, dtype=np.int32)
    rank = np.empty(n, dtype=np.int32)
    if n:
        _sort_by_first_symbol(text, alphabet, sa, rank)
    return sa, rank


@njit(cache=True)
def refine_order(sa, rank):
    """Turn the first-symbol order into the suffix array, in place (the text is not needed)."""
    if len(sa) == 0:
        return
    _refine_tied_groups(sa, rank, 1)


@njit(cache=True)
def _refine_tied_groups(sa, rank, k):
    """Larsson-Sadakane: sort each tied group by rank[i + k], split it, double k, repeat.

    Ranks of a group are rewritten only after the whole group is sorted, so any other group reads
    either all old or all new ranks of it; both are consistent with the true order (new ones just
    reflect a longer prefix), so every group stays sorted by at least a 2k-prefix after a round.
    """
    n = len(sa)
    starts = np.empty(0, dtype=np.int32)
    n_groups = 0
    biggest = 0
    tied = 0
    for pass_ in range(2):  # count, then fill
        n_groups = 0
        tied = 0
        j = np.int64(0)  # int64 like the group starts below: one signature for _group_end
        while j < n:
            e = _group_end(sa, rank, j)
            if e - j >= 2:
                if pass_ == 1:
                    starts[n_groups] = j
                n_groups += 1
                tied += e - j
                if e - j > biggest:
                    biggest = e - j
            j = e
        if pass_ == 0:
            # Tied suffixes only ever become fewer, so tied // 2 bounds every later group count.
            starts = np.empty(tied // 2 + 1, dtype=np.int32)
    next_starts = np.empty(tied // 2 + 1, dtype=np.int32)
    keys = np.empty(biggest, dtype=np.int64)
    while n_groups > 0:
        out = 0
        for g in range(n_groups):
            s = np.int64(starts[g])
            # Only group starts are stored (4 bytes less per tied suffix): a group is the run of
            # suffixes whose rank is still its start. Groups done earlier this round only wrote
            # ranks inside their own range, so the run is intact.
            m = _group_end(sa, rank, s) - s
            for t in range(m):
                x = sa[s + t]
                keys[t] = rank[x + k] if x + k < n else -1
            _sort_segment(sa, s, keys, m)
            t = 0
            while t < m:
                u = t + 1
                while u < m and keys[u] == keys[t]:
                    u += 1
                for v in range(t, u):
                    rank[sa[s + v]] = s + t
                if u - t >= 2:
                    next_starts[out] = s + t
                    out += 1
                t = u
        starts, next_starts = next_starts, starts
        n_groups = out
        k *= 2


@njit(cache=True)
def _group_end(sa, rank, start):
    """End (exclusive) of the run of suffixes sharing the rank of sa[start]."""
    r = rank[sa[start]]
    end = start + 1
    while end < len(sa) and rank[sa[end]] == r:
        end += 1
    return end


@njit(cache=True)
def _sort_segment(sa, s, keys, m):
    """Sort sa[s:s+m] by keys[:m] (keys reordered alongside)."""
    if m <= 16:
        for t in range(1, m):
            key = keys[t]
            value = sa[s + t]
            u = t - 1
            while u >= 0 and keys[u] > key:
                keys[u + 1] = keys[u]
                sa[s + u + 1] = sa[s + u]
                u -= 1
            keys[u + 1] = key
            sa[s + u + 1] = value
        return
    order = np.argsort(keys[:m])
    values = sa[s:s + m][order]
    sorted_keys = keys[:m][order]
    for t in range(m):  # no array slice assignment: _numba/arrays.py
        sa[s + t] = values[t]
        keys[t] = sorted_keys[t]


@njit(cache=True)
def _sort_by_first_symbol(text, alphabet, sa, rank):
    """Round 0: counting sort by the first symbol; rank = start of the symbol's bucket.
    int32 counts (N < 2^31): the alphabet can be as large as the text (every word unique)."""
    counts = np.zeros(alphabet + 1, dtype=np.int32)
    for i in range(len(text)):
        counts[text[i] + 1] += 1
    for c in range(alphabet):
        counts[c + 1] += counts[c]
    for i in range(len(text)):
        rank[i] = counts[text[i]]
    for i in range(len(text)):
        s = text[i]
        sa[counts[s]] = i
        counts[s] += 1


@njit(cache=True)
def inverse_suffix_array(sa):
    inverse = np.empty(len(sa), dtype=np.int32)
    for j in range(len(sa)):
        inverse[sa[j]] = j
    return inverse


@njit(cache=True)
def permuted_lcp(text, sa):
    """PLCP in text order (Kaerkkaeinen, Manzini, Puglisi 2009): plcp[i] = LCP of suffix i and
    the suffix just before it in the suffix array. plcp[i + 1] >= plcp[i] - 1, so all comparisons
    together take O(N). Needs only one extra array (phi, overwritten in place by plcp)."""
    n = len(text)
    plcp = np.empty(n, dtype=np.int32)
    if n == 0:
        return plcp
    plcp[sa[0]] = -1
    for j in range(1, n):
        plcp[sa[j]] = sa[j - 1]  # phi: the suffix preceding i in suffix-array order
    h = 0
    for i in range(n):
        other = plcp[i]
        if other < 0:
            h = 0
            plcp[i] = 0
            continue
        while i + h < n and other + h < n and text[i + h] == text[other + h]:
            h += 1
        plcp[i] = h
        if h > 0:
            h -= 1
    return plcp


@njit(cache=True)
def lcp_from_permuted(plcp, sa):
    """lcp[j] = longest common prefix of suffixes sa[j-1] and sa[j]; lcp[0] = 0."""
    lcp = np.empty(len(sa), dtype=np.int32)
    for j in range(len(sa)):
        lcp[j] = plcp[sa[j]]
    return lcp


def lcp_array(text, sa):
    return lcp_from_permuted(permuted_lcp(text, sa), sa)
