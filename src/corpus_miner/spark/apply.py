"""SparkBloomSpan's phrases applied to documents on Spark: the report and the cleaning of input
files, as the local engine's CoverageReport and Cleaner give them, their figures computed on the
executors.

What comes back to the driver is small: a few numbers per document (spark.documents), the first
occurrences of the hogs in the documents the local report would pick for its examples, and the
texts of those documents and of the template documents shown. The report is then completed on the
driver exactly as the local one is (CoverageReport.add_document / add_groups), so its JSON and
HTML are the local engine's. Cleaning input files writes every record back, so the driver reads
the inputs a second time, as the local command does, and applies the covered runs found on the
executors (a byte per token on the driver).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame

from corpus_miner.coverage.clean import DEFAULT_MASK, Cleaner
from corpus_miner.coverage.coverage import Coverage, Occurrences
from corpus_miner.coverage.report import MISSING_GROUP, CoverageReport, parse_group_by
from corpus_miner.errors import InputError
from corpus_miner.phrases.result import PhraseTable
from corpus_miner.spark import documents
from corpus_miner.spark.documents import DOCUMENTS
from corpus_miner.spark.worker import task


def documents_of_frame(df: DataFrame, text_col: str, id_col: str | None,
                       group_by: str | None = None) -> DataFrame:
    """`df` as the rows of spark.documents.documents_frame (unit, row, id, text, grp): unit =
    the partition, row = the position in it, so the documents keep the DataFrame's order;
    grp holds each document's group_by value by the report's rule."""
    group = parse_group_by(group_by)
    kept = [text_col] + ([id_col] if id_col is not None else []) \
        + ([group[0]] if group is not None and group[0] in df.columns else [])

    @task
    def shaped(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        from corpus_miner.coverage.report import _group_values  # the report's own rule

        context = TaskContext.get()
        unit = context.partitionId() if context is not None else 0
        row = 0
        for batch in batches:
            n = batch.num_rows
            records = pa.Table.from_batches([batch])
            ids = batch.column(id_col).cast(pa.string()) if id_col is not None \
                else pa.nulls(n, pa.string())
            grp = pa.array(_group_values(records, *group), pa.string()) \
                if group is not None and group[0] in records.column_names \
                else pa.nulls(n, pa.string())
            yield pa.RecordBatch.from_arrays(
                [pa.array(np.full(n, unit, np.int32)),
                 pa.array(np.arange(row, row + n, dtype=np.int64)), ids,
                 batch.column(text_col).cast(pa.string()), grp],
                names=["unit", "row", "id", "text", "grp"])
            row += n

    return df.select(*dict.fromkeys(kept)).mapInArrow(shaped, DOCUMENTS)


def documents_report(docs: DataFrame, table: PhraseTable, sigma: int, min_length: int, *,
                     top: int = 25, examples: int = 3, template_share: float = 0.9,
                     group_by: str | None = None, title: str = "Repeated text report",
                     inputs: Iterable[str] = ()) -> CoverageReport:
    """The CoverageReport of `docs` (rows of documents_frame or documents_of_frame, whose grp
    column holds the group_by values) by the phrase table of a mining run."""
    figures = documents.document_figures(docs, table, min_length)
    offsets = np.zeros(len(figures.tokens) + 1, np.int64)
    np.cumsum(figures.tokens, out=offsets[1:])
    # the report reads the per-document figures and the attribution; the token mask and the
    # occurrences stay on the executors (the examples are chosen there: first_occurrences)
    empty = np.zeros(0, np.int64)
    coverage = Coverage(np.zeros(0, np.uint8), offsets, figures.covered, table,
                        figures.tokens_by_phrase, Occurrences(empty, empty, empty),
                        int(min_length), int(sigma), "mined")
    report = CoverageReport(coverage, top=top, examples=examples, template_share=template_share,
                            group_by=group_by, title=title, inputs=inputs)
    hogs = np.union1d(report.hogs_by_psi, report.hogs_by_covered)
    wanted = {}
    if examples > 0:  # the local report's choice: evenly spread over the documents
        for phrase in hogs:
            df = int(table.df[phrase])
            if df:
                wanted[int(phrase)] = np.unique(np.linspace(0, df - 1, min(examples, df))
                                                .round().astype(np.int64))
    found: dict[int, list] = {}
    index = {}
    for phrase, unit, row, start in documents.first_occurrences(docs, table, min_length, wanted):
        d = int(figures.unit_offsets[unit] + row)
        index[d] = (unit, row)
        found.setdefault(d, []).append((phrase, start, int(table.lengths[phrase])))
    for d in report.template_docs[:report.top]:
        unit = int(np.searchsorted(figures.unit_offsets, d, side="right") - 1)
        index[int(d)] = (unit, int(d - figures.unit_offsets[unit]))
    texts = documents.texts_of(docs, list(index.values()))
    ids = figures.doc_ids()
    for d in sorted(index):  # documents in input order, each one's examples by phrase: the
        _, text = texts[index[d]]  # order in which the local report adds contexts
        report.add_document(d, ids[d], text or "", sorted(found.get(d, ())), "spark")
    if report.group_by is not None:
        if len(figures.groups) and all(g is None for g in figures.groups):
            raise InputError(f"group_by field {report.group_by[0]!r} is in no record")
        report.add_groups([MISSING_GROUP if g is None else g for g in figures.groups])
    return report


def inputs_cleaner(docs: DataFrame, table: PhraseTable, min_length: int, *,
                   mode: str = "remove", mask_text: str = DEFAULT_MASK,
                   drop_above: float | None = None) -> tuple[Cleaner, float]:
    """(a Cleaner fitted with the covered runs of `docs` (rows of a digested documents_frame),
    the covered share of the tokens): its write(inputs, output) rewrites the input files."""
    figures = documents.document_figures(docs, table, min_length, with_runs=True)
    offsets = np.zeros(len(figures.tokens) + 1, np.int64)
    np.cumsum(figures.tokens, out=offsets[1:])
    mask = np.zeros(int(offsets[-1]), np.uint8)
    assert figures.runs is not None  # asked for with_runs
    for d, runs in enumerate(figures.runs):
        for first, end in runs:
            mask[offsets[d] + first:offsets[d] + end] = 1
    cleaner = Cleaner(mode, False, (), drop_above, mask_text)
    # the texts the mask was computed from, digested as the executors read them (docs made
    # with digested=True): Cleaner.write refuses inputs that changed since
    cleaner.fit_mask(mask, offsets, texts_digest=documents.read_digests(docs, "clean"))
    return cleaner, int(figures.covered.sum()) / max(int(offsets[-1]), 1)
