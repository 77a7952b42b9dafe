"""Command line: `corpus-miner SUBCOMMAND ...`. Thin: parse flags, call the library, print.

Each capability registers its subcommands from its own module in this package; user errors
(CorpusMinerError) become one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from corpus_miner import __version__
from corpus_miner.errors import CorpusMinerError

# Modules that define `register(subparsers)`; each sets `handler` via set_defaults(handler=fn).
_COMMAND_MODULES = (
    "corpus_miner.cli.ingest",
    "corpus_miner.cli.phrases",
    "corpus_miner.cli.report",
    "corpus_miner.cli.dedup",
    "corpus_miner.cli.generate",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors: one line, exit 2 (argparse default too)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="corpus-miner",
        description="Find what is repeated in large text corpora (maximal frequent phrases, "
        "near-duplicate documents) and remove it.",
    )
    parser.add_argument("--version", action="version", version=f"corpus-miner {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # capability not built yet
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.handler(args) or 0)
    except CorpusMinerError as exc:
        print(f"corpus-miner: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("corpus-miner: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `corpus-miner phrases ... | head`
        return 0


def entry_point() -> None:
    sys.exit(main())
