"""An exact set of 64-bit keys: open addressing over a power-of-two table, at most half full.

One probe sequence per query (a Bloom filter needs k probes and may err); 16 bytes per key. Used
where a set is small enough to hold exactly and is queried once per corpus position.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner._numba.hashing import splitmix64


@njit(cache=True)
def build_key_set(keys):
    """(table, used): the distinct keys in a linear-probing table; used[i] marks filled slots."""
    size = 16
    while size < 2 * len(keys):
        size *= 2
    table = np.zeros(size, dtype=np.uint64)
    used = np.zeros(size, dtype=np.bool_)
    mask = np.uint64(size - 1)
    for key in keys:
        slot = np.int64(splitmix64(key) & mask)
        while used[slot] and table[slot] != key:
            slot = (slot + 1) & (size - 1)
        table[slot] = key
        used[slot] = True
    return table, used


@njit(cache=True)
def key_set_contains(table, used, queries):
    """Membership of each query key."""
    mask = np.uint64(len(table) - 1)
    out = np.zeros(len(queries), dtype=np.bool_)
    for i in range(len(queries)):
        key = queries[i]
        slot = np.int64(splitmix64(key) & mask)
        while used[slot]:
            if table[slot] == key:
                out[i] = True
                break
            slot = (slot + 1) & (len(table) - 1)
    return out


class KeySet:
    """`KeySet(keys)(queries)` -> bool array: exact membership of uint64 keys."""

    def __init__(self, keys) -> None:
        self.table, self.used = build_key_set(np.ascontiguousarray(keys, dtype=np.uint64))

    def __call__(self, queries) -> np.ndarray:
        return key_set_contains(self.table, self.used,
                                np.ascontiguousarray(queries, dtype=np.uint64))
