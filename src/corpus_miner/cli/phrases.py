"""`corpus-miner phrases INPUT... --sigma N --min-length L`: maximal frequent phrases.

Rows go to OUT by extension (.jsonl / .jsonl.gz / .tsv / .parquet, written atomically) or, without
-o, to stdout as JSONL; a short summary goes to stderr; --stats writes the run statistics as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys

from corpus_miner.cli import engine
from corpus_miner.cli.common import (
    add_input_arguments,
    add_mining_arguments,
    corpus_from_args,
    min_edge_length,
    min_line_length,
)
from corpus_miner.cli.engine import add_engine_arguments, on_spark
from corpus_miner.cli.outputs import Output
from corpus_miner.io.atomic import atomic_path, writing_stdout

OUTPUTS = (Output("output", "-o", suffixes=(".jsonl", ".jsonl.gz", ".json", ".tsv", ".parquet"),
                  hint="unknown output type; use .jsonl, .jsonl.gz, .tsv or .parquet",
                  stdout=True, default_stdout=True),
           Output("stats", "--stats"))


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "phrases", help="find maximal frequent phrases (BloomSpan)",
        description="Find every maximal contiguous frequent phrase: token sequences occurring in "
        "at least SIGMA documents, at least L tokens long, that cannot be extended on either side "
        "and stay that frequent. Rows are ordered by length x df (descending).")
    add_input_arguments(parser)
    add_mining_arguments(parser)
    parser.add_argument("--filter-bytes", type=int, default=None,
                        help="bloomspan counting-filter size in bytes (default: sized from the "
                        "corpus); never changes the answer, only speed and memory")
    parser.add_argument("-o", "--output", default=None,
                        help="output file: .jsonl, .jsonl.gz, .tsv or .parquet (default, or -: "
                        "JSONL on stdout)")
    parser.add_argument("--stats", default=None, metavar="FILE",
                        help="write run statistics (counts, seconds per stage, peak RSS) as JSON")
    add_engine_arguments(parser, ray=True)
    parser.set_defaults(handler=run, outputs=OUTPUTS)


def _print_summary(stats: dict, output: str | None, stats_file: str | None) -> None:
    """One line a newcomer can read; the run's details go to --stats FILE."""
    where = f"written to {output}" if output not in (None, "-") else "written to stdout as JSONL"
    n = stats.get("phrases", 0)
    lines = stats.get("whole_line_phrases")
    edges = stats.get("edge_phrases")
    parts = ([f"{lines:,} of them whole lines of at least {stats.get('min_line_length')}"]
             if lines is not None else []) + (
        [f"{edges:,} edges of at least {stats.get('min_edge_length')}"]
        if edges is not None else [])
    print(f"phrases: {n:,} phrase{'' if n == 1 else 's'} of at least {stats.get('min_length')} "
          f"tokens" + (f" ({', '.join(parts)})" if parts else "")
          + f", each in at least {stats.get('sigma')} of {stats.get('documents', 0):,} "
          f"documents ({stats.get('tokens', 0):,} tokens), found by {stats.get('algorithm')} in "
          f"{stats.get('seconds_total', 0.0):.1f} s, {where}"
          + ("; --stats FILE for the details" if stats_file is None else ""), file=sys.stderr)
    if stats.get("note"):
        print(f"phrases: note: {stats['note']}", file=sys.stderr)


def run(args) -> int:
    from corpus_miner.phrases.miner import BloomSpan
    from corpus_miner.phrases.params import PhraseParams

    if on_spark(args):
        return _run_on_spark(args)
    if args.engine == "ray":
        from corpus_miner.cli.ray_engine import run_phrases as run_on_ray

        return run_on_ray(args, write_outputs)
    # parameters first: a typo in --sigma should not cost a tokenization pass
    lines, edges = min_line_length(args), min_edge_length(args)
    PhraseParams(sigma=args.sigma, min_length=args.min_length, algorithm=args.algorithm,
                 filter_bytes=args.filter_bytes, min_line_length=lines, min_edge_length=edges)
    corpus = corpus_from_args(args, lines=lines is not None or edges is not None,
                              sentences=edges is not None)
    miner = BloomSpan(sigma=args.sigma, min_length=args.min_length, algorithm=args.algorithm,
                      filter_bytes=args.filter_bytes, min_line_length=lines,
                      min_edge_length=edges).fit(corpus)
    write_outputs(args, miner.phrases_, miner.stats_)
    return 0


def write_outputs(args, table, stats: dict) -> None:
    """The phrase rows to -o (or stdout), the statistics to --stats, a summary line (both
    engines)."""
    from corpus_miner.phrases.result import write_phrases, write_phrases_jsonl

    if args.output in (None, "-"):
        with writing_stdout():
            write_phrases_jsonl(table, sys.stdout)
            sys.stdout.flush()
    else:
        write_phrases(table, args.output)
    if args.stats is not None:
        with atomic_path(args.stats) as tmp:
            tmp.write_text(json.dumps(stats, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    _print_summary(stats, args.output, args.stats)


@engine.ending_the_jvm
def _run_on_spark(args: argparse.Namespace) -> int:
    from corpus_miner.phrases.params import PhraseParams
    from corpus_miner.spark.documents import one_line_errors

    engine.refuse_options(args, "--filter-bytes")
    engine.refuse_line_phrases(args, note=False)
    PhraseParams(sigma=args.sigma, min_length=args.min_length)
    spark = engine.spark_session(args)
    with one_line_errors():
        docs = engine.spark_documents(spark, args)
        miner = engine.spark_mined(args, docs)
    engine.note_reading(args, docs, miner)
    write_outputs(args, miner.table_, miner.stats_)
    return 0
