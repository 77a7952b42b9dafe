"""`corpus-miner generate synthetic1|synthetic2|web -o OUT`: corpora with known structure."""

from __future__ import annotations

import argparse
import math
import sys

from corpus_miner.cli.common import add_storage_arguments, text_argument
from corpus_miner.cli.outputs import Output
from corpus_miner.errors import ParameterError


def _phrase_with_support(value: str) -> tuple[str, int]:
    text, sep, support = text_argument(value).rpartition(":")
    if not sep or not text.strip() or not support.strip().isdigit():
        raise argparse.ArgumentTypeError(f"{value!r}: expected 'PHRASE TEXT:SUPPORT', e.g. "
                                         "'a third sentence:4'")
    return text.strip(), int(support)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "generate", help="write a synthetic corpus (rows with id and text)",
        description="Write a synthetic corpus: JSONL rows (id, text), for web also Parquet (id, "
        "url, text, repost_of). synthetic1: the BloomSpan "
        "article's unique-word background with inserted phrases (known answer); synthetic2: dense "
        "nested overlaps; web: pages in English-like text with site headers, menus, footers, "
        "cookie banners and disclaimers (variable parts drawn per page) and planted reposts "
        "(edited copies of earlier pages).")
    parser.add_argument("kind", choices=("synthetic1", "synthetic2", "web"))
    parser.add_argument("-o", "--output", required=True,
                        help="output file: .jsonl or .jsonl.gz; web also .parquet, or a folder "
                        "name (no suffix) for Parquet parts, the fast form for large corpora")
    parser.add_argument("--docs", type=int, default=None, help="number of documents (default 1000)")
    parser.add_argument("--tokens", type=float, default=None,
                        help="web: generate pages until this many tokens (e.g. 1e9) instead of "
                        "--docs")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--words-per-doc", type=int, default=None,
                        help="background words per document (synthetic1: 5000, synthetic2: 1000)")
    parser.add_argument("--phrase", action="append", type=_phrase_with_support,
                        metavar="TEXT:SUPPORT",
                        help="synthetic1: phrase to insert into SUPPORT documents (repeatable; "
                        "default: the article's three phrases)")
    parser.add_argument("--families", type=int, default=3, help="synthetic2: family sequences")
    parser.add_argument("--family-length", type=int, default=40, help="synthetic2: family length")
    parser.add_argument("--windows-per-doc", type=int, default=20,
                        help="synthetic2: family windows inserted per document")
    parser.add_argument("--max-window", type=int, default=None,
                        help="synthetic2: longest window (default family length / 2)")
    parser.add_argument("--sites", type=int, default=50, help="web: number of sites")
    parser.add_argument("--vocabulary", type=int, default=50000,
                        help="web: content words of the page bodies (plus ~60 function words; "
                        "default 50000)")
    parser.add_argument("--body-words", type=int, default=400, help="web: mean body length")
    parser.add_argument("--reposts", type=float, default=0.05, metavar="SHARE",
                        help="web: share of pages that are edited copies of an earlier page "
                        "(default 0.05)")
    add_storage_arguments(parser)
    parser.set_defaults(handler=run, outputs=(Output(
        "output", "-o", suffixes=(".jsonl", ".jsonl.gz", ".parquet"), folder_if_no_suffix=True,
        replaceable=_parts_only, hint="write .jsonl, .jsonl.gz, .parquet (web), or a folder "
        "name (no suffix) for Parquet parts (web)"),))


def _parts_only(folder) -> bool:
    from corpus_miner.synth.web_pages import _parts_only

    return _parts_only(folder)


def run(args) -> int:
    from corpus_miner import synth

    if args.kind == "web":
        return _run_web(args)
    if args.tokens is not None:
        raise ParameterError("--tokens is for web; give --docs")
    if not args.output.lower().endswith((".jsonl", ".jsonl.gz")):
        raise ParameterError(f"{args.output}: the output must end in .jsonl or .jsonl.gz")
    n_docs = 1000 if args.docs is None else args.docs
    if args.kind == "synthetic1":
        words = 5000 if args.words_per_doc is None else args.words_per_doc  # 0 is an error
        docs = synth.synthetic1(n_docs, words,
                                args.phrase or synth.ARTICLE_PHRASES, seed=args.seed)
    else:
        words = 1000 if args.words_per_doc is None else args.words_per_doc
        docs = synth.synthetic2(n_docs, words, n_families=args.families,
                                family_length=args.family_length,
                                windows_per_doc=args.windows_per_doc,
                                max_window=args.max_window, seed=args.seed)
    synth.write_jsonl(docs, args.output, id_prefix=args.kind)
    tokens = sum(len(d) for d in docs)
    print(f"generate: wrote {len(docs):,} documents, {tokens:,} tokens to {args.output}",
          file=sys.stderr)
    return 0


def _run_web(args) -> int:
    from corpus_miner.synth.web_pages import write_web
    from corpus_miner.synth.web_world import WebParams

    if args.docs is not None and args.tokens is not None:
        raise ParameterError("give --docs or --tokens, not both")
    n_tokens = None
    if args.tokens is not None:
        if not math.isfinite(args.tokens) or args.tokens != int(args.tokens) or args.tokens < 1:
            raise ParameterError(f"--tokens {args.tokens:g}: must be a positive whole number")
        n_tokens = int(args.tokens)
    n_docs = 1000 if args.docs is None and n_tokens is None else args.docs
    params = WebParams(n_sites=args.sites, vocabulary=args.vocabulary,
                       mean_body_words=args.body_words, repost_share=args.reposts,
                       seed=args.seed)
    counts = write_web(args.output, params, n_docs=n_docs, n_tokens=n_tokens)
    print(f"generate: wrote {counts['documents']:,} web pages ({counts['tokens']:,} tokens) to "
          f"{args.output} in {counts['seconds']:.1f} s; {counts['reposts']:,} of them are "
          "edited copies of earlier pages (field repost_of) for dedup to find", file=sys.stderr)
    return 0
