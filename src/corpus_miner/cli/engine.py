"""`--engine spark` for `phrases`, `report`, `clean` and `dedup`: the same commands on Spark,
writing the local engine's outputs. This module holds what the commands share (the arguments, the
session, the documents frame, the miner); each command's Spark run sits beside its local one.

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

from corpus_miner.errors import ParameterError

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


def spark_session(args: argparse.Namespace):
    from corpus_miner.spark import local_session

    spark = local_session(args.master, app_name=f"corpus-miner {args.command}")
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def refuse_options(args: argparse.Namespace, *options: str) -> None:
    for option in options:
        value = getattr(args, option.lstrip("-").replace("-", "_"), None)
        if value not in (None, False):
            raise ParameterError(f"{option} is not available with --engine spark yet; run it "
                                 "with the local engine")


def refuse_whole_lines(args: argparse.Namespace, note: bool = True) -> None:
    """Whole-line phrases run on the local engine only: refused when asked for on another;
    when they are only the command's default, a note says that the output is the local
    engine's with --min-line-length 0."""
    name = getattr(args, "engine", "spark")
    if args.min_line_length not in (None, 0):
        raise ParameterError(f"--min-line-length is not supported with --engine {name} yet; "
                             "run it with the local engine (or pass --min-line-length 0)")
    if note and args.min_line_length is None:
        print(f"note: --engine {name} mines no whole-line phrases yet (the local engine does "
              "by default): this is the local engine's output with --min-line-length 0",
              file=sys.stderr)


def spark_documents(spark, args, group_by=None):
    from pyspark import StorageLevel

    from corpus_miner.spark.documents import documents_frame

    return documents_frame(spark, args.inputs, args.text_field, args.id_field, args.skip_bad,
                           group_by).persist(StorageLevel.MEMORY_AND_DISK)


def spark_mined(args, docs):
    from corpus_miner.spark import SparkBloomSpan

    return SparkBloomSpan(sigma=args.sigma, min_length=args.min_length).fit(
        docs, text_col="text", id_col=None)
