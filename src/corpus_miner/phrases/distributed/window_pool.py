"""Token pools: many windows of one text stored as views into one copy of the tokens they span.

The windows a round ships are the right contexts of positions of the same chains, so those of
neighbouring positions overlap in all but one token. Copying every window costs the sum of
their lengths (occurrences x window length); a pool holds the union of their spans once, so it
never holds more tokens than the text it was cut from, and the windows are (start, length)
views into it.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def compact_pool(tokens, starts, lengths):
    """(pool, pool_starts): the union of the spans tokens[starts[i]:starts[i] + lengths[i]],
    copied in position order, and where each window starts in it (window i is
    pool[pool_starts[i]:pool_starts[i] + lengths[i]]). The layout depends on the spans only."""
    n = len(starts)
    order = np.argsort(starts)
    total = 0
    end = np.int64(-1)
    for j in range(n):
        i = order[j]
        s = starts[i]
        e = s + lengths[i]
        if s >= end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    pool = np.empty(total, dtype=np.uint32)
    pool_starts = np.empty(n, dtype=np.int64)
    m = 0
    end = np.int64(-1)
    segment_src = np.int64(0)  # where the current segment starts in tokens, and in the pool
    segment_dst = np.int64(0)
    for j in range(n):
        i = order[j]
        s = starts[i]
        e = s + lengths[i]
        if s >= end:
            segment_src = s
            segment_dst = m
            for t in range(s, e):
                pool[m] = tokens[t]
                m += 1
            end = e
        elif e > end:
            for t in range(end, e):
                pool[m] = tokens[t]
                m += 1
            end = e
        pool_starts[i] = segment_dst + (s - segment_src)
    return pool, pool_starts
