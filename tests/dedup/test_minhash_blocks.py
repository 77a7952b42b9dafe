"""The classic MinHash kernel (distinct shingles, fixed-point block estimates, exact re-scan of the
blocks that can hold the minimum) gives exactly the signatures of the plain kernel that hashes
every shingle occurrence with every permutation."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.dedup.banding import band_keys
from corpus_miner.dedup.minhash import minhash_kernel, minhash_plain_kernel, permutations
from corpus_miner.dedup.shingles import shingle_batch

from . import reference as ref

P = (1 << 61) - 1
REPO = Path(__file__).resolve().parents[2]


def _flat(docs):
    offsets = np.zeros(len(docs) + 1, np.int64)
    offsets[1:] = np.cumsum([len(d) for d in docs])
    flat = (np.concatenate([np.asarray(d, np.uint64) for d in docs]) if docs
            else np.zeros(0, np.uint64))
    return flat.astype(np.uint64), offsets


def _assert_same(hashes, offsets, a, b):
    fast = minhash_kernel(hashes, offsets, a, b)
    plain = minhash_plain_kernel(hashes, offsets, a, b)
    assert np.array_equal(fast, plain)
    return fast


def test_plain_kernel_equals_python_reference():
    rng = np.random.default_rng(3)
    docs = [rng.integers(0, 2**64, n, dtype=np.uint64) for n in (0, 1, 5, 90)]
    a, b = permutations(9, 4)
    got = minhash_plain_kernel(*_flat(docs), a, b)
    expected = [ref.minhash([int(v) for v in d], [int(v) for v in a], [int(v) for v in b])
                for d in docs]
    assert got.tolist() == expected


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 37), st.integers(0, 2**32), st.integers(0, 2**32),
       st.lists(st.integers(0, 700), min_size=1, max_size=6), st.sampled_from([1, 3, 40, 10**9]))
def test_random_documents_of_many_blocks(num_perm, seed, data_seed, lengths, pool):
    """Random lengths around the 64-shingle blocks, repeats drawn from a pool of `pool` values."""
    rng = np.random.default_rng(data_seed)
    values = rng.integers(0, 2**64, size=min(pool, 5000), dtype=np.uint64)
    docs = [rng.choice(values, size=n) for n in lengths]
    a, b = permutations(num_perm, seed)
    _assert_same(*_flat(docs), a, b)


def _preimage(a: int, b: int, value: int) -> int:
    """The x < p with (a x + b) mod p == value."""
    return ((value - b) * pow(a, -1, P)) % P


@pytest.mark.parametrize("targets", [(0,), (1, 2), (P - 1,), (0, P - 1, P - 2), (1 << 30,)])
def test_minimum_at_the_edges_of_the_fixed_point_range(targets):
    """Shingles whose exact value under a permutation is 0, 1, p-1...: the fixed-point estimate
    wraps around 2^64 there; the exact minimum must still be found in whichever block it sits."""
    a, b = permutations(12, 77)
    rng = np.random.default_rng(5)
    docs = []
    for where in (0, 63, 64, 500, 999):
        doc = rng.integers(0, 2**64, 1000, dtype=np.uint64)
        for t, value in enumerate(targets):
            j = (where + t) % len(a)
            doc[(where + 17 * t) % 1000] = _preimage(int(a[j]), int(b[j]), value)
        docs.append(doc)
    _assert_same(*_flat(docs), a, b)


def test_every_value_large_and_documents_of_identical_shingles():
    """Minima near p (the bound saturates) and documents whose shingles are all one value."""
    a, b = permutations(8, 2)
    big = [_preimage(int(a[j]), int(b[j]), P - 1 - k) for k in range(200) for j in range(8)]
    # the last document's values are equal after reduction mod p
    docs = [np.array(big, np.uint64), np.full(500, 12345, np.uint64), np.zeros(130, np.uint64),
            np.array([P, 2 * P, P + 1, (1 << 64) - 1] * 40, np.uint64)]
    _assert_same(*_flat(docs), a, b)


def test_real_text_signatures_and_band_keys_unchanged():
    """Real documents (this repository's README and sources) at the default 256 permutations."""
    paths = [REPO / "README.md", *sorted((REPO / "src" / "corpus_miner").rglob("*.py"))]
    texts = [path.read_text(encoding="utf-8") for path in paths]
    hashes, offsets = shingle_batch(texts, 5)
    assert (np.diff(offsets) > 2 * 64).sum() > 10  # most documents span many blocks
    a, b = permutations(256, 1)
    fast = _assert_same(hashes, offsets, a, b)
    plain_keys = band_keys(minhash_plain_kernel(hashes, offsets, a, b), 13, 19)
    assert np.array_equal(band_keys(fast, 13, 19), plain_keys)
