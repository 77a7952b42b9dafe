"""Sorted 64-bit keys with small columns as one byte string: per row, the key's difference from
the previous key, then its columns, each a LEB128 varint (7 bits a byte).

The distributed miner ships its bigram counts this way: a partition's distinct bigram
fingerprints in one reduce bucket lie ~2^17 apart and most counts are 1, so a row takes ~4 bytes
instead of the 8 of a packed (fingerprint, count) word. Its gram statistics too
(`encode_gram_rows`): most grams have one document, one occurrence and one left neighbour, so a
row takes ~12 bytes instead of 25 in fixed widths. Any order decodes exactly (differences wrap
modulo 2^64); sorted keys make the differences small.
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


@njit(cache=True, inline="always")
def _get(data, r):
    value = np.uint64(0)
    shift = np.uint64(0)
    while True:
        byte = np.uint64(data[r])
        r += 1
        value |= (byte & np.uint64(0x7F)) << shift
        if byte < np.uint64(0x80):
            return value, r
        shift += np.uint64(7)


@njit(cache=True, inline="always")
def _get_key(data, r, previous):
    """The key after `previous`: previous plus the difference read at r (modulo 2^64)."""
    delta, r = _get(data, r)
    return previous + delta, r


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
    for i in range(n):
        keys[i], r = _get_key(data, r, keys[i - 1] if i else np.uint64(0))
        count, r = _get(data, r)
        counts[i] = np.int64(count)
    return keys, counts


@njit(cache=True, inline="always")
def _zigzag(x):
    """A signed difference as an unsigned value that is small when |x| is."""
    return np.uint64((x << np.int64(1)) ^ (x >> np.int64(63)))


@njit(cache=True, inline="always")
def _unzigzag(v):
    return np.int64(v >> np.uint64(1)) ^ -np.int64(v & np.uint64(1))


@njit(cache=True, inline="always")
def _left_code(left):
    """A 32-bit left neighbour, NO_LEFT (0xFFFFFFFF) as 0 and token id t as t + 1."""
    return (left + np.int64(1)) & np.int64(0xFFFFFFFF)


@njit(cache=True, nogil=True)
def encode_gram_rows(fp, df, occurrences, min_left, max_left, has_no_left):
    """Gram statistics rows (fp uint64; the others int64, lefts 32-bit values, has_no_left 0 or
    1) -> uint8 array: fp difference, df, zigzag(occurrences - df) * 2 + has_no_left, the
    min left's code, zigzag(max left's code - min left's code)."""
    out = np.empty(50 * len(fp), dtype=np.uint8)
    w = 0
    previous = np.uint64(0)
    for i in range(len(fp)):
        w = _put(out, w, fp[i] - previous)
        previous = fp[i]
        w = _put(out, w, np.uint64(df[i]))
        w = _put(out, w, (_zigzag(occurrences[i] - df[i]) << np.uint64(1))
                 | np.uint64(has_no_left[i]))
        lo = _left_code(min_left[i])
        w = _put(out, w, np.uint64(lo))
        w = _put(out, w, _zigzag(_left_code(max_left[i]) - lo))
    return out[:w].copy()


@njit(cache=True, nogil=True)
def decode_gram_rows(data, n):
    """The n rows of encode_gram_rows: fp (uint64) and the five int64 columns."""
    fp = np.empty(n, dtype=np.uint64)
    columns = np.empty((5, n), dtype=np.int64)
    r = 0
    for i in range(n):
        fp[i], r = _get_key(data, r, fp[i - 1] if i else np.uint64(0))
        df, r = _get(data, r)
        extra, r = _get(data, r)
        lo, r = _get(data, r)
        spread, r = _get(data, r)
        columns[0, i] = np.int64(df)
        columns[1, i] = np.int64(df) + _unzigzag(extra >> np.uint64(1))
        columns[4, i] = np.int64(extra & np.uint64(1))
        columns[2, i] = (np.int64(lo) - np.int64(1)) & np.int64(0xFFFFFFFF)
        columns[3, i] = (np.int64(lo) + _unzigzag(spread) - np.int64(1)) & np.int64(0xFFFFFFFF)
    return fp, columns
