"""SparkBloomSpan: BloomSpan's exact maximal frequent phrases, coverage and cleaning on Spark.

    miner = SparkBloomSpan(sigma=20, min_length=10).fit(df, text_col="text", id_col="id")
    miner.phrases_                          # DataFrame: phrase, length, df, occurrences
    miner.coverage(df)                      # per document: id, tokens, tokens_covered, junk_spans
    miner.report(df)                        # the local engine's CoverageReport
    miner.clean(df, mode="remove")          # every input column, covered text removed

`fit`, `coverage`, `report` and `clean` also take what the local BloomSpan takes (paths, Arrow
data, texts: corpus_miner.sources), read on the executors or made a DataFrame of the active
session.

The answer equals the local engine's (corpus_miner.BloomSpan) byte for byte, for any
partitioning and after task retries: every distributed step is a sum over whole documents (see
phrases/distributed). Document ids are not needed to mine; they label coverage rows.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from corpus_miner.errors import InputError, ParameterError
from corpus_miner.estimator import Estimator
from corpus_miner.phrases.distributed.stages import Plan
from corpus_miner.phrases.params import PhraseParams
from corpus_miner.phrases.result import COLUMNS, PhraseTable
from corpus_miner.sources import DocumentsLike, documents
from corpus_miner.spark import span_coverage
from corpus_miner.spark.frames import check_columns
from corpus_miner.spark.span_passes import Passes

if TYPE_CHECKING:
    from corpus_miner.coverage.report import CoverageReport

DEFAULT_FILTER_FP = 0.01


class SparkBloomSpan(Estimator):
    """Maximal contiguous frequent phrases of a Spark DataFrame of documents, exactly as
    corpus_miner.BloomSpan finds them on one machine.

    Parameters
    ----------
    sigma, min_length : int
        As in BloomSpan.
    window_cap : int
        Round 0 ships min_length + window_cap tokens of right context per occurrence; a longer
        phrase costs one more round per doubling of the window (log2(length / cap) rounds).
        Windows are views into shared token pools, so a long cap costs little (figures: the
        Spark benchmark page).
    buckets : int, optional
        Reduce buckets of the keyed shuffles (None: 4 x the default parallelism).
    salt_threshold : int
        Groups with more occurrences are merged in two levels (salted by partition), so no
        single task receives them from every partition at once.
    filter_fp : float
        False-positive rate of the broadcast Bloom filters (frequent bigrams, frequent and live
        grams); any rate gives the same answer, lower rates ship less.
    fingerprint_bits : int
        Bits of the 64-bit gram fingerprints kept (fewer force collisions, which the algorithm
        resolves by the tokens; for tests).

    Attributes
    ----------
    phrases_ : pyspark.sql.DataFrame
        phrase, length, df, occurrences, in canonical order.
    table_ : PhraseTable
        The same phrases on the driver.
    stats_ : dict
        Counts and seconds per stage.

    Examples
    --------
    >>> from corpus_miner.spark import SparkBloomSpan, local_session      # doctest: +SKIP
    >>> spark = local_session("local[2]")                                  # doctest: +SKIP
    >>> miner = SparkBloomSpan(sigma=20, min_length=10).fit("crawl.jsonl.gz")  # doctest: +SKIP
    >>> miner.report(spark.read.parquet("crawl/")).write_html("r.html")   # doctest: +SKIP
    """

    _fit_hint = "fit(X)"

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

    def fit(self, X: DataFrame | DocumentsLike, text_col: str = "text",
            id_col: str | None = "id") -> SparkBloomSpan:
        """Mine the documents of `X`.

        Parameters
        ----------
        X : Spark DataFrame or documents
            A DataFrame (one document per row; a null text is an empty document), or any kind
            the local BloomSpan.fit accepts but a TokenCorpus: paths are read on the executors
            by corpus-miner's readers, Arrow data and texts are made a DataFrame of the active
            Spark session.
        text_col, id_col : str
            The column (field) of the text and of the id (None: no id).

        Returns
        -------
        SparkBloomSpan
            self, with phrases_, table_ and stats_ set.

        Raises
        ------
        ParameterError
            A parameter is out of range.
        InputError
            A column is missing or not a string, or `X` is no kind of documents.
        """
        names = text_col, id_col  # of the fields, when X are paths: the defaults of later calls
        df, text_col, id_col = _frame(X, text_col, id_col, "SparkBloomSpan.fit")
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
        self.text_col_, self.id_col_ = names
        self.phrases_: DataFrame = spark.createDataFrame(_rows_table(self.table_))
        stats["phrases"] = len(self.table_)
        stats["seconds_total"] = time.perf_counter() - started
        self.stats_: dict = stats
        return self

    def coverage(self, X: DataFrame | DocumentsLike, text_col: str | None = None,
                 id_col: str | None = None) -> DataFrame:
        """Per document (row order kept): id_col, tokens, tokens_covered and junk_spans (the
        [start, end) character spans of its covered token runs), as Coverage computes them.

        Parameters
        ----------
        X : Spark DataFrame or documents
            As in fit; need not be the documents the phrases were mined on.
        text_col, id_col : str, optional
            Default: the ones given to fit.

        Returns
        -------
        pyspark.sql.DataFrame
            The columns of the local BloomSpan.coverage's Table.
        """
        self.check_is_fitted()
        text_col = text_col or self.text_col_
        id_col = id_col if id_col is not None else self.id_col_
        df, text_col, id_col = _frame(X, text_col, id_col, "SparkBloomSpan.coverage")
        return span_coverage.coverage_frame(df, self.table_, self.min_length, text_col, id_col)

    def report(self, X: DataFrame | DocumentsLike, text_col: str | None = None,
               id_col: str | None = None, *, top: int = 25, examples: int = 3,
               template_share: float = 0.9, group_by: str | None = None,
               title: str = "Repeated text report") -> CoverageReport:
        """The coverage report of `X`: the local BloomSpan.report's CoverageReport (same JSON
        and HTML), its figures computed on the executors.

        Parameters
        ----------
        X : Spark DataFrame or documents
            As in fit; documents keep the DataFrame's order (partition by partition).
        text_col, id_col : str, optional
            Default: the ones given to fit.
        top, examples, template_share, group_by, title
            As in BloomSpan.report; group_by names a column (field), FIELD:host its URL hosts.

        Returns
        -------
        CoverageReport
        """
        from corpus_miner.spark.apply import documents_of_frame, documents_report

        self.check_is_fitted()
        text_col = text_col or self.text_col_
        id_col = id_col if id_col is not None else self.id_col_
        where = "SparkBloomSpan.report"
        inputs: list[str] = []
        if isinstance(X, DataFrame):
            df, text_col, id_col = _frame(X, text_col, id_col, where)
            docs = documents_of_frame(df, text_col, id_col, group_by)
        else:
            source = documents(X, text_col=text_col, id_col=id_col or "id", where=where)
            if source.kind == "paths":
                from corpus_miner.coverage.report import parse_group_by
                from corpus_miner.spark.documents import documents_frame

                docs = documents_frame(_active_session(where), source.paths, text_col,
                                       id_col or "id", False, parse_group_by(group_by))
                inputs = [str(p) for p in source.paths or ()]
            else:
                df, text_col, id_col = _frame(X, text_col, id_col, where)
                docs = documents_of_frame(df, text_col, id_col, group_by)
        from pyspark import StorageLevel

        docs = docs.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            return documents_report(docs, self.table_, self.sigma, self.min_length, top=top,
                                    examples=examples, template_share=template_share,
                                    group_by=group_by, title=title, inputs=inputs)
        finally:
            docs.unpersist()

    def clean(self, X: DataFrame | DocumentsLike, mode: str = "remove",
              text_col: str | None = None, mask_text: str | None = None,
              output: str | os.PathLike | None = None) -> DataFrame | pa.Table | dict:
        """X with covered text removed ("remove"), replaced by mask_text ("mask") or annotated
        (junk_spans and junk_share columns added, "annotate"); every input column is kept.

        Parameters
        ----------
        X : Spark DataFrame or documents
            As in fit.
        mode : {"remove", "mask", "annotate"}
        text_col : str, optional
            Default: the one given to fit.
        mask_text : str, optional
            The replacement in mask mode (default "[…]").
        output : str or path, optional
            Write the cleaned records there (.jsonl, .jsonl.gz, .parquet, a URL) through the
            local writers, atomically, and return the cleaning figures.

        Returns
        -------
        pyspark.sql.DataFrame, pyarrow.Table or dict
            The cleaned rows (of input files: a Table of their records, every field kept, as
            the `clean` command writes them); with `output`, the figures (documents,
            documents_written).
        """
        self.check_is_fitted()
        text_col = text_col or self.text_col_
        where = "SparkBloomSpan.clean"
        if not isinstance(X, DataFrame):
            source = documents(X, text_col=text_col, id_col=self.id_col_ or "id", where=where)
            if source.kind == "paths":
                return self._clean_inputs(source, mode, mask_text, output)
        df, text_col, _ = _frame(X, text_col, None, where)
        cleaned = span_coverage.cleaned_frame(df, self.table_, self.min_length, text_col, mode,
                                              mask_text)
        if output is None:
            return cleaned
        from corpus_miner.io.writers import write_records

        table = cleaned.toArrow()
        written = write_records([table], output)
        return {"mode": mode, "documents": table.num_rows, "documents_written": int(written)}

    def _clean_inputs(self, source, mode: str, mask_text: str | None, output) -> pa.Table | dict:
        """Input files cleaned as `clean --engine spark` cleans them: covered runs found on the
        executors, every record (all its fields) rewritten on the driver by the Cleaner."""
        from corpus_miner.coverage.clean import DEFAULT_MASK
        from corpus_miner.spark.apply import inputs_cleaner
        from corpus_miner.spark.documents import documents_frame, one_line_errors

        if mask_text is not None and mode != "mask":
            raise ParameterError("mask_text only applies to mode='mask'")
        with one_line_errors():
            docs = documents_frame(_active_session("SparkBloomSpan.clean"), source.paths,
                                   source.text_col, source.id_col, digested=True)
            cleaner, share = inputs_cleaner(docs, self.table_, self.min_length, mode=mode,
                                            mask_text=mask_text or DEFAULT_MASK)
        if output is None:
            parts = list(cleaner.transform(source.batches(), source.text_col))
            return pa.concat_tables(parts) if parts else pa.table({source.text_col: []})
        stats = cleaner.write(source.paths, output, text_field=source.text_col,
                              id_field=source.id_col)
        stats["coverage"] = share
        return stats


def _active_session(where: str):
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        raise InputError(f"{where}: no active Spark session to read these documents with; "
                         "start one (corpus_miner.spark.local_session() or SparkSession.builder)"
                         " or pass a DataFrame")
    return spark


def _frame(X, text_col: str, id_col: str | None, where: str
           ) -> tuple[DataFrame, str, str | None]:
    """(DataFrame of the documents X, its text column, its id column) by corpus_miner.sources'
    dispatch: a DataFrame is checked and kept; paths are read on the executors (columns text
    and id, ids numbered as the local engine numbers them); Arrow data and texts become a
    DataFrame of the active session."""
    if isinstance(X, DataFrame):
        _check_frame(X, text_col, id_col, where)
        return X, text_col, id_col
    source = documents(X, text_col=text_col, id_col=id_col or "id", where=where)
    if source.kind == "corpus":
        raise InputError(f"{where}: a TokenCorpus keeps no text for Spark to read; pass the "
                         "documents (paths, Arrow data, texts or a DataFrame)")
    spark = _active_session(where)
    if source.kind == "paths":
        from corpus_miner.spark.documents import documents_frame, with_row_ids

        docs = with_row_ids(documents_frame(spark, source.paths, text_col, id_col or "id"))
        if id_col is None or id_col == text_col:
            return docs.select("text"), "text", None
        # the fields' names, so that coverage rows are named as the local engine names them
        return docs.select(F.col("id").alias(id_col), F.col("text").alias(text_col)), text_col, \
            id_col
    table = source.held().table
    assert table is not None
    if id_col is not None and id_col not in table.column_names:
        id_col = None
    df = spark.createDataFrame(table)
    _check_frame(df, text_col, id_col, where)
    return df, text_col, id_col


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
