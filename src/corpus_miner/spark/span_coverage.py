"""Coverage and cleaning of a DataFrame by SparkBloomSpan's phrases: one mapInArrow each.

The phrase table (token ids of the frequent vocabulary) is broadcast; every Python worker builds
its L-window table once and computes each batch's coverage with coverage.batches, so the figures
equal the local engine's Coverage and Cleaner on the same documents. Rows keep their order and
every input column.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from corpus_miner.coverage.batches import BatchCoverage, cleaned_text, junk_spans
from corpus_miner.coverage.clean import DEFAULT_MASK, MODES
from corpus_miner.errors import ParameterError
from corpus_miner.io.strings import StringList
from corpus_miner.phrases.result import PhraseTable
from corpus_miner.spark.worker import cached, shared_value, task

SPANS_TYPE = T.ArrayType(T.ArrayType(T.LongType(), False), False)
_SPANS_ARROW = pa.list_(pa.list_(pa.int64()))


def shipped_table(table: PhraseTable, min_length: int) -> tuple:
    """A phrase table (canonical order) as picklable arrays for a broadcast."""
    vocab = table.vocab if isinstance(table.vocab, StringList) else \
        StringList.from_strings(table.vocab)
    return table.tokens, table.offsets, vocab.offsets, vocab.data, int(min_length)


def _shared_coverage(df: DataFrame, table: PhraseTable, min_length: int):
    return shared_value(df.sparkSession, shipped_table(table, min_length))


def batch_coverage(shipped) -> BatchCoverage:
    tokens, offsets, vocab_offsets, vocab_data, min_length = shipped
    zeros = np.zeros(len(offsets) - 1, np.int64)
    table = PhraseTable(tokens, offsets, zeros, zeros, StringList(vocab_offsets, vocab_data))
    return BatchCoverage(table, min_length)


def coverage_frame(df: DataFrame, table: PhraseTable, min_length: int, text_col: str,
                   id_col: str | None) -> DataFrame:
    """Per row: id_col (if given), tokens, tokens_covered, junk_spans."""
    shared = _shared_coverage(df, table, min_length)
    kept = [id_col] if id_col is not None else []
    fields = [df.schema[name] for name in kept] + [
        T.StructField("tokens", T.LongType(), False),
        T.StructField("tokens_covered", T.LongType(), False),
        T.StructField("junk_spans", SPANS_TYPE, False)]

    @task
    def cover(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        coverage = cached(shared, batch_coverage)
        for batch in batches:
            texts = batch.column(text_col)
            found = coverage.documents(texts)
            spans = [junk_spans(text or "", runs)
                     for text, runs in zip(texts.to_pylist(), found.runs, strict=True)]
            columns = {name: batch.column(name) for name in kept}
            columns.update(tokens=pa.array(found.tokens, pa.int64()),
                           tokens_covered=pa.array(found.covered, pa.int64()),
                           junk_spans=pa.array(spans, _SPANS_ARROW))
            yield pa.RecordBatch.from_pydict(columns)

    return df.select(*kept, text_col).mapInArrow(cover, T.StructType(fields))


def cleaned_frame(df: DataFrame, table: PhraseTable, min_length: int, text_col: str, mode: str,
                  mask_text: str | None) -> DataFrame:
    """df with covered text removed or masked, or annotated with junk_spans and junk_share."""
    if mode not in MODES:
        raise ParameterError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mask_text is not None and mode != "mask":
        raise ParameterError("mask_text only applies to mode='mask'")
    mask_text = DEFAULT_MASK if mask_text is None else mask_text
    shared = _shared_coverage(df, table, min_length)
    schema = df.schema
    names = schema.names
    if mode == "annotate":
        fields = [f for f in schema.fields if f.name not in ("junk_spans", "junk_share")]
        schema = T.StructType(fields + [T.StructField("junk_spans", SPANS_TYPE, False),
                                        T.StructField("junk_share", T.DoubleType(), False)])

    @task
    def clean(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        coverage = cached(shared, batch_coverage)
        for batch in batches:
            texts = batch.column(text_col)
            found = coverage.documents(texts)
            originals = texts.to_pylist()
            if mode == "annotate":
                spans = [junk_spans(text or "", runs)
                         for text, runs in zip(originals, found.runs, strict=True)]
                share = np.divide(found.covered, found.tokens, out=np.zeros(len(found.tokens)),
                                  where=found.tokens > 0)
                columns = {name: batch.column(name) for name in names
                           if name not in ("junk_spans", "junk_share")}
                columns.update(junk_spans=pa.array(spans, _SPANS_ARROW),
                               junk_share=pa.array(share, pa.float64()))
                yield pa.RecordBatch.from_pydict(columns)
                continue
            new = [text if text is None else cleaned_text(text, runs, mode, mask_text)
                   for text, runs in zip(originals, found.runs, strict=True)]
            column = pa.array(new, texts.type)
            yield batch.set_column(names.index(text_col), batch.schema.field(text_col), column)

    return df.mapInArrow(clean, schema)
