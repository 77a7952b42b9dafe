"""Outputs reached through a symlinked folder, or through ".." after one, are compared with the
inputs where they physically land (issue 22): `elsewhere/link -> corpus/sub` makes
`elsewhere/link/b.jsonl` the input corpus/sub/b.jsonl and `elsewhere/link/new.jsonl` a new file
inside the input folder; `other/lnk/../x.jsonl` is corpus/x.jsonl, not other/x.jsonl."""

from __future__ import annotations

import json
import os

import pytest

from corpus_miner.cli import main
from corpus_miner.errors import OutputError
from corpus_miner.io.overlap import check_apart

TEXT = "cookies help us deliver our services and by using them you agree"


@pytest.fixture
def tree(tmp_path):
    """corpus/a.jsonl and corpus/sub/b.jsonl; elsewhere/link -> corpus/sub; other/lnk ->
    corpus/sub (so other/lnk/.. is corpus, lexically other)."""
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    for name, start in (("a.jsonl", 0), ("sub/b.jsonl", 6)):
        rows = [{"id": i, "text": f"{TEXT} page {i} of its own {i * 7}"} for i in range(start,
                                                                                     start + 6)]
        (corpus / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for folder in ("elsewhere", "other"):
        (tmp_path / folder).mkdir()
    os.symlink(corpus / "sub", tmp_path / "elsewhere" / "link")
    os.symlink(corpus / "sub", tmp_path / "other" / "lnk")
    return tmp_path


def snapshot(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


LINKED = ["elsewhere/link/b.jsonl", "elsewhere/link/new.jsonl", "other/lnk/../x.jsonl",
          "other/lnk/../sub/new.jsonl"]


@pytest.mark.parametrize("output", LINKED)
def test_the_library_check_compares_physical_locations(tree, output, monkeypatch):
    monkeypatch.chdir(tree)
    with pytest.raises(OutputError, match="inside the input folder|same file as the input"):
        check_apart(["corpus"], [output])
    with pytest.raises(OutputError):
        check_apart([str(tree / "corpus")], [str(tree / output)])


def test_lexically_inside_but_physically_apart_is_allowed(tree, monkeypatch):
    """corpus/sub/../../other/x.jsonl is other/x.jsonl: apart from corpus/a.jsonl."""
    monkeypatch.chdir(tree)
    check_apart(["corpus/a.jsonl"], ["corpus/sub/../../other/x.jsonl", "other/lnk/../../y"])


COMMANDS = [
    ["dedup", "corpus", "-o", "{out}"],
    ["clean", "corpus", "--sigma", "3", "--min-length", "4", "-o", "{out}"],
    ["phrases", "corpus", "--sigma", "3", "--min-length", "4", "-o", "{out}"],
]


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_every_command_refuses_a_linked_output_into_its_input(tree, monkeypatch, capsys, engine):
    if engine == "spark":
        pytest.importorskip("pyspark")
    extra = ["--engine", "spark", "--master", "local[1]"] if engine == "spark" else []
    monkeypatch.chdir(tree)
    before = snapshot(tree)
    for command in COMMANDS:
        for output in LINKED:
            argv = [part.format(out=output) for part in command] + extra
            assert main(argv) == 2, argv
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "input" in err, (argv, err)
    assert snapshot(tree) == before
    assert sorted(os.listdir(tree / "corpus" / "sub")) == ["b.jsonl"]
