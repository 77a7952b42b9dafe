"""The argument parser of every command: each command module registers its subcommands, and
only the module of the command asked for is imported."""

from __future__ import annotations

import argparse
import importlib

from corpus_miner import __version__

# The module that registers each command: `register(subparsers)` sets `handler` via set_defaults.
# Only the module of the command asked for is imported, so that a command's start-up does not pay
# for the other commands' imports; without a known command (--help, a typo) all are.
_COMMANDS = {
    "stats": "corpus_miner.cli.ingest",
    "tokenize": "corpus_miner.cli.ingest",
    "phrases": "corpus_miner.cli.phrases",
    "templates": "corpus_miner.cli.templates",
    "report": "corpus_miner.cli.report",
    "clean": "corpus_miner.cli.report",
    "dedup": "corpus_miner.cli.dedup",
    "index": "corpus_miner.cli.dedup",
    "generate": "corpus_miner.cli.generate",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors: one line, exit 2 (argparse default too)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or with `argv`, of the command it names (when it names one)."""
    parser = _Parser(
        prog="corpus-miner",
        description="Find what is repeated in large text corpora (maximal frequent phrases, "
        "near-duplicate documents) and remove it.",
    )
    parser.add_argument("--version", action="version", version=f"corpus-miner {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    command = next((arg for arg in argv or () if not arg.startswith("-")), None)
    modules = dict.fromkeys([_COMMANDS[command]] if command in _COMMANDS else _COMMANDS.values())
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # capability not built yet
                continue
            raise
        module.register(subparsers)
    return parser
