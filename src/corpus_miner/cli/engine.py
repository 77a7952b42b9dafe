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
import functools
import signal
import sys
import threading

from corpus_miner.cli.common import note_read_stats
from corpus_miner.errors import CorpusMinerError, InputError, ParameterError

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
    group.add_argument("--verbose", action="store_true",
                       help="with --engine spark: show Spark's and py4j's own log lines and "
                       "stack traces on stderr (by default only corpus-miner's messages)")


def on_spark(args: argparse.Namespace) -> bool:
    return getattr(args, "engine", "local") == "spark"


def spark_session(args: argparse.Namespace):
    """The session on --master, checked first (one line, before any JVM starts); Spark's own
    log lines stay off stderr unless --verbose (spark/quiet.py)."""
    check_spark_arguments(args)
    from pyspark import SparkContext

    from corpus_miner.spark import local_session
    from corpus_miner.spark.quiet import quiet_python, quiet_start

    new_jvm = SparkContext._gateway is None
    verbose = getattr(args, "verbose", False)
    before = _children() if new_jvm else set()
    ours = signal.getsignal(signal.SIGINT)
    try:
        with quiet_start(verbose):
            spark = local_session(args.master, app_name=f"corpus-miner {args.command}")
        if ours is not None and threading.current_thread() is threading.main_thread():
            # pyspark's own Ctrl-C handler calls into the JVM from inside a JVM call (a
            # logged "reentrant call" traceback); the command's handler stops it cleanly
            signal.signal(signal.SIGINT, ours)
    except BaseException:  # Ctrl-C while the JVM starts: it ignores SIGINT and would stay
        if new_jvm:
            from corpus_miner.spark.quiet import end_jvm

            for pid in _children() - before:
                end_jvm(pid)
        raise
    spark.sparkContext.setLogLevel("WARN" if verbose else "OFF")
    quiet_python(spark, verbose)
    if new_jvm:  # the JVM's pid, to end it if a signal stops the command (ending_the_jvm)
        from corpus_miner.spark.quiet import jvm_pid

        args.started_jvm = jvm_pid(spark)
    return spark


def ending_the_jvm(run):
    """`run` that, when a signal (Ctrl-C, SIGTERM) or a crash stops it, also ends the driver
    JVM the command started: stopped mid-job it does not exit by itself (py4j's gateway thread
    keeps it alive after the Python driver is gone) and would be left behind. A JVM that was
    running before (a caller's session) is left alone."""
    @functools.wraps(run)
    def running(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except CorpusMinerError:
            raise  # a one-line error: the process ends normally, and the JVM with it
        except BaseException:
            if getattr(args, "started_jvm", None) is not None:
                from corpus_miner.spark.quiet import end_jvm

                end_jvm(args.started_jvm)
            raise

    return running


def _children() -> set[int]:
    import psutil

    try:
        return {child.pid for child in psutil.Process().children()}
    except psutil.Error:
        return set()


def check_spark_arguments(args: argparse.Namespace) -> None:
    """--master and the inputs, before anything starts: a bad master, or a saved corpus
    folder (which the executors cannot read), is one line."""
    from corpus_miner.io.artefact import is_saved_corpus
    from corpus_miner.spark.quiet import check_master

    check_master(args.master)
    for item in getattr(args, "inputs", None) or ():
        try:
            saved = is_saved_corpus(item)
        except (OSError, ValueError):
            saved = False
        if saved:
            raise InputError(f"{item}: a saved corpus folder (from `tokenize`); --engine spark "
                             "reads JSONL, Parquet and text files only: give it the original "
                             "inputs, or run with the local engine")


def refuse_options(args: argparse.Namespace, *options: str) -> None:
    for option in options:
        value = getattr(args, option.lstrip("-").replace("-", "_"), None)
        if value not in (None, False):
            raise ParameterError(f"{option} is not available with --engine spark yet; run it "
                                 "with the local engine")


def refuse_line_phrases(args: argparse.Namespace, note: bool = True) -> None:
    """Whole-line and edge phrases run on the local engine only: refused when asked for on
    another; when they are only the command's default, a note says that the output is the
    local engine's with --min-line-length 0 (and --min-edge-length 0)."""
    name = getattr(args, "engine", "spark")
    defaults = []
    for option, default_name in (("--min-line-length", "line_default"),
                            ("--min-edge-length", "edge_default")):
        value = getattr(args, option.lstrip("-").replace("-", "_"), None)
        if value not in (None, 0):
            raise ParameterError(f"{option} is not supported with --engine {name} yet; run it "
                                 f"with the local engine (or pass {option} 0)")
        if value is None and getattr(args, default_name, None):
            defaults.append(option)
    if note and defaults:
        kinds = " and ".join("whole-line" if option == "--min-line-length" else "edge"
                             for option in defaults)
        print(f"note: --engine {name} mines no {kinds} phrases yet (the local engine does "
              "by default): this is the local engine's output with "
              + " and ".join(f"{option} 0" for option in defaults), file=sys.stderr)


def spark_documents(spark, args, group_by=None, digested: bool = False):
    """The inputs' documents frame, persisted; digested: for commands that read the inputs
    again on the driver (spark.documents.read_digests)."""
    from pyspark import StorageLevel

    from corpus_miner.spark.documents import documents_frame

    return documents_frame(spark, args.inputs, args.text_field, args.id_field, args.skip_bad,
                           group_by, digested).persist(StorageLevel.MEMORY_AND_DISK)


def spark_mined(args, docs):
    from corpus_miner.spark import SparkBloomSpan

    return SparkBloomSpan(sigma=args.sigma, min_length=args.min_length).fit(
        docs, text_col="text", id_col=None)


def note_reading(args: argparse.Namespace, docs, miner) -> None:
    """What the executors' readers tolerated (printed after the run, as the local engine
    does), and the local miner's note when no phrase can be frequent."""
    from corpus_miner.spark.documents import read_stats

    stats = read_stats(docs)
    note_read_stats(args, stats)
    if miner.stats_.get("note") is None and args.sigma > stats.documents:
        miner.stats_["note"] = (f"sigma={args.sigma} exceeds the {stats.documents} documents: "
                                "no phrase can be frequent")
