"""Partition-local Bloom filters on Spark: build them in one pass and merge them by OR, query them
through read-only broadcasts. Every partition runs the local engine's kernels on its Arrow
batches (mapInArrow: texts and key lists reach numpy without a Python object per row), so the
bits equal those of corpus_miner.dedup.BloomFilter fed the same keys."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from corpus_miner.dedup.bloom import BloomFilter
from corpus_miner.dedup.params import LSHBloomParams
from corpus_miner.dedup.pipeline import band_keys_for_texts
from corpus_miner.dedup.scalable_bloom import ScalableBloomFilter
from corpus_miner.spark import batches
from corpus_miner.spark.frames import KEYS, ORDER, band_keys_column
from corpus_miner.spark.worker import task

_SHIPPED = "key long, bits binary"  # key: group x segments per filter + segment


def keys_from_column(bands: int):
    """Band keys of an Arrow batch read from its KEYS (array<bigint>) column."""
    return lambda batch: batches.list_column_to_keys(batch.column(KEYS), bands)


def keys_from_text(params: LSHBloomParams, text_col: str):
    """Band keys of an Arrow batch computed from its text column by the local kernels."""
    return lambda batch: band_keys_for_texts(batch.column(text_col), params)


def _int64(batch: pa.RecordBatch, name: str) -> np.ndarray:
    return np.asarray(batch.column(name).to_numpy(), dtype=np.int64)


def build_filters(rows: DataFrame, keys_of, num_bits: int, num_hashes: int,
                  group_col: str | None = None, n_groups: int = 1, count_twice: bool = False
                  ) -> list:
    """One filter per group (rows' integer group_col in 0..n_groups-1; all rows without it),
    from one pass over rows; keys_of(Arrow batch) gives each batch's uint64 band keys.
    count_twice: per group a pair (filter, twice), twice holding the keys possibly inserted more
    than once (BloomFilter.add_counting), across partitions too.

    Each partition fills its own filter per group it holds and ships only the non-zero 1 MiB
    segments; a grouped pandas pass merges the copies of each segment on the executors, so the
    driver receives one copy of each (a group holds at most one copy per partition).
    """
    per_filter = -(-((num_bits + 7) // 8) // batches.SEGMENT_BYTES)

    @task
    def partition_pass(arrow_batches):
        blooms: dict[int, tuple] = {}
        for batch in arrow_batches:
            keys = keys_of(batch)
            groups = np.zeros(batch.num_rows, np.int64) if group_col is None \
                else _int64(batch, group_col)
            for group in np.unique(groups):
                pair = blooms.setdefault(int(group), (BloomFilter(num_bits, num_hashes),
                                                      BloomFilter(num_bits, num_hashes)
                                                      if count_twice else None))
                mine = keys if group_col is None else keys[groups == group]
                if count_twice:
                    pair[0].add_counting(mine, pair[1])
                else:
                    pair[0].add(mine)
        for group, (bloom, twice) in blooms.items():
            segments = list(batches.filter_segments(bloom, twice=twice))
            yield pa.RecordBatch.from_pydict(
                {"key": pa.array([group * per_filter + s for s, _ in segments], pa.int64()),
                 "bits": pa.array([b for _, b in segments], pa.binary())})

    merge = batches.merge_counted_segments if count_twice else batches.or_segments
    merged = rows.mapInArrow(partition_pass, _SHIPPED).groupBy("key") \
        .applyInPandas(merge, _SHIPPED).toArrow()
    found: list[list] = [[] for _ in range(n_groups)]
    for key, raw in zip(merged.column("key").to_pylist(), merged.column("bits").to_pylist()):
        found[key // per_filter].append((key % per_filter, raw))
    return [batches.assemble_filter(num_bits, num_hashes, segments, counted=count_twice)
            for segments in found]


def query_hits(rows: DataFrame, keys_of, checks: dict[str, list], group_col: str
               ) -> dict[str, np.ndarray]:
    """One pass over rows (ORDER, keys, group_col): for each check name, the sorted ORDERs of the
    rows having a band key in checks[name][their group] (a BloomFilter, or None: no row)."""
    spark = rows.sparkSession
    names = list(checks)
    shared = spark.sparkContext.broadcast(
        [[None if f is None else _shipped(f) for f in checks[name]] for name in names])

    @task
    def partition_pass(arrow_batches):
        readers = [[None if f is None else _unshipped(f) for f in per_group]
                   for per_group in shared.value]
        for batch in arrow_batches:
            keys = keys_of(batch)
            groups, orders = _int64(batch, group_col), _int64(batch, ORDER)
            for kind, per_group in enumerate(readers):
                hit = np.zeros(batch.num_rows, bool)
                for group in np.unique(groups):
                    if per_group[group] is not None:
                        rows_here = groups == group
                        hit[rows_here] = per_group[group].contains_any(keys[rows_here])
                yield pa.RecordBatch.from_pydict({"kind": pa.array(np.full(hit.sum(), kind,
                                                                           np.int32)),
                                                  ORDER: pa.array(orders[hit])})

    found = rows.mapInArrow(partition_pass, f"kind int, {ORDER} long").toArrow()
    shared.destroy()
    kinds, orders = found.column("kind").to_numpy(), found.column(ORDER).to_numpy()
    return {name: np.sort(orders[kinds == kind]) for kind, name in enumerate(names)}


def build_filter(df: DataFrame, text_col: str, params: LSHBloomParams, use_pandas_udf: bool,
                 num_bits: int, num_hashes: int) -> BloomFilter:
    """OR of partition-local filters of the band keys of df's texts, assembled on the driver.

    With pandas UDFs the keys are computed inside the same mapInPandas pass that fills the
    filters: texts go to Python once and only filter segments come back (a keys column would
    travel to the JVM as arrays and back again)."""
    if use_pandas_udf:
        return build_filters(df.select(text_col), keys_from_text(params, text_col),
                             num_bits, num_hashes)[0]
    keyed = df.select(band_keys_column(params, text_col, False).alias(KEYS))
    return build_filters(keyed, keys_from_column(params.bands_rows[0]), num_bits, num_hashes)[0]


def bloom_hits_column(spark, bloom: ScalableBloomFilter, bands: int):
    """(column: is any band key of the row's KEYS in `bloom`?, its broadcast); for lazy queries."""
    shared = spark.sparkContext.broadcast(_shipped(bloom))

    @F.pandas_udf(T.BooleanType())  # type: ignore[call-overload]  # stubs take DDL strings only
    def in_filter(keys: pd.Series) -> pd.Series:
        return pd.Series(_unshipped(shared.value).contains_any(batches.series_to_keys(keys, bands)))

    return in_filter(F.col(KEYS)), shared


_KEYS_AND_HITS = T.StructType([T.StructField(KEYS, T.ArrayType(T.LongType())),
                               T.StructField("is_duplicate", T.BooleanType())])


def text_query_column(spark, bloom: ScalableBloomFilter, params: LSHBloomParams, text_col: str,
                      with_keys: bool):
    """(column, its broadcast) computing a row's band keys from its text and querying `bloom` in
    the same pandas UDF: struct<band_keys, is_duplicate> with_keys, else the boolean alone.

    Two chained UDFs (keys, then a query reading the keys) ship every key to the JVM and back
    when the keys are also an output; one pass was 1.6x faster on 20k documents. The struct UDF
    is marked non-deterministic so that the optimizer evaluates it once for both fields."""
    shared = spark.sparkContext.broadcast(_shipped(bloom))

    if not with_keys:
        @F.pandas_udf(T.BooleanType())  # type: ignore[call-overload]  # stubs take DDL strings only
        def hits(texts: pd.Series) -> pd.Series:
            keys = batches.band_keys_of_series(texts, params)
            return pd.Series(_unshipped(shared.value).contains_any(keys))

        return hits(F.col(text_col)), shared

    @F.pandas_udf(_KEYS_AND_HITS)  # type: ignore[call-overload]  # stubs take DDL strings only
    def keys_and_hits(texts: pd.Series) -> pd.DataFrame:
        keys = batches.band_keys_of_series(texts, params)
        return pd.DataFrame({KEYS: batches.keys_to_series(keys),
                             "is_duplicate": _unshipped(shared.value).contains_any(keys)})

    return keys_and_hits.asNondeterministic()(F.col(text_col)), shared


class _ShippedFilter:
    """The layers of a broadcast filter, read-only, their bits not copied."""

    def __init__(self, shipped: list[tuple[int, int, bytes]]):
        self.layers = [BloomFilter(num_bits, num_hashes, np.frombuffer(raw, np.uint8))
                       for num_bits, num_hashes, raw in shipped]

    def contains_any(self, band_keys: np.ndarray) -> np.ndarray:
        hits = self.layers[0].contains_any(band_keys)
        for layer in self.layers[1:]:
            hits |= layer.contains_any(band_keys)
        return hits


def _shipped(bloom: BloomFilter | ScalableBloomFilter) -> list[tuple[int, int, bytes]]:
    """A filter (every layer of a growing one) as picklable (num_bits, num_hashes, bits) tuples
    for a broadcast."""
    layers = bloom.layers if isinstance(bloom, ScalableBloomFilter) else [bloom]
    return [(layer.num_bits, layer.num_hashes, layer.bits.tobytes()) for layer in layers]


def _unshipped(shipped: list[tuple[int, int, bytes]]) -> _ShippedFilter:
    return _ShippedFilter(shipped)
