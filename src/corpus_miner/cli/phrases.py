"""`corpus-miner phrases INPUT... --sigma N --min-length L`: maximal frequent phrases.

Rows go to OUT by extension (.jsonl / .jsonl.gz / .tsv / .parquet, written atomically) or, without
-o, to stdout as JSONL; a short summary goes to stderr; --stats writes the run statistics as JSON.
"""

from __future__ import annotations

import json
import sys

from corpus_miner.io.atomic import atomic_path
from corpus_miner.cli.common import (add_input_arguments, add_mining_arguments, corpus_from_args,
                                     print_read_problems, print_summary)
from corpus_miner.errors import ParameterError


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
                        help="output file: .jsonl, .jsonl.gz, .tsv or .parquet (default: JSONL "
                        "on stdout)")
    parser.add_argument("--stats", default=None, metavar="FILE",
                        help="write run statistics (counts, seconds per stage, peak RSS) as JSON")
    parser.set_defaults(handler=run)


def _print_summary(stats: dict) -> None:
    values = {"phrases": stats.get("phrases", 0), "tokens": stats.get("tokens", 0),
              "documents": stats.get("documents", 0), "sigma": stats.get("sigma"),
              "min_length": stats.get("min_length"), "algorithm": stats.get("algorithm")}
    if "share_after_counting_filter" in stats:
        values["bigrams_after_word_filter"] = f"{100 * stats['share_after_word_filter']:.1f}%"
        values["after_counting_filter"] = f"{100 * stats['share_after_counting_filter']:.1f}%"
        values["seeds"] = stats.get("seeds", 0)
    values["seconds"] = round(stats.get("seconds_total", 0.0), 3)
    if "peak_rss_mb" in stats:
        values["peak_rss_mb"] = round(stats["peak_rss_mb"], 1)
    print_summary("phrases", **values)
    if stats.get("note"):
        print(f"phrases: note: {stats['note']}", file=sys.stderr)


def run(args) -> int:
    from corpus_miner.phrases.miner import BloomSpan
    from corpus_miner.phrases.params import PhraseParams
    from corpus_miner.phrases.result import write_phrases, write_phrases_jsonl

    # parameters first: a typo in --sigma should not cost a tokenization pass
    PhraseParams(sigma=args.sigma, min_length=args.min_length, algorithm=args.algorithm,
                 filter_bytes=args.filter_bytes)
    if args.output is not None and not args.output.lower().endswith(
            (".jsonl", ".jsonl.gz", ".json", ".tsv", ".parquet")):
        raise ParameterError(f"{args.output}: unknown output type; use .jsonl, .jsonl.gz, .tsv "
                             "or .parquet")
    corpus = corpus_from_args(args)
    print_read_problems(getattr(corpus, "read_stats", None))
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
    _print_summary(miner.stats_)
    return 0
