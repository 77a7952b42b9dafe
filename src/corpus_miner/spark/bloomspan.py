"""SparkBloomSpan: BloomSpan's exact maximal frequent phrases, coverage and cleaning on Spark.

    miner = SparkBloomSpan(sigma=20, min_length=10).fit(df, text_col="text", id_col="id")
    miner.phrases_                          # DataFrame: phrase, length, df, occurrences
    miner.coverage(df)                      # per document: id, tokens, tokens_covered, junk_spans
    miner.clean(df, mode="remove")          # every input column, covered text removed

The answer equals the local engine's (corpus_miner.BloomSpan) byte for byte, for any
partitioning and after task retries: every distributed step is a sum over whole documents (see
phrases/distributed). Document ids are not needed to mine; they label coverage rows.
"""

from __future__ import annotations

import time

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame

from corpus_miner.errors import InputError, ParameterError
from corpus_miner.estimator import Estimator
from corpus_miner.phrases.distributed.stages import Plan
from corpus_miner.phrases.params import PhraseParams
from corpus_miner.phrases.result import COLUMNS, PhraseTable
from corpus_miner.spark import span_coverage
from corpus_miner.spark.frames import check_columns
from corpus_miner.spark.span_passes import Passes

DEFAULT_FILTER_FP = 0.01


class SparkBloomSpan(Estimator):
    """Maximal contiguous frequent phrases of a Spark DataFrame of documents, exactly as
    corpus_miner.BloomSpan finds them on one machine.

    sigma, min_length: as in BloomSpan.
    window_cap: round 0 ships min_length + window_cap tokens of right context per occurrence; a
        longer phrase costs one more round per doubling of the window (log2(length / cap) rounds).
        Windows are views into shared token pools, so a long cap costs little: 1024 mines the
        113M-token web benchmark in one round where 64 took four, with the same CPU.
    buckets: reduce buckets of the keyed shuffles (None: 4 x the default parallelism).
    salt_threshold: groups with more occurrences are merged in two levels (salted by partition),
        so no single task receives them from every partition at once.
    filter_fp: false-positive rate of the broadcast Bloom filters (frequent bigrams, frequent and
        live grams); any rate gives the same answer, lower rates ship less.
    fingerprint_bits: bits of the 64-bit gram fingerprints kept (fewer force collisions, which
        the algorithm resolves by the tokens; for tests).
    Learned: phrases_ (DataFrame in canonical order), table_ (the PhraseTable on the driver),
    stats_ (counts and seconds per stage).
    """

    _fit_hint = "fit(df)"

    def __init__(self, sigma: int = 20, min_length: int = 10, window_cap: int = 1024,
                 buckets: int | None = None, salt_threshold: int = 50_000_000,
                 filter_fp: float = DEFAULT_FILTER_FP, fingerprint_bits: int = 64) -> None:
        self.sigma = sigma
        self.min_length = min_length
        self.window_cap = window_cap
        self.buckets = buckets
        self.salt_threshold = salt_threshold
        self.filter_fp = filter_fp
        self.fingerprint_bits = fingerprint_bits

    def _plan(self, spark) -> Plan:
        params = PhraseParams(sigma=self.sigma, min_length=self.min_length)
        for name, low in (("window_cap", 1), ("salt_threshold", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ParameterError(f"{name}={value!r}: expected an integer >= {low}")
        buckets = self.buckets
        if buckets is None:
            buckets = 4 * spark.sparkContext.defaultParallelism
        if isinstance(buckets, bool) or not isinstance(buckets, (int, np.integer)) \
                or not 1 <= buckets < 2**31:
            raise ParameterError(f"buckets={self.buckets!r}: expected an integer >= 1 or None")
        if not isinstance(self.fingerprint_bits, (int, np.integer)) \
                or not 1 <= self.fingerprint_bits <= 64:
            raise ParameterError(f"fingerprint_bits={self.fingerprint_bits!r}: expected 1 to 64")
        if isinstance(self.filter_fp, bool) or not isinstance(self.filter_fp, (int, float)) \
                or not 0.0 < self.filter_fp <= 1.0:
            raise ParameterError(f"filter_fp={self.filter_fp!r}: expected a rate in (0, 1]")
        return Plan(params.sigma, params.min_length, int(self.window_cap), int(buckets),
                    int(self.salt_threshold), int(self.fingerprint_bits))

    def fit(self, df: DataFrame, text_col: str = "text", id_col: str | None = "id"
            ) -> SparkBloomSpan:
        """Mine the documents of `df` (one per row; a null text is an empty document)."""
        _check_frame(df, text_col, id_col, "SparkBloomSpan.fit")
        spark = df.sparkSession
        plan = self._plan(spark)
        passes = Passes(spark, plan, float(self.filter_fp))
        stats: dict = {"algorithm": "spark-bloomspan", "sigma": plan.sigma,
                       "min_length": plan.min_length, "window_cap": plan.window_cap,
                       "buckets": plan.buckets, "seconds": {}}
        clock = [time.perf_counter()]

        def lap(name: str) -> None:
            now = time.perf_counter()
            stats["seconds"][name] = stats["seconds"].get(name, 0.0) + now - clock[0]
            clock[0] = now

        started = clock[0]
        try:
            tokenized = passes.tokenized(df, text_col)
            counted = passes.words_and_pairs(tokenized)
            vocab = counted["vocab"]
            stats.update(documents=counted["documents"], frequent_words=len(vocab),
                         frequent_bigrams=counted["frequent_bigrams"], tokens=counted["tokens"])
            lap("words_and_bigrams")
            encoded = passes.encoded(tokenized, vocab, counted["pairs"], stats["tokens"])
            grams = passes.gram_sets(encoded)
            passes.release(tokenized)
            stats.update(tokens_in_frequent_bigram_runs=grams["tokens"],
                         frequent_grams=grams["frequent_grams"], live_grams=grams["live_grams"],
                         salted_groups=len(grams["salted"][0]))
            lap("grams")
            table, frequent = passes.table(encoded), passes.broadcast(grams["frequent"])
            rows = passes.routed(table, 0, frequent, grams["live"], None, grams["salted"])
            pieces, index = [], 0
            while True:
                found, keys, occ, tokens, pools = passes.reduce_round(rows, index)
                if index == 0:
                    stats["tokens_in_frequent_gram_chains"] = tokens
                pieces += found
                stats[f"round_{index}_deferred"] = len(keys)
                stats[f"round_{index}_shipped_tokens"] = int(pools.sum())
                stats[f"round_{index}_largest_bucket_tokens"] = int(pools.max(initial=0))
                lap(f"round_{index}")
                if len(keys) == 0:
                    break
                order = np.argsort(keys)
                deferred = keys[order]
                salts = plan.salts(occ[order], table.rdd.getNumPartitions())
                index += 1
                rows = passes.routed(table, index, frequent, None, deferred,
                                     (deferred[salts > 1], salts[salts > 1]))
            stats["rounds"] = index + 1
        finally:
            passes.close()
        self.table_: PhraseTable = _phrase_table(pieces, vocab).sorted()
        self.text_col_, self.id_col_ = text_col, id_col
        self.phrases_: DataFrame = spark.createDataFrame(_rows_table(self.table_))
        stats["phrases"] = len(self.table_)
        stats["seconds_total"] = time.perf_counter() - started
        self.stats_: dict = stats
        return self

    def coverage(self, df: DataFrame, text_col: str | None = None, id_col: str | None = None
                 ) -> DataFrame:
        """Per document (row order kept): id_col, tokens, tokens_covered and junk_spans (the
        [start, end) character spans of its covered token runs), as Coverage computes them."""
        self.check_is_fitted()
        text_col = text_col or self.text_col_
        id_col = id_col if id_col is not None else self.id_col_
        _check_frame(df, text_col, id_col, "SparkBloomSpan.coverage")
        return span_coverage.coverage_frame(df, self.table_, self.min_length, text_col, id_col)

    def clean(self, df: DataFrame, mode: str = "remove", text_col: str | None = None,
              mask_text: str | None = None) -> DataFrame:
        """df with covered text removed ("remove"), replaced by mask_text ("mask") or annotated
        (junk_spans and junk_share columns added, "annotate"); every input column is kept."""
        self.check_is_fitted()
        text_col = text_col or self.text_col_
        _check_frame(df, text_col, None, "SparkBloomSpan.clean")
        return span_coverage.cleaned_frame(df, self.table_, self.min_length, text_col, mode,
                                           mask_text)


def _check_frame(df, text_col: str, id_col: str | None, where: str) -> None:
    if not isinstance(df, DataFrame):
        raise ParameterError(f"{where}: expected a Spark DataFrame, got {type(df).__name__}")
    check_columns(df, text_col, id_col, where)
    if id_col is not None and id_col == text_col:
        raise InputError(f"{where}: id_col and text_col are both {text_col!r}")


def _phrase_table(pieces: list[dict], vocab) -> PhraseTable:
    pieces = [p for p in pieces if len(p["df"])]
    if not pieces:
        return PhraseTable.empty(vocab)
    lengths = np.concatenate([np.diff(p["offsets"]) for p in pieces])
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return PhraseTable(np.concatenate([p["tokens"] for p in pieces]).astype(np.uint32), offsets,
                       np.concatenate([p["df"] for p in pieces]).astype(np.int64),
                       np.concatenate([p["occurrences"] for p in pieces]).astype(np.int64),
                       vocab)


def _rows_table(table: PhraseTable) -> pa.Table:
    rows = list(table.rows())
    return pa.table({"phrase": pa.array([r["phrase"] for r in rows], pa.string()),
                     **{name: pa.array([r[name] for r in rows], pa.int64())
                        for name in COLUMNS[1:]}})
