"""The output plan: no command may write over one of its inputs, and every output is checked
before any is written (issue 10, "an output that is also an input destroys the input")."""

from __future__ import annotations

import json
import os
import sys

import pytest

from corpus_miner.cli import main
from corpus_miner.corpus import load_corpus
from corpus_miner.coverage.clean import Cleaner
from corpus_miner.coverage.coverage import Coverage
from corpus_miner.errors import OutputError
from corpus_miner.io import read_documents, write_records
from corpus_miner.io.overlap import check_apart
from corpus_miner.phrases.miner import BloomSpan

TEXT = "cookies help us deliver our services and by using them you agree"
ROWS = [{"id": i, "text": f"{TEXT} page {i} words of its own number {i * 7}"} for i in range(12)]
MINING = ["--sigma", "3", "--min-length", "4"]


@pytest.fixture
def area(tmp_path):
    """in.jsonl (+ a hard link and a symlink to it, and hard.html for report's -o), a text
    folder docs/, a phrase list and an index built from in.jsonl."""
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    os.link(source, tmp_path / "hard.jsonl")
    os.link(source, tmp_path / "hard.html")
    os.symlink(source, tmp_path / "sym.jsonl")
    (tmp_path / "docs").mkdir()
    for i, row in enumerate(ROWS[:4]):
        (tmp_path / "docs" / f"{i}.txt").write_text(row["text"], encoding="utf-8")
    (tmp_path / "phrases.jsonl").write_text(json.dumps({"phrase": TEXT}) + "\n")
    assert main(["index", "build", str(source), "-o", str(tmp_path / "idx")]) == 0
    return tmp_path


REFUSED = [
    # (argv, what the one-line error names)
    (["phrases", "{t}/in.jsonl", *MINING, "-o", "{t}/in.jsonl"], "same file as the input"),
    (["phrases", "{t}/in.jsonl", *MINING, "-o", "{t}/hard.jsonl"], "same file as the input"),
    (["phrases", "{t}/in.jsonl", *MINING, "-o", "{t}/sym.jsonl"], "same file as the input"),
    (["phrases", "{t}/in.jsonl", *MINING, "--stats", "{t}/in.jsonl"], "same file as the input"),
    (["phrases", "{t}/docs", *MINING, "-o", "{t}/docs/phrases.tsv"], "inside the input folder"),
    (["report", "{t}/in.jsonl", *MINING, "--json", "{t}/in.jsonl"], "same file as the input"),
    (["report", "{t}/in.jsonl", *MINING, "-o", "{t}/hard.html"], "same file as the input"),
    (["report", "{t}/in.jsonl", "--phrases", "{t}/phrases.jsonl", "--json",
      "{t}/phrases.jsonl"], "same file as the input"),
    (["clean", "{t}/in.jsonl", *MINING, "-o", "{t}/in.jsonl"], "same file as the input"),
    (["clean", "{t}/in.jsonl", *MINING, "-o", "{t}/o.jsonl", "--json", "{t}/sym.jsonl"],
     "same file as the input"),
    (["clean", "{t}/in.jsonl", "--phrases", "{t}/phrases.jsonl", "-o", "{t}/phrases.jsonl"],
     "same file as the input"),
    (["clean", "{t}/in.jsonl", *MINING, "--allow", "{t}/phrases.jsonl", "-o",
      "{t}/phrases.jsonl"], "same file as the input"),
    (["clean", "{t}/docs", *MINING, "-o", "{t}/docs/clean.jsonl"], "inside the input folder"),
    (["dedup", "{t}/in.jsonl", "-o", "{t}/hard.jsonl"], "same file as the input"),
    (["dedup", "{t}/docs", "-o", "{t}/o.jsonl", "--save-index", "{t}/docs/idx"],
     "inside the input folder"),
    (["dedup", "{t}/docs", "-o", "{t}/docs/unique.jsonl"], "inside the input folder"),
    (["tokenize", "{t}/docs", "-o", "{t}/docs/corpus"], "inside the input folder"),
    (["tokenize", "{t}/docs", "-o", "{t}/docs"], "not a corpus-miner output"),
    (["index", "build", "{t}/docs", "-o", "{t}/docs/idx"], "inside the input folder"),
    (["index", "query", "{t}/idx", "{t}/in.jsonl", "-o", "{t}/sym.jsonl"],
     "same file as the input"),
    (["index", "query", "{t}/idx", "{t}/in.jsonl", "-o", "{t}/idx/new.jsonl"],
     "inside the input folder"),
    # every output is checked before any is written
    (["dedup", "{t}/in.jsonl", "-o", "{t}/o.jsonl", "--save-index", "{t}/docs"],
     "not a corpus-miner output"),
    (["clean", "{t}/in.jsonl", *MINING, "-o", "{t}/o.jsonl", "--json", "{t}/docs"],
     "is a folder"),
    (["clean", "{t}/in.jsonl", *MINING, "-o", "{t}/o.jsonl", "--json", "{t}/o.jsonl"],
     "name the same file"),
    (["clean", "{t}/in.jsonl", *MINING, "-o", "-", "--json", "-"], "both write to stdout"),
    (["phrases", "{t}/in.jsonl", *MINING, "--stats", "-"], "cannot go to stdout"),
    (["dedup", "{t}/in.jsonl", "-o", "{t}/in.jsonl/x.jsonl"], "is not a folder"),
    (["generate", "web", "-o", "{t}/docs"], "not a corpus-miner output"),  # not Parquet parts
    (["generate", "web", "-o", "{t}/pages.txt"], "or a folder name (no suffix) for Parquet"),
]


@pytest.mark.parametrize("argv, message", REFUSED, ids=lambda v: " ".join(v)[:60]
                         if isinstance(v, list) else None)
def test_an_output_that_is_an_input_is_refused_before_any_work(area, capsys, snapshot, argv,
                                                                message):
    before = snapshot(area)
    assert main([a.format(t=area) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("corpus-miner: error:") and err.count("\n") == 1
    assert message in err
    assert snapshot(area) == before  # nothing written, nothing replaced, no temporary file


def test_stdout_and_stdin_that_are_input_files_are_refused(area, monkeypatch, capsys, snapshot):
    before = snapshot(area)
    with open(area / "in.jsonl", "a", encoding="utf-8") as appending:  # `>> in.jsonl`
        monkeypatch.setattr(sys, "stdout", appending)
        assert main(["dedup", str(area / "in.jsonl"), "-o", "-"]) == 2
        assert main(["stats", str(area / "sym.jsonl")]) == 2
    monkeypatch.undo()
    with open(area / "in.jsonl", "rb") as reading:  # `< in.jsonl`
        monkeypatch.setattr(sys, "stdin", reading)
        assert main(["dedup", "-", "-o", str(area / "hard.jsonl")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("corpus-miner: error: stdout: is the same file as the input")
    assert err[2].startswith(f"corpus-miner: error: {area / 'hard.jsonl'}: is the same file "
                             "as the input stdin")
    assert snapshot(area) == before


def test_outputs_apart_from_the_inputs_are_written(area, capsys):
    # the refusals above are not a matter of names: the same commands elsewhere succeed
    assert main(["clean", str(area / "in.jsonl"), *MINING, "-o", str(area / "out" / "c.jsonl"),
                 "--json", str(area / "out" / "c.json")]) == 0
    assert main(["dedup", str(area / "in.jsonl"), "-o", str(area / "out" / "u.jsonl"),
                 "--save-index", str(area / "out" / "idx")]) == 0
    assert main(["tokenize", str(area / "docs"), "-o", str(area / "corpus")]) == 0
    assert sorted(os.listdir(area / "out")) == ["c.json", "c.jsonl", "idx", "u.jsonl"]


def test_library_writers_refuse_their_inputs_too(area, snapshot):
    source = str(area / "in.jsonl")
    corpus = load_corpus([source])
    coverage = Coverage.from_miner(BloomSpan(sigma=3, min_length=4).fit(corpus), corpus)
    before = snapshot(area)
    with pytest.raises(OutputError, match="same file as the input"):
        Cleaner().fit(corpus, coverage).write(source, area / "hard.jsonl")
    with pytest.raises(OutputError, match="same file as the input"):
        write_records(read_documents([area / "sym.jsonl"]), area / "in.jsonl")
    with pytest.raises(OutputError, match="inside the input folder"):
        check_apart([area / "docs"], [area / "docs" / "sub" / "x.jsonl"])
    with pytest.raises(OutputError, match="holds the input"):
        check_apart([area / "idx" / "metadata.json"], [area / "idx"])
    assert snapshot(area) == before
