"""Keyed rows reduced by key when they come as sorted runs.

The distributed miner's counts arrive that way: a partition's flushes, the blobs of every
partition in a reducer, a batch's statistics merged into a partition's, each sorted by key. A
stable argsort of their concatenation is numpy's timsort, which finds the runs and merges them
(galloping through a large run met by small ones); one kernel pass in that order then combines
the rows of equal keys, instead of a gather per column and a reduceat per column (2-3 times
slower; merging the runs two at a time in numba was slower than timsort too).

The combining pass is written once per row layout (`sums_in_order` here, a five-column one in
phrases/distributed/counts.py): one loop over a variable number of columns with a combine chosen
per column ran 2-3 times slower.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numba import njit


def merged_order(keys: np.ndarray) -> np.ndarray:
    """The stable order of keys that come as concatenated sorted runs (a merge of the runs)."""
    return np.argsort(keys, kind="stable")


@njit(cache=True, nogil=True)
def sums_in_order(keys, counts, order):
    """(keys, counts, m): the distinct keys of the rows visited in `order` (keys ascending) and
    their summed counts in keys[:m], counts[:m]."""
    out_keys = np.empty(len(order), dtype=np.uint64)
    out_counts = np.empty(len(order), dtype=np.int64)
    w = 0
    for i in range(len(order)):
        j = order[i]
        if w > 0 and out_keys[w - 1] == keys[j]:
            out_counts[w - 1] += counts[j]
        else:
            out_keys[w] = keys[j]
            out_counts[w] = counts[j]
            w += 1
    return out_keys, out_counts, w


def used(arrays: tuple, m: int) -> tuple:
    """The first m rows of each array, copied when that frees most of the array."""
    if 2 * m < len(arrays[0]):
        return tuple(a[:m].copy() for a in arrays)
    return tuple(a[:m] for a in arrays)


def sum_sorted_runs(runs: Iterable[tuple[np.ndarray, np.ndarray]]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct keys, summed int64 counts) of (keys, counts) pairs, each a sorted run of
    uint64 keys (any order is accepted; a few sorted runs are merged fastest)."""
    runs = list(runs)
    keys = np.concatenate([k for k, _ in runs] + [np.zeros(0, np.uint64)], dtype=np.uint64)
    counts = np.concatenate([c for _, c in runs] + [np.zeros(0, np.int64)], dtype=np.int64)
    *sums, m = sums_in_order(keys, counts, merged_order(keys))
    return used(tuple(sums), m)
