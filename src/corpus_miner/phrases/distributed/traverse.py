"""Stage 4 of the distributed miner: decide the phrases of a merged summary (one or more groups).

The summary's distinct windows, sorted, are the leaves of a trie: a phrase P of depth >= lo is the
range of windows starting with P. Like FHK's suffix array (phrases/exact.py), the ranges are the
LCP intervals of the sorted windows, visited bottom-up with a stack, plus single windows that no
other window extends (a window holds many occurrences, so a single one can be frequent).

df of a range = sum of its windows' document counts - its consecutive-pair counts (a document
whose windows in the range are w1 < ... < wk is counted k times and corrected k - 1 times); each
pair count is added to the lowest common interval of its two windows when the later one is
reached (Hui's trick), so one pass computes every df. Occurrences add up directly.

A node of depth d in [lo, hi) is an answer iff df >= sigma, no child is frequent (right-maximal;
a window shorter than hi has seen the end of every frequent extension, see windows.py) and no
real left neighbour x has its own df >= sigma (left-maximal; the same range formula over the
windows' x-records). A single window of depth hi with df >= sigma is deferred: its children lie
beyond the windows, and the next round decides it and what grows from it (unless all of its
occurrences share one real left neighbour: then nothing that grows from it is left-maximal).
Candidates (frequent, no frequent child) never nest, so the left test costs one pass over the left
records.

Why each answer is decided exactly once, with exact df: it starts with a min_length-gram g that
is live (if all of g's occurrences had one real left neighbour, the answer would extend to the
left), so round 0 ships every occurrence of g with windows reaching the answer's end or hi_0;
when they stop at hi_r, the ancestor of depth hi_r is frequent and deferred (not left-unique,
for the same reason: its occurrences hold the answer's), and round r + 1 ships all its
occurrences again, with longer windows. The round whose range holds the answer's length
decides it; other rounds only see it as an ancestor or not at all.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner.phrases.distributed.counts import content_hash
from corpus_miner.phrases.distributed.window_sort import adjacent_lcp

CANDIDATE = 0
DEFERRED = 1


@njit(cache=True, inline="always")
def _emit(out, found, lb, rb, depth, df, occurrences, kind):
    """`out` (a (capacity, 6) int64 table, doubled when full) with row `found` set."""
    if found == len(out):
        bigger = np.empty((2 * len(out), 6), dtype=np.int64)
        bigger[:found] = out
        out = bigger
    out[found, 0] = lb
    out[found, 1] = rb
    out[found, 2] = depth
    out[found, 3] = df
    out[found, 4] = occurrences
    out[found, 5] = kind
    return out


@njit(cache=True)
def frequent_nodes(tokens, starts, lengths, ndocs, nocc, pair_start, pair_a, pair_n, sigma, lo,
                   hi):
    """(lb, rb, depth, df, occurrences, kind) of every candidate (kind CANDIDATE: df >= sigma, no
    frequent child, lo <= depth < hi) and deferred window (kind DEFERRED: a single window of depth
    hi with df >= sigma). Windows (tokens[starts[w]:starts[w] + lengths[w]]) are sorted; pairs
    (pair_a[t], b) with counts pair_n[t] are listed for each later window b in
    t = pair_start[b] .. pair_start[b + 1] - 1."""
    n = len(ndocs)
    lcp = adjacent_lcp(tokens, starts, lengths, np.arange(n))
    doc_sum = np.zeros(n + 1, dtype=np.int64)
    occ_sum = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        doc_sum[i + 1] = doc_sum[i] + ndocs[i]
        occ_sum[i + 1] = occ_sum[i] + nocc[i]
    st_lcp = np.zeros(n + 2, dtype=np.int64)
    st_lb = np.zeros(n + 2, dtype=np.int64)
    st_corr = np.zeros(n + 2, dtype=np.int64)
    st_freq = np.zeros(n + 2, dtype=np.bool_)
    top = 0
    out = np.empty((16, 6), dtype=np.int64)  # lb, rb, depth, df, occurrences, kind
    found = 0
    for j in range(1, n + 1):
        current = lcp[j] if j < n else 0  # boundary between windows j - 1 and j
        carry_corr = 0
        carry_freq = False
        # window j - 1 as a node of its own, when no neighbour extends it
        k = j - 1
        before = lcp[k] if k > 0 else 0
        if lengths[k] > max(before, current):
            df = ndocs[k]
            kind = -1
            if df >= sigma:
                if current > before:
                    carry_freq = True  # its parent is the interval pushed at this boundary
                else:
                    st_freq[top] = True  # its parent is the open interval of depth `before`
                if lengths[k] >= lo:
                    kind = DEFERRED if lengths[k] >= hi else CANDIDATE
            if kind >= 0:
                out = _emit(out, found, k, k, lengths[k], df, nocc[k], kind)
                found += 1
        lb = k
        while current < st_lcp[top]:
            depth = st_lcp[top]
            node_lb = st_lb[top]
            node_corr = st_corr[top]
            node_freq = st_freq[top]
            top -= 1
            df = doc_sum[j] - doc_sum[node_lb] - node_corr
            frequent = df >= sigma
            if frequent and not node_freq and lo <= depth < hi:
                out = _emit(out, found, node_lb, j - 1, depth, df, occ_sum[j] - occ_sum[node_lb],
                            np.int64(CANDIDATE))
                found += 1
            lb = node_lb
            if current <= st_lcp[top]:  # the parent is the entry below
                st_corr[top] += node_corr
                st_freq[top] = st_freq[top] or frequent
            else:  # the parent is the interval about to be pushed
                carry_corr = node_corr
                carry_freq = frequent
        if current > st_lcp[top]:
            top += 1
            st_lcp[top] = current
            st_lb[top] = lb
            st_corr[top] = carry_corr
            st_freq[top] = carry_freq
        if j < n:
            for t in range(pair_start[j], pair_start[j + 1]):
                a = pair_a[t]
                low = 0
                high = top  # deepest entry with st_lb <= a (st_lb[0] = 0)
                while low < high:
                    mid = (low + high + 1) // 2
                    if st_lb[mid] <= a:
                        low = mid
                    else:
                        high = mid - 1
                st_corr[low] += pair_n[t]
    return (out[:found, 0].copy(), out[:found, 1].copy(), out[:found, 2].copy(),
            out[:found, 3].copy(), out[:found, 4].copy(), out[:found, 5].copy())


def pairs_by_later_window(n_windows: int, a: np.ndarray, b: np.ndarray, count: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start per window b, a, count) with the pairs grouped by b (CSR)."""
    order = np.argsort(b, kind="stable")
    start = np.zeros(n_windows + 1, dtype=np.int64)
    np.cumsum(np.bincount(b, minlength=n_windows), out=start[1:])
    return start, np.ascontiguousarray(a[order], np.int64), np.ascontiguousarray(count[order],
                                                                                np.int64)


def left_extendable(summary, lb: np.ndarray, rb: np.ndarray, sigma: int) -> np.ndarray:
    """Per candidate range [lb, rb] (disjoint ranges): some real left neighbour x has df >= sigma
    over the range (x-records of its windows minus x-pairs inside it)."""
    sizes = rb - lb + 1
    first = np.zeros(len(lb), dtype=np.int64)
    np.cumsum(sizes[:-1], out=first[1:])
    owner = np.full(summary.n_windows, -1, dtype=np.int64)
    owner[np.repeat(lb - first, sizes) + np.arange(int(sizes.sum()))] = np.repeat(
        np.arange(len(lb)), sizes)
    c_left = owner[summary.left_w]
    c_pair = owner[summary.lpair_a]
    inside = (c_pair >= 0) & (owner[summary.lpair_b] == c_pair)
    keep = c_left >= 0
    cand = np.concatenate([c_left[keep], c_pair[inside]])
    x = np.concatenate([summary.left_x[keep], summary.lpair_x[inside]]).astype(np.int64)
    n = np.concatenate([summary.left_n[keep], -summary.lpair_n[inside]])
    extendable = np.zeros(len(lb), dtype=bool)
    if len(cand):
        key = cand * (np.int64(1) << 32) + x
        order = np.argsort(key, kind="stable")
        key = key[order]
        starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
        df = np.add.reduceat(n[order], starts)
        extendable[(key[starts] >> 32)[df >= sigma]] = True
    return extendable


def left_unique(summary) -> np.ndarray:
    """Per window: all its occurrences follow one real left neighbour x. Every phrase that
    extends such a window then extends to the left as well (xQ occurs wherever Q does), so none
    is an answer and a deferred window that is left-unique is not continued: inside a passage
    that several documents share, only the positions where the copies' left contexts differ
    grow on (as round 0 ships only live grams)."""
    out = np.zeros(summary.n_windows, dtype=bool)
    out[summary.left_w[summary.left_o == summary.nocc[summary.left_w]]] = True
    return out


def decide(summary, sigma: int, lo: int, hi: int, mask: np.uint64):
    """(phrases, deferred) of a merged summary: phrases = (tokens, offsets, df, occurrences) of
    every answer of depth in [lo, hi); deferred = (key, df, occurrences) of every deferred window
    (key: content_hash of its first hi tokens with `mask`, the next round's group key)."""
    pair_start, pair_a, pair_n = pairs_by_later_window(summary.n_windows, summary.pair_a,
                                                       summary.pair_b, summary.pair_n)
    lb, rb, depth, df, occ, kind = frequent_nodes(summary.tokens, summary.starts, summary.lengths,
                                                  summary.ndocs, summary.nocc, pair_start, pair_a,
                                                  pair_n, sigma, lo, hi)
    answer = kind == CANDIDATE
    keep = np.flatnonzero(answer)[~left_extendable(summary, lb[answer], rb[answer], sigma)]
    starts = summary.starts[lb[keep]]
    lengths = depth[keep]
    offsets = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    gather = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
    phrases = (summary.tokens[gather], offsets, df[keep], occ[keep])
    later = np.flatnonzero((kind == DEFERRED) & ~left_unique(summary)[lb])
    keys = np.array([content_hash(summary.tokens, summary.starts[lb[i]], hi, mask)
                     for i in later], dtype=np.uint64)
    return phrases, (keys, df[later], occ[later])
