"""The documentation cannot rot: the site builds with `mkdocs build --strict` (when the docs extra
is installed), the generated command-line reference covers every argument of every command, every
example marked runnable (```` ```bash title="runnable" ```` or ```` ```python title="runnable" ````)
in the README and under docs/ runs, and the README keeps CI's test command.

Runnable examples run in a fresh folder holding a small generated web corpus under the names the
docs use (`crawl.jsonl.gz`, `demo/web.jsonl.gz`), with the quick start's `--docs 5000` shrunk to
`--docs 300` (small data, seconds per example).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_miner.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
RUNNABLE = re.compile(r'^```(bash|python) title="runnable"\n(.*?)^```', re.M | re.S)
SMALLER = {"--docs 5000": "--docs 300"}


def _pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _runnable_blocks():
    for path in _pages():
        for k, match in enumerate(RUNNABLE.finditer(path.read_text(encoding="utf-8"))):
            yield pytest.param(match.group(1), match.group(2),
                               id=f"{path.relative_to(ROOT)}#{k}")


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory) -> Path:
    from corpus_miner.synth.web_pages import write_web
    from corpus_miner.synth.web_world import WebParams

    path = tmp_path_factory.mktemp("docs-data") / "crawl.jsonl.gz"
    write_web(path, WebParams(n_sites=5, vocabulary=5000, mean_body_words=150), n_docs=300)
    return path


def test_there_are_runnable_examples():
    ids = [p.id for p in _runnable_blocks()]
    assert any(i.startswith("README.md") for i in ids) and any(i.startswith("docs/") for i in ids)


@pytest.mark.parametrize("language, code", list(_runnable_blocks()))
def test_runnable_example(language, code, small_corpus, tmp_path):
    for big, small in SMALLER.items():
        code = code.replace(big, small)
    (tmp_path / "demo").mkdir()
    shutil.copy(small_corpus, tmp_path / "crawl.jsonl.gz")
    shutil.copy(small_corpus, tmp_path / "demo" / "web.jsonl.gz")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    argv = (["bash", "-euo", "pipefail", "-c", code] if language == "bash"
            else [sys.executable, "-c", code])
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"{code}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"


def _load_hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "tools" / "docs_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _commands(parser: argparse.ArgumentParser, path: str):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, f"{path} {name}")


def test_cli_reference_lists_every_argument_of_every_command():
    text = _load_hooks().cli_reference_markdown()
    commands = list(_commands(build_parser(), "corpus-miner"))[1:]
    assert len(commands) >= 9
    for path, parser in commands:
        assert f"`{path}`" in text, path
        section = text[text.index(f"`{path}`"):]
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue  # its commands have sections of their own
            names = action.option_strings or [action.metavar or action.dest]
            for name in names:
                assert f"`{name}`" in section, (path, name)


def test_site_builds_strict(tmp_path):
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason="the docs extra is not installed")
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f",
                           str(ROOT / "mkdocs.yml"), "-d", str(site)],
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "corpus-miner phrases" in cli and "--min-length" in cli
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert "BloomSpan" in api and "SparkLSHBloom" in api
    assert (site / "benchmarks" / "results" / "bench_mine_1b.png").exists()


def test_readme_keeps_the_two_setup_commands_and_ci_runs_its_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    blocks = re.findall(r"^```bash\n(.*?)^```", readme, re.M | re.S)
    commands = [line for block in blocks for line in block.splitlines()]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = 'pip install -e ".[test]" && python -m pytest -q'
    assert test_command in commands and test_command in ci.splitlines()
    assert any(c.startswith("pip install -e . && corpus-miner generate web") for c in commands)


@pytest.mark.parametrize("path", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_pages_name_no_paths_of_our_machines(path):
    text = path.read_text(encoding="utf-8")
    assert "/work/" not in text and "shared/" not in text
