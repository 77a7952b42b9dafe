"""`corpus-miner stats` and `corpus-miner tokenize`: read and tokenize, report or save."""

from __future__ import annotations

import argparse
import json
import time

from corpus_miner.cli.common import add_input_arguments, note_read_stats, print_summary
from corpus_miner.cli.outputs import STDOUT, Output
from corpus_miner.io.atomic import write_text


def register(subparsers) -> None:
    stats = subparsers.add_parser(
        "stats", help="count documents, tokens and vocabulary of a corpus",
        description="Read and tokenize INPUT... and print documents, tokens, vocabulary, bytes, "
                    "seconds and tokens/s (plus counts of tolerated bad input).")
    add_input_arguments(stats)
    stats.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    stats.set_defaults(handler=run_stats, outputs=(STDOUT,))

    tokenize = subparsers.add_parser(
        "tokenize", help="tokenize a corpus and save it as a folder for later commands",
        description="Read and tokenize INPUT... and save the token corpus (memory-mappable raw "
                    "arrays + metadata.json) to DIR; later commands accept DIR as their input.")
    add_input_arguments(tokenize)
    tokenize.add_argument("-o", "--output", required=True, metavar="DIR",
                          help="folder to write (replaced atomically if it exists)")
    tokenize.add_argument("--sentences", action="store_true",
                          help="also keep which tokens follow a sentence break (8 bytes each), "
                          "so that --min-edge-length can be used on DIR")
    tokenize.set_defaults(handler=run_tokenize, outputs=(Output("output", "-o", folder=True),))


def _figures(corpus, seconds: float) -> dict:
    stats = corpus.read_stats
    figures = {
        "documents": corpus.n_docs,
        "tokens": corpus.n_tokens,
        "vocabulary": corpus.n_vocab,
        "bytes": stats.bytes if stats else None,
        "seconds": round(seconds, 4),
        "tokens_per_second": round(corpus.n_tokens / seconds) if seconds > 0 else None,
    }
    if stats is not None:
        figures.update(files=stats.files, **{name: getattr(stats, name)
                                             for name in stats.PROBLEMS})
    return figures


def run_stats(args: argparse.Namespace) -> int:
    from corpus_miner.corpus.build import count_corpus

    start = time.perf_counter()
    # counted as it streams: the token ids are not kept
    corpus = count_corpus(args.inputs, text_field=args.text_field, id_field=args.id_field,
                          skip_bad=args.skip_bad, progress=True)
    seconds = time.perf_counter() - start
    note_read_stats(args, corpus.read_stats)
    figures = _figures(corpus, seconds)
    if args.json:
        write_text("-", json.dumps(figures) + "\n")
        return 0
    width = max(len(k) for k in figures)
    lines = [f"{key.replace('_', ' '):<{width}}  "
             + (f"{value:,}" if isinstance(value, int) else f"{value:,.3f}")
             for key, value in figures.items() if value is not None]
    write_text("-", "\n".join(lines) + "\n")
    return 0


def run_tokenize(args: argparse.Namespace) -> int:
    from corpus_miner.corpus.build import save_corpus

    start = time.perf_counter()
    # streamed into the folder: memory does not grow with the corpus
    corpus = save_corpus(args.inputs, args.output, text_field=args.text_field,
                         id_field=args.id_field, skip_bad=args.skip_bad, progress=True,
                         sentences=args.sentences)
    seconds = time.perf_counter() - start
    note_read_stats(args, corpus.read_stats)
    print_summary(f"tokenized into {args.output}", documents=corpus.n_docs,
                  tokens=corpus.n_tokens, vocabulary=corpus.n_vocab, seconds=seconds)
    return 0
