"""MinHash sketches of a whole batch at once: classic MinHash and one permutation hashing (OPH).

Both work on the 64-bit shingle hashes of `shingles.py`, reduced modulo p = 2^61 - 1, and on the
universal hash family h(x) = (a*x + b) mod p whose (a, b) are drawn from `seed` (see
`permutations`). Signatures are uint64 arrays of shape (n_docs, num_perm); a document without
shingles gets EMPTY_SLOT everywhere (so empty texts match each other, and nothing else).

- classic (`sketch="minhash"`): slot j = min over shingles of h_j(x); O(distinct shingles x
  num_perm), mostly in a vectorised fixed-point estimate (see `minhash_kernel`).
- OPH (`sketch="oph"`): one hash g = h_0(x) splits the shingles into num_perm bins (bin = the top
  bits of g scaled to num_perm); slot j = the smallest g in bin j. Empty bins are filled by
  *optimal densification* (Shrivastava, ICML 2017): bin j borrows the value of the first
  non-empty bin among r(j, 0), r(j, 1), ... where r is a fixed hash of (bin, attempt), the same
  for every document, so two documents with equal sketches on the sampled bins stay equal.
  O(shingles + num_perm).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner._numba.hashing import (
    EMPTY_SLOT,
    MERSENNE_61,
    mulmod61,
    reduce61,
    splitmix64,
    universal_hash61,
)
from corpus_miner.dedup.params import SKETCHES
from corpus_miner.dedup.shingles import distinct_values
from corpus_miner.errors import ParameterError


def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The (a, b) of num_perm universal hashes: a in [1, p), b in [0, p), from PCG64(seed)."""
    if num_perm < 1:
        raise ParameterError(f"num_perm must be >= 1, got {num_perm}")
    rng = np.random.Generator(np.random.PCG64(seed))
    p = int(MERSENNE_61)
    a = rng.integers(1, p, size=num_perm, dtype=np.uint64)
    b = rng.integers(0, p, size=num_perm, dtype=np.uint64)
    return a, b


_LOW32 = np.uint64(0xFFFFFFFF)


@njit(cache=True)
def minhash_plain_kernel(hashes, offsets, a, b):
    """Classic MinHash the obvious way, every shingle occurrence x every permutation exactly: the
    oracle `minhash_kernel` is checked against (tests, benchmarks/bench_dedup_real.py)."""
    sig = np.full((len(offsets) - 1, len(a)), EMPTY_SLOT, np.uint64)
    for d in range(len(offsets) - 1):
        for i in range(offsets[d], offsets[d + 1]):
            x = reduce61(hashes[i])
            for j in range(len(a)):
                v = universal_hash61(a[j] >> np.uint64(32), a[j] & _LOW32, b[j], x)
                sig[d, j] = min(sig[d, j], v)
    return sig


_OPH_BLOCK = 4096  # shingles hashed per vectorised pass of OPH
_BLOCK = 64  # shingles per block of the approximate pass (a block is re-scanned exactly)
_GROUP = 4  # permutations per approximate pass: each loaded shingle serves four of them
_SLACK = np.uint64(1 << 33)  # > the error of the fixed-point estimate (see _approx_block_minima)
_TWO32 = np.uint64(1 << 32)
_NO_BOUND = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True, inline="always")
def _fixed_point(v):
    """floor(v * 2^64 / p) for v < p: 2^64 / p = 8 (1 + 1/p), so it is 8v + floor(8v / p)."""
    eight = v << np.uint64(3)
    return eight + eight // MERSENNE_61


@njit(cache=True)
def _approx_block_minima(x_lo, x_hi, fa, fc, fb, j, n_blocks, out):
    """out[r, k] = min over block k of g_r(x) = fa*x_lo + fc*x_hi + fb (wrapping mod 2^64), the
    fixed-point estimate of the fraction ((a x + b) mod p) / p of permutation j + r, r < _GROUP.

    With fa = floor(a 2^64/p), fc = floor(c 2^64/p), c = a 2^32 mod p, fb = floor(b 2^64/p) + SLACK:
    a x_lo + c x_hi + b = a x + b (mod p), so g = 2^64 (a x + b mod p)/p + SLACK - E (mod 2^64)
    with rounding error 0 <= E < x_lo + x_hi + 1 < 2^33 = SLACK. Hence 2^64 v/p >= g - SLACK for
    every shingle (v its exact value; when the sum wraps past 2^64, g is small and the bound holds
    trivially): a block whose minimum g exceeds 2^64 v/p + SLACK holds no value below v.
    Two wrapping multiplications per shingle and permutation instead of four exact 32-bit ones and
    three reductions mod p; the loop over a block's slice vectorises.
    """
    a0, a1, a2, a3 = fa[j], fa[j + 1], fa[j + 2], fa[j + 3]
    c0, c1, c2, c3 = fc[j], fc[j + 1], fc[j + 2], fc[j + 3]
    b0, b1, b2, b3 = fb[j], fb[j + 1], fb[j + 2], fb[j + 3]
    for k in range(n_blocks):
        lo = x_lo[k * _BLOCK:(k + 1) * _BLOCK]  # slices, not index ranges: they vectorise
        hi = x_hi[k * _BLOCK:(k + 1) * _BLOCK]
        m0 = m1 = m2 = m3 = EMPTY_SLOT
        for i in range(len(lo)):
            u, w = lo[i], hi[i]
            m0 = min(m0, a0 * u + c0 * w + b0)
            m1 = min(m1, a1 * u + c1 * w + b1)
            m2 = min(m2, a2 * u + c2 * w + b2)
            m3 = min(m3, a3 * u + c3 * w + b3)
        out[0, k], out[1, k], out[2, k], out[3, k] = m0, m1, m2, m3


@njit(cache=True)
def _exact_min(x, a_hi, a_lo, b):
    """min over x of (a x + b) mod p."""
    acc = EMPTY_SLOT
    for i in range(len(x)):
        acc = min(acc, universal_hash61(a_hi, a_lo, b, x[i]))
    return acc


@njit(cache=True)
def _exact_min_over_blocks(x, block_min, a_hi, a_lo, b):
    """min over all of x of (a x + b) mod p, computing exactly only the blocks that can hold it:
    the block with the smallest estimate first, then every block whose estimate is within SLACK
    of the best exact value so far (see _approx_block_minima for why the others cannot)."""
    best = 0
    for k in range(1, len(block_min)):
        if block_min[k] < block_min[best]:
            best = k
    v = _exact_min(x[best * _BLOCK:(best + 1) * _BLOCK], a_hi, a_lo, b)
    for k in range(len(block_min)):
        eight = v << np.uint64(3)  # 2^64 v / p <= 8v + 8
        fits = eight < _NO_BOUND - _SLACK - np.uint64(8)
        bound = eight + np.uint64(8) + _SLACK if fits else _NO_BOUND
        if k != best and block_min[k] <= bound:
            v = min(v, _exact_min(x[k * _BLOCK:(k + 1) * _BLOCK], a_hi, a_lo, b))
    return v


@njit(cache=True, nogil=True)  # nogil: a read-ahead thread can parse meanwhile
def minhash_kernel(hashes, offsets, a, b):
    """Classic MinHash signatures (n_docs, len(a)) of the documents hashes[offsets[d]:offsets[d+1]]:
    slot j = min over the document's shingles x of (a_j x + b_j) mod p.

    Each distinct shingle counts once (a minimum does not change with repeats). Per group of four
    permutations, a vectorised pass estimates each block's minimum in 64-bit fixed point; the
    exact value is then computed only on the blocks that can hold the minimum (about one per
    permutation): the same signatures as evaluating every shingle exactly.
    """
    n_docs = len(offsets) - 1
    num_perm = len(a)
    a_hi = a >> np.uint64(32)
    a_lo = a & _LOW32
    padded = -(-num_perm // _GROUP) * _GROUP  # the last group repeats the last permutation
    fa = np.empty(padded, np.uint64)
    fc = np.empty(padded, np.uint64)
    fb = np.empty(padded, np.uint64)
    for j in range(padded):
        src = min(j, num_perm - 1)
        fa[j] = _fixed_point(a[src])
        fc[j] = _fixed_point(mulmod61(a_hi[src], a_lo[src], _TWO32))
        fb[j] = _fixed_point(b[src]) + _SLACK
    sig = np.full((n_docs, num_perm), EMPTY_SLOT, np.uint64)
    longest = 0
    for d in range(n_docs):
        longest = max(longest, offsets[d + 1] - offsets[d])
    x = np.empty(longest, np.uint64)
    x_lo = np.empty(longest, np.uint64)
    x_hi = np.empty(longest, np.uint64)
    block_min = np.empty((_GROUP, -(-longest // _BLOCK)), np.uint64)
    for d in range(n_docs):
        distinct = distinct_values(hashes[offsets[d]:offsets[d + 1]])
        m = len(distinct)
        if m == 0:
            continue
        for i in range(m):
            x[i] = reduce61(distinct[i])
            x_lo[i] = x[i] & _LOW32
            x_hi[i] = x[i] >> np.uint64(32)
        n_blocks = -(-m // _BLOCK)
        if n_blocks == 1:  # nothing to skip
            for j in range(num_perm):
                sig[d, j] = _exact_min(x[:m], a_hi[j], a_lo[j], b[j])
            continue
        for j0 in range(0, num_perm, _GROUP):
            _approx_block_minima(x_lo[:m], x_hi[:m], fa, fc, fb, j0, n_blocks, block_min)
            for j in range(j0, min(j0 + _GROUP, num_perm)):
                sig[d, j] = _exact_min_over_blocks(x[:m], block_min[j - j0, :n_blocks],
                                                   a_hi[j], a_lo[j], b[j])
    return sig


@njit(cache=True)
def _densify_source(bin_index, attempt, num_bins, salt):
    mixed = splitmix64(salt ^ (np.uint64(bin_index) << np.uint64(32)) ^ np.uint64(attempt))
    return mixed % np.uint64(num_bins)


@njit(cache=True, nogil=True)  # nogil: a read-ahead thread can parse meanwhile
def oph_kernel(hashes, offsets, a0, b0, num_perm, salt):
    """OPH signatures with optimal densification, shape (n_docs, num_perm)."""
    n_docs = len(offsets) - 1
    a_hi = a0 >> np.uint64(32)
    a_lo = a0 & np.uint64(0xFFFFFFFF)
    bins = np.uint64(num_perm)
    sig = np.full((n_docs, num_perm), EMPTY_SLOT, np.uint64)
    values = np.empty(_OPH_BLOCK, np.uint64)  # per block of shingles: memory does not grow
    slots = np.empty(_OPH_BLOCK, np.uint64)  # with the longest document
    for d in range(n_docs):
        row = sig[d]
        for block in range(offsets[d], offsets[d + 1], _OPH_BLOCK):
            part = hashes[block:min(block + _OPH_BLOCK, offsets[d + 1])]
            for i in range(len(part)):  # independent iterations: vectorised
                g = universal_hash61(a_hi, a_lo, b0, reduce61(part[i]))
                values[i] = g
                slots[i] = ((g >> np.uint64(29)) * bins) >> np.uint64(32)  # top bits -> bin
            for i in range(len(part)):
                j = slots[i]
                if values[i] < row[j]:
                    row[j] = values[i]
        if offsets[d + 1] == offsets[d]:
            continue
        filled = row.copy()  # densify from the original bins only
        for j in range(num_perm):
            if row[j] != EMPTY_SLOT:
                continue
            attempt = np.int64(0)  # not the literal 0: one signature for _densify_source
            while True:
                src = _densify_source(j, attempt, num_perm, salt)
                if row[src] != EMPTY_SLOT:
                    filled[j] = row[src]
                    break
                attempt += 1
        for j in range(num_perm):  # no array slice assignment: _numba/arrays.py
            sig[d, j] = filled[j]
    return sig


def signatures(hashes: np.ndarray, offsets: np.ndarray, num_perm: int, seed: int,
               sketch: str = "minhash") -> np.ndarray:
    """MinHash (or OPH) signatures, uint64 (n_docs, num_perm), of a shingled batch."""
    a, b = permutations(num_perm, seed)
    if sketch == "minhash":
        return minhash_kernel(hashes, offsets, a, b)
    if sketch == "oph":
        salt = np.uint64(int(a[0]) ^ 0x5851F42D4C957F2D)  # derived from seed: fixed per index
        return oph_kernel(hashes, offsets, a[0], b[0], int(num_perm), salt)
    raise ParameterError(f"sketch must be one of {SKETCHES}, got {sketch!r}")
