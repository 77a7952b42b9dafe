"""Numba kernels of the BloomSpan growth phase (steps 6-7 of the article).

Each seed (a frequent bigram with its occurrences, ascending positions) grows to the right by a
depth-first search that works directly on the token array: a node is a range [lo, hi) of a work
buffer of occurrences (start position, document) plus the phrase length L; its children are the
groups of occurrences with equal next token tokens[pos + L], produced by a stable in-place
partition, so every node's range stays sorted by position and counting distinct documents is a
single scan. No projected databases, no copies of the text.

Why every answer is found exactly once, and nothing else is
-----------------------------------------------------------
Let M be a maximal frequent phrase (df >= sigma, no frequent one-token extension) of length >= 2.
Its prefixes are frequent (df never grows under extension), so the DFS of the seed M[0:2] walks
the prefix chain M[0:2], M[0:3], ..., M unless a shortcut cuts it:

* Left pruning: a node whose occurrences all have the same left token a (none at a document
  start) is dropped with its subtree. Sound: every descendant D has a subset of those occurrences,
  so aD has the same occurrence set and df >= sigma, i.e. D is not left-maximal. Hence no prefix
  of M is ever pruned (M itself would be left-extendable).
* Mask pruning (see `mark_found` for the proof): a node whose occurrences that are not "dead"
  cover fewer than sigma documents is dropped. Every occurrence of a maximal phrase is alive and
  the occurrences of M are a subset of each prefix's, so no prefix of M is dropped.

A node is emitted iff it has no frequent right child (right-maximal, decided exactly by the
partition) and no left token whose occurrences cover sigma documents (left-maximal, decided
exactly by grouping the occurrences by left token). The two checks are the definition itself,
so the output is exactly the set of maximal phrases. Each phrase is one DFS node of one seed (its
first bigram), so nothing is emitted twice: the article's inverted index ("token -> found phrases",
used to reject sub-phrases of earlier finds and to evict earlier finds absorbed by later ones) is
not needed. It only approximated this left-maximality test, and its cost grows with the size of the
answer, which is exactly where the article saw BloomSpan slow down (50k books, sigma 10); the
exact test costs O(k log k) in the candidate's own k occurrences, whatever has been found so far.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner.phrases.kernels import bit_get, bit_set, doc_of

NO_TOKEN = np.uint64(0xFFFFFFFF)  # document start (left) or end (right); token ids are < 2^32 - 1
_LOW32 = np.uint64(0xFFFFFFFF)

# Indices of the counters returned by grow_seeds.
SEEDS_LEFT_PRUNED = 0
SEEDS_MASK_SKIPPED = 1
NODES_VISITED = 2
NODES_LEFT_PRUNED = 3
NODES_MASK_PRUNED = 4
LEFT_CHECKS = 5
N_COUNTERS = 6


@njit(cache=True, inline="always")
def _next_token(tokens, doc_offsets, pos, doc, length):
    if pos + length < doc_offsets[doc + 1]:
        return np.uint64(tokens[pos + length])
    return NO_TOKEN


@njit(cache=True, inline="always")
def _left_token(tokens, doc_offsets, pos, doc):
    if pos > doc_offsets[doc]:
        return np.uint64(tokens[pos - 1])
    return NO_TOKEN


@njit(cache=True)
def left_uniform(tokens, doc_offsets, wpos, wdoc, lo, hi):
    """True when every occurrence in [lo, hi) has the same (real) left token."""
    first = _left_token(tokens, doc_offsets, wpos[lo], wdoc[lo])
    if first == NO_TOKEN:
        return False
    for i in range(lo + 1, hi):
        if _left_token(tokens, doc_offsets, wpos[i], wdoc[i]) != first:
            return False
    return True


@njit(cache=True)
def alive_documents(wpos, wdoc, lo, hi, dead):
    """Distinct documents among the occurrences in [lo, hi) whose start is not dead."""
    count = 0
    doc = -1
    for i in range(lo, hi):
        if wdoc[i] != doc and not bit_get(dead, wpos[i]):
            count += 1
            doc = wdoc[i]
    return count


@njit(cache=True)
def left_maximal(tokens, doc_offsets, wpos, wdoc, lo, hi, sigma, scratch):
    """Exact left-maximality: no left token whose occurrences cover >= sigma documents."""
    m = hi - lo
    for j in range(m):
        left = _left_token(tokens, doc_offsets, wpos[lo + j], wdoc[lo + j])
        scratch[j] = (left << np.uint64(32)) | np.uint64(j)
    keys = scratch[:m]
    keys.sort()  # by left token, then by original index: documents ascending inside a group
    g = 0
    while g < m:
        left = keys[g] >> np.uint64(32)
        h = g
        docs = 0
        doc = -1
        while h < m and (keys[h] >> np.uint64(32)) == left:
            d = wdoc[lo + np.int64(keys[h] & _LOW32)]
            if d != doc:
                docs += 1
                doc = d
            h += 1
        if left != NO_TOKEN and docs >= sigma:
            return False
        g = h
    return True


@njit(cache=True)
def mark_found(wpos, lo, hi, length, frequent_bigram, dead, covered):
    """Record the occurrences of a phrase F just found: coverage bits for [p, p + L), and dead bits.

    Dead bits (the sound version of the article's coverage-mask skip). Let [q, e) be an occurrence
    of a found frequent phrase F such that no frequent bigram starts at e - 1 (the bigram across
    F's right end is infrequent, or e is the end of the document). Mark every p with q < p < e - 1
    dead. Claim: no maximal phrase has an occurrence starting at a dead p.
    Proof: every bigram starting in [p, e - 2] lies inside F's occurrence, so it is frequent, while
    the one at e - 1 is not. A frequent phrase starting at p has only frequent bigrams, so it ends
    at or before e and is the substring F[p - q : p - q + len] with p - q >= 1. Prepending
    F[p - q - 1] gives a phrase contained in F, so df >= df(F) >= sigma: not left-maximal.
    Consequence used by the growth: a node (or seed) whose alive occurrences cover fewer than sigma
    documents cannot have a maximal descendant, because a descendant's occurrences are a subset of
    the node's and a maximal phrase has all of its >= sigma documents among alive occurrences.
    (The article's rule "skip a seed whose occurrences are all covered" is not sound: a maximal
    phrase may start inside found phrases and run past their right ends.)

    Occurrences come in ascending order, so each bit is set at most once per call.
    """
    covered_until = -1
    dead_until = -1
    for i in range(lo, hi):
        p = wpos[i]
        e = p + length
        for x in range(max(p, covered_until), e):
            bit_set(covered, x)
        covered_until = max(covered_until, e)
        if not bit_get(frequent_bigram, e - 1):
            for x in range(max(p + 1, dead_until), e - 1):
                bit_set(dead, x)
            dead_until = max(dead_until, e - 1)


@njit(cache=True)
def grow_seeds(tokens, doc_offsets, occurrences, seed_lo, seed_hi, seed_ids, sigma, min_length,
               frequent_bigram, dead, covered):
    """Grow the seeds `seed_ids` (in that order; occurrences[seed_lo[s]:seed_hi[s]] ascending).

    Returns (start, length, df, occurrences) of every maximal phrase found (start = position of its
    first occurrence) and the counters indexed by SEEDS_LEFT_PRUNED ... LEFT_CHECKS."""
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    kmax = 1
    for s in seed_ids:
        kmax = max(kmax, seed_hi[s] - seed_lo[s])
    wpos = np.empty(kmax, dtype=np.int64)
    wdoc = np.empty(kmax, dtype=np.int64)
    tpos = np.empty(kmax, dtype=np.int64)
    tdoc = np.empty(kmax, dtype=np.int64)
    scratch = np.empty(kmax, dtype=np.uint64)
    stack_lo = np.empty(kmax + 1, dtype=np.int64)
    stack_hi = np.empty(kmax + 1, dtype=np.int64)
    stack_len = np.empty(kmax + 1, dtype=np.int64)
    out_start = np.empty(64, dtype=np.int64)
    out_len = np.empty(64, dtype=np.int64)
    out_df = np.empty(64, dtype=np.int64)
    out_occ = np.empty(64, dtype=np.int64)
    n_out = 0

    for s in seed_ids:
        n = seed_hi[s] - seed_lo[s]
        doc = -1
        for i in range(n):
            p = np.int64(occurrences[seed_lo[s] + i])
            doc = doc_of(doc_offsets, p, doc)
            wpos[i] = p
            wdoc[i] = doc
        if left_uniform(tokens, doc_offsets, wpos, wdoc, 0, n):
            counters[SEEDS_LEFT_PRUNED] += 1
            continue
        if alive_documents(wpos, wdoc, 0, n, dead) < sigma:
            counters[SEEDS_MASK_SKIPPED] += 1
            continue
        depth = 0
        stack_lo[0] = 0
        stack_hi[0] = n
        stack_len[0] = 2
        depth = 1
        while depth > 0:
            depth -= 1
            lo = stack_lo[depth]
            hi = stack_hi[depth]
            length = stack_len[depth]
            counters[NODES_VISITED] += 1
            if length > 2 and left_uniform(tokens, doc_offsets, wpos, wdoc, lo, hi):
                counters[NODES_LEFT_PRUNED] += 1
                continue
            # Fast path of long templates: all occurrences continue with the same token, so the
            # one child has the same occurrences (same df, same left tokens): just lengthen.
            while True:
                first = _next_token(tokens, doc_offsets, wpos[lo], wdoc[lo], length)
                if first == NO_TOKEN:
                    break
                same = True
                for i in range(lo + 1, hi):
                    if _next_token(tokens, doc_offsets, wpos[i], wdoc[i], length) != first:
                        same = False
                        break
                if not same:
                    break
                length += 1
            # Group [lo, hi) by next token: sort (token, index) keys; indices ascend inside a
            # group, so positions and documents do too. The occurrences themselves are permuted
            # only when a child is pushed, so a leaf keeps its range sorted by position.
            m = hi - lo
            for j in range(m):
                nxt = _next_token(tokens, doc_offsets, wpos[lo + j], wdoc[lo + j], length)
                scratch[j] = (nxt << np.uint64(32)) | np.uint64(j)
            keys = scratch[:m]
            keys.sort()
            has_frequent_child = False
            pushed = 0
            g = 0
            while g < m:
                nxt = keys[g] >> np.uint64(32)
                h = g
                while h < m and (keys[h] >> np.uint64(32)) == nxt:
                    h += 1
                if nxt != NO_TOKEN and h - g >= sigma:
                    docs = 0
                    alive = 0
                    doc = -1
                    alive_doc = -1
                    for j in range(g, h):
                        src = lo + np.int64(keys[j] & _LOW32)
                        if wdoc[src] != doc:
                            docs += 1
                            doc = wdoc[src]
                        if wdoc[src] != alive_doc and not bit_get(dead, wpos[src]):
                            alive += 1
                            alive_doc = wdoc[src]
                    if docs >= sigma:
                        has_frequent_child = True
                        if alive >= sigma:
                            stack_lo[depth] = lo + g
                            stack_hi[depth] = lo + h
                            stack_len[depth] = length + 1
                            depth += 1
                            pushed += 1
                        else:
                            counters[NODES_MASK_PRUNED] += 1
                g = h
            if pushed:
                for j in range(m):
                    src = lo + np.int64(keys[j] & _LOW32)
                    tpos[j] = wpos[src]
                    tdoc[j] = wdoc[src]
                for j in range(m):
                    wpos[lo + j] = tpos[j]
                    wdoc[lo + j] = tdoc[j]
            if has_frequent_child or length < min_length:
                continue
            counters[LEFT_CHECKS] += 1
            if not left_maximal(tokens, doc_offsets, wpos, wdoc, lo, hi, sigma, scratch):
                continue
            docs = 0
            doc = -1
            for i in range(lo, hi):
                if wdoc[i] != doc:
                    docs += 1
                    doc = wdoc[i]
            if n_out == len(out_start):
                out_start = _grow(out_start)
                out_len = _grow(out_len)
                out_df = _grow(out_df)
                out_occ = _grow(out_occ)
            out_start[n_out] = wpos[lo]
            out_len[n_out] = length
            out_df[n_out] = docs
            out_occ[n_out] = hi - lo
            n_out += 1
            mark_found(wpos, lo, hi, length, frequent_bigram, dead, covered)
    return (out_start[:n_out].copy(), out_len[:n_out].copy(), out_df[:n_out].copy(),
            out_occ[:n_out].copy(), counters)


@njit(cache=True)
def _grow(values):
    bigger = np.empty(2 * len(values), dtype=values.dtype)
    bigger[:len(values)] = values
    return bigger
