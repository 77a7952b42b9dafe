"""Driver-side DataFrame plumbing: input checks, a deterministic row order, band keys as a
pandas UDF, and the exact band-key matching pass (Bloom filter passes: spark.filters)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from corpus_miner.dedup.params import LSHBloomParams
from corpus_miner.errors import InputError
from corpus_miner.spark import batches

ORDER = "_cm_order"
KEYS = "band_keys"
KEY = "_cm_band_key"
FIRST = "_cm_first"
ROWS = "_cm_rows"
_ROW_BITS = 33  # monotonically_increasing_id = partition index << 33 | row within partition


def check_columns(df: DataFrame, text_col: str, id_col: str | None, where: str) -> None:
    """InputError when a column is missing or the text column is not a string."""
    names = df.columns
    for role, name in (("text_col", text_col), ("id_col", id_col)):
        if name is not None and name not in names:
            raise InputError(f"{where}: {role}={name!r} is not a column of the DataFrame "
                             f"(columns: {names}); pass {role}= with the right name")
    text_type = df.schema[text_col].dataType
    if not isinstance(text_type, T.StringType):
        raise InputError(f"{where}: column {text_col!r} has type {text_type.simpleString()}, "
                         "expected string; cast it first")


def check_no_null_texts(df: DataFrame, text_col: str, id_col: str | None, where: str,
                        n_null: int | None = None) -> None:
    """InputError naming the first document whose text is null (n_null: already counted)."""
    if n_null is None:
        if not df.schema[text_col].nullable:
            return
        n_null = df.filter(F.col(text_col).isNull()).limit(1).count()
    if not n_null:
        return
    shown = id_col if id_col is not None else text_col
    found = df.filter(F.col(text_col).isNull()).select(shown).limit(1).collect()
    what = f"{id_col}={found[0][0]!r}" if id_col is not None and found else "some rows"
    raise InputError(f"{where}: text column {text_col!r} is null for {what}; drop or fill null "
                     "texts (e.g. df.dropna(subset=[text_col])) before deduplication")


def count_rows(df: DataFrame, text_col: str) -> tuple[int, int]:
    """(rows, rows with a null text) in one job."""
    row = df.agg(F.count(F.lit(1)), F.count_if(F.col(text_col).isNull())).collect()[0]
    return int(row[0]), int(row[1])


def with_input_order(df: DataFrame, order_col: str | None, text_col: str
                     ) -> tuple[DataFrame, int, int]:
    """(df with a dense 0..n-1 ORDER column, n, number of null texts).

    With order_col the order is that column's (its values must be unique; checked). Without, it
    is the input order, partition by partition: ORDER = rows in earlier partitions + position in
    the partition, the numbering of RDD.zipWithIndex, computed in the JVM without moving rows to
    Python. It is stable under recomputation and task retries when the DataFrame's own order is
    (files, local data, sorts, order-preserving transformations); after a shuffle such as
    repartition(n), pass order_col.
    """
    if order_col is not None:
        ranked, n_rows = _dense_order_by(df, order_col)
        return ranked, n_rows, count_rows(df, text_col)[1]
    per_partition = df.groupBy(F.spark_partition_id().alias("p")).agg(
        F.count(F.lit(1)), F.count_if(F.col(text_col).isNull())).collect()
    counts = {row[0]: row[1] for row in per_partition}
    n_null = sum(row[2] for row in per_partition)
    offsets, total = {}, 0
    for partition in range(df.rdd.getNumPartitions()):
        offsets[partition] = total
        total += counts.get(partition, 0)
    mid = F.monotonically_increasing_id()
    offset_of = F.create_map(*[F.lit(x) for p, o in offsets.items() for x in (p, o)]) \
        if offsets else F.create_map(F.lit(0), F.lit(0))
    order = F.element_at(offset_of, F.shiftright(mid, _ROW_BITS).cast("int")) \
        + mid.bitwiseAND(F.lit((1 << _ROW_BITS) - 1))
    return df.withColumn(ORDER, order.cast("long")), total, n_null


def _dense_order_by(df: DataFrame, order_col: str) -> tuple[DataFrame, int]:
    """ORDER = 0-based rank of the unique values of order_col (only that column goes through
    zipWithIndex; the rows are joined back in the JVM)."""
    if order_col not in df.columns:
        raise InputError(f"order_col={order_col!r} is not a column (columns: {df.columns}); pass "
                         "the name of a column with one distinct sortable value per row")
    values = df.select(order_col)
    if isinstance(values.schema[order_col].dataType, T.IntegralType):
        dense = _dense_as_given(values, order_col)
        if dense is not None:
            return df.withColumn(ORDER, F.col(order_col).cast("long")), dense
    if values.filter(F.col(order_col).isNull()).limit(1).count():
        raise InputError(f"order_col={order_col!r} has null values; it must order every row")
    ranks = values.orderBy(order_col).rdd.zipWithIndex().map(lambda pair: (pair[0][0], pair[1]))
    schema = T.StructType([values.schema.fields[0], T.StructField(ORDER, T.LongType(), False)])
    ranked = df.sparkSession.createDataFrame(ranks, schema)
    n_rows, n_distinct = values.count(), values.distinct().count()
    if n_rows != n_distinct:
        raise InputError(f"order_col={order_col!r} has {n_rows - n_distinct} repeated values; "
                         "the order must be unique (e.g. add the id as a tie breaker column)")
    return df.join(ranked, order_col), n_rows


def _dense_as_given(values: DataFrame, order_col: str) -> int | None:
    """n when the integer column `order_col` of `values` holds exactly 0..n-1 (each once), so
    its values are already their ranks; else None. Row numbers from the input (the CLI's) are
    such a column, and ranking them anyway costs a sort, a per-row Python zipWithIndex and a
    shuffle join carrying every text."""
    n_rows, non_null, low, high = values.agg(
        F.count(F.lit(1)), F.count(order_col), F.min(order_col), F.max(order_col)).collect()[0]
    if n_rows == 0 or non_null != n_rows or low != 0 or high != n_rows - 1:
        return None
    return int(n_rows) if values.distinct().count() == n_rows else None


def band_keys_column(params: LSHBloomParams, text_col: str, use_pandas_udf: bool):
    """Column expression: band keys (array<bigint>) of text_col, by the local kernels."""
    key_type = T.ArrayType(T.LongType(), containsNull=False)
    if use_pandas_udf:
        @F.pandas_udf(key_type)  # type: ignore[call-overload]  # stubs take DDL strings only
        def band_keys_udf(texts: pd.Series) -> pd.Series:
            return batches.keys_to_series(batches.band_keys_of_series(texts, params))

        return band_keys_udf(F.col(text_col))

    def band_keys_row(text):  # one document per call: slower, but no Arrow in the worker
        from corpus_miner.dedup.pipeline import band_keys_for_texts
        return band_keys_for_texts([text], params)[0].view(np.int64).tolist()

    return F.udf(band_keys_row, key_type)(F.col(text_col))


def first_orders(keyed: DataFrame) -> DataFrame:
    """The exact band table: band key -> smallest ORDER of a row having it."""
    exploded = keyed.select(ORDER, F.explode(KEYS).alias(KEY))
    return exploded.groupBy(KEY).agg(F.min(ORDER).alias(FIRST))


def key_groups(keyed: DataFrame, group_cols: tuple[str, ...] = ()) -> DataFrame:
    """Per (group_cols..., band key): FIRST, the smallest ORDER having it, and ROWS, all of them.
    One shuffle gives both the band table and every shared key."""
    exploded = keyed.select(ORDER, *group_cols, F.explode(KEYS).alias(KEY))
    return exploded.groupBy(*group_cols, KEY).agg(F.min(ORDER).alias(FIRST),
                                                  F.collect_list(ORDER).alias(ROWS))


def later_rows(groups: DataFrame) -> DataFrame:
    """(ORDER, FIRST) from key_groups: every row sharing a band key with an earlier row, and the
    smallest ORDER among the earliest rows of its shared keys (its duplicate_of)."""
    shared = groups.filter(F.size(ROWS) > 1).select(FIRST, F.explode(ROWS).alias(ORDER))
    return shared.filter(F.col(ORDER) > F.col(FIRST)).groupBy(ORDER).agg(F.min(FIRST).alias(FIRST))


def earliest_matches(keyed: DataFrame, table: DataFrame) -> DataFrame:
    """(ORDER, FIRST): per row of keyed, the smallest first-row ORDER among its band keys in
    the band table `table`."""
    exploded = keyed.select(ORDER, F.explode(KEYS).alias(KEY))
    return exploded.join(table, KEY).groupBy(ORDER).agg(F.min(FIRST).alias(FIRST))
