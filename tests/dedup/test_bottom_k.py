"""bottom_k_distinct (the max_shingles cap) equals sorting and de-duplicating the whole document."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.dedup.shingles import bottom_k_distinct, distinct_values, smallest_distinct

values = st.lists(st.one_of(st.integers(0, 8), st.integers(0, 2**64 - 1)), max_size=400)


@settings(max_examples=300, deadline=None)
@given(values, st.integers(1, 50))
def test_bottom_k_equals_sorted_unique_prefix(seg, k):
    seg = np.array(seg, dtype=np.uint64)
    kept = bottom_k_distinct(seg, k, np.empty(len(seg) + 1, np.uint64))
    assert np.array_equal(np.sort(kept), np.unique(seg)[:k])


@settings(max_examples=200, deadline=None)
@given(values, st.integers(0, 60))
def test_smallest_distinct_also_without_jit(seg, k):
    seg = np.array(seg, dtype=np.uint64)
    expected = np.unique(seg)[:k]
    assert np.array_equal(np.sort(smallest_distinct(seg, k)), expected)
    assert np.array_equal(np.sort(smallest_distinct.py_func(seg, k)), expected)


@settings(max_examples=50, deadline=None)
@given(values)
def test_distinct_values_in_first_seen_order_also_without_jit(seg):
    seg = np.array(seg, dtype=np.uint64)
    _, first = np.unique(seg, return_index=True)
    expected = seg[np.sort(first)]
    assert np.array_equal(distinct_values(seg), expected)
    assert np.array_equal(distinct_values.py_func(seg), expected)


def test_bottom_k_on_repetitive_uniform_hashes():
    """Few distinct values repeated many times: the first cut keeps too few, later cuts rise."""
    rng = np.random.default_rng(5)
    distinct = rng.integers(0, 2**64 - 1, 3000, dtype=np.uint64, endpoint=True)
    seg = rng.choice(distinct, 200_000)
    for k in (1, 100, 2048, 2999, 5000):
        kept = bottom_k_distinct(seg, k, np.empty(len(seg) + 1, np.uint64))
    assert np.array_equal(np.sort(kept), np.unique(seg)[:k])
