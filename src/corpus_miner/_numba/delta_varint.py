"""Sorted 64-bit keys with counts as one byte string: per row, the key's difference from the
previous key, then the count, each a LEB128 varint (7 bits a byte).

The distributed miner ships its bigram counts this way: a partition's distinct bigram
fingerprints in one reduce bucket lie ~2^17 apart and most counts are 1, so a row takes ~4 bytes
instead of the 8 of a packed (fingerprint, count) word. Any order decodes exactly (differences
wrap modulo 2^64); sorted keys make the differences small.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _put(out, w, value):
    while value >= np.uint64(0x80):
        out[w] = np.uint8((value & np.uint64(0x7F)) | np.uint64(0x80))
        value >>= np.uint64(7)
        w += 1
    out[w] = np.uint8(value)
    return w + 1


@njit(cache=True, nogil=True)
def encode_key_counts(keys, counts):
    """keys (uint64), counts (uint32) -> uint8 array of the rows' varints."""
    out = np.empty(15 * len(keys), dtype=np.uint8)
    w = 0
    previous = np.uint64(0)
    for i in range(len(keys)):
        w = _put(out, w, keys[i] - previous)
        w = _put(out, w, np.uint64(counts[i]))
        previous = keys[i]
    return out[:w].copy()


@njit(cache=True, nogil=True)
def decode_key_counts(data, n):
    """The n rows of encode_key_counts: (keys uint64, counts int64)."""
    keys = np.empty(n, dtype=np.uint64)
    counts = np.empty(n, dtype=np.int64)
    r = 0
    previous = np.uint64(0)
    for i in range(2 * n):
        value = np.uint64(0)
        shift = np.uint64(0)
        while True:
            byte = np.uint64(data[r])
            r += 1
            value |= (byte & np.uint64(0x7F)) << shift
            if byte < np.uint64(0x80):
                break
            shift += np.uint64(7)
        if i % 2 == 0:
            previous += value
            keys[i // 2] = previous
        else:
            counts[i // 2] = np.int64(value)
    return keys, counts
