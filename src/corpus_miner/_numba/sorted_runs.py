"""Keyed rows reduced by key when the keys come as concatenated sorted runs.

The distributed miner's counts arrive that way: a partition's flushes, the blobs of every
partition in a reducer, a batch's statistics merged into a partition's, each sorted by key. A
bottom-up merge of adjacent runs that combines rows of equal keys as it writes them reads and
writes each row once per level (log2 of the number of runs levels), in sequential streams; a
stable argsort followed by a gather of every column and a reduceat per column costs 2-3 times
more. Any input is accepted (n runs of one row are merge-sorted).

A level kernel merges runs 2j and 2j + 1 of every pair into run j of an output buffer and
returns the new bounds; it is written once per row layout (`sum_level` here, a five-column one in
phrases/distributed/counts.py), since one loop over a variable number of columns with a combine
chosen per column ran 2-3 times slower. `merge_runs` runs the levels, ping-ponging between two
buffers that it passes whole (the bounds say which rows are used), so that every call of a
kernel has the same argument types.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def run_bounds(keys):
    """Starts of the maximal non-decreasing runs of keys, then len(keys)."""
    n = len(keys)
    n_runs = 1 if n else 0
    for i in range(1, n):
        if keys[i] < keys[i - 1]:
            n_runs += 1
    bounds = np.empty(n_runs + 1, dtype=np.int64)
    r = 0
    for i in range(n):
        if i == 0 or keys[i] < keys[i - 1]:
            bounds[r] = i
            r += 1
    bounds[n_runs] = n
    return bounds


@njit(cache=True, inline="always")
def pair_of_runs(bounds, j):
    """[a, a_end) and [a_end, b_end): runs 2j and 2j + 1 (empty when 2j is the last run)."""
    a, a_end = bounds[2 * j], bounds[2 * j + 1]
    b_end = bounds[2 * j + 2] if 2 * j + 2 < len(bounds) else a_end
    return a, a_end, b_end


@njit(cache=True)
def sum_level(keys, counts, bounds, out_keys, out_counts):
    """One level of merge_runs for rows of one count, summed over equal keys."""
    n_out = len(bounds) // 2  # (runs + 1) // 2
    merged = np.empty(n_out + 1, dtype=np.int64)
    w = 0
    for j in range(n_out):
        merged[j] = w
        a, a_end, b_end = pair_of_runs(bounds, j)
        b = a_end
        start = w
        while a < a_end or b < b_end:
            if a < a_end and (b == b_end or keys[a] <= keys[b]):
                i = a
                a += 1
            else:
                i = b
                b += 1
            key = keys[i]
            if w > start and out_keys[w - 1] == key:
                out_counts[w - 1] += counts[i]
            else:
                out_keys[w] = key
                out_counts[w] = counts[i]
                w += 1
    merged[n_out] = w
    return merged


def merge_runs(level, keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys ascending, their combined values) of keys[i] with values[..., i], merged
    level by level by the kernel `level` (sum_level...). keys must be writable C-contiguous
    uint64 and values writable C-contiguous int64 (n,) or (columns, n)."""
    bounds = run_bounds(keys)
    out_keys, out_values = np.empty_like(keys), np.empty_like(values)
    spare_keys, spare_values = None, None
    while True:
        bounds = level(keys, values, bounds, out_keys, out_values)
        if len(bounds) <= 2:
            break
        if spare_keys is None:
            spare_keys, spare_values = np.empty_like(out_keys), np.empty_like(out_values)
        keys, values, out_keys, out_values, spare_keys, spare_values = \
            out_keys, out_values, spare_keys, spare_values, out_keys, out_values
    m = int(bounds[-1])
    out_keys, out_values = out_keys[:m], out_values[..., :m]
    if 2 * m < len(keys):  # do not hold a buffer mostly unused
        out_keys, out_values = out_keys.copy(), out_values.copy()
    return out_keys, out_values


def sum_sorted_runs(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct keys, summed int64 counts) of (key, count) rows; fast when the keys are
    a few concatenated sorted runs."""
    return merge_runs(sum_level, np.require(keys, np.uint64, "CW"),
                      np.require(counts, np.int64, "CW"))
