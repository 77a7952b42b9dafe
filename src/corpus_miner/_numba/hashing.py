"""Hash primitives shared by the kernels of every room (numba, usable from other kernels).

Three kinds of arithmetic live here, on purpose:
- `mulmod61` is exact arithmetic modulo the Mersenne prime 2^61 - 1 without 128-bit integers: the
  universal hash (a*x + b) mod p of MinHash needs it, and no intermediate ever exceeds 2^64, so the
  same code is also correct when run as plain Python (NUMBA_DISABLE_JIT=1).
- `splitmix64` is the finaliser of Steele et al.'s SplitMix64: a bijective 64-bit mix used to turn
  bytes / band rows into well spread 64-bit keys. It relies on wrapping uint64 multiplication.
- `window_hash` / `window_roll`: the polynomial hash sum((t_j + 1) * B^(k-1-j)) mod 2^64 of a run of
  k token ids, rolled one token at a time, so hashing every k-window of a corpus costs O(1) per
  position whatever k is. Equal windows hash equally; distinct ones collide with probability about
  2^-64 (callers that need certainty compare tokens; filters only err upward). Token id t enters
  as t + 1 so that a window of id 0 tokens does not hash to 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MERSENNE_61 = np.uint64((1 << 61) - 1)
"""The prime p = 2^61 - 1 of the universal hash family (a*x + b) mod p."""

EMPTY_SLOT = np.uint64(0xFFFFFFFFFFFFFFFF)
"""Signature value of a document without shingles (larger than any hash value mod p)."""

_LOW32 = np.uint64(0xFFFFFFFF)
_LOW29 = np.uint64((1 << 29) - 1)
SHINGLE_SEED = np.uint64(0xCBF29CE484222325)


@njit(cache=True, inline="always")
def splitmix64(x):
    """Bijective 64-bit mix (SplitMix64 finaliser); wraps modulo 2^64 by design."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, inline="always")
def reduce61(x):
    """x mod (2^61 - 1) for any uint64 x, without overflow."""
    r = (x & MERSENNE_61) + (x >> np.uint64(61))
    if r >= MERSENNE_61:
        r -= MERSENNE_61
    return r


@njit(cache=True, inline="always")
def mulmod61(a_hi, a_lo, x):
    """(a * x) mod (2^61 - 1) for a, x < 2^61, with a given as its 32-bit halves.

    a*x = hi*2^64 + mid*2^32 + lo with hi = a_hi*x_hi, mid = a_hi*x_lo + a_lo*x_hi, lo = a_lo*x_lo,
    all below 2^64. Since 2^61 = 1 (mod p): 2^64 = 8, and mid*2^32 = (mid >> 29)*2^61 + (mid mod
    2^29)*2^32 = (mid >> 29) + ((mid mod 2^29) << 32). The folded sum stays below 2^63.
    """
    x_hi = x >> np.uint64(32)
    x_lo = x & _LOW32
    lo = a_lo * x_lo
    mid = a_hi * x_lo + a_lo * x_hi
    hi = a_hi * x_hi
    r = (hi << np.uint64(3)) + (mid >> np.uint64(29)) + ((mid & _LOW29) << np.uint64(32))
    r += (lo >> np.uint64(61)) + (lo & MERSENNE_61)
    r = (r & MERSENNE_61) + (r >> np.uint64(61))
    if r >= MERSENNE_61:
        r -= MERSENNE_61
    return r


@njit(cache=True, inline="always")
def universal_hash61(a_hi, a_lo, b, x):
    """(a*x + b) mod (2^61 - 1) for x already reduced below 2^61 and b < 2^61."""
    v = mulmod61(a_hi, a_lo, x) + b
    if v >= MERSENNE_61:
        v -= MERSENNE_61
    return v


WINDOW_BASE = np.uint64(0x9E3779B97F4A7C15)
"""Odd multiplier of the polynomial window hash."""


@njit(cache=True)
def window_hash(tokens, start, k):
    """Polynomial hash of tokens[start:start + k]."""
    h = np.uint64(0)
    for i in range(start, start + k):
        h = h * WINDOW_BASE + np.uint64(tokens[i]) + np.uint64(1)
    return h


@njit(cache=True)
def window_top(k):
    """WINDOW_BASE^(k-1) mod 2^64: the weight of the token that leaves a rolling k-window (by
    squaring: O(log k), since k may be as long as a document)."""
    top = np.uint64(1)
    power = WINDOW_BASE
    e = k - 1
    while e > 0:
        if e & 1:
            top = top * power
        power = power * power
        e >>= 1
    return top


@njit(cache=True, inline="always")
def window_roll(h, leaving, entering, top):
    """Hash of the window one token further on: `leaving` drops out at the front (top =
    window_top(k)), `entering` joins at the back."""
    return (h - (np.uint64(leaving) + np.uint64(1)) * top) * WINDOW_BASE \
        + np.uint64(entering) + np.uint64(1)
