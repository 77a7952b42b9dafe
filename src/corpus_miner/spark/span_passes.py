"""The passes of SparkBloomSpan: each one a mapInArrow over stored batches, a shuffle of keyed
blobs (groupBy(bucket).applyInArrow) or a small collect, calling phrases.distributed.stages.

Stored tables have one row per batch of whole documents: `batch` (binary, a stages blob) and
`tokens` (long, for the run statistics). Nothing per token or per occurrence reaches the driver:
it collects the frequent vocabulary, filter segments, deferred keys and the phrases.
"""

from __future__ import annotations

import uuid
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
from pyspark import StorageLevel, TaskContext
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from corpus_miner._numba.keyset import KeySet
from corpus_miner.dedup.bloom import bloom_size
from corpus_miner.io.strings import StringList
from corpus_miner.phrases.distributed import stages
from corpus_miner.phrases.distributed.encode import (
    WordIndex,
    frequent_vocabulary,
    tokenize_batch,
)
from corpus_miner.phrases.distributed.stages import Plan, Round
from corpus_miner.phrases.distributed.windows import pack_arrays, unpack_arrays
from corpus_miner.spark.filters import _shipped, _unshipped, build_filters

TABLE_SCHEMA = "batch binary"
# keyed blobs carry the partition's token count on one row, so that the reducers' outputs also
# give the run statistics without a job of their own
KEYED_SCHEMA = "bucket int, tokens long, blob binary"
ROUTED_SCHEMA = "bucket int, stage int, tokens long, blob binary"
REDUCED_SCHEMA = "kind int, bucket int, tokens long, blob binary"
PHRASES, DEFERRED, FORWARDED, TOKENS = 0, 1, 2, 3
PARTITION_TOKENS = 1 << 24
EXACT_KEYS = 1 << 20
"""Key sets (frequent bigrams, frequent and live grams) up to this size are collected by the job
that counts them and shipped exactly (8 bytes per key, one probe); larger ones are shipped as
Bloom filters built on the executors (about 1.2 bytes per key at 1%), so the driver never holds
more than 8 MiB of keys."""

_worker_cache: dict[tuple, object] = {}
_CACHE_ENTRIES = 16


def shared_value(spark, value):
    """A broadcast of `value` tagged with a unique token, for `cached`."""
    return spark.sparkContext.broadcast((uuid.uuid4().hex, value))


def cached(broadcast, make: Callable):
    """make(value) of a shared_value broadcast, built once per Python worker (workers are reused
    across tasks; the few most recent structures are kept)."""
    token, value = broadcast.value
    key = (token, make.__name__)
    if key not in _worker_cache:
        while len(_worker_cache) >= _CACHE_ENTRIES:
            _worker_cache.pop(next(iter(_worker_cache)))
        _worker_cache[key] = make(value)
    return _worker_cache[key]


def _table_rows(blobs: list[bytes]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"batch": pa.array(blobs, pa.binary())})


def _keyed_rows(pieces, tokens: int) -> pa.RecordBatch:
    """Rows (bucket, tokens, blob); the token count goes on the first row (a row with an empty
    blob when the partition has nothing to ship)."""
    pieces = list(pieces) or [(0, b"")]
    counts = [tokens] + [0] * (len(pieces) - 1)
    return pa.RecordBatch.from_pydict({"bucket": pa.array([b for b, _ in pieces], pa.int32()),
                                       "tokens": pa.array(counts, pa.int64()),
                                       "blob": pa.array([raw for _, raw in pieces], pa.binary())})


def _stored(batches: Iterator[pa.RecordBatch], decode: Callable) -> list:
    return [decode(raw) for batch in batches for raw in _blobs(batch)]


def _nonempty(column: pa.ChunkedArray) -> list[bytes]:
    return [raw for raw in column.to_pylist() if raw]


def _blobs(batch: pa.RecordBatch, column: str = "batch") -> list[bytes]:
    return batch.column(column).to_pylist()


class Passes:
    """The passes of one fit, holding its broadcasts and cached tables (released by close())."""

    def __init__(self, spark, plan: Plan, filter_fp: float):
        self.spark = spark
        self.plan = plan
        self.filter_fp = filter_fp
        self._broadcasts: list = []
        self._cached: list[DataFrame] = []

    def broadcast(self, value):
        shared = shared_value(self.spark, value)
        self._broadcasts.append(shared)
        return shared

    def keep(self, df: DataFrame) -> DataFrame:
        df = df.persist(StorageLevel.MEMORY_AND_DISK)
        self._cached.append(df)
        return df

    def release(self, df: DataFrame) -> None:
        df.unpersist()
        self._cached = [kept for kept in self._cached if kept is not df]

    def close(self) -> None:
        for df in self._cached:
            df.unpersist()
        for shared in self._broadcasts:
            shared.destroy()
        self._cached, self._broadcasts = [], []

    # -- stage 0 ---------------------------------------------------------------------------------
    def tokenized(self, df: DataFrame, text_col: str) -> DataFrame:
        """Texts -> stored batches with local ids and word counts (stages.local_to_blob)."""

        def tokenize(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in batches:
                yield _table_rows([stages.local_to_blob(tokenize_batch(piece))
                                   for piece in stages.text_slices(batch.column(0))])

        return self.keep(df.select(text_col).mapInArrow(tokenize, TABLE_SCHEMA))

    def vocabulary(self, table: DataFrame) -> tuple[StringList, int]:
        """(the words in >= sigma documents, in byte order; the corpus's tokens) from one
        aggregation keyed by the word. No token is empty, so the empty word carries the token
        count through the same aggregation."""

        def words(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in batches:
                for raw in _blobs(batch):
                    local = stages.local_from_blob(raw)
                    vocab, df = stages.word_counts(local)
                    yield pa.RecordBatch.from_pydict({"word": vocab.cast(pa.string()),
                                                      "df": pa.array(df, pa.int64())})
                    yield pa.RecordBatch.from_pydict({"word": [""],
                                                      "df": [len(local.batch.tokens)]})

        counted = table.mapInArrow(words, "word string, df long").groupBy("word") \
            .agg(F.sum("df").alias("df")) \
            .filter((F.col("df") >= self.plan.sigma) | (F.col("word") == "")).toArrow()
        word = counted.column("word").combine_chunks()
        df = counted.column("df").to_numpy()
        empty = pa.compute.equal(word, "").to_numpy(zero_copy_only=False)
        vocab = frequent_vocabulary(word.filter(pa.array(~empty)), df[~empty], self.plan.sigma)
        return vocab, int(df[empty].sum())

    def encoded(self, table: DataFrame, vocab: StringList, tokens: int) -> DataFrame:
        """Stored batches with global ids, runs of frequent words only (stages.encode_global),
        in fewer partitions when the input had many small ones: about PARTITION_TOKENS tokens
        each, but at least 4 per core when the input had that many (whole batches move, so
        documents stay whole)."""
        current = table.rdd.getNumPartitions()
        wanted = max(-(-tokens // PARTITION_TOKENS),
                     min(current, 4 * self.spark.sparkContext.defaultParallelism))
        if wanted < current:
            table = table.coalesce(wanted)
        shared = self.broadcast((vocab.offsets, vocab.data))
        min_length = self.plan.min_length

        def encode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            index = cached(shared, _word_index)
            for batch in batches:
                yield _table_rows([stages.batch_to_blob(stages.encode_global(
                    stages.local_from_blob(raw), index, min_length)) for raw in _blobs(batch)])

        return self.keep(table.mapInArrow(encode, TABLE_SCHEMA))

    # -- stage 1 ---------------------------------------------------------------------------------
    def frequent_bigram_filter(self, table: DataFrame) -> tuple[tuple, int, int]:
        """(key set of the bigrams in >= sigma documents, their number, tokens of `table`)."""
        plan = self.plan

        def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            stored = _stored(batches, stages.batch_from_blob)
            yield _keyed_rows(stages.keyed_blobs(stages.partition_bigram_counts(stored), "key",
                                                 plan.buckets),
                              sum(len(b.tokens) for b in stored))

        inline = EXACT_KEYS // plan.buckets

        def reduce(group: pa.Table) -> pa.Table:
            keys = stages.frequent_bigrams(_nonempty(group.column("blob")), plan.sigma)
            return pa.table({**_key_columns("keys", keys, inline),
                             "tokens": [pa.compute.sum(group.column("tokens")).as_py()]})

        frequent = self.keep(table.mapInArrow(count, KEYED_SCHEMA).groupBy("bucket").applyInArrow(
            reduce, "keys binary, keys_inline binary, keys_n long, tokens long"))
        small = frequent.drop("keys").toArrow()
        tokens = int(small.column("tokens").to_numpy().sum())
        key_set, n_keys = self._key_set(frequent, small, "keys")
        return key_set, n_keys, tokens

    def compacted(self, table: DataFrame, frequent_bigram: tuple) -> DataFrame:
        """Runs of >= min_length tokens joined by frequent bigrams only."""
        shared = self.broadcast(frequent_bigram)
        min_length = self.plan.min_length

        def compact(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            contains = cached(shared, _membership)
            for batch in batches:
                yield _table_rows([stages.batch_to_blob(stages.compact_frequent_pairs(
                    stages.batch_from_blob(raw), contains, min_length)) for raw in _blobs(batch)])

        return self.keep(table.mapInArrow(compact, TABLE_SCHEMA))

    # -- stage 2 ---------------------------------------------------------------------------------
    def gram_filters(self, table: DataFrame) -> dict:
        """Filters of the frequent and the live min_length-grams, the groups to salt (sorted
        fingerprints, salts) and counts."""
        plan = self.plan
        partitions = table.rdd.getNumPartitions()

        def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            stored = _stored(batches, stages.batch_from_blob)
            yield _keyed_rows(stages.keyed_blobs(stages.partition_gram_statistics(stored, plan),
                                                 "fp", plan.buckets),
                              sum(len(b.tokens) for b in stored))

        inline = EXACT_KEYS // plan.buckets

        def reduce(group: pa.Table) -> pa.Table:
            classes = stages.classify_grams(_nonempty(group.column("blob")), plan)
            salts = plan.salts(classes["occurrences"], partitions)
            salted = salts > 1
            return pa.table({**_key_columns("frequent", classes["frequent"], inline),
                             **_key_columns("live", classes["live"], inline),
                             "salted": [pack_arrays({"keys": classes["frequent"][salted],
                                                     "salts": salts[salted]})],
                             "tokens": [pa.compute.sum(group.column("tokens")).as_py()]})

        classes = self.keep(table.mapInArrow(count, KEYED_SCHEMA).groupBy("bucket").applyInArrow(
            reduce, "frequent binary, frequent_inline binary, frequent_n long, live binary, "
            "live_inline binary, live_n long, salted binary, tokens long"))
        small = classes.drop("frequent", "live").toArrow()
        salted = [unpack_arrays(raw) for raw in small.column("salted").to_pylist()]
        keys = np.concatenate([s["keys"] for s in salted] + [np.zeros(0, np.uint64)])
        salts = np.concatenate([s["salts"] for s in salted] + [np.zeros(0, np.int64)])
        order = np.argsort(keys, kind="stable")
        frequent, n_frequent = self._key_set(classes, small, "frequent")
        live, n_live = self._key_set(classes, small, "live")
        return {"frequent": frequent, "live": live, "salted": (keys[order], salts[order]),
                "frequent_grams": n_frequent, "live_grams": n_live,
                "tokens": int(small.column("tokens").to_numpy().sum())}

    def reach(self, table: DataFrame, frequent_gram: tuple) -> DataFrame:
        """Chains of frequent grams and the tokens they cover (stages.mark_reach)."""
        shared = self.broadcast(frequent_gram)
        plan = self.plan

        def mark(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            contains = cached(shared, _membership)
            for batch in batches:
                yield _table_rows([stages.reach_to_blob(stages.mark_reach(
                    stages.batch_from_blob(raw), contains, plan)) for raw in _blobs(batch)])

        return self.keep(table.mapInArrow(mark, TABLE_SCHEMA))

    # -- stages 3, 4 -----------------------------------------------------------------------------
    def round(self, table: DataFrame, index: int, live_gram: tuple | None,
              deferred: np.ndarray | None, salted: tuple[np.ndarray, np.ndarray]):
        """One round: (phrase pieces, deferred keys, deferred occurrences) collected."""
        plan = self.plan
        lo, hi = plan.depths(index)
        live = self.broadcast(live_gram) if live_gram is not None else None
        later = self.broadcast(deferred) if deferred is not None else None
        salt_keys, salt_counts = salted

        def spec() -> Round:
            return Round(index, lo, hi, cached(live, _membership) if live is not None else None,
                         cached(later, KeySet) if later is not None else None, salt_keys,
                         salt_counts)

        def shipped(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            stored = _stored(batches, stages.reach_from_blob)
            summary = stages.partition_summary(stored, plan, spec())
            pieces = list(stages.route(summary, plan, spec(), TaskContext.get().partitionId()))
            pieces = pieces or [(0, stages.FINAL, b"")]
            tokens = [sum(len(b.tokens) for b in stored)] + [0] * (len(pieces) - 1)
            yield pa.RecordBatch.from_pydict({
                "bucket": pa.array([p[0] for p in pieces], pa.int32()),
                "stage": pa.array([p[1] for p in pieces], pa.int32()),
                "tokens": pa.array(tokens, pa.int64()),
                "blob": pa.array([p[2] for p in pieces], pa.binary())})

        def reduce(group: pa.Table) -> pa.Table:
            stage = group.column("stage").to_numpy()
            blobs = group.column("blob").to_pylist()
            final = [b for b, s in zip(blobs, stage) if s == stages.FINAL and b]
            partial = [b for b, s in zip(blobs, stage) if s == stages.PARTIAL and b]
            phrases, later_keys, forwarded = stages.reduce_round(final, partial, plan, spec())
            tokens = pa.compute.sum(group.column("tokens")).as_py() or 0
            return _reduced(phrases, later_keys, forwarded, tokens)

        reduced = self.keep(table.mapInArrow(shipped, ROUTED_SCHEMA).groupBy("bucket")
                            .applyInArrow(reduce, REDUCED_SCHEMA))
        # one collect: phrases and deferred keys, and whether salted groups were forwarded
        collected = reduced.select("kind", "bucket", "tokens", F.when(
            F.col("kind") != FORWARDED, F.col("blob")).alias("blob")).toArrow()
        kinds = collected.column("kind").to_numpy()
        if (kinds == FORWARDED).any():
            again = reduced.filter(F.col("kind") == FORWARDED) \
                .select("bucket", F.lit(stages.FINAL).alias("stage"), "tokens", "blob") \
                .groupBy("bucket").applyInArrow(reduce, REDUCED_SCHEMA).toArrow()
            collected = pa.concat_tables([collected.filter(pa.array(kinds != FORWARDED)), again])
            kinds = collected.column("kind").to_numpy()
        self.release(reduced)
        blobs = collected.column("blob").to_pylist()
        pieces = [unpack_arrays(b) for b, k in zip(blobs, kinds) if k == PHRASES]
        later_parts = [unpack_arrays(b) for b, k in zip(blobs, kinds) if k == DEFERRED]
        keys = np.concatenate([p["keys"] for p in later_parts] + [np.zeros(0, np.uint64)])
        occ = np.concatenate([p["occurrences"] for p in later_parts] + [np.zeros(0, np.int64)])
        tokens = int(collected.column("tokens").to_numpy()[kinds == TOKENS].sum())
        return pieces, keys, occ, tokens

    # -- helpers ---------------------------------------------------------------------------------
    def _key_set(self, rows: DataFrame, small: pa.Table, column: str) -> tuple[tuple, int]:
        """(membership spec of the keys packed in rows[column], number of keys): ("exact", keys)
        when every reducer inlined its keys in `small` (the rows without the big columns), else
        ("bloom", filter) at rate filter_fp; ("all",) passes everything (filter_fp >= 1, tests).
        Workers turn a spec into a test with `_membership`."""
        n_keys = int(small.column(f"{column}_n").to_numpy().sum())
        if self.filter_fp >= 1.0:
            return ("all",), n_keys
        inline = small.column(f"{column}_inline").to_pylist()
        if all(raw is not None for raw in inline):
            keys = [unpack_arrays(raw)["keys"] for raw in inline]
            return ("exact", np.concatenate(keys + [np.zeros(0, np.uint64)])), n_keys
        num_bits, num_hashes = bloom_size(max(n_keys, 1), self.filter_fp)

        def keys_of(batch: pa.RecordBatch) -> np.ndarray:
            parts = [unpack_arrays(raw)["keys"] for raw in batch.column(column).to_pylist()]
            return np.concatenate(parts + [np.zeros(0, np.uint64)])

        bloom = build_filters(rows.select(column), keys_of, num_bits, num_hashes)[0]
        return ("bloom", _shipped(bloom)), n_keys


def _key_columns(name: str, keys: np.ndarray, inline_limit: int) -> dict:
    """A reducer's key set as columns: all keys, the keys again when few enough to collect
    (else null), their number."""
    packed = pack_arrays({"keys": keys})
    return {name: [packed], f"{name}_inline": pa.array([packed if len(keys) <= inline_limit
                                                        else None], pa.binary()),
            f"{name}_n": [len(keys)]}


def _reduced(phrases, later, forwarded, tokens: int) -> pa.Table:
    """Rows of a round's reduce: phrases, deferred keys, forwarded summaries, and the tokens of
    the routed rows (a FINAL forwarded row's tokens are 0, so totals count each token once)."""
    kinds, buckets, blobs = [TOKENS], [0], [b""]
    phrase_tokens, offsets, df, occ = phrases
    if len(df):
        kinds.append(PHRASES)
        buckets.append(0)
        blobs.append(pack_arrays({"tokens": phrase_tokens, "offsets": offsets, "df": df,
                                  "occurrences": occ}))
    keys, later_df, later_occ = later
    if len(keys):
        kinds.append(DEFERRED)
        buckets.append(0)
        blobs.append(pack_arrays({"keys": keys, "df": later_df, "occurrences": later_occ}))
    for bucket, raw in forwarded:
        kinds.append(FORWARDED)
        buckets.append(bucket)
        blobs.append(raw)
    counts = [tokens] + [0] * (len(kinds) - 1)
    return pa.table({"kind": pa.array(kinds, pa.int32()), "bucket": pa.array(buckets, pa.int32()),
                     "tokens": pa.array(counts, pa.int64()), "blob": pa.array(blobs, pa.binary())})


def _word_index(shipped) -> WordIndex:
    offsets, data = shipped
    return WordIndex(StringList(offsets, data))


def _membership(spec: tuple) -> Callable[[np.ndarray], np.ndarray]:
    """The membership test of a key-set spec (Passes._key_set)."""
    kind = spec[0]
    if kind == "exact":
        return KeySet(spec[1])
    if kind == "bloom":
        return _unshipped(spec[1]).contains
    return lambda keys: np.ones(len(keys), dtype=bool)
