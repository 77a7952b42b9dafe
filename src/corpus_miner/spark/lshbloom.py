"""SparkLSHBloom: the seed's Spark API over the local LSHBloom kernels and index format.

mode="lshbloom": every partition computes its band keys with corpus_miner.dedup's kernels and
inserts them into its own Bloom filter (spark.filters); the filters are OR-ed segment by segment
on the executors, then assembled on the driver; queries read a broadcast, read-only copy.
mode="minhash_lsh": the exact distributed baseline, explode(band_keys) -> groupBy(band_key) ->
earliest document.

Both modes hand their index to the local engine and to the index folder through LSHBloomState
(to_state / from_state), so an index fitted here loads in `LSHBloom.load` and the reverse. Spark
always counts the rows first, so the filter it builds has one layer sized for max(expected_items,
rows), as the local engine's is for a list of texts; indexes that grew layers (built from a
stream) are loaded, queried and merged layer by layer.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from corpus_miner.dedup.bandtable import BandTable
from corpus_miner.dedup.bloom import BloomFilter
from corpus_miner.dedup.lshbloom import LSHBloom
from corpus_miner.dedup.params import (
    DEFAULT_CAPACITY,
    DEFAULT_FP_PROB,
    DEFAULT_SKETCH,
    LSHBloomParams,
)
from corpus_miner.dedup.persist import load_state, save_state
from corpus_miner.dedup.scalable_bloom import ScalableBloomFilter
from corpus_miner.dedup.state import LSHBloomState
from corpus_miner.errors import ParameterError
from corpus_miner.estimator import Estimator
from corpus_miner.spark import batches, filters, frames
from corpus_miner.spark.frames import FIRST, KEY, KEYS, ORDER, ROWS

DEFAULT_CHUNKS = 4
WAVE_BYTES = 256 << 20  # one-shot lshbloom dedup: filters per wave (driver memory, broadcasts)


class _class_or_instance_method:
    """`Cls.load(path)` takes the saved parameters; `obj.load(path)` also checks they are obj's."""

    def __init__(self, func):
        self.func = func
        functools.update_wrapper(self, func)

    def __get__(self, obj, owner):
        return functools.partial(self.func, owner, obj)


class SparkLSHBloom(Estimator):
    """Near-duplicate detection on Spark DataFrames with the parameters of corpus_miner's LSHBloom.

    deduplicate_chunks: one-shot deduplicate (lshbloom) processes the rows in this many chunks of
        consecutive rows; each chunk is queried against the filter of all earlier chunks, and
        shared band keys inside the chunk are found exactly, so the result does not depend on it
        (it bounds the size of the in-chunk shuffle).
    use_pandas_udf: compute band keys in vectorised pandas UDFs (Arrow batches); False uses a
        row-at-a-time Python UDF (slower, for platforms where Arrow workers are unstable).
    Other parameters: see corpus_miner.dedup.LSHBloom. Learned: params_, bands_, rows_,
    n_documents_, and bloom_ (lshbloom) or band_entries_ (minhash_lsh).
    """

    _fit_hint = "fit(), deduplicate() or SparkLSHBloom.load()"

    def __init__(self, threshold: float = 0.85, num_perm: int = 256, mode: str = "lshbloom",
                 num_bands: int | None = None, fp_prob: float = DEFAULT_FP_PROB,
                 shingle_size: int = 5, expected_items: int | None = None, seed: int = 1,
                 deduplicate_chunks: int = DEFAULT_CHUNKS, max_shingles: int | None = None,
                 use_pandas_udf: bool = True, sketch: str = DEFAULT_SKETCH,
                 shingle_kind: str = "char"):
        self.threshold = threshold
        self.num_perm = num_perm
        self.mode = mode
        self.num_bands = num_bands
        self.fp_prob = fp_prob
        self.shingle_size = shingle_size
        self.expected_items = expected_items
        self.seed = seed
        self.deduplicate_chunks = deduplicate_chunks
        self.max_shingles = max_shingles
        self.use_pandas_udf = use_pandas_udf
        self.sketch = sketch
        self.shingle_kind = shingle_kind

    @property
    def params(self) -> LSHBloomParams:
        """The LSHBloom parameters as given, in the frozen LSHBloomParams (not validated)."""
        engine_only = ("deduplicate_chunks", "use_pandas_udf")
        return LSHBloomParams(**{name: value for name, value in self.get_params().items()
                                 if name not in engine_only})

    @property
    def mode_(self) -> str:
        """The canonical mode of the fitted index ("lshbloom" or "minhash_lsh")."""
        self.check_is_fitted()
        return self.params_.mode

    # -- validation and state --------------------------------------------------------------------
    def _validated(self) -> LSHBloomParams:
        params = self.params.validated()
        chunks = self.deduplicate_chunks
        if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1:
            raise ParameterError(f"deduplicate_chunks must be an integer >= 1, got {chunks!r}")
        if not isinstance(self.use_pandas_udf, bool):
            raise ParameterError(f"use_pandas_udf must be True or False, "
                                 f"got {self.use_pandas_udf!r}")
        return params

    def _start(self, params: LSHBloomParams, n_documents: int) -> None:
        self.unpersist()
        self._forget_fitted()
        # minhash_lsh from a state: its DataFrames are made when needed
        self._table_state: LSHBloomState | None = None
        self.params_ = params
        self.bands_, self.rows_ = params.bands_rows
        self.n_documents_ = int(n_documents)

    def _persist(self, df: DataFrame) -> DataFrame:
        df = df.persist()
        self._persisted = [*getattr(self, "_persisted", []), df]
        return df

    def _release(self, df: DataFrame) -> None:
        """Drop an intermediate cache once what depends on it is materialized."""
        df.unpersist()
        self._persisted = [kept for kept in self._persisted if kept is not df]

    def unpersist(self) -> None:
        """Release the DataFrames this object cached (band tables, keyed inputs)."""
        for df in getattr(self, "_persisted", []):
            df.unpersist()
        self._persisted = []

    def _plan(self, n_documents: int) -> ScalableBloomFilter:
        """The empty filter for n_documents rows: one layer for max(expected_items, rows), the
        local engine's rule for inputs of known size (its shape is what partitions fill)."""
        capacity = max(self.params_.expected_items or 0, n_documents, 1)
        return ScalableBloomFilter(capacity, self.params_.fp_prob, self.bands_)

    def _filled(self, plan: ScalableBloomFilter, bits: BloomFilter) -> ScalableBloomFilter:
        """The plan's filter with its one layer's bits, holding all n_documents_ rows."""
        return ScalableBloomFilter(plan.capacity, plan.fp_prob, plan.bands, [bits],
                                   [self.n_documents_], plan.rates)

    def _keys_column(self, params: LSHBloomParams, text_col: str):
        return frames.band_keys_column(params, text_col, self.use_pandas_udf)

    def _checked(self, df: DataFrame, text_col: str, id_col: str | None, where: str,
                 count_nulls: bool = True) -> None:
        if not isinstance(df, DataFrame):
            raise ParameterError(f"{where}: expected a Spark DataFrame, got {type(df).__name__}")
        frames.check_columns(df, text_col, id_col, where)
        if count_nulls:
            frames.check_no_null_texts(df, text_col, id_col, where)

    @property
    def bloom(self) -> ScalableBloomFilter:
        """The fitted Bloom filter (mode lshbloom): num_bits, num_hashes, layers, metadata()."""
        self.check_is_fitted()
        if self.params_.mode != "lshbloom":
            raise ParameterError("bloom exists only in mode='lshbloom'; this index is minhash_lsh")
        return self.bloom_

    # -- fit ---------------------------------------------------------------------------------------
    def fit(self, reference_df: DataFrame, text_col: str = "text", id_col: str | None = "id",
            order_col: str | None = None) -> SparkLSHBloom:
        """Index a reference corpus (replaces any previous index); returns self."""
        params = self._validated()
        self._checked(reference_df, text_col, id_col, "fit", count_nulls=False)
        if params.mode == "lshbloom":
            n_documents, n_null = frames.count_rows(reference_df, text_col)
            frames.check_no_null_texts(reference_df, text_col, id_col, "fit", n_null)
            self._start(params, n_documents)
            plan = self._plan(n_documents)
            layer = plan.layers[0]
            self.bloom_ = self._filled(plan, filters.build_filter(
                reference_df, text_col, params, self.use_pandas_udf, layer.num_bits,
                layer.num_hashes))
            return self
        ordered, n_documents, n_null = frames.with_input_order(reference_df, order_col, text_col)
        frames.check_no_null_texts(reference_df, text_col, id_col, "fit", n_null)
        self._start(params, n_documents)
        keyed = self._persist(ordered.select(ORDER, self._id_expr(id_col),
                                             self._keys_column(params, text_col).alias(KEYS)))
        self._fit_band_table(keyed)
        self._release(keyed)
        return self

    def partial_fit(self, df: DataFrame, text_col: str = "text", order_col: str | None = None
                    ) -> SparkLSHBloom:
        """Add the rows of df (input order, or order_col) to the index, mode lshbloom; an
        unfitted object starts a growing index, as the local partial_fit does. The rows are
        numbered after the documents indexed so far, each run of them that falls in one layer
        fills partition-local filters of that layer's shape, and those are OR-ed into it: the
        index is byte for byte the local engine's after partial_fit of the same texts."""
        params = self._validated()
        if params.mode != "lshbloom":
            raise ParameterError("partial_fit on Spark adds to a Bloom filter (mode lshbloom); "
                                 "for minhash_lsh, fit the union or merge() indexes fitted apart")
        self._checked(df, text_col, None, "partial_fit", count_nulls=False)
        ordered, n_documents, n_null = frames.with_input_order(df, order_col, text_col)
        frames.check_no_null_texts(df, text_col, None, "partial_fit", n_null)
        if not self.is_fitted():
            self._start(params, 0)
            self.snapshots_: list[dict] = []
            self.bloom_ = ScalableBloomFilter(params.expected_items or DEFAULT_CAPACITY,
                                              params.fp_prob, self.bands_)
        elif self.params_ != params:
            raise ParameterError("partial_fit with other parameters than the fitted index's; "
                                 "load the index with SparkLSHBloom.load(path)")
        bloom = self.bloom_.copy()
        for start, stop, index in bloom.reserve(n_documents):
            layer = bloom.layers[index]
            rows = ordered.filter((F.col(ORDER) >= start) & (F.col(ORDER) < stop))
            bloom.layers[index] = layer.merge(filters.build_filter(
                rows, text_col, params, self.use_pandas_udf, layer.num_bits, layer.num_hashes))
        self.bloom_ = bloom
        self.n_documents_ += n_documents
        return self

    def merge(self, other: SparkLSHBloom) -> SparkLSHBloom:
        """The union of two fitted indexes (a new SparkLSHBloom; other's documents after this
        one's), by the local engine's rules (corpus_miner.dedup.incremental)."""
        from corpus_miner.dedup.incremental import merge_states

        if not isinstance(other, (SparkLSHBloom, LSHBloom)):
            raise TypeError(f"can only merge an LSHBloom or SparkLSHBloom, got "
                            f"{type(other).__name__}")
        return type(self).from_state(merge_states(self.to_state(), other.to_state()),
                                     self.deduplicate_chunks, self.use_pandas_udf, copy=False)

    @staticmethod
    def _id_expr(id_col: str | None):
        return (F.col(id_col) if id_col is not None else F.col(ORDER)).alias("_cm_id")

    def _fit_band_table(self, keyed: DataFrame, groups: DataFrame | None = None) -> None:
        """Band table and ids of keyed (from its key_groups when they are already computed)."""
        table = frames.first_orders(keyed) if groups is None else groups.select(KEY, FIRST)
        self.band_table_ = self._persist(table)
        self.doc_ids_ = self._persist(keyed.select(ORDER, "_cm_id"))
        self.band_entries_ = self.band_table_.count()
        self.doc_ids_.count()

    # -- queries ---------------------------------------------------------------------------------
    def query(self, new_df: DataFrame, text_col: str = "text", id_col: str | None = "id",
              return_band_keys: bool = False) -> DataFrame:
        """Match rows against the index, read-only (rows are not matched against each other,
        nor added), as LSHBloom.query.

        Parameters
        ----------
        new_df : pyspark.sql.DataFrame
        text_col, id_col : str
            The text column, and the id column (None: no ids).
        return_band_keys : bool, default False
            Also add `band_keys` (array<bigint>: the uint64 keys' bits).

        Returns
        -------
        pyspark.sql.DataFrame
            new_df with `is_duplicate` (shares a band key with the index); minhash_lsh also
            adds `duplicate_of` (the id of the earliest matching indexed row).
        """
        self.check_is_fitted()
        self._checked(new_df, text_col, id_col, "query")
        spark = new_df.sparkSession
        if self.params_.mode == "lshbloom" and self.use_pandas_udf:
            query, _ = filters.text_query_column(spark, self.bloom_, self.params_, text_col,
                                                 return_band_keys)
            if not return_band_keys:
                return new_df.withColumn("is_duplicate", query)
            return new_df.withColumn("_cm_query", query) \
                .withColumn(KEYS, F.col(f"_cm_query.{KEYS}")) \
                .withColumn("is_duplicate", F.col("_cm_query.is_duplicate")).drop("_cm_query")
        keyed = new_df.withColumn(KEYS, self._keys_column(self.params_, text_col))
        if self.params_.mode == "lshbloom":
            hits, _ = filters.bloom_hits_column(spark, self.bloom_, self.bands_)
            result = keyed.withColumn("is_duplicate", hits)
        else:
            result = self._transform_band_table(keyed)
        return result if return_band_keys else result.drop(KEYS)

    def _transform_band_table(self, keyed: DataFrame) -> DataFrame:
        keyed = self._persist(keyed.withColumn(ORDER, F.monotonically_increasing_id()))
        spark = keyed.sparkSession
        matches = frames.earliest_matches(keyed, self._band_table(spark))
        named = matches.join(self._doc_ids(spark).withColumnRenamed(ORDER, FIRST), FIRST) \
            .select(ORDER, F.col("_cm_id").alias("duplicate_of"))
        return keyed.join(named, ORDER, "left") \
            .withColumn("is_duplicate", F.col("duplicate_of").isNotNull()).drop(ORDER)

    def deduplicate(self, df: DataFrame, text_col: str = "text", id_col: str | None = "id",
                    order_col: str | None = None, annotate: bool = False, *,
                    update: bool = False, add: str = "all") -> DataFrame:
        """Drop every row sharing a band key with an EARLIER row (input order, or order_col),
        chunk-internal pairs included, as LSHBloom.deduplicate.

        Parameters
        ----------
        df : pyspark.sql.DataFrame
        text_col, id_col, order_col : str
            The text, id (None: no ids) and order (None: the input order) columns.
        annotate : bool, default False
            Keep every row and add `is_duplicate` (and, in minhash_lsh, `duplicate_of`: the id
            of the earliest matching row).
        update : bool, default False
            False: one-shot, self ends fitted on df's rows alone. True: rows are also checked
            against the current index, then added to it (an unfitted object starts a growing
            index); the index equals the local engine's after the same `deduplicate(update=
            True)`, byte for byte.
        add : {"all", "unique"}, default "all"
            Whose band keys go into the index. "unique" decides row by row (a row's flag
            depends on the flags before it), so Spark computes the band keys and the driver
            runs the local engine on them (8 bytes x bands per row reach the driver).

        Returns
        -------
        pyspark.sql.DataFrame
            The unique rows of df, or all of them with `is_duplicate` (annotate=True).

        Raises
        ------
        ParameterError
            A bad parameter, `add` other than "all" / "unique", or update=True on an index
            fitted with other parameters.
        InputError
            A missing column, a text column that is not a string, a null text.
        """
        params = self._validated()
        if add not in ("all", "unique"):
            raise ParameterError(f"add must be 'all' or 'unique', got {add!r}")
        self._checked(df, text_col, id_col, "deduplicate", count_nulls=False)
        ordered, n_documents, n_null = frames.with_input_order(df, order_col, text_col)
        frames.check_no_null_texts(df, text_col, id_col, "deduplicate", n_null)
        continuing = update and self.is_fitted()
        if continuing and self.params_ != params:
            raise ParameterError("deduplicate(update=True) with other parameters than the fitted "
                                 "index's; load the index with SparkLSHBloom.load(path)")
        if not continuing:
            self._start(params, n_documents if not update else 0)
            self.snapshots_ = []
            if update and params.mode == "lshbloom":  # a growing index, as the local engine's
                self.bloom_ = ScalableBloomFilter(params.expected_items or DEFAULT_CAPACITY,
                                                  params.fp_prob, self.bands_)
        keyed = self._persist(ordered.select(ORDER, self._id_expr(id_col),
                                             self._keys_column(params, text_col).alias(KEYS)))
        if add == "unique":
            flags = self._dedup_on_driver(keyed, update, continuing)
        elif params.mode == "lshbloom" and update:
            flags = self._bloom_update(keyed, n_documents)
        elif params.mode == "lshbloom":
            flags = self._chunked_bloom_dedup(keyed, n_documents)
        elif continuing:
            flags = self._band_table_update(keyed, n_documents)
        else:
            flags = self._band_table_dedup(keyed)
            self.n_documents_ = n_documents
        self._release(keyed)
        flag_df = self._flags_frame(df.sparkSession, flags, keyed)
        joined = ordered.join(F.broadcast(flag_df.withColumn("_cm_dup", F.lit(True))), ORDER,
                              "left")
        is_dup = F.coalesce(F.col("_cm_dup"), F.lit(False))
        if not annotate:
            return joined.filter(~is_dup).select(*df.columns)
        extra = ["duplicate_of"] if params.mode == "minhash_lsh" else []
        return joined.withColumn("is_duplicate", is_dup).select(*df.columns, "is_duplicate", *extra)

    def _dedup_on_driver(self, keyed: DataFrame, update: bool, continuing: bool) -> pd.DataFrame:
        """The local engine's deduplicate on the band keys computed here, collected in order
        (for add="unique", whose flags depend on each other row by row)."""
        table = keyed.orderBy(ORDER).select("_cm_id", KEYS).toArrow()
        keys = batches.list_column_to_keys(table.column(KEYS), self.bands_)
        ids = table.column("_cm_id").combine_chunks()
        local = LSHBloom.from_state(self.to_state(), copy=False) if continuing \
            else LSHBloom(**self.params_.to_dict())
        result = local._deduplicate_keys(keys, ids, update=update, add="unique")
        self._adopt(local.to_state())
        orders = np.flatnonzero(result.is_duplicate).astype(np.int64)
        flags = pd.DataFrame({ORDER: orders})
        if result.duplicate_of_id is not None:
            flags["duplicate_of"] = [result.duplicate_of_id[i] for i in orders]
        return flags

    def _adopt(self, state: LSHBloomState) -> None:
        """Serve `state` from now on (the index the driver computed)."""
        snapshots = list(getattr(self, "snapshots_", []))
        self._start(state.params, state.n_documents)
        self.snapshots_ = snapshots
        if state.params.mode == "lshbloom":
            assert state.bloom is not None
            self.bloom_ = state.bloom
        else:
            assert state.band_table is not None
            self._table_state = state
            self.band_entries_ = state.band_table.num_keys

    def _bloom_update(self, keyed: DataFrame, n_documents: int) -> pd.DataFrame:
        """ORDER of every duplicate of keyed against the current filter and its earlier rows;
        the filter then holds them all. The rows are cut at the layers they fall in (the runs
        of ScalableBloomFilter.reserve, as partial_fit) and into deduplicate_chunks pieces;
        piece by piece, one pass builds the piece's filter (and its "twice" filter, as in the
        one-shot dedup) and one queries the piece against the filter of everything before it,
        which the piece's filter is then OR-ed into. Rows sharing a key inside a piece are
        found exactly; a Bloom false positive between two rows of one piece cannot happen
        (the one-shot dedup's only difference from the local engine too)."""
        bloom = self.bloom_.copy()
        keys_of = filters.keys_from_column(self.bands_)
        found, candidates = [], []
        piece = 0
        for start, stop, index in bloom.reserve(n_documents):
            chunks = max(1, min(self.deduplicate_chunks, stop - start))
            for c in range(chunks):
                lo = start + (stop - start) * c // chunks
                hi = start + (stop - start) * (c + 1) // chunks
                rows = keyed.filter((F.col(ORDER) >= lo) & (F.col(ORDER) < hi)).select(
                    ORDER, KEYS, F.lit(0).cast("long").alias("_cm_piece"))
                layer = bloom.layers[index]
                ((mine, twice),) = filters.build_filters(rows, keys_of, layer.num_bits,
                                                         layer.num_hashes, count_twice=True)
                hits = filters.query_hits(rows, keys_of, {"earlier": [bloom], "twice": [twice]},
                                          "_cm_piece")
                found.append(hits["earlier"])
                candidates.append((piece, hits["twice"]))
                bloom.layers[index] = layer.merge(mine)
                piece += 1
        self.bloom_ = bloom
        self.n_documents_ += n_documents
        flagged = [pd.DataFrame({ORDER: orders, "_cm_piece": k}) for k, orders in candidates
                   if len(orders)]
        if flagged:
            spark = keyed.sparkSession
            subset = keyed.join(spark.createDataFrame(pd.concat(flagged)), ORDER)
            inside = frames.later_rows(frames.key_groups(subset, ("_cm_piece",)))
            found.append(inside.select(ORDER).toArrow().column(0).to_numpy())
        orders = np.unique(np.concatenate([np.zeros(0, np.int64), *found]).astype(np.int64))
        return pd.DataFrame({ORDER: orders})

    def _band_table_update(self, keyed: DataFrame, n_documents: int) -> pd.DataFrame:
        """ORDER and duplicate_of of every row of keyed matching the band table or an earlier
        row (the earliest match: the smallest ordinal among its keys' first documents), from
        one aggregation over the table's keys and keyed's; the table then holds them all."""
        spark = keyed.sparkSession
        old_table, old_ids = self._band_table(spark), self._doc_ids(spark)
        first = self.n_documents_
        id_type = old_ids.schema["_cm_id"].dataType if first else keyed.schema["_cm_id"].dataType
        shifted = keyed.select((F.col(ORDER) + first).alias(ORDER),
                               F.col("_cm_id").cast(id_type).alias("_cm_id"), KEYS)
        entries = old_table.select(F.col(FIRST).alias(ORDER), KEY).unionByName(
            shifted.select(ORDER, F.explode(KEYS).alias(KEY)))
        groups = self._persist(entries.groupBy(KEY).agg(F.min(ORDER).alias(FIRST),
                                                        F.collect_list(ORDER).alias(ROWS)))
        ids = old_ids.select(ORDER, "_cm_id").unionByName(shifted.select(ORDER, "_cm_id"))
        named = (frames.later_rows(groups)
                 .join(ids.withColumnRenamed(ORDER, FIRST), FIRST)
                 .select((F.col(ORDER) - first).alias(ORDER),
                         F.col("_cm_id").alias("duplicate_of")))
        flags = named.toPandas()
        table, doc_ids = self._persist(groups.select(KEY, FIRST)), self._persist(ids)
        self.band_entries_ = table.count()
        doc_ids.count()
        self._release(groups)
        for stale in (old_table, old_ids):
            if stale in self._persisted:
                self._release(stale)
        self.band_table_, self.doc_ids_ = table, doc_ids
        self._table_state = None
        self.n_documents_ = first + n_documents
        return flags

    @staticmethod
    def _flags_frame(spark, flags: pd.DataFrame, keyed: DataFrame) -> DataFrame:
        """The duplicates found (ORDER [, duplicate_of]) as a small DataFrame to broadcast-join."""
        fields = [T.StructField(ORDER, T.LongType(), False)]
        if "duplicate_of" in flags.columns:
            fields.append(T.StructField("duplicate_of", keyed.schema["_cm_id"].dataType, True))
        return spark.createDataFrame(flags, T.StructType(fields))

    def _chunked_bloom_dedup(self, keyed: DataFrame, n_documents: int) -> pd.DataFrame:
        """ORDER of every duplicate. Rows are cut into chunks of consecutive ORDERs; every row of
        chunk c is queried against the filter of chunks 0..c-1, and band keys shared inside a
        chunk are found exactly.

        Chunks go in waves of as many as WAVE_BYTES of filters hold (all of them at the default
        4 chunks): per wave, one pass builds each chunk's filter together with a filter of the
        keys possibly inserted twice in the chunk (BloomFilter.add_counting, merged across
        partitions), and one pass queries the prefix ORs and the "twice" filters (broadcast).
        Only the rows with a key in their chunk's "twice" filter (every row sharing a key inside
        its chunk, plus false positives) go through the exact in-chunk shuffle: few rows on a
        corpus with few duplicates."""
        chunks = max(1, min(self.deduplicate_chunks, n_documents))
        chunk_of = F.expr(f"{ORDER} * {chunks} div {max(n_documents, 1)}").alias("_cm_chunk")
        with_chunks = keyed.select(ORDER, KEYS, chunk_of)
        plan = self._plan(n_documents)
        earlier = plan.layers[0].copy()  # the filter of every chunk before the wave
        keys_of = filters.keys_from_column(self.bands_)
        per_wave = max(1, WAVE_BYTES // max(3 * earlier.bits.nbytes, 1))
        found, candidates = [], []
        for first in range(0, chunks, per_wave):
            last = min(first + per_wave, chunks)
            in_wave = F.col("_cm_chunk").between(first, last - 1)
            rows = with_chunks.filter(in_wave).select(
                ORDER, KEYS, (F.col("_cm_chunk") - first).alias("_cm_wave_chunk"))
            prefixes: list[BloomFilter | None] = []
            twices = []
            for bloom, twice in filters.build_filters(rows, keys_of, earlier.num_bits,
                                                      earlier.num_hashes, "_cm_wave_chunk",
                                                      last - first, count_twice=True):
                prefixes.append(earlier if first + len(prefixes) > 0 else None)
                twices.append(twice)
                earlier = earlier.merge(bloom)
            hits = filters.query_hits(rows, keys_of, {"earlier": prefixes, "twice": twices},
                                      "_cm_wave_chunk")
            found.append(hits["earlier"])
            candidates.append(hits["twice"])
        self.bloom_ = self._filled(plan, earlier)
        flagged = np.concatenate(candidates)
        if len(flagged):
            subset = with_chunks.join(keyed.sparkSession.createDataFrame(
                pd.DataFrame({ORDER: flagged})), ORDER)
            inside = frames.later_rows(frames.key_groups(subset, ("_cm_chunk",)))
            found.append(inside.select(ORDER).toArrow().column(0).to_numpy())
        orders = np.unique(np.concatenate(found).astype(np.int64))
        return pd.DataFrame({ORDER: orders})

    def _band_table_dedup(self, keyed: DataFrame) -> pd.DataFrame:
        """Fits the band table; returns ORDER and id of the earliest earlier match of every
        duplicate (both from one aggregation of the band keys)."""
        groups = self._persist(frames.key_groups(keyed))
        self._fit_band_table(keyed, groups)
        named = (frames.later_rows(groups)
                 .join(self.doc_ids_.withColumnRenamed(ORDER, FIRST), FIRST)
                 .select(ORDER, F.col("_cm_id").alias("duplicate_of")))
        flags = named.toPandas()
        self._release(groups)
        return flags

    # -- state: the local engine's index and its folder ------------------------------------------
    def _band_table(self, spark) -> DataFrame:
        if "band_table_" not in vars(self):
            state = self._table_state
            assert state is not None and state.band_table is not None and state.ids is not None
            keys, docs = state.band_table.items()
            table = pd.DataFrame({KEY: keys.view(np.int64), FIRST: docs})
            self.band_table_ = self._persist(spark.createDataFrame(table))
            id_table = pa.table({ORDER: np.arange(len(state.ids), dtype=np.int64),
                                 "_cm_id": state.ids})
            self.doc_ids_ = self._persist(spark.createDataFrame(id_table))
        return self.band_table_

    def _doc_ids(self, spark) -> DataFrame:
        self._band_table(spark)
        return self.doc_ids_

    def to_state(self) -> LSHBloomState:
        """The fitted index as an LSHBloomState (the filter shared; a band table collected)."""
        self.check_is_fitted()
        snapshots = tuple(getattr(self, "snapshots_", ()))
        if self.params_.mode == "lshbloom":
            return LSHBloomState(self.params_, self.n_documents_, bloom=self.bloom_,
                                 snapshots=snapshots)
        if self._table_state is not None:
            return self._table_state
        table = self.band_table_.toArrow()
        keys = table.column(KEY).to_numpy().astype(np.int64).view(np.uint64)
        docs = table.column(FIRST).to_numpy().astype(np.int64)
        ids = self.doc_ids_.orderBy(ORDER).toArrow().column("_cm_id").combine_chunks()
        return LSHBloomState(self.params_, self.n_documents_,
                             band_table=BandTable.from_items(keys, docs), ids=ids,
                             snapshots=snapshots)

    @classmethod
    def from_state(cls, state: LSHBloomState, deduplicate_chunks: int = DEFAULT_CHUNKS,
                   use_pandas_udf: bool = True, copy: bool = True) -> SparkLSHBloom:
        """A SparkLSHBloom serving a fitted index (a copy of its filter unless copy=False)."""
        if not isinstance(state, LSHBloomState):
            raise TypeError(f"from_state needs an LSHBloomState, got {type(state).__name__}")
        state = state.copy() if copy else state
        model = cls(**state.params.to_dict(), deduplicate_chunks=deduplicate_chunks,
                    use_pandas_udf=use_pandas_udf)
        model._start(state.params, state.n_documents)
        model.snapshots_ = list(state.snapshots)
        if state.params.mode == "lshbloom":
            assert state.bloom is not None
            model.bloom_ = state.bloom
        else:
            assert state.band_table is not None
            model._table_state = state
            model.band_entries_ = state.band_table.num_keys
        return model

    def to_local(self) -> LSHBloom:
        """The fitted index as a local corpus_miner.dedup.LSHBloom (same parameters and index)."""
        return LSHBloom.from_state(self.to_state())

    @classmethod
    def from_local(cls, local: LSHBloom, deduplicate_chunks: int = DEFAULT_CHUNKS,
                   use_pandas_udf: bool = True) -> SparkLSHBloom:
        """A SparkLSHBloom serving a fitted local LSHBloom's index."""
        return cls.from_state(local.to_state(), deduplicate_chunks, use_pandas_udf)

    def save(self, path) -> None:
        """Write the index folder (the local engine's format: metadata.json + raw arrays)."""
        save_state(path, self.to_state())

    @_class_or_instance_method
    def load(cls, expected, path) -> SparkLSHBloom:
        """SparkLSHBloom.load(path): the saved index with its parameters. On an instance,
        lsh.load(path) also refuses an index saved with parameters other than lsh's."""
        state = load_state(path)
        if expected is None:
            return cls.from_state(state, copy=False)
        mine = expected._validated().to_dict()
        theirs = state.params.to_dict()
        differ = {k: (theirs[k], mine[k]) for k in mine if k != "expected_items"
                  and theirs[k] != mine[k]}
        if differ:
            detail = ", ".join(f"{k}={saved!r} (yours {own!r})"
                               for k, (saved, own) in differ.items())
            raise ParameterError(f"{path}: index was saved with other parameters: {detail}; use "
                                 "SparkLSHBloom.load(path) to take the saved ones, or refit")
        return cls.from_state(state, expected.deduplicate_chunks, expected.use_pandas_udf,
                              copy=False)

    def metadata(self) -> dict:
        return self.to_local().metadata()
