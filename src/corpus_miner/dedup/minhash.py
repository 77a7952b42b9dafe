"""MinHash sketches of a whole batch at once: classic MinHash and one permutation hashing (OPH).

Both work on the 64-bit shingle hashes of `shingles.py`, reduced modulo p = 2^61 - 1, and on the
universal hash family h(x) = (a*x + b) mod p whose (a, b) are drawn from `seed` (see
`permutations`). Signatures are uint64 arrays of shape (n_docs, num_perm); a document without
shingles gets EMPTY_SLOT everywhere (so empty texts match each other, and nothing else).

- classic (`sketch="minhash"`): slot j = min over shingles of h_j(x); O(shingles x num_perm).
- OPH (`sketch="oph"`): one hash g = h_0(x) splits the shingles into num_perm bins (bin = the top
  bits of g scaled to num_perm); slot j = the smallest g in bin j. Empty bins are filled by *optimal densification*
  (Shrivastava, ICML 2017): bin j borrows the value of the first non-empty bin among
  r(j, 0), r(j, 1), ... where r is a fixed hash of (bin, attempt), the same for every document, so
  two documents with equal sketches on the sampled bins stay equal. O(shingles + num_perm).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner._numba.hashing import (
    EMPTY_SLOT,
    MERSENNE_61,
    reduce61,
    splitmix64,
    universal_hash61,
)
from corpus_miner.errors import ParameterError

SKETCHES = ("minhash", "oph")


def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The (a, b) of num_perm universal hashes: a in [1, p), b in [0, p), from PCG64(seed)."""
    if num_perm < 1:
        raise ParameterError(f"num_perm must be >= 1, got {num_perm}")
    rng = np.random.Generator(np.random.PCG64(seed))
    p = int(MERSENNE_61)
    a = rng.integers(1, p, size=num_perm, dtype=np.uint64)
    b = rng.integers(0, p, size=num_perm, dtype=np.uint64)
    return a, b


@njit(cache=True)
def minhash_kernel(hashes, offsets, a, b):
    """Classic MinHash signatures (n_docs, len(a)) of the documents hashes[offsets[d]:offsets[d+1]]."""
    n_docs = len(offsets) - 1
    num_perm = len(a)
    a_hi = a >> np.uint64(32)
    a_lo = a & np.uint64(0xFFFFFFFF)
    sig = np.full((n_docs, num_perm), EMPTY_SLOT, np.uint64)
    for d in range(n_docs):
        row = sig[d]
        for i in range(offsets[d], offsets[d + 1]):
            x = reduce61(hashes[i])
            for j in range(num_perm):  # branch-free body: LLVM vectorises it over j
                v = universal_hash61(a_hi[j], a_lo[j], b[j], x)
                row[j] = min(row[j], v)
    return sig


@njit(cache=True)
def _densify_source(bin_index, attempt, num_bins, salt):
    return splitmix64(salt ^ (np.uint64(bin_index) << np.uint64(32)) ^ np.uint64(attempt)) % np.uint64(num_bins)


@njit(cache=True)
def oph_kernel(hashes, offsets, a0, b0, num_perm, salt):
    """OPH signatures with optimal densification, shape (n_docs, num_perm)."""
    n_docs = len(offsets) - 1
    a_hi = a0 >> np.uint64(32)
    a_lo = a0 & np.uint64(0xFFFFFFFF)
    bins = np.uint64(num_perm)
    sig = np.full((n_docs, num_perm), EMPTY_SLOT, np.uint64)
    longest = 0
    for d in range(n_docs):
        longest = max(longest, offsets[d + 1] - offsets[d])
    values = np.empty(longest, np.uint64)
    slots = np.empty(longest, np.uint64)
    for d in range(n_docs):
        row = sig[d]
        start, count = offsets[d], offsets[d + 1] - offsets[d]
        for i in range(count):  # independent iterations: vectorised
            g = universal_hash61(a_hi, a_lo, b0, reduce61(hashes[start + i]))
            values[i] = g
            slots[i] = ((g >> np.uint64(29)) * bins) >> np.uint64(32)  # top bits -> bin, no division
        for i in range(count):
            j = slots[i]
            if values[i] < row[j]:
                row[j] = values[i]
        if offsets[d + 1] == offsets[d]:
            continue
        filled = row.copy()  # densify from the original bins only
        for j in range(num_perm):
            if row[j] != EMPTY_SLOT:
                continue
            attempt = 0
            while True:
                src = _densify_source(j, attempt, num_perm, salt)
                if row[src] != EMPTY_SLOT:
                    filled[j] = row[src]
                    break
                attempt += 1
        sig[d] = filled
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
