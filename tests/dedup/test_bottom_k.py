"""bottom_k_distinct (the max_shingles cap) equals sorting and de-duplicating the whole document."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.dedup.shingles import bottom_k_distinct, cap_shingles_kernel, distinct_values

values = st.lists(st.one_of(st.integers(0, 8), st.integers(0, 2**64 - 1)), max_size=400)


@settings(max_examples=300, deadline=None)
@given(values, st.integers(1, 50))
def test_bottom_k_equals_sorted_unique_prefix(seg, k):
    seg = np.array(seg, dtype=np.uint64)
    assert np.array_equal(bottom_k_distinct(seg, k), np.unique(seg)[:k])


@settings(max_examples=100, deadline=None)
@given(st.lists(values, min_size=1, max_size=6), st.integers(1, 30))
def test_cap_kernel_per_document(docs, k):
    flat = np.array([h for doc in docs for h in doc], dtype=np.uint64)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(doc) for doc in docs], out=offsets[1:])
    out, out_offsets = cap_shingles_kernel(flat, offsets, k)
    for d, doc in enumerate(docs):
        seg = np.array(doc, dtype=np.uint64)
        expected = seg if len(seg) <= k else np.unique(seg)[:k]
        assert np.array_equal(out[out_offsets[d]:out_offsets[d + 1]], expected)


@settings(max_examples=50, deadline=None)
@given(values)
def test_distinct_values_in_first_seen_order_also_without_jit(seg):
    seg = np.array(seg, dtype=np.uint64)
    _, first = np.unique(seg, return_index=True)
    expected = seg[np.sort(first)]
    assert np.array_equal(distinct_values(seg), expected)
    assert np.array_equal(distinct_values.py_func(seg), expected)
