"""The command-line package has no import circle: every import of one cli module by another,
at module level or inside a function, follows a graph without cycles, and each module imports
alone in a fresh interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import corpus_miner.cli

CLI = Path(corpus_miner.cli.__file__).parent
PACKAGE = "corpus_miner.cli"
MODULES = sorted(f"{PACKAGE}.{p.stem}" if p.stem != "__init__" else PACKAGE
                 for p in CLI.glob("*.py"))


def _imports(module: str) -> set[str]:
    """The cli modules that `module` imports anywhere in its source."""
    path = CLI / ("__init__.py" if module == PACKAGE else module.rsplit(".", 1)[1] + ".py")
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith(PACKAGE))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == PACKAGE:  # `from corpus_miner.cli import engine` or a name
                for alias in node.names:
                    sub = f"{PACKAGE}.{alias.name}"
                    found.add(sub if sub in MODULES else PACKAGE)
            elif node.module.startswith(PACKAGE + "."):
                found.add(node.module)
    return (found & set(MODULES)) - {module}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, or None (depth-first search)."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_circle_in_cli():
    graph = {module: _imports(module) for module in MODULES}
    assert graph[f"{PACKAGE}.report"] >= {f"{PACKAGE}.engine"}  # the walk sees imports
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


@pytest.mark.parametrize("module", MODULES)
def test_each_cli_module_imports_alone(module):
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
