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
