"""`corpus-miner generate synthetic1|synthetic2|web -o OUT.jsonl`: corpora with known structure."""

from __future__ import annotations

import argparse
import sys

from corpus_miner.errors import ParameterError


def _phrase_with_support(value: str) -> tuple[str, int]:
    text, sep, support = value.rpartition(":")
    if not sep or not text.strip() or not support.strip().isdigit():
        raise argparse.ArgumentTypeError(f"{value!r}: expected 'PHRASE TEXT:SUPPORT', e.g. "
                                         "'a third sentence:4'")
    return text.strip(), int(support)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "generate", help="write a synthetic corpus (JSONL rows with id and text)",
        description="Write a synthetic corpus as JSONL (id, text). synthetic1: the BloomSpan "
        "article's unique-word background with inserted phrases (known answer); synthetic2: dense "
        "nested overlaps; web: Zipfian pages with site templates and variable parts.")
    parser.add_argument("kind", choices=("synthetic1", "synthetic2", "web"))
    parser.add_argument("-o", "--output", required=True, help="output file (.jsonl or .jsonl.gz)")
    parser.add_argument("--docs", type=int, default=1000, help="number of documents (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--words-per-doc", type=int, default=None,
                        help="background words per document (synthetic1: 5000, synthetic2: 1000)")
    parser.add_argument("--phrase", action="append", type=_phrase_with_support, metavar="TEXT:SUPPORT",
                        help="synthetic1: phrase to insert into SUPPORT documents (repeatable; "
                        "default: the article's three phrases)")
    parser.add_argument("--families", type=int, default=3, help="synthetic2: family sequences")
    parser.add_argument("--family-length", type=int, default=40, help="synthetic2: family length")
    parser.add_argument("--windows-per-doc", type=int, default=20,
                        help="synthetic2: family windows inserted per document")
    parser.add_argument("--max-window", type=int, default=None,
                        help="synthetic2: longest window (default family length / 2)")
    parser.add_argument("--sites", type=int, default=50, help="web: number of sites")
    parser.add_argument("--vocabulary", type=int, default=50000, help="web: vocabulary size")
    parser.add_argument("--body-words", type=int, default=400, help="web: mean body length")
    parser.set_defaults(handler=run)


def run(args) -> int:
    from corpus_miner import synth

    if not args.output.lower().endswith((".jsonl", ".jsonl.gz")):
        raise ParameterError(f"{args.output}: the output must end in .jsonl or .jsonl.gz")
    if args.kind == "synthetic1":
        words = 5000 if args.words_per_doc is None else args.words_per_doc  # 0 is an error
        docs = synth.synthetic1(args.docs, words,
                                args.phrase or synth.ARTICLE_PHRASES, seed=args.seed)
    elif args.kind == "synthetic2":
        words = 1000 if args.words_per_doc is None else args.words_per_doc
        docs = synth.synthetic2(args.docs, words, n_families=args.families,
                                family_length=args.family_length,
                                windows_per_doc=args.windows_per_doc,
                                max_window=args.max_window, seed=args.seed)
    else:
        docs = synth.web(args.docs, n_sites=args.sites, vocabulary=args.vocabulary,
                         mean_body_words=args.body_words, seed=args.seed)
    synth.write_jsonl(docs, args.output, id_prefix=args.kind)
    tokens = sum(len(d) for d in docs)
    print(f"wrote {len(docs)} documents, {tokens} tokens to {args.output}", file=sys.stderr)
    return 0
