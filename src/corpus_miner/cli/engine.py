"""`--engine spark` for `phrases`, `report`, `clean` and `dedup`: the same commands on Spark,
writing the local engine's outputs.

The executors read the inputs with corpus-miner's own reader (spark.documents) and mine them with
SparkBloomSpan, or deduplicate them with SparkLSHBloom. What comes back to the driver is small
(phrases; a few numbers per document; a few documents' texts for report contexts), and the
driver writes every output with the local writers: phrase files and report HTML/JSON are then
byte-identical to the local engine's. `clean` and `dedup` write every record back, so the driver
reads the inputs a second time, as the local commands do, and applies Spark's per-document answer.
"""

from __future__ import annotations

import argparse
import sys
import time

from corpus_miner.cli.common import shard_plan
from corpus_miner.errors import InputError, ParameterError

ENGINES = ("local", "spark")


def add_engine_arguments(parser: argparse.ArgumentParser, ray: bool = False) -> None:
    group = parser.add_argument_group("engine")
    group.add_argument("--engine", choices=ENGINES + (("ray",) if ray else ()), default="local",
                       help="local (default: in this process) or spark (needs the `spark` extra "
                       "and Java 17+; same output)"
                       + ("; or ray (needs the `ray` extra; same output)" if ray else ""))
    group.add_argument("--master", default="local[*]", metavar="local[N]|URL",
                       help="Spark master with --engine spark (default: %(default)s); the "
                       "input paths must be readable by every executor")
    if ray:
        group.add_argument("--address", default=None, metavar="auto|ray://HOST:PORT",
                           help="Ray cluster to join with --engine ray (default: start a local "
                           "one with this machine's cores); the input paths must be readable by "
                           "every worker")


def on_spark(args: argparse.Namespace) -> bool:
    return getattr(args, "engine", "local") == "spark"


def _session(args: argparse.Namespace):
    from corpus_miner.spark import local_session

    spark = local_session(args.master, app_name=f"corpus-miner {args.command}")
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _refuse(args: argparse.Namespace, *options: str) -> None:
    for option in options:
        value = getattr(args, option.lstrip("-").replace("-", "_"), None)
        if value not in (None, False):
            raise ParameterError(f"{option} is not available with --engine spark yet; run it "
                                 "with the local engine")


def _refuse_whole_lines(args: argparse.Namespace, note: bool = True) -> None:
    """Whole-line phrases do not run on Spark yet: refused when asked for; when they are only
    the command's default, a note says that the output is the local engine's with
    --min-line-length 0."""
    if args.min_line_length not in (None, 0):
        raise ParameterError("--min-line-length is not supported with --engine spark yet; run "
                             "it with the local engine (or pass --min-line-length 0)")
    if note and args.min_line_length is None:
        print("note: --engine spark mines no whole-line phrases yet (the local engine does by "
              "default): this is the local engine's output with --min-line-length 0",
              file=sys.stderr)


def _documents(spark, args, group_by=None):
    from pyspark import StorageLevel

    from corpus_miner.spark.documents import documents_frame

    return documents_frame(spark, args.inputs, args.text_field, args.id_field, args.skip_bad,
                           group_by).persist(StorageLevel.MEMORY_AND_DISK)


def _mined(args, docs):
    from corpus_miner.spark import SparkBloomSpan

    return SparkBloomSpan(sigma=args.sigma, min_length=args.min_length).fit(
        docs, text_col="text", id_col=None)


def run_phrases(args: argparse.Namespace) -> int:
    from corpus_miner.cli.phrases import write_outputs
    from corpus_miner.phrases.params import PhraseParams
    from corpus_miner.spark.documents import one_line_errors

    _refuse(args, "--filter-bytes")
    _refuse_whole_lines(args, note=False)
    PhraseParams(sigma=args.sigma, min_length=args.min_length)
    spark = _session(args)
    with one_line_errors():
        miner = _mined(args, _documents(spark, args))
    write_outputs(args, miner.table_, miner.stats_)
    return 0


def run_report(args: argparse.Namespace) -> int:
    import numpy as np  # here: --help and the local engine's commands do not need it

    from corpus_miner.coverage.coverage import Coverage, Occurrences
    from corpus_miner.coverage.report import (
        MISSING_GROUP,
        CoverageReport,
        parse_group_by,
    )
    from corpus_miner.phrases.params import PhraseParams
    from corpus_miner.spark import documents

    _refuse(args, "--phrases")
    _refuse_whole_lines(args)
    PhraseParams(sigma=args.sigma, min_length=args.min_length)
    group_by = parse_group_by(args.group_by)
    spark = _session(args)
    with documents.one_line_errors():
        docs = _documents(spark, args, group_by)
        miner = _mined(args, docs)
        table = miner.table_
        figures = documents.document_figures(docs, table, args.min_length)
        offsets = np.zeros(len(figures.tokens) + 1, np.int64)
        np.cumsum(figures.tokens, out=offsets[1:])
        empty = np.zeros(0, np.int64)
        coverage = Coverage(np.zeros(0, np.uint8), offsets, figures.covered, table,
                            figures.tokens_by_phrase, Occurrences(empty, empty, empty),
                            int(args.min_length), int(args.sigma), "mined")
        report = CoverageReport(coverage, top=args.top, examples=args.examples,
                                template_share=args.template_share, group_by=args.group_by,
                                title=args.title, inputs=args.inputs)
        hogs = np.union1d(report.hogs_by_psi, report.hogs_by_covered)
        wanted = {}
        if args.examples > 0:  # the local report's choice: evenly spread over the documents
            for phrase in hogs:
                df = int(table.df[phrase])
                if df:
                    wanted[int(phrase)] = np.unique(np.linspace(0, df - 1, min(args.examples, df))
                                                    .round().astype(np.int64))
        examples: dict[int, list] = {}
        index = {}
        for phrase, unit, row, start in documents.first_occurrences(docs, table, args.min_length,
                                                                    wanted):
            d = int(figures.unit_offsets[unit] + row)
            index[d] = (unit, row)
            examples.setdefault(d, []).append((phrase, start, int(table.lengths[phrase])))
        for d in report.template_docs[:report.top]:
            unit = int(np.searchsorted(figures.unit_offsets, d, side="right") - 1)
            index[int(d)] = (unit, int(d - figures.unit_offsets[unit]))
        texts = documents.texts_of(docs, list(index.values()))
    ids = figures.doc_ids()
    for d in sorted(index):  # documents in input order, each one's examples by phrase: the
        _, text = texts[index[d]]  # order in which the local report adds contexts
        report.add_document(d, ids[d], text or "", sorted(examples.get(d, ())), "spark")
    if group_by is not None:
        if len(figures.groups) and all(g is None for g in figures.groups):
            raise InputError(f"--group-by field {group_by[0]!r} is in no record")
        report.add_groups([MISSING_GROUP if g is None else g for g in figures.groups])
    from corpus_miner.cli.report import write_report_outputs

    write_report_outputs(args, report)
    return 0


def run_clean(args: argparse.Namespace) -> int:
    import numpy as np  # here: --help and the local engine's commands do not need it

    from corpus_miner.cli.report import finish_clean
    from corpus_miner.coverage.clean import Cleaner, CleanParams
    from corpus_miner.phrases.params import PhraseParams
    from corpus_miner.spark import documents

    _refuse(args, "--phrases", "--allow", "--keep-first")
    _refuse_whole_lines(args)
    PhraseParams(sigma=args.sigma, min_length=args.min_length)
    CleanParams(args.mode, False, (), args.drop_above, args.mask_text).validate()
    spark = _session(args)
    with documents.one_line_errors():
        docs = _documents(spark, args)
        miner = _mined(args, docs)
        figures = documents.document_figures(docs, miner.table_, args.min_length,
                                             with_runs=True)
        texts_read = documents.texts_digest(docs, figures.unit_offsets)
    offsets = np.zeros(len(figures.tokens) + 1, np.int64)
    np.cumsum(figures.tokens, out=offsets[1:])
    mask = np.zeros(int(offsets[-1]), np.uint8)  # 1 byte per token on the driver
    assert figures.runs is not None  # asked for with_runs
    for d, runs in enumerate(figures.runs):
        for first, end in runs:
            mask[offsets[d] + first:offsets[d] + end] = 1
    cleaner = Cleaner(args.mode, False, (), args.drop_above, args.mask_text)
    cleaner.fit_mask(mask, offsets, texts_digest=texts_read)
    stats = cleaner.write(args.inputs, args.output, text_field=args.text_field,
                          id_field=args.id_field, skip_bad=args.skip_bad,
                          shards=shard_plan(args))
    finish_clean(args, stats, int(figures.covered.sum()) / max(int(offsets[-1]), 1))
    return 0


def run_dedup(args: argparse.Namespace) -> int:
    import numpy as np  # here: --help and the local engine's commands do not need it
    from pyspark.sql import functions as F

    from corpus_miner.cli.dedup import _read, _selection
    from corpus_miner.dedup.result import DedupResult
    from corpus_miner.io import ReadStats, write_records
    from corpus_miner.io.digest import checked_reread
    from corpus_miner.spark import SparkLSHBloom, documents

    started = time.perf_counter()
    model = SparkLSHBloom(threshold=args.threshold, num_perm=args.num_perm, mode=args.mode,
                          num_bands=args.num_bands, fp_prob=args.fp_prob,
                          shingle_size=args.shingle_size, seed=args.seed,
                          expected_items=args.expected_items,
                          max_shingles=args.max_shingles, sketch=args.sketch,
                          shingle_kind="word" if args.word_shingles else "char")
    spark = _session(args)
    with documents.one_line_errors():
        docs = _documents(spark, args)
        counts = docs.groupBy("unit").count().collect()
        sizes = np.zeros(max([r["unit"] for r in counts], default=-1) + 1, np.int64)
        for row in counts:
            sizes[row["unit"]] = row["count"]
        first = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        offset_of = F.element_at(F.create_map(*[F.lit(x) for u, o in enumerate(first)
                                                for x in (u, int(o))]), F.col("unit"))
        ordered = docs.select((offset_of + F.col("row")).alias("order"), F.coalesce(
            "id", (offset_of + F.col("row")).cast("string")).alias("id"), "text")
        result = model.deduplicate(ordered, text_col="text", id_col="id", order_col="order",
                                   annotate=True).orderBy("order")
        columns = ["is_duplicate"] + (["duplicate_of"] if "duplicate_of" in result.columns
                                      else [])
        flags = result.select(*columns).toArrow()
        texts_read = documents.texts_digest(docs, first)
    is_duplicate = flags.column("is_duplicate").to_numpy(zero_copy_only=False)
    duplicate_of = flags.column("duplicate_of").to_pylist() if len(columns) > 1 else None
    answer = DedupResult(is_duplicate, duplicate_of_id=duplicate_of)
    stats = ReadStats()

    def tables():
        start = 0
        for batch in checked_reread(_read(args, stats, "writing"), texts_read, "dedup"):
            part = answer.part(start, start + len(batch))
            start += len(batch)
            yield _selection(batch, part, args.annotate)

    written = write_records(tables(), args.output,
                            shards=shard_plan(args, total_rows=len(is_duplicate)))
    if args.save_index:
        model.save(args.save_index)
    print(f"dedup: {int(is_duplicate.sum()):,} of {len(is_duplicate):,} documents are "
          f"near-duplicates of an earlier one (similarity >= {args.threshold:g}, {args.mode}, "
          f"Spark); {written:,} written{' with is_duplicate' if args.annotate else ''} to "
          f"{args.output} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0
