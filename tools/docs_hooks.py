"""MkDocs hooks of the documentation site (mkdocs.yml `hooks:`).

- The command-line reference (docs/reference/cli.md) is generated from the argparse parsers of
  `corpus_miner.cli.build_parser()` at every build, so it cannot drift from the code.
- The changelog page shows CHANGELOG.md, the benchmark pages' plots and CSV tables are served
  from benchmarks/results/ (as benchmarks/results/NAME), so neither is copied into docs/.
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI_MARKER = "<!-- generated: cli reference -->"
CHANGELOG_MARKER = "<!-- generated: changelog -->"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found += list(action.choices.items())
    return found


def _option_rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if action.option_strings:
            name = ", ".join(f"`{s}`" for s in action.option_strings)
            if action.nargs != 0:
                name += f" `{action.metavar or action.dest.upper()}`"
        else:
            name = f"`{action.metavar or action.dest}`"
        if action.choices and not isinstance(action.choices, dict):
            name += " (" + ", ".join(f"`{c}`" for c in action.choices) + ")"
        default = ""
        if action.option_strings and action.default not in (None, False, argparse.SUPPRESS):
            default = f"`{action.default}`"
        help_text = (action.help or "") if action.help != argparse.SUPPRESS else ""
        if "%(" in help_text:
            help_text = help_text % vars(action)
        rows.append(f"| {name} | {_cell(help_text)} | {default} |")
    return rows


def _command_markdown(path: str, parser: argparse.ArgumentParser, level: int) -> list[str]:
    lines = [f"{'#' * level} `{path}`", ""]
    if parser.description:
        lines += [" ".join(parser.description.split()), ""]
    usage = " ".join(parser.format_usage().split())
    lines += ["```text", usage.removeprefix("usage: "), "```", ""]
    rows = _option_rows(parser)
    if rows:
        lines += ["| argument | meaning | default |", "|---|---|---|", *rows, ""]
    for name, sub in _subcommands(parser):
        lines += _command_markdown(f"{path} {name}", sub, level + 1)
    return lines


def cli_reference_markdown() -> str:
    """Markdown of every command of `corpus-miner`: description, usage, and one row per
    argument (names, meaning, default), in the order the parsers declare them."""
    from corpus_miner.cli import build_parser

    parser = build_parser()
    parser.prog = "corpus-miner"
    lines = []
    for name, sub in _subcommands(parser):
        lines += _command_markdown(f"corpus-miner {name}", sub, 2)
    return "\n".join(lines)


def on_files(files, config):
    from mkdocs.structure.files import File

    for path in sorted((ROOT / "benchmarks" / "results").iterdir()):
        if path.suffix in (".png", ".csv"):
            files.append(File.generated(config, f"benchmarks/results/{path.name}",
                                        abs_src_path=str(path)))
    return files


def on_page_markdown(markdown, page, config, files):
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference_markdown())
    if CHANGELOG_MARKER in markdown:
        text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
        markdown = markdown.replace(CHANGELOG_MARKER, text.split("\n", 1)[1])
    return markdown
