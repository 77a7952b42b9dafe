import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.dedup.banding import (
    band_keys,
    banding_errors,
    bands_for,
    choose_bands,
    collision_probability,
)
from corpus_miner.errors import ParameterError

from . import reference as ref


@pytest.mark.parametrize("threshold,num_perm", [(0.85, 256), (0.85, 128), (0.5, 128), (0.9, 64),
                                                (0.3, 32), (0.7, 100)])
def test_choose_bands_agrees_with_datasketch(threshold, num_perm):
    lsh = pytest.importorskip("datasketch.lsh")
    assert choose_bands(threshold, num_perm) == lsh._optimal_param(threshold, num_perm, 0.5, 0.5)


def test_choice_minimises_the_weighted_error_by_brute_force():
    bands, rows = choose_bands(0.8, 48)
    best = 0.5 * sum(banding_errors(0.8, bands, rows))
    for b in range(1, 49):
        for r in range(1, 48 // b + 1):
            assert 0.5 * sum(banding_errors(0.8, b, r)) >= best - 1e-12


@pytest.mark.parametrize("weights", [(0.5, 0.5), (0.9, 0.1), (0.1, 0.9)])
@pytest.mark.parametrize("num_perm", [1, 2, 7, 31, 64, 100])
def test_choose_bands_equals_the_brute_force(num_perm, weights):
    for threshold in (0.05, 0.3, 0.5, 0.7, 0.85, 0.95, 0.99):
        assert choose_bands(threshold, num_perm, *weights) == \
            ref.choose_bands(threshold, num_perm, *weights), threshold


@pytest.mark.parametrize("weights", [(1.0, 0.0), (0.0, 1.0)])
def test_one_sided_weights_pick_a_pair_tied_with_the_minimum(weights):
    """With one weight 0 many pairs have errors within 1e-15 of 0; the first of them is taken."""
    for threshold, num_perm in ((0.5, 64), (0.8, 128), (0.3, 100)):
        bands, rows = choose_bands(threshold, num_perm, *weights)
        error = float(np.dot(weights, banding_errors(threshold, bands, rows)))
        minimum = min(float(np.dot(weights, banding_errors(threshold, b, r)))
                      for b in range(1, num_perm + 1) for r in range(1, num_perm // b + 1))
        assert error <= minimum + 1e-15


def test_many_permutations_are_chosen_quickly_and_minimise_the_error():
    """num_perm=65536 took minutes over all 720k pairs; the line searches visit a few thousand.
    Every pair on the answer's neighbouring rows and bands lines is no better."""
    threshold, num_perm = 0.85, 1 << 16
    bands, rows = choose_bands(threshold, num_perm)
    assert bands * rows <= num_perm

    def error(b, r):
        return 0.5 * sum(banding_errors(threshold, b, r))

    best = error(bands, rows)
    for r in range(max(1, rows - 3), rows + 4):
        for b in list(range(max(1, bands - 40), min(num_perm // r, bands + 40) + 1)):
            assert error(b, r) >= best - 1e-15, (b, r)
    rng = np.random.default_rng(0)
    for r in rng.integers(1, 200, 40):
        b = int(rng.integers(1, num_perm // int(r) + 1))
        assert error(b, int(r)) >= best - 1e-15


def test_collision_curve_is_an_s_around_the_threshold():
    bands, rows = choose_bands(0.85, 256)
    assert collision_probability(0.95, bands, rows) > 0.99
    assert collision_probability(0.5, bands, rows) < 0.01


def test_explicit_bands_and_bad_values():
    assert bands_for(128, 0.85, 32) == (32, 4)
    assert bands_for(100, 0.85, 30) == (30, 3)
    with pytest.raises(ParameterError, match="num_bands"):
        bands_for(128, 0.85, 129)
    with pytest.raises(ParameterError, match="num_bands"):
        bands_for(128, 0.85, 0)
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ParameterError, match="threshold"):
            choose_bands(bad, 128)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**64 - 1), min_size=12, max_size=12), min_size=1,
                max_size=4), st.sampled_from([(1, 12), (3, 4), (4, 3), (5, 2), (12, 1)]))
def test_band_keys_equal_reference(rows_values, shape):
    bands, rows = shape
    sig = np.array(rows_values, dtype=np.uint64)
    got = band_keys(sig, bands, rows)
    expected = [[ref.band_key(b, row[b * rows:(b + 1) * rows]) for b in range(bands)]
                for row in rows_values]
    assert got.tolist() == expected


def test_band_keys_depend_on_band_index():
    sig = np.zeros((1, 8), np.uint64)  # every band has the same rows
    keys = band_keys(sig, 4, 2)
    assert len(set(keys[0].tolist())) == 4
    with pytest.raises(ParameterError):
        band_keys(sig, 5, 2)
