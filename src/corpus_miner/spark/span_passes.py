"""The passes of SparkBloomSpan: mapInArrow over stored batches, shuffles of keyed blobs
(groupBy(bucket).applyInArrow) and small collects, calling phrases.distributed.stages.

Each pass over the data reads a stored table once and writes one DataFrame of ROWS: the next
stored table (kind TABLE, one row per batch of whole documents) *and* the keyed blobs of the
next shuffle (kind KEYED), so no table crosses between the JVM and Python twice for one stage.
That DataFrame is persisted; its TABLE rows feed the next pass, its KEYED rows the reduce.

    pass 1  texts -> local-id batches + words and bigram fingerprints per partition
            -> (reduce words and bigrams together)   -> vocabulary, frequent-bigram key set
    pass 2  local batches -> compacted global-id batches + gram statistics
            -> (reduce grams)                         -> frequent and live gram key sets
    round r compacted batches -> chains of frequent grams (marked again each round, never
            stored) -> routed summaries -> (reduce) -> phrases, deferred keys

Nothing per token or per occurrence reaches the driver: it collects the frequent vocabulary,
key sets (exact up to EXACT_KEYS, Bloom filters beyond), deferred keys and phrases.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import TaskContext
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from corpus_miner._numba.block_filter import BlockFilter
from corpus_miner._numba.keyset import KeySet
from corpus_miner.dedup.bloom import BloomFilter, bloom_size
from corpus_miner.io.readers import read_ahead
from corpus_miner.io.strings import StringList
from corpus_miner.phrases.distributed import stages
from corpus_miner.phrases.distributed.encode import (
    WordIndex,
    tokenize_batch,
)
from corpus_miner.phrases.distributed.stages import Plan, Round
from corpus_miner.phrases.distributed.windows import pack_arrays, unpack_arrays
from corpus_miner.spark import stored
from corpus_miner.spark.worker import cached, shared_value, task

ROWS = "kind int, bucket int, stage int, tokens long, documents long, blob binary"
TABLE, KEYED = 0, 1
PAIRS, WORDS = 0, 1
"""Stages of pass 1's KEYED rows: bigram counts and word counts, reduced together."""
REDUCED = "kind int, bucket int, tokens long, blob binary"
PHRASES, DEFERRED, FORWARDED, TOKENS = 0, 1, 2, 3
PARTITION_TOKENS = 1 << 24
"""Stored batches are coalesced into partitions of about this many tokens (never fewer than 4
per core when the input had that many)."""
EXACT_KEYS = 1 << 22
"""Key sets (frequent bigrams, frequent and live grams) up to this size are collected by the job
that counts them and shipped exactly (8 bytes per key; workers query them through a split-block
Bloom filter, one cache line per query); larger ones are shipped as Bloom filters built on the
executors (about 1.2 bytes per key at 1%, 28 ns a query), so the driver never holds more than
32 MiB of keys per set. 2^20 sent σ 3 on 113M tokens (2.97M frequent bigrams, 1.37M frequent
grams) down the Bloom path: two filter-building jobs and slower queries, a 45.9 s fit against
41.6 s with 2^22."""


def _rows(kind: int, blobs: list[bytes], buckets=None, stage=None, tokens=None,
          documents=None) -> pa.RecordBatch:
    """A batch of ROWS of one kind (the unused columns null)."""
    n = len(blobs)

    def column(values, kind_type):
        return pa.nulls(n, kind_type) if values is None else pa.array(values, kind_type)

    return pa.RecordBatch.from_arrays(
        [pa.array(np.full(n, kind, np.int32)), column(buckets, pa.int32()),
         column(stage, pa.int32()), column(tokens, pa.int64()), column(documents, pa.int64()),
         column(blobs, pa.binary())],
        names=["kind", "bucket", "stage", "tokens", "documents", "blob"])


def _keyed_rows(pieces, tokens: int, documents: int = 0) -> pa.RecordBatch:
    """KEYED rows from (bucket, blob) or (bucket, stage, blob) pieces; the partition's token and
    document counts go on the first row (a row with an empty blob when there is nothing to
    ship), so the reducers' outputs give the run statistics without a job of their own."""
    pieces = [p if len(p) == 3 else (p[0], stages.FINAL, p[1]) for p in pieces]
    pieces = pieces or [(0, stages.FINAL, b"")]
    zeros = [0] * (len(pieces) - 1)
    return _rows(KEYED, [p[2] for p in pieces], buckets=[p[0] for p in pieces],
                 stage=[p[1] for p in pieces], tokens=[tokens] + zeros,
                 documents=[documents] + zeros)


def _blobs(batches: Iterator[pa.RecordBatch]) -> Iterator[bytes]:
    for batch in batches:
        yield from batch.column("blob").to_pylist()


def _nonempty(column) -> list[bytes]:
    return [raw for raw in column.to_pylist() if raw]


def _tokens(group: pa.Table) -> int:
    return int(pc.sum(group.column("tokens")).as_py() or 0)


class Passes:
    """The passes of one fit, holding its broadcasts and cached DataFrames (close() releases)."""

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
        df = stored.keep(df)
        self._cached.append(df)
        return df

    def release(self, df: DataFrame) -> None:
        stored.drop(df)
        self._cached = [kept for kept in self._cached if kept is not df]

    def close(self) -> None:
        for df in self._cached:
            stored.drop(df)
        for shared in self._broadcasts:
            shared.destroy()
        self._cached, self._broadcasts = [], []

    @staticmethod
    def table(rows: DataFrame) -> DataFrame:
        return rows.filter(F.col("kind") == TABLE).select("blob")

    @staticmethod
    def keyed(rows: DataFrame) -> DataFrame:
        return rows.filter(F.col("kind") == KEYED).select("bucket", "stage", "tokens",
                                                          "documents", "blob")

    def by_bucket(self, keyed: DataFrame):
        """keyed grouped by bucket, reduce bucket b in shuffle partition b: as many reduce tasks
        as buckets, whatever spark.sql.shuffle.partitions says (its default, 200, made each
        reduce 200 tasks, most of them empty, and their Python workers' start-up dominated small
        fits)."""
        return keyed.repartitionById(self.plan.buckets, "bucket").groupBy("bucket")

    # -- pass 1: tokens, words, bigrams ----------------------------------------------------------
    def tokenized(self, df: DataFrame, text_col: str) -> DataFrame:
        """ROWS: local-id batches (TABLE), the partition's word counts and bigram fingerprint
        counts (KEYED, stages WORDS and PAIRS)."""
        plan = self.plan

        @task
        def tokenize(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            counted = stages.PartitionCounts(plan.mask)
            texts = (piece for batch in batches for piece in stages.text_slices(batch.column(0)))
            for local in read_ahead(map(tokenize_batch, texts), 1):
                counted.add(local)
                yield _rows(TABLE, [stages.local_to_blob(local)])
            pieces = [(bucket, WORDS, blob) for bucket, blob in
                      stages.keyed_word_blobs(*counted.words(), plan.buckets)]
            pieces += [(bucket, PAIRS, blob) for bucket, blob in
                       stages.keyed_pair_blobs(counted.pairs(), plan)]
            yield _keyed_rows(pieces, counted.tokens, counted.documents)

        return self.keep(df.select(text_col).mapInArrow(tokenize, ROWS))

    def words_and_pairs(self, rows: DataFrame) -> dict:
        """One reduce of pass 1's counts: the vocabulary (words in >= sigma documents, in byte
        order), the key set of the bigram fingerprints in >= sigma documents and their number,
        the numbers of documents and tokens."""
        plan = self.plan
        inline = EXACT_KEYS // plan.buckets

        @task
        def reduce(group: pa.Table) -> pa.Table:
            stage = group.column("stage").to_numpy()
            blobs = group.column("blob").to_pylist()
            words, df = stages.frequent_words(
                [b for b, s in zip(blobs, stage, strict=True) if s == WORDS and b], plan.sigma)
            keys = stages.frequent_keys(
                [b for b, s in zip(blobs, stage, strict=True) if s == PAIRS and b], plan.sigma)
            return pa.table({**_key_columns("keys", keys, inline),
                             "words": [pack_arrays({"offsets": words.offsets, "data": words.data,
                                                    "df": df})],
                             "tokens": [_tokens(group)],
                             "documents": [int(pc.sum(group.column("documents")).as_py() or 0)]})

        reduced = self.keep(self.by_bucket(self.keyed(rows)).applyInArrow(
            reduce, "keys binary, keys_inline binary, keys_n long, words binary, tokens long, "
            "documents long"))
        small = reduced.drop("keys").toArrow()
        found = [unpack_arrays(raw) for raw in small.column("words").to_pylist()]
        vocab = stages.vocabulary(((StringList(w["offsets"], w["data"]), w["df"])
                                   for w in found), plan.sigma)
        key_set, n_keys = self._key_set(reduced, small, "keys")
        return {"vocab": vocab, "pairs": key_set, "frequent_bigrams": n_keys,
                "tokens": int(small.column("tokens").to_numpy().sum()),
                "documents": int(small.column("documents").to_numpy().sum())}

    # -- pass 2: global ids, compaction, grams ---------------------------------------------------
    def encoded(self, rows: DataFrame, vocab: StringList, frequent_pair: tuple,
                tokens: int) -> DataFrame:
        """ROWS: batches with global ids, runs of frequent bigrams only (stages.encode_batch;
        TABLE), and the partition's gram statistics (KEYED). The stored batches are coalesced
        into partitions of about PARTITION_TOKENS tokens (whole batches move, documents stay
        whole) when the input had many small partitions."""
        table = self.table(rows)
        current = table.rdd.getNumPartitions()
        wanted = max(-(-tokens // PARTITION_TOKENS),
                     min(current, 4 * self.spark.sparkContext.defaultParallelism))
        if wanted < current:
            table = table.coalesce(wanted)
        vocab_shared = self.broadcast((vocab.offsets, vocab.data))
        pairs_shared = self.broadcast(frequent_pair)
        plan = self.plan

        @task
        def encode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            index = cached(vocab_shared, _word_index)
            contains = cached(pairs_shared, _membership)
            grams = stages.PartitionGrams(plan)
            encoded = (stages.encode_batch(stages.local_from_blob(raw), index, contains, plan)
                       for raw in _blobs(batches))
            for batch in read_ahead(encoded, 1):
                chunk = grams.add(batch)
                yield _rows(TABLE, [stages.batch_to_blob(batch)])
                if chunk is not None:  # its rows' token count is 0: the last row has them all
                    yield _keyed_rows(stages.keyed_gram_blobs(chunk, plan), 0)
            yield _keyed_rows(stages.keyed_gram_blobs(grams.flush(), plan), grams.tokens)

        return self.keep(table.mapInArrow(encode, ROWS))

    def gram_sets(self, rows: DataFrame) -> dict:
        """Key sets of the frequent and the live min_length-grams, the groups to salt (sorted
        fingerprints, salts) and counts."""
        plan = self.plan
        partitions = self.table(rows).rdd.getNumPartitions()
        inline = EXACT_KEYS // plan.buckets

        @task
        def reduce(group: pa.Table) -> pa.Table:
            classes = stages.classify_grams(_nonempty(group.column("blob")), plan)
            salts = plan.salts(classes["occurrences"], partitions)
            salted = salts > 1
            return pa.table({**_key_columns("frequent", classes["frequent"], inline),
                             **_key_columns("live", classes["live"], inline),
                             "salted": [pack_arrays({"keys": classes["frequent"][salted],
                                                     "salts": salts[salted]})],
                             "tokens": [_tokens(group)]})

        classes = self.keep(self.by_bucket(self.keyed(rows)).applyInArrow(
            reduce, "frequent binary, frequent_inline binary, frequent_n long, live binary, "
            "live_inline binary, live_n long, salted binary, tokens long"))
        small = classes.drop("frequent", "live").toArrow()
        salted = [unpack_arrays(raw) for raw in small.column("salted").to_pylist()]
        keys = np.concatenate([s["keys"] for s in salted] + [np.zeros(0, np.uint64)])
        salts = np.concatenate([s["salts"] for s in salted] + [np.zeros(0, np.int64)])
        order = np.argsort(keys)
        frequent, n_frequent = self._key_set(classes, small, "frequent")
        live, n_live = self._key_set(classes, small, "live")
        return {"frequent": frequent, "live": live, "salted": (keys[order], salts[order]),
                "frequent_grams": n_frequent, "live_grams": n_live,
                "tokens": int(small.column("tokens").to_numpy().sum())}

    # -- the rounds --------------------------------------------------------------------------------
    def routed(self, table: DataFrame, index: int, frequent_gram, live_gram, deferred,
               salted: tuple[np.ndarray, np.ndarray]) -> DataFrame:
        """ROWS of round `index`: the routed summaries (KEYED) of each partition's chains of
        frequent grams (stages.mark_reach over the stored encoded batches of `table`). The
        chains are marked again in each round: that costs less than storing them (8 to 12 bytes
        per token to cache and move), and most fits need round 0 only.
        frequent_gram: a broadcast of the frequent grams' key set; live_gram (round 0) or
        deferred (later rounds): the groups to route."""
        spec = self._round_spec(index, live_gram, deferred, salted)
        plan = self.plan

        @task
        def ship(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            contains = cached(frequent_gram, _membership)
            reached = [stages.mark_reach(stages.batch_from_blob(raw), contains, plan)
                       for raw in _blobs(batches)]
            yield from _routed(reached, plan, spec())

        return table.mapInArrow(ship, ROWS)

    def reduce_round(self, rows: DataFrame, index: int):
        """Reduce a round's routed summaries: (phrase pieces, deferred keys, their occurrences,
        tokens routed, window-pool tokens received by each reduce call)."""
        plan = self.plan
        spec = self._round_spec(index, None, None, (np.zeros(0, np.uint64),
                                                    np.zeros(0, np.int64)))

        @task
        def reduce(group: pa.Table) -> pa.Table:
            stage = group.column("stage").to_numpy()
            blobs = group.column("blob").to_pylist()
            final = [b for b, s in zip(blobs, stage, strict=True) if s == stages.FINAL and b]
            partial = [b for b, s in zip(blobs, stage, strict=True) if s == stages.PARTIAL and b]
            phrases, later, forwarded = stages.reduce_round(final, partial, plan, spec())
            pool = sum(len(unpack_arrays(raw)["tokens"]) for raw in final + partial)
            return _reduced(phrases, later, forwarded, _tokens(group), pool)

        reduced = self.keep(self.by_bucket(self.keyed(rows)).applyInArrow(reduce, REDUCED))
        # one collect: phrases and deferred keys, and whether salted groups were forwarded
        collected = reduced.select("kind", "bucket", "tokens", F.when(
            F.col("kind") != FORWARDED, F.col("blob")).alias("blob")).toArrow()
        kinds = collected.column("kind").to_numpy()
        if (kinds == FORWARDED).any():
            again = self.by_bucket(reduced.filter(F.col("kind") == FORWARDED).select(
                "bucket", F.lit(stages.FINAL).alias("stage"), "tokens", "blob")) \
                .applyInArrow(reduce, REDUCED).toArrow()
            collected = pa.concat_tables([collected.filter(pa.array(kinds != FORWARDED)), again])
            kinds = collected.column("kind").to_numpy()
        self.release(reduced)
        blobs = collected.column("blob").to_pylist()
        pieces = [unpack_arrays(b) for b, k in zip(blobs, kinds, strict=True) if k == PHRASES]
        later = [unpack_arrays(b) for b, k in zip(blobs, kinds, strict=True) if k == DEFERRED]
        keys = np.concatenate([p["keys"] for p in later] + [np.zeros(0, np.uint64)])
        occ = np.concatenate([p["occurrences"] for p in later] + [np.zeros(0, np.int64)])
        tokens = int(collected.column("tokens").to_numpy()[kinds == TOKENS].sum())
        pools = np.array([int(unpack_arrays(b)["pool"][0])
                          for b, k in zip(blobs, kinds, strict=True) if k == TOKENS], np.int64)
        return pieces, keys, occ, tokens, pools

    # -- helpers ---------------------------------------------------------------------------------
    def _round_spec(self, index: int, live_gram, deferred, salted) -> Callable[[], Round]:
        """A function building the Round on a worker (its membership tests cached there)."""
        lo, hi = self.plan.depths(index)
        live = self.broadcast(live_gram) if live_gram is not None else None
        later = self.broadcast(deferred) if deferred is not None else None
        salt_keys, salt_counts = salted

        def spec() -> Round:
            return Round(index, lo, hi, cached(live, _membership) if live is not None else None,
                         cached(later, KeySet) if later is not None else None, salt_keys,
                         salt_counts)

        return spec

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
        from corpus_miner.spark.filters import build_filters  # (imports pandas)

        num_bits, num_hashes = bloom_size(max(n_keys, 1), self.filter_fp)

        def keys_of(batch: pa.RecordBatch) -> np.ndarray:
            parts = [unpack_arrays(raw)["keys"] for raw in batch.column(column).to_pylist()]
            return np.concatenate(parts + [np.zeros(0, np.uint64)])

        bloom = build_filters(rows.select(column), keys_of, num_bits, num_hashes)[0]
        return ("bloom", bloom.num_bits, bloom.num_hashes, bloom.bits.tobytes()), n_keys


def _routed(batches: list, plan: Plan, spec: Round) -> Iterator[pa.RecordBatch]:
    summary = stages.partition_summary(batches, plan, spec)
    context = TaskContext.get()
    assert context is not None  # runs inside a Spark task
    pieces = stages.route(summary, plan, spec, context.partitionId())
    yield _keyed_rows(pieces, sum(len(b.tokens) for b in batches))


def _key_columns(name: str, keys: np.ndarray, inline_limit: int) -> dict:
    """A reducer's key set as columns: all keys, the keys again when few enough to collect
    (else null), their number."""
    packed = pack_arrays({"keys": keys})
    return {name: [packed], f"{name}_inline": pa.array([packed if len(keys) <= inline_limit
                                                        else None], pa.binary()),
            f"{name}_n": [len(keys)]}


def _reduced(phrases, later, forwarded, tokens: int, pool: int) -> pa.Table:
    """Rows of a round's reduce: the tokens of the routed rows (a FINAL forwarded row carries 0,
    so totals count each token once) and the window-pool tokens received, phrases, deferred keys,
    forwarded summaries."""
    kinds, buckets = [TOKENS], [0]
    blobs = [pack_arrays({"pool": np.array([pool], np.int64)})]
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
    if kind == "exact":  # these sets may err by yes: 0.13% of absent keys, twice KeySet's speed
        return BlockFilter(spec[1])
    if kind == "bloom":  # read-only: the bits stay in the broadcast's buffer
        _, num_bits, num_hashes, raw = spec
        return BloomFilter(num_bits, num_hashes, np.frombuffer(raw, np.uint8)).contains
    return lambda keys: np.ones(len(keys), dtype=bool)
