"""Helpers shared by every subcommand: input arguments, loading a corpus, summary lines."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: parsing a command line needs neither numba nor pyarrow
    from corpus_miner.corpus import TokenCorpus
    from corpus_miner.io import ReadStats


def text_argument(value: str) -> str:
    """argparse type of a text option that ends up in outputs (field names, mask text, title):
    bytes that are not UTF-8 reach Python as lone surrogates, which no output can hold."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(value).decode("utf-8", "backslashreplace")
        raise argparse.ArgumentTypeError(f"'{shown}' is not valid UTF-8") from None
    return value


def add_input_arguments(parser: argparse.ArgumentParser, saved_corpus: bool = True) -> None:
    """INPUT... plus --text-field, --id-field, --skip-bad.

    saved_corpus=False for commands that need the original documents (clean, dedup, index),
    so their help does not offer a saved corpus folder they would refuse."""
    formats = ("JSONL (.jsonl, .gz, .zst), Parquet file or folder, folder of text files (one "
               "document per file), '-' for JSONL on stdin")
    parser.add_argument(
        "inputs", nargs="+", metavar="INPUT",
        help=formats + (", or one saved corpus folder" if saved_corpus else
                        " (not a saved corpus folder: it keeps no original text)"))
    parser.add_argument("--text-field", default="text", type=text_argument,
                        help="field holding the document text (default: %(default)s)")
    parser.add_argument("--id-field", default="id", type=text_argument,
                        help="field holding the document id; when absent the 0-based row number "
                             "(default: %(default)s)")
    parser.add_argument("--skip-bad", action="store_true",
                        help="skip malformed JSON lines (counted in the summary) instead of "
                             "failing")


def add_mining_arguments(parser: argparse.ArgumentParser) -> None:
    """--sigma, --min-length, --algorithm: the phrase-mining parameters of phrases/report/clean."""
    from corpus_miner.phrases.params import ALGORITHMS

    parser.add_argument("--sigma", type=int, default=20,
                        help="a phrase is repeated when it occurs in at least SIGMA documents "
                        "(default 20)")
    parser.add_argument("--min-length", type=int, default=10,
                        help="minimum phrase length in tokens (default 10)")
    parser.add_argument("--algorithm", choices=ALGORITHMS, default="auto",
                        help="auto (default: picks one from the data), bloomspan (natural text, "
                        "web pages) or fhk (exact suffix array; dense nested repeats of a few "
                        "words). Same answer.")


def add_record_output_argument(parser: argparse.ArgumentParser) -> None:
    """-o OUT for commands that write documents back (clean, dedup, index query)."""
    parser.add_argument("-o", "--output", required=True, metavar="OUT",
                        help="output file: .jsonl, .jsonl.gz or .parquet (written atomically), "
                             "or - for JSONL on stdout")


def corpus_from_args(args: argparse.Namespace, progress: bool = True) -> TokenCorpus:
    """Read and tokenize the inputs named on the command line (progress bar only on a TTY)."""
    from corpus_miner.corpus import load_corpus

    corpus = load_corpus(args.inputs, text_field=args.text_field, id_field=args.id_field,
                         skip_bad=args.skip_bad, progress=progress)
    note_read_stats(args, corpus.read_stats)
    return corpus


def rereadable(inputs) -> bool:
    """Whether every input can be read a second time: files and folders, not stdin ('-') or a
    pipe such as `<(zcat ...)`, which give their bytes once."""
    for item in inputs:
        if str(item) == "-":
            return False
        try:
            mode = os.stat(item).st_mode
        except OSError:
            continue  # missing: the reader names it
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            return False
    return True


def note_read_stats(args: argparse.Namespace, stats: ReadStats | None) -> None:
    """Remember what the command's first read of its inputs tolerated; main() prints it after
    a successful run (later reads of the same inputs would count the same lines again)."""
    if getattr(args, "read_stats", None) is None:
        args.read_stats = stats


def print_summary(label: str, **values: Any) -> None:
    """One line on stderr: `label: key value, key value`; numbers get thousands separators."""
    parts = [f"{key.replace('_', ' ')} {_format(value)}" for key, value in values.items()]
    print(f"{label}: " + ", ".join(parts), file=sys.stderr)


def print_read_problems(stats: ReadStats | None) -> None:
    """A stderr line for each kind of bad input that was tolerated, so nothing goes unnoticed."""
    problems = stats.problems() if stats is not None else {}
    if problems:
        print_summary("warning", **problems)


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)
