"""Input files as a Spark DataFrame of documents, read on the executors by corpus-miner's own
reader, and per-document figures of SparkBloomSpan's phrases collected in input order.

`documents_frame`: one task per input unit (an input file, or each Parquet part of an input
folder, in the reader's order) calls corpus_miner.io.read_documents on it, so texts, ids and
bad-input handling are the local engine's; rows are (unit, row, id, text[, group]) with row the
position in the unit and id null where the local engine would number the row (the driver knows
the global row numbers once per-unit counts are in). The paths must be readable by every
executor (local mode, or a shared file system).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.accumulators import AccumulatorParam
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from corpus_miner import errors
from corpus_miner.errors import InputError
from corpus_miner.io.locations import has_glob, is_remote, local_path
from corpus_miner.io.readers import PARQUET_SUFFIXES, STDIN
from corpus_miner.phrases.distributed.windows import pack_arrays, unpack_arrays
from corpus_miner.phrases.result import PhraseTable
from corpus_miner.spark.span_coverage import batch_coverage as _batch_coverage
from corpus_miner.spark.span_coverage import shipped_table
from corpus_miner.spark.worker import cached, shared_value, task

DOCUMENTS = "unit int, row long, id string, text string, grp string"


def input_units(inputs) -> list[str]:
    """The inputs as units read by one task each: files as given; a folder of Parquet parts as
    its parts (sorted by relative path, like the reader); other folders whole. URLs and glob
    patterns are listed here, on the driver, the same way (io/remote.py)."""
    units = []
    for item in inputs:
        if str(item) == STDIN:
            raise InputError("--engine spark reads files on the executors; stdin ('-') cannot be "
                             "read there: save it to a file first")
        if is_remote(item) or has_glob(item) and not os.path.lexists(local_path(item)):
            units += _located_units(str(item))
            continue
        path = Path(local_path(item))
        if not path.exists():
            raise InputError(f"{path}: no such file or directory")
        if path.is_dir():
            files = sorted((p for p in path.rglob("*") if p.is_file() and not any(
                part.startswith(".") for part in p.relative_to(path).parts)),
                key=lambda p: str(p.relative_to(path)))
            parts = [p for p in files if p.name.lower().endswith(PARQUET_SUFFIXES)]
            if parts:
                units += [str(p) for p in parts]
                continue
        units.append(str(path))
    return units


def _located_units(item: str) -> list[str]:
    """input_units of a URL or a glob pattern."""
    if not is_remote(item):
        matches = sorted(glob.glob(local_path(item), recursive=True))
        if not matches:
            raise InputError(f"{item}: no file matches this pattern")
        return input_units(matches)
    from corpus_miner.io.remote import RemoteFolder, input_sources
    from corpus_miner.io.shards import manifest_parts

    units: list[str] = []
    for source in input_sources(item):
        if isinstance(source, RemoteFolder):
            listed = manifest_parts(source, source.files)  # a sharded output: checked parts
            parts = [f.url for f in listed or source.files
                     if f.name.lower().endswith(PARQUET_SUFFIXES)]
            units += parts if parts else [source.url]
        else:
            units.append(source.url)
    return units


def documents_frame(spark, inputs, text_field: str = "text", id_field: str = "id",
                    skip_bad: bool = False, group_by: tuple[str, bool] | None = None,
                    digested: bool = False) -> DataFrame:
    """The documents of `inputs` (module docstring); `grp` holds each document's --group-by
    value (coverage.report's rule) when group_by = (field, derive host) is given. digested:
    every read of a unit also digests its texts, for read_digests (commands that read the
    inputs again on the driver)."""
    units = input_units(inputs)
    rows = spark.sparkContext.parallelize(list(enumerate(units)), max(len(units), 1))
    # what the readers tolerated, per unit: a retried or recomputed task sends its unit's
    # figures again, which replace the first ones instead of adding to them
    unit_stats = spark.sparkContext.accumulator({}, _UnitStats())
    # the texts digest of every read of a unit, taken as it is read: a unit read twice (a task
    # recomputed, a job that misses the cache) adds its second digest next to the first
    unit_digests = spark.sparkContext.accumulator({}, _UnitDigests()) if digested else None
    from corpus_miner.io.remote import pinned_identities
    from corpus_miner.io.storage import current_storage_options

    options, pinned = current_storage_options(), pinned_identities()  # sent to the executors

    def read(partition) -> Iterator:
        from corpus_miner.coverage.report import _group_values  # the report's own rule
        from corpus_miner.io import ReadStats, read_documents
        from corpus_miner.io.remote import reading_as_on_driver

        for unit, path in partition:
            stats = ReadStats()
            batches = reading_as_on_driver(options, pinned, read_documents(
                [path], text_field=text_field, id_field=id_field, skip_bad=skip_bad,
                stats=stats))
            digest = None
            if unit_digests is not None:
                from corpus_miner.io.digest import OrderedDigest

                digest = OrderedDigest()
                batches = _digested(batches, digest)
            yield from _unit_rows(unit, batches, id_field, group_by, _group_values)
            unit_stats.add({unit: stats.as_dict()})
            if digest is not None and unit_digests is not None:  # only a unit read to its end
                unit_digests.add({unit: frozenset([digest.state()])})

    def as_arrow(batches):
        return read((row[0], row[1]) for batch in batches
                     for row in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(),
                                    strict=True))

    units_df = spark.createDataFrame(rows, "unit int, path string")
    frame = units_df.mapInArrow(as_arrow, DOCUMENTS)
    frame._corpus_miner_read_stats = unit_stats  # persist() returns the same object
    frame._corpus_miner_read_digests = unit_digests, units
    return frame


def _digested(batches, digest) -> Iterator:
    """The batches of one unit, each digested at its position in the unit as it goes by."""
    for batch in batches:
        digest.update(batch.texts, batch.first_row)
        yield batch


class _UnitDigests(AccumulatorParam):
    """{unit: frozenset of OrderedDigest states}, merged by unit."""

    def zero(self, value):
        return {}

    def addInPlace(self, value1, value2):  # noqa: N802 - pyspark's name
        for unit, states in value2.items():
            value1[unit] = value1.get(unit, frozenset()) | states
        return value1


def read_digests(docs: DataFrame, command: str):
    """The io.digest.UnitDigests of what the executors read for `docs` (a documents_frame made
    with digested=True, once an action read every unit): what the driver's second read of the
    inputs must give again. InputError when a unit gave other texts on two of its reads."""
    from corpus_miner.io.digest import UnitDigests

    # getattr: DataFrame.__getattr__ would type the attribute as a Column
    accumulator, units = getattr(docs, "_corpus_miner_read_digests")  # noqa: B009
    if accumulator is None:
        raise ValueError("read_digests needs a documents_frame made with digested=True")
    seen = accumulator.value
    states = []
    for unit, path in enumerate(units):
        found = sorted(seen.get(unit, ()))
        if len(found) > 1:
            raise InputError(f"the inputs changed while {command} read them ({path} gave other "
                             "texts on a later read); nothing was written: run again on files "
                             "that are not being written to")
        if not found:  # every command reads every unit before it asks
            raise RuntimeError(f"{path} was not read to its end by the Spark job")
        states.append(found[0])
    return UnitDigests(tuple(states))


class _UnitStats(AccumulatorParam):
    """{unit: ReadStats.as_dict()}, merged by unit."""

    def zero(self, value):
        return {}

    def addInPlace(self, value1, value2):  # noqa: N802 - pyspark's name
        value1.update(value2)
        return value1


def read_stats(docs: DataFrame):
    """The ReadStats of what the executors read for `docs` (once an action computed it)."""
    from corpus_miner.io import ReadStats

    total = ReadStats()
    accumulator = getattr(docs, "_corpus_miner_read_stats", None)
    for figures in accumulator.value.values() if accumulator is not None else ():
        for name, value in figures.items():
            setattr(total, name, getattr(total, name) + value)
    return total


def _unit_rows(unit: int, batches, id_field: str, group_by, group_values) -> Iterator:
    """The rows of the documents frame for the batches of one unit."""
    for batch in batches:
        n = len(batch)
        records = batch.records
        ids = batch.ids
        if id_field in records.column_names:  # null ids become global row numbers
            ids = pc.if_else(pc.is_null(records.column(id_field).combine_chunks()),
                             pa.nulls(n, pa.string()), ids)
        else:
            ids = pa.nulls(n, pa.string())
        group = pa.nulls(n, pa.string())
        if group_by is not None and group_by[0] in records.column_names:
            group = pa.array(group_values(records, *group_by), pa.string())
        yield pa.RecordBatch.from_arrays(
            [pa.array(np.full(n, unit, np.int32)),
             pa.array(np.arange(batch.first_row, batch.first_row + n, dtype=np.int64)),
             ids.cast(pa.string()), batch.texts.cast(pa.string()), group],
            names=["unit", "row", "id", "text", "grp"])


def unit_offsets(docs: DataFrame) -> np.ndarray:
    """The global index of the first row of every unit (input file part) of documents_frame."""
    counts = docs.groupBy("unit").count().collect()
    sizes = np.zeros(max([r["unit"] for r in counts], default=-1) + 1, np.int64)
    for row in counts:
        sizes[row["unit"]] = row["count"]
    return np.concatenate(([0], np.cumsum(sizes)[:-1]))


def with_row_ids(docs: DataFrame, first: np.ndarray | None = None) -> DataFrame:
    """Rows of documents_frame with `order` (the global row number) and every null id replaced
    by that number as text, as the local readers number records without an id. first: the
    unit_offsets of docs, when the caller has them."""
    first = unit_offsets(docs) if first is None else first
    offset_of = F.element_at(F.create_map(*[F.lit(x) for u, o in enumerate(first)
                                            for x in (u, int(o))]), F.col("unit"))
    order = offset_of + F.col("row")
    return docs.select(order.alias("order"), F.coalesce("id", order.cast("string")).alias("id"),
                       "text")


@contextmanager
def one_line_errors():
    """A corpus-miner error raised on an executor (bad input, say) as the same error on the
    driver, so the CLI prints its one line instead of a Spark stack trace."""
    try:
        yield
    except Exception as exc:  # PythonException and friends carry the worker's traceback text
        found = re.findall(r"corpus_miner\.errors\.(\w+): (.*)", str(exc))
        if found and isinstance(getattr(errors, found[-1][0], None), type):
            raise getattr(errors, found[-1][0])(found[-1][1]) from None
        raise


@dataclass
class DocumentFigures:
    """Per document, in input order: tokens, covered tokens, id (None: the row number), group
    value, covered runs (with_runs); and the covered tokens attributed to each phrase."""

    tokens: np.ndarray
    covered: np.ndarray
    ids: list
    groups: list
    runs: list | None
    tokens_by_phrase: np.ndarray
    unit_offsets: np.ndarray  # global index of each unit's first document

    def doc_ids(self) -> list[str]:
        return [str(i) if v is None else v for i, v in enumerate(self.ids)]


def document_figures(docs: DataFrame, table: PhraseTable, min_length: int,
                     with_runs: bool = False) -> DocumentFigures:
    """One pass over the documents with the phrases' lookup tables (coverage.batches): each
    document's figures and the attribution, collected (a few numbers per document)."""
    shared = _shared_table(docs, table, min_length)
    n_phrases = len(table)

    @task
    def cover(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        coverage = cached(shared, _batch_coverage)
        attributed = np.zeros(n_phrases, np.int64)
        for batch in batches:
            found = coverage.documents(batch.column("text"))
            attributed += found.tokens_by_phrase
            runs = [pack_arrays({"runs": r.astype(np.int64).ravel()}) if with_runs and len(r)
                    else None for r in found.runs]
            yield pa.RecordBatch.from_arrays(
                [batch.column("unit"), batch.column("row"), batch.column("id"),
                 batch.column("grp"), pa.array(found.tokens, pa.int64()),
                 pa.array(found.covered, pa.int64()), pa.array(runs, pa.binary())],
                names=["unit", "row", "id", "grp", "tokens", "covered", "runs"])
        yield pa.RecordBatch.from_arrays(  # the attribution: a row of its own, unit -1
            [pa.array([-1], pa.int32()), pa.array([0], pa.int64()), pa.nulls(1, pa.string()),
             pa.nulls(1, pa.string()), pa.array([0], pa.int64()), pa.array([0], pa.int64()),
             pa.array([pack_arrays({"attributed": attributed})], pa.binary())],
            names=["unit", "row", "id", "grp", "tokens", "covered", "runs"])

    schema = "unit int, row long, id string, grp string, tokens long, covered long, runs binary"
    found = docs.mapInArrow(cover, schema).toArrow()
    unit = found.column("unit").to_numpy()
    attribution = np.zeros(n_phrases, np.int64)
    for raw in found.filter(pa.array(unit < 0)).column("runs").to_pylist():
        attribution += unpack_arrays(raw)["attributed"]
    found = found.filter(pa.array(unit >= 0))
    order = np.lexsort((found.column("row").to_numpy(), found.column("unit").to_numpy()))
    found = found.take(pa.array(order))
    units = found.column("unit").to_numpy()
    starts = np.flatnonzero(np.concatenate(([True], units[1:] != units[:-1]))) if len(units) \
        else np.zeros(0, np.int64)
    unit_offsets = np.zeros(int(units.max()) + 2 if len(units) else 1, np.int64)
    unit_offsets[units[starts] + 1] = np.diff(np.append(starts, len(units)))
    runs = None
    if with_runs:
        runs = [np.zeros((0, 2), np.int64) if raw is None else
                unpack_arrays(raw)["runs"].reshape(-1, 2)
                for raw in found.column("runs").to_pylist()]
    return DocumentFigures(found.column("tokens").to_numpy(), found.column("covered").to_numpy(),
                           found.column("id").to_pylist(), found.column("grp").to_pylist(), runs,
                           attribution, np.cumsum(unit_offsets)[:-1])


def first_occurrences(docs: DataFrame, table: PhraseTable, min_length: int,
                      wanted: dict[int, np.ndarray]) -> list[tuple[int, int, int, int]]:
    """(phrase, unit, row, token start in the document) of the first occurrence in the
    documents ranked `wanted[phrase]` among those containing the phrase (0-based, input order):
    the report's example documents, chosen on the executors (a window over each phrase's
    documents), so only they reach the driver."""
    shared = _shared_table(docs, table, min_length)
    phrases = np.array(sorted(wanted), np.int64)

    @task
    def firsts(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        coverage = cached(shared, _batch_coverage)
        for batch in batches:
            found = coverage.documents(batch.column("text"))
            occ = found.occurrences
            keep = np.isin(occ.phrase, phrases)
            phrase, doc, start = occ.phrase[keep], occ.doc[keep], occ.start[keep]
            order = np.lexsort((start, phrase, doc))  # the earliest of each (doc, phrase) first
            phrase, doc, start = phrase[order], doc[order], start[order]
            first = np.ones(len(phrase), dtype=bool)  # a batch may hold no occurrence
            first[1:] = (phrase[1:] != phrase[:-1]) | (doc[1:] != doc[:-1])
            phrase, doc, start = phrase[first], doc[first], start[first]
            yield pa.RecordBatch.from_arrays(
                [pa.array(phrase, pa.int64()),
                 pc.take(batch.column("unit"), pa.array(doc)),
                 pc.take(batch.column("row"), pa.array(doc)),
                 pa.array(start - found.doc_offsets[doc], pa.int64())],
                names=["phrase", "unit", "row", "start"])

    from pyspark.sql.window import Window

    rows = docs.mapInArrow(firsts, "phrase long, unit int, row long, start long")
    ranked = rows.withColumn("rank", F.row_number().over(
        Window.partitionBy("phrase").orderBy("unit", "row")) - 1)
    chosen = docs.sparkSession.createDataFrame(
        [(int(p), int(r)) for p, ranks in wanted.items() for r in ranks], "phrase long, rank int")
    picked = ranked.join(F.broadcast(chosen), ["phrase", "rank"]).collect()
    return [(row["phrase"], row["unit"], row["row"], row["start"]) for row in picked]


def texts_of(docs: DataFrame, wanted: list[tuple[int, int]]) -> dict[tuple[int, int], tuple]:
    """(unit, row) -> (id, text) of a few documents."""
    if not wanted:
        return {}
    keys = docs.sparkSession.createDataFrame([(int(u), int(r)) for u, r in wanted],
                                             "unit int, row long")
    found = docs.join(F.broadcast(keys), ["unit", "row"]).select("unit", "row", "id", "text")
    return {(row["unit"], row["row"]): (row["id"], row["text"]) for row in found.collect()}


def _shared_table(docs: DataFrame, table: PhraseTable, min_length: int):
    return shared_value(docs.sparkSession, shipped_table(table, min_length))
