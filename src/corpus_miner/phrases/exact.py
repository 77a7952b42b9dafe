"""FHK: the exact suffix-array baseline for maximal contiguous frequent phrases.

Pipeline (stages timed in the stats): text with per-document terminators -> suffix array (prefix
doubling) -> LCP (via the permuted LCP) -> one bottom-up pass over the LCP intervals with a stack
-> left maximality by matching -> PhraseTable.

Why every answer is an LCP interval: a phrase Q that is not the longest common prefix of its
occurrence interval has a one-token right extension with exactly the same occurrences (hence the
same df), so it is not maximal. So only interval strings (length = the interval's lcp value) can be
answers; phrases occurring in one place only have df 1 < sigma.

Distinct-document counting (Hui's trick, as in FHK): walking the suffix array left to right, each
suffix j whose document already appeared at an earlier suffix prev(j) adds a correction of one to
the lowest common ancestor interval of prev(j) and j; df(interval) = its size minus the corrections
in its subtree. The LCA is still open on the stack when j is reached: it is the deepest stack entry
whose left bound is <= prev(j) (found by binary search, the stack's left bounds never decrease).

Right maximality: an interval string Q is right-maximal frequent (RMF) iff df(Q) >= sigma and no
child interval has df >= sigma (each one-token right extension Qa is a child interval or a single
suffix with df 1).

Left maximality. Claim: an RMF Q is left-extendable (some aQ has df >= sigma) iff some aQ is RMF.
Proof: if aQ is RMF it is frequent, so Q is left-extendable. Conversely let aQ be frequent; if aQb
were frequent for some b then Qb would be too (df(Qb) >= df(aQb) >= sigma), contradicting Q's
right maximality; so aQ is RMF. Hence: for every RMF interval aQ (any occurrence p = sa[lb]) the
suffix at p + 1 starts with Q, so the "witness" (row inverse[p + 1], length |aQ| - 1) lies inside
Q's interval. Distinct intervals with equal lcp value are disjoint, so the witness pins down Q
exactly: Q is left-extendable iff a witness has Q's length and a row inside Q's interval.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from corpus_miner._numba.arrays import grow
from corpus_miner.memory import PeakRss
from corpus_miner.phrases.inputs import checked_doc_offsets
from corpus_miner.phrases.params import PhraseParams
from corpus_miner.phrases.result import PhraseTable
from corpus_miner.phrases.suffix_array import (
    build_text,
    initial_order,
    inverse_suffix_array,
    lcp_from_permuted,
    permuted_lcp,
    refine_order,
)


@njit(cache=True)
def right_maximal_frequent_intervals(sa, lcp, full_doc_starts, first_row, sigma, min_length):
    """Bottom-up LCP-interval traversal. Returns (lb, rb, length, df) of every interval with
    df >= sigma, length >= min_length and no child interval with df >= sigma.

    full_doc_starts: text position where each document starts, plus the text length at the end.
    first_row: rows before it are terminator suffixes and are skipped (they only touch the root).
    """
    n = len(sa)
    n_docs = len(full_doc_starts) - 1
    depth = 2
    for j in range(first_row, n):
        if lcp[j] + 2 > depth:
            depth = lcp[j] + 2
    st_lcp = np.zeros(depth, dtype=np.int64)
    st_lb = np.zeros(depth, dtype=np.int64)
    st_corr = np.zeros(depth, dtype=np.int64)
    st_frequent_child = np.zeros(depth, dtype=np.bool_)
    st_lb[0] = first_row
    top = 0
    last_row_of_doc = np.full(max(n_docs, 1), -1, dtype=np.int64)

    out_lb = np.empty(1024, dtype=np.int64)
    out_rb = np.empty(1024, dtype=np.int64)
    out_len = np.empty(1024, dtype=np.int64)
    out_df = np.empty(1024, dtype=np.int64)
    found = 0

    for j in range(first_row, n + 1):
        current = 0 if (j == n or j == first_row) else np.int64(lcp[j])
        lb = j - 1
        carry_corr = 0
        carry_frequent = False
        while current < st_lcp[top]:
            node_len = st_lcp[top]
            node_lb = st_lb[top]
            node_corr = st_corr[top]
            node_frequent_child = st_frequent_child[top]
            top -= 1
            df = (j - node_lb) - node_corr
            frequent = df >= sigma
            if frequent and not node_frequent_child and node_len >= min_length:
                if found == len(out_lb):
                    out_lb = grow(out_lb)
                    out_rb = grow(out_rb)
                    out_len = grow(out_len)
                    out_df = grow(out_df)
                out_lb[found] = node_lb
                out_rb[found] = j - 1
                out_len[found] = node_len
                out_df[found] = df
                found += 1
            lb = node_lb
            if current <= st_lcp[top]:  # parent is the entry below
                st_corr[top] += node_corr
                st_frequent_child[top] = st_frequent_child[top] or frequent
            else:  # parent is the interval about to be pushed
                carry_corr = node_corr
                carry_frequent = frequent
        if current > st_lcp[top]:
            top += 1
            st_lcp[top] = current
            st_lb[top] = lb
            st_corr[top] = carry_corr
            st_frequent_child[top] = carry_frequent
        if j < n:
            doc = np.searchsorted(full_doc_starts, sa[j], side="right") - 1
            prev = last_row_of_doc[doc]
            last_row_of_doc[doc] = j
            if prev >= 0:
                low = 0
                high = top  # deepest entry with st_lb <= prev; st_lb[0] = first_row <= prev
                while low < high:
                    mid = (low + high + 1) // 2
                    if st_lb[mid] <= prev:
                        low = mid
                    else:
                        high = mid - 1
                st_corr[low] += 1
    return out_lb[:found], out_rb[:found], out_len[:found], out_df[:found]


def left_extendable(sa, inverse, lb, rb, length) -> np.ndarray:
    """Boolean per RMF interval: some one-token left extension is also RMF (see module
    docstring)."""
    if len(lb) == 0:
        return np.zeros(0, dtype=bool)
    stride = np.int64(len(sa) + 1)
    key = length * stride + lb
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    witness_row = inverse[sa[lb] + 1].astype(np.int64)
    witness_key = (length - 1) * stride + witness_row
    at = np.searchsorted(sorted_key, witness_key, side="right") - 1
    valid = at >= 0
    target = order[np.where(valid, at, 0)]
    hit = valid & (length[target] == length - 1) & (witness_row <= rb[target])
    extendable = np.zeros(len(lb), dtype=bool)
    extendable[target[hit]] = True
    return extendable


@dataclass
class MaximalIntervals:
    """The suffix-array intervals [lb, rb] of every maximal phrase (with its length and df)."""

    sa: np.ndarray
    full_doc_starts: np.ndarray  # document starts in the text (one terminator per document)
    lb: np.ndarray
    rb: np.ndarray
    length: np.ndarray
    df: np.ndarray
    right_maximal: int  # right-maximal frequent intervals before the left-maximality test

    def token_positions(self, rows: np.ndarray) -> np.ndarray:
        """Token positions of the suffixes at the given suffix-array rows."""
        text_pos = self.sa[rows].astype(np.int64)
        return text_pos - (np.searchsorted(self.full_doc_starts, text_pos, side="right") - 1)


def maximal_intervals(tokens: np.ndarray, doc_offsets: np.ndarray, sigma: int, min_length: int,
                      stage: Callable[[str], float] | None = None,
                      seconds: dict | None = None) -> MaximalIntervals:
    """FHK's core on validated arrays: suffix array, LCP, RMF intervals, left maximality.

    stage(name) is called as each stage starts and returns its start time; the stage's duration
    goes to seconds[name]."""
    stage = stage or (lambda name: time.perf_counter())
    seconds = {} if seconds is None else seconds
    n_docs = len(doc_offsets) - 1
    # Stages are ordered so that at most three int32 arrays of N are alive at once (about 12
    # bytes per token on top of the corpus): the text is dropped while the order is refined and
    # rebuilt for the LCP, and the inverse suffix array is only made once the LCP is gone.
    t = stage("text")
    text, alphabet = build_text(tokens, doc_offsets)
    seconds["text"] = time.perf_counter() - t
    t = stage("suffix_array")
    sa, rank = initial_order(text, alphabet)
    del text
    refine_order(sa, rank)
    del rank
    seconds["suffix_array"] = time.perf_counter() - t
    t = stage("lcp")
    text, _ = build_text(tokens, doc_offsets)
    plcp = permuted_lcp(text, sa)
    del text
    lcp = lcp_from_permuted(plcp, sa)
    del plcp
    seconds["lcp"] = time.perf_counter() - t
    t = stage("traversal")
    full_doc_starts = doc_offsets + np.arange(n_docs + 1, dtype=np.int64)
    lb, rb, length, df = right_maximal_frequent_intervals(sa, lcp, full_doc_starts, n_docs,
                                                          int(sigma), int(min_length))
    del lcp
    seconds["traversal"] = time.perf_counter() - t
    t = stage("left_maximality")
    inverse = inverse_suffix_array(sa)
    keep = ~left_extendable(sa, inverse, lb, rb, length)
    del inverse
    seconds["left_maximality"] = time.perf_counter() - t
    return MaximalIntervals(sa, full_doc_starts, lb[keep], rb[keep], length[keep], df[keep],
                            int(len(keep)))


def mine_fhk(tokens: np.ndarray, doc_offsets: np.ndarray, sigma: int, min_length: int,
             vocab: Sequence[str], *, progress: Callable[[str], None] | None = None
             ) -> tuple[PhraseTable, dict]:
    """Every maximal contiguous frequent phrase, exactly, via suffix array + LCP intervals.

    progress, if given, is called with the name of each stage as it starts.
    Returns the PhraseTable in canonical order (PhraseTable.sorted) and a stats dict.
    """
    params = PhraseParams(sigma=sigma, min_length=min_length, algorithm="fhk")
    sigma, min_length = params.sigma, params.min_length
    tokens = np.ascontiguousarray(tokens)  # any ids up to 2^32 - 1: fhk makes them dense itself
    doc_offsets = checked_doc_offsets(tokens, doc_offsets)
    n_docs = len(doc_offsets) - 1
    stats: dict = {"algorithm": "fhk", "tokens": int(len(tokens)), "documents": n_docs,
                   "sigma": int(sigma), "min_length": int(min_length), "seconds": {}}
    seconds = stats["seconds"]
    started = time.perf_counter()
    rss = PeakRss()

    def stage(name):
        if progress is not None:
            progress(name)
        return time.perf_counter()

    if sigma > n_docs or len(tokens) == 0:
        stats.update(phrases=0, seconds_total=0.0, **rss.report(),
                     note=f"sigma={sigma} exceeds the {n_docs} documents: no phrase can be frequent"
                     if sigma > n_docs else "empty corpus")
        return PhraseTable.empty(vocab), stats

    found = maximal_intervals(tokens, doc_offsets, sigma, min_length, stage, seconds)
    t = stage("output")
    lb, rb, length, df = found.lb, found.rb, found.length, found.df
    start = found.token_positions(lb)
    offsets = np.zeros(len(lb) + 1, dtype=np.int64)
    np.cumsum(length, out=offsets[1:])
    flat = np.empty(int(offsets[-1]), dtype=np.uint32)
    _gather_phrases(tokens, start, offsets, flat)
    table = PhraseTable(flat, offsets, df.astype(np.int64), (rb - lb + 1).astype(np.int64),
                        vocab).sorted()
    seconds["output"] = time.perf_counter() - t
    stats.update(phrases=len(table), right_maximal_candidates=found.right_maximal,
                 seconds_total=time.perf_counter() - started, **rss.report())
    return table, stats


@njit(cache=True)
def _gather_phrases(tokens, start, offsets, flat):
    for i in range(len(start)):
        for k in range(offsets[i + 1] - offsets[i]):
            flat[offsets[i] + k] = tokens[start[i] + k]
