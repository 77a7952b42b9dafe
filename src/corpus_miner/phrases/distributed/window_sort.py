"""Sorting token windows: lexicographic order, equal-content ranks and adjacent common prefixes.

A window is a run of token ids `data[start:start + length]`. The distributed miner ships many
windows that share long prefixes (one footer in millions of documents), so the sort is a
multikey quicksort (Bentley & Sedgewick, SODA 1997): it partitions on one token at a time and
moves equal windows down together, so a window costs its distinguishing prefix, not a full
comparison per step, and a run of identical windows costs one pass per token.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_INSERTION_BELOW = 12


@njit(cache=True, inline="always")
def _token_at(data, starts, lengths, w, depth):
    """Token `depth` of window w, or -1 past its end (a proper prefix sorts first)."""
    if depth < lengths[w]:
        return np.int64(data[starts[w] + depth])
    return np.int64(-1)


@njit(cache=True)
def _compare_from(data, starts, lengths, a, b, depth):
    """-1, 0, 1: window a against window b, both known to agree before `depth`."""
    la = lengths[a]
    lb = lengths[b]
    sa = starts[a]
    sb = starts[b]
    d = depth
    while d < la and d < lb:
        x = data[sa + d]
        y = data[sb + d]
        if x != y:
            return -1 if x < y else 1
        d += 1
    if la == lb:
        return 0
    return -1 if la < lb else 1


@njit(cache=True)
def sort_windows(data, starts, lengths):
    """Indices of the windows in lexicographic order (ties: equal content, any order)."""
    n = len(starts)
    order = np.arange(n, dtype=np.int64)
    if n < 2:
        return order
    # explicit stack of (lo, hi, depth) ranges still to sort; each push halves nothing in the
    # worst case, so it is sized for n entries of 3
    stack = np.empty((max(n, 16), 3), dtype=np.int64)
    top = 0
    stack[0, 0] = 0
    stack[0, 1] = n
    stack[0, 2] = 0
    top = 1
    while top > 0:
        top -= 1
        lo = stack[top, 0]
        hi = stack[top, 1]
        depth = stack[top, 2]
        if hi - lo < 2:
            continue
        if hi - lo < _INSERTION_BELOW:
            for i in range(lo + 1, hi):
                w = order[i]
                j = i
                while j > lo and _compare_from(data, starts, lengths, order[j - 1], w, depth) > 0:
                    order[j] = order[j - 1]
                    j -= 1
                order[j] = w
            continue
        # median of three tokens at this depth as the pivot
        a = _token_at(data, starts, lengths, order[lo], depth)
        b = _token_at(data, starts, lengths, order[(lo + hi) // 2], depth)
        c = _token_at(data, starts, lengths, order[hi - 1], depth)
        pivot = max(min(a, b), min(max(a, b), c))
        # Dijkstra's three-way partition: [lo, lt) < pivot, [lt, i) == pivot, (gt, hi) > pivot
        lt = lo
        i = lo
        gt = hi - 1
        while i <= gt:
            t = _token_at(data, starts, lengths, order[i], depth)
            if t < pivot:
                order[lt], order[i] = order[i], order[lt]
                lt += 1
                i += 1
            elif t > pivot:
                order[gt], order[i] = order[i], order[gt]
                gt -= 1
            else:
                i += 1
        if top + 3 > len(stack):
            bigger = np.empty((2 * len(stack), 3), dtype=np.int64)
            bigger[:top] = stack[:top]
            stack = bigger
        stack[top, 0] = lo
        stack[top, 1] = lt
        stack[top, 2] = depth
        top += 1
        stack[top, 0] = gt + 1
        stack[top, 1] = hi
        stack[top, 2] = depth
        top += 1
        if pivot >= 0:  # windows equal up to here and not ended: compare the next token
            stack[top, 0] = lt
            stack[top, 1] = gt + 1
            stack[top, 2] = depth + 1
            top += 1
    return order


@njit(cache=True)
def adjacent_lcp(data, starts, lengths, order):
    """lcp[j] = common prefix length of windows order[j - 1] and order[j]; lcp[0] = 0."""
    n = len(order)
    lcp = np.zeros(n, dtype=np.int64)
    for j in range(1, n):
        a = order[j - 1]
        b = order[j]
        limit = min(lengths[a], lengths[b])
        sa = starts[a]
        sb = starts[b]
        d = 0
        while d < limit and data[sa + d] == data[sb + d]:
            d += 1
        lcp[j] = d
    return lcp


@njit(cache=True)
def ranks_from_lcp(lengths, order, lcp):
    """rank[w]: dense rank of window w's content (equal windows share it), from a sorted order."""
    n = len(order)
    rank = np.empty(n, dtype=np.int64)
    r = -1
    for j in range(n):
        w = order[j]
        if j == 0 or lcp[j] != lengths[w] or lengths[order[j - 1]] != lengths[w]:
            r += 1
        rank[w] = r
    return rank
