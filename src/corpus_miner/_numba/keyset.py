"""An exact set of 64-bit keys: open addressing over a power-of-two table, at most a quarter
full.

One probe sequence per query (a Bloom filter needs k probes and may err); 32 to 64 bytes per key.
Used where a set is small enough to hold exactly and is queried once per corpus position, in
tables larger than the CPU's caches: a slot is the key itself, with 0 marking an empty slot and
the key 0 remembered apart, so that a probe reads one word of memory, not a key and a used flag;
and the home slot of a query decides it but for a quarter of the absent keys at most, so the
probe loop is rarely entered (frequent-bigram queries of big1b: 18.9 ns each with a used flag and
a half-full table, 10.8 ns so).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner._numba.hashing import splitmix64


@njit(cache=True)
def build_key_set(keys):
    """(table, has_zero): the distinct non-zero keys in a linear-probing table (0: empty slot),
    and whether the key 0 is in the set."""
    size = 16
    while size < 4 * len(keys):
        size *= 2
    table = np.zeros(size, dtype=np.uint64)
    mask = np.uint64(size - 1)
    has_zero = False
    for key in keys:
        if key == 0:
            has_zero = True
            continue
        slot = np.int64(splitmix64(key) & mask)
        while table[slot] != 0 and table[slot] != key:
            slot = (slot + 1) & (size - 1)
        table[slot] = key
    return table, has_zero


@njit(cache=True)
def key_set_contains(table, has_zero, queries):
    """Membership of each query key."""
    mask = np.uint64(len(table) - 1)
    out = np.empty(len(queries), dtype=np.bool_)
    for i in range(len(queries)):
        key = queries[i]
        slot = np.int64(splitmix64(key) & mask)
        found = table[slot]
        while found != key and found != 0:  # rare in a table at most a quarter full
            slot = (slot + 1) & (len(table) - 1)
            found = table[slot]
        out[i] = (found == key) if key != 0 else has_zero
    return out


class KeySet:
    """`KeySet(keys)(queries)` -> bool array: exact membership of uint64 keys."""

    def __init__(self, keys) -> None:
        self.table, self.has_zero = build_key_set(np.ascontiguousarray(keys, dtype=np.uint64))

    def __call__(self, queries) -> np.ndarray:
        return key_set_contains(self.table, self.has_zero,
                                np.ascontiguousarray(queries, dtype=np.uint64))
