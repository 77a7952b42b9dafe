"""The worker-side adapter (no Spark session): key transport and segment-wise filter merging."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pyspark")
pytest.importorskip("pandas")

import pandas as pd  # noqa: E402

from corpus_miner.dedup.bloom import BloomFilter  # noqa: E402
from corpus_miner.spark import batches  # noqa: E402

keys_arrays = st.integers(0, 40).flatmap(lambda n: st.lists(
    st.integers(0, 2**64 - 1), min_size=n * 3, max_size=n * 3)).map(
    lambda values: np.array(values, dtype=np.uint64).reshape(-1, 3))


@settings(max_examples=40, deadline=None)
@given(keys_arrays)
def test_band_keys_survive_the_signed_transport(keys):
    series = batches.keys_to_series(keys)
    assert all(row.dtype == np.int64 for row in series)
    np.testing.assert_array_equal(batches.series_to_keys(series, 3), keys)


@settings(max_examples=40, deadline=None)
@given(st.lists(keys_arrays, min_size=1, max_size=4), st.sampled_from([1, 7, 64]))
def test_segment_merge_equals_one_filter_of_all_keys(parts, segment_bytes):
    """Partition filters shipped as non-zero segments and OR-ed = the filter of all the keys."""
    num_bits, num_hashes = 1500, 5
    shipped: dict[int, list[bytes]] = {}
    for keys in parts:
        local = BloomFilter(num_bits, num_hashes)
        local.add(keys)
        for segment, raw in batches.filter_segments(local, segment_bytes):
            assert any(raw)  # all-zero segments are never shipped
            shipped.setdefault(segment, []).append(raw)
    merged = {}
    for segment, raws in shipped.items():
        row = batches.or_segments(pd.DataFrame({"key": segment, "bits": raws}))
        assert len(row) == 1 and row["key"].iloc[0] == segment
        merged[segment] = row["bits"].iloc[0]
    whole = BloomFilter(num_bits, num_hashes)
    whole.add(np.concatenate(parts))
    assert batches.assemble_filter(num_bits, num_hashes, merged.items(), segment_bytes) == whole


@settings(max_examples=40, deadline=None)
@given(st.lists(keys_arrays, min_size=1, max_size=4), st.sampled_from([1, 7, 64]))
def test_counted_segment_merge_equals_counting_all_keys_in_one_filter(parts, segment_bytes):
    """(filter, twice) per partition, merged segment by segment = counting every key in one."""
    num_bits, num_hashes = 700, 3
    shipped: dict[int, list[bytes]] = {}
    for keys in parts:
        local, twice = BloomFilter(num_bits, num_hashes), BloomFilter(num_bits, num_hashes)
        local.add_counting(keys, twice)
        for segment, raw in batches.filter_segments(local, segment_bytes, twice=twice):
            shipped.setdefault(segment, []).append(raw)
    merged = {segment: batches.merge_counted_segments(
        pd.DataFrame({"key": segment, "bits": raws}))["bits"].iloc[0]
        for segment, raws in shipped.items()}
    whole, whole_twice = BloomFilter(num_bits, num_hashes), BloomFilter(num_bits, num_hashes)
    whole.add_counting(np.concatenate(parts), whole_twice)
    bloom, twice = batches.assemble_filter(num_bits, num_hashes, merged.items(), segment_bytes,
                                           counted=True)
    assert bloom == whole and twice == whole_twice
