import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner._numba.hashing import MERSENNE_61, mulmod61, reduce61
from corpus_miner.dedup.minhash import minhash_kernel, oph_kernel, permutations, signatures
from corpus_miner.errors import ParameterError

from . import reference as ref

P = (1 << 61) - 1
u64 = st.integers(0, (1 << 64) - 1)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, P - 1), st.integers(0, P - 1), u64)
def test_mulmod61_is_exact(a, x, raw):
    a64 = np.uint64(a)
    got = mulmod61(a64 >> np.uint64(32), a64 & np.uint64(0xFFFFFFFF), np.uint64(x))
    assert int(got) == (a * x) % P
    assert int(reduce61(np.uint64(raw))) == raw % P


def test_permutations_are_deterministic_and_in_range():
    a, b = permutations(64, 7)
    a2, b2 = permutations(64, 7)
    assert np.array_equal(a, a2) and np.array_equal(b, b2)
    assert (a >= 1).all() and (a < MERSENNE_61).all() and (b < MERSENNE_61).all()
    assert not np.array_equal(a, permutations(64, 8)[0])


def _flat(sets):
    offsets = np.zeros(len(sets) + 1, np.int64)
    offsets[1:] = np.cumsum([len(s) for s in sets])
    return np.array([h for s in sets for h in s], dtype=np.uint64), offsets


doc_sets = st.lists(st.lists(u64, max_size=30), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(doc_sets, st.integers(1, 40), st.integers(0, 2**32))
def test_minhash_kernel_equals_reference(sets, num_perm, seed):
    a, b = permutations(num_perm, seed)
    hashes, offsets = _flat(sets)
    got = minhash_kernel(hashes, offsets, a, b)
    expected = [ref.minhash(s, [int(v) for v in a], [int(v) for v in b]) for s in sets]
    assert got.tolist() == expected


@settings(max_examples=60, deadline=None)
@given(doc_sets, st.integers(1, 40), st.integers(0, 2**32), u64)
def test_oph_kernel_equals_reference(sets, num_perm, seed, salt):
    a, b = permutations(1, seed)
    hashes, offsets = _flat(sets)
    got = oph_kernel(hashes, offsets, a[0], b[0], num_perm, np.uint64(salt))
    expected = [ref.oph(s, int(a[0]), int(b[0]), num_perm, salt) for s in sets]
    assert got.tolist() == expected


def _pair_with_jaccard(rng, size, jaccard):
    """Two sets of `size` random hashes sharing exactly round(2*size*J/(1+J)) elements."""
    shared = int(round(2 * size * jaccard / (1 + jaccard)))
    pool = rng.integers(0, 2**63, size=3 * size, dtype=np.uint64)
    a = pool[:size]
    b = np.concatenate([a[:shared], pool[size:2 * size - shared]])
    return a, b, shared / (2 * size - shared)


@pytest.mark.parametrize("sketch", ["minhash", "oph"])
def test_jaccard_estimates_are_unbiased_and_binomial(sketch):
    rng = np.random.default_rng(11)
    num_perm = 256
    errors, z_scores = [], []
    for trial in range(60):
        true_j = [0.2, 0.5, 0.85][trial % 3]
        a, b, exact = _pair_with_jaccard(rng, 500, true_j)
        hashes, offsets = _flat([a, b])
        sig = signatures(hashes, offsets, num_perm, seed=trial, sketch=sketch)
        estimate = float(np.mean(sig[0] == sig[1]))
        errors.append(estimate - exact)
        z_scores.append((estimate - exact) / np.sqrt(exact * (1 - exact) / num_perm))
    # mean error ~ 0 (unbiased): its standard error is ~0.03/sqrt(60) ~ 0.004
    assert abs(np.mean(errors)) < 0.015
    # per-pair deviations look like Binomial(num_perm, J)/num_perm (OPH is at least as tight)
    assert np.std(z_scores) < 1.4
    assert np.max(np.abs(z_scores)) < 4.5


@pytest.mark.parametrize("sketch", ["minhash", "oph"])
def test_identical_sets_identical_and_disjoint_sets_differ(sketch):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2**63, 300, dtype=np.uint64)
    b = rng.integers(0, 2**63, 300, dtype=np.uint64)
    hashes, offsets = _flat([a, a[::-1], b, []])
    sig = signatures(hashes, offsets, 128, 1, sketch)
    assert np.array_equal(sig[0], sig[1])
    assert np.mean(sig[0] == sig[2]) < 0.05
    assert (sig[3] == np.uint64(2**64 - 1)).all()


def test_bad_sketch_and_num_perm():
    hashes, offsets = _flat([[1, 2]])
    with pytest.raises(ParameterError, match="sketch"):
        signatures(hashes, offsets, 8, 1, "simhash")
    with pytest.raises(ParameterError, match="num_perm"):
        signatures(hashes, offsets, 0, 1, "minhash")
