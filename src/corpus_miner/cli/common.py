"""Helpers shared by every subcommand: input arguments, loading a corpus, summary lines."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from corpus_miner.io.locations import rereadable  # noqa: F401 - the commands' helper

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
    add_storage_arguments(parser)


def add_storage_arguments(parser: argparse.ArgumentParser) -> None:
    """--storage-options for the URLs a command reads and writes."""
    parser.add_argument("--storage-options", default=None, metavar="JSON|@FILE",
                        help="options of the storage backends for s3://, gs://, az://, hf:// "
                        "and http(s):// inputs and outputs, as a JSON object or @file.json: "
                        "e.g. '{\"endpoint_url\": \"http://127.0.0.1:9000\"}', "
                        "'{\"anon\": true}', or one table per protocol "
                        "('{\"s3\": {...}, \"gs\": {...}}'); credentials otherwise come from "
                        "the environment and the usual config files")


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
    default = parser.get_default("line_default") or 0
    parser.add_argument("--min-line-length", type=int, default=None, metavar="N",
                        help="also find whole-line phrases: a line of N to --min-length - 1 "
                        "tokens that stands alone (a paragraph of its own) in at least SIGMA "
                        "documents, handled only where it stands alone; 0 for none "
                        + (f"(default {default})" if default else "(the default)"))
    default = parser.get_default("edge_default") or 0
    parser.add_argument("--min-edge-length", type=int, default=None, metavar="N",
                        help="also find edge phrases: N to --min-length - 1 tokens glued at a "
                        "sentence break (. ! ? : then whitespace, or a CJK full stop) to the "
                        "start or end of a paragraph in at least SIGMA documents, handled only "
                        "there; 0 for none "
                        + (f"(default {default})" if default else "(the default)"))


def _length_option(args, option: str, default_name: str, none: str) -> int | None:
    """A --min-...-length option as BloomSpan takes it: the command's default when not given
    (set by the command as `default_name`), None for 0."""
    value = getattr(args, option.lstrip("-").replace("-", "_"))
    if value is None:
        value = getattr(args, default_name, 0)
    if value < 0:
        from corpus_miner.errors import ParameterError

        raise ParameterError(f"{option} {value}: give a number of tokens >= 1, or 0 for {none}")
    return value or None


def min_line_length(args) -> int | None:
    """--min-line-length as BloomSpan takes it: the command's default when not given (set by
    the command as `line_default`), None for 0."""
    return _length_option(args, "--min-line-length", "line_default", "no whole-line phrases")


def min_edge_length(args) -> int | None:
    """--min-edge-length as BloomSpan takes it: the command's default when not given (set by
    the command as `edge_default`), None for 0."""
    return _length_option(args, "--min-edge-length", "edge_default", "no edge phrases")


def add_record_output_argument(parser: argparse.ArgumentParser) -> None:
    """-o OUT for commands that write documents back (clean, dedup, index query), and the
    options of sharded outputs."""
    parser.add_argument("-o", "--output", required=True, metavar="OUT",
                        help="output file: .jsonl, .jsonl.gz or .parquet (written atomically), "
                             "- for JSONL on stdout, or a folder or prefix ending in / for "
                             "part-00000.parquet ... and a _manifest.json; a URL (s3://, gs://, "
                             "az://, hf://) writes there")
    group = parser.add_argument_group("sharded output (-o FOLDER/)")
    group.add_argument("--shards", type=int, default=None, metavar="N",
                       help="write N parts of about equal numbers of input documents")
    group.add_argument("--shard-size", default=None, metavar="SIZE",
                       help="start a new part once one holds SIZE bytes (e.g. 512MB, 1GiB)")
    group.add_argument("--shard-format", default="parquet",
                       choices=("parquet", "jsonl", "jsonl.gz"),
                       help="format of the parts (default: %(default)s)")


def sharded(args: argparse.Namespace) -> bool:
    """Whether the record output is a sharded folder (-o ending in /, --shards, --shard-size)."""
    output = getattr(args, "output", None) or ""
    return bool(getattr(args, "shards", None) is not None
                or getattr(args, "shard_size", None) is not None
                or (output != "-" and output.endswith(("/", os.sep))))


def shard_plan(args: argparse.Namespace, total_rows=None):
    """The ShardPlan of a sharded record output (validated), or None for a single file."""
    if not sharded(args):
        return None
    from corpus_miner.io.formats import ShardPlan
    from corpus_miner.io.locations import parse_size

    size = parse_size(args.shard_size) if args.shard_size is not None else None
    return ShardPlan(args.shards, size, args.shard_format, total_rows).validate()


def corpus_from_args(args: argparse.Namespace, progress: bool = True,
                     lines: bool = True, digest: bool = False,
                     sentences: bool = False) -> TokenCorpus:
    """Read and tokenize the inputs named on the command line (progress bar only on a TTY);
    lines=False keeps no line starts (8 bytes a line that mining without whole-line phrases
    does not use); digest=True keeps the texts digest, for a command whose second read of the
    inputs is checked against it (`clean`, `report`); sentences=True keeps the sentence
    starts (edge phrases)."""
    from corpus_miner.corpus import load_corpus

    corpus = load_corpus(args.inputs, text_field=args.text_field, id_field=args.id_field,
                         skip_bad=args.skip_bad, progress=progress, lines=lines, digest=digest,
                         sentences=sentences)
    note_read_stats(args, corpus.read_stats)
    return corpus


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
