"""`corpus-miner phrases INPUT... --sigma N --min-length L`: maximal frequent phrases.

Rows go to OUT by extension (.jsonl / .jsonl.gz / .tsv / .parquet, written atomically) or, without
-o, to stdout as JSONL; a short summary goes to stderr; --stats writes the run statistics as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys

from corpus_miner.atomic import atomic_path
from corpus_miner.errors import CorpusMinerError
from corpus_miner.phrases.params import ALGORITHMS


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    try:
        from corpus_miner.cli.common import add_input_arguments
    except ModuleNotFoundError as exc:
        if exc.name != "corpus_miner.cli.common":
            raise
        parser.add_argument("inputs", nargs="+", metavar="INPUT",
                            help="JSONL/Parquet/text inputs or a saved TokenCorpus folder")
    else:
        add_input_arguments(parser)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "phrases", help="find maximal frequent phrases (BloomSpan)",
        description="Find every maximal contiguous frequent phrase: token sequences occurring in "
        "at least SIGMA documents, at least L tokens long, that cannot be extended on either side "
        "and stay that frequent. Rows are ordered by length x df (descending).")
    _add_inputs(parser)
    parser.add_argument("--sigma", type=int, default=20,
                        help="minimum number of documents (default 20)")
    parser.add_argument("--min-length", type=int, default=10,
                        help="minimum phrase length in tokens (default 10)")
    parser.add_argument("--algorithm", choices=ALGORITHMS, default="bloomspan",
                        help="bloomspan (default; large natural text, strict sigma) or fhk (exact "
                        "suffix array; permissive sigma, dense nested repeats). Same answer.")
    parser.add_argument("--filter-bytes", type=int, default=None,
                        help="bloomspan counting-filter size in bytes (default: sized from the "
                        "corpus); never changes the answer, only speed and memory")
    parser.add_argument("-o", "--output", default=None,
                        help="output file: .jsonl, .jsonl.gz, .tsv or .parquet (default: JSONL "
                        "on stdout)")
    parser.add_argument("--stats", default=None, metavar="FILE",
                        help="write run statistics (counts, seconds per stage, peak RSS) as JSON")
    parser.set_defaults(handler=run)


def _summary(stats: dict) -> str:
    parts = [f"{stats.get('phrases', 0)} phrases", f"{stats.get('tokens', 0)} tokens",
             f"{stats.get('documents', 0)} documents", f"sigma {stats.get('sigma')}",
             f"min length {stats.get('min_length')}", stats.get("algorithm", "")]
    if "share_after_counting_filter" in stats:
        parts.append(f"bigrams kept {100 * stats['share_after_word_filter']:.1f}% (words) -> "
                     f"{100 * stats['share_after_counting_filter']:.1f}% (filter) -> "
                     f"{stats.get('seeds', 0)} seeds")
    parts.append(f"{stats.get('seconds_total', 0.0):.2f} s")
    if "peak_rss_mb" in stats:
        parts.append(f"peak RSS {stats['peak_rss_mb']:.0f} MB")
    line = "phrases: " + ", ".join(p for p in parts if p)
    if stats.get("note"):
        line += f"\nphrases: note: {stats['note']}"
    return line


def run(args) -> int:
    from corpus_miner.phrases.miner import BloomSpan
    from corpus_miner.phrases.params import PhraseParams
    from corpus_miner.phrases.result import write_phrases, write_phrases_jsonl

    # parameters first: a typo in --sigma should not cost a tokenization pass
    PhraseParams(sigma=args.sigma, min_length=args.min_length, algorithm=args.algorithm,
                 filter_bytes=args.filter_bytes)
    if args.output is not None and not args.output.lower().endswith(
            (".jsonl", ".jsonl.gz", ".json", ".tsv", ".parquet")):
        from corpus_miner.errors import ParameterError

        raise ParameterError(f"{args.output}: unknown output type; use .jsonl, .jsonl.gz, .tsv "
                             "or .parquet")
    try:
        from corpus_miner.cli.common import corpus_from_args
    except ModuleNotFoundError as exc:
        if exc.name != "corpus_miner.cli.common":
            raise
        raise CorpusMinerError("this build has no corpus readers (corpus_miner.cli.common); "
                               "install the complete corpus-miner package") from exc
    corpus = corpus_from_args(args)
    miner = BloomSpan(sigma=args.sigma, min_length=args.min_length, algorithm=args.algorithm,
                      filter_bytes=args.filter_bytes).fit(corpus)
    if args.output is None:
        write_phrases_jsonl(miner.phrases_, sys.stdout)
        sys.stdout.flush()
    else:
        write_phrases(miner.phrases_, args.output)
    if args.stats is not None:
        with atomic_path(args.stats) as tmp:
            tmp.write_text(json.dumps(miner.stats_, indent=2, sort_keys=True) + "\n",
                           encoding="utf-8")
    print(_summary(miner.stats_), file=sys.stderr)
    return 0
