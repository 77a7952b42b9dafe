"""Absurd numbers and undecodable text on the command line are one-line errors (exit 2, nothing
written), never tracebacks (issue 10, "other tracebacks")."""

from __future__ import annotations

import json
import os

import pytest

from corpus_miner.cli import main

HUGE = str(2**70)
BAD_UTF8 = os.fsdecode(b"\xff")  # how Python hands over argv bytes that are not UTF-8


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": f"a b c d e {i}"}) + "\n"
                            for i in range(6)))
    return path


@pytest.mark.parametrize("argv, message", [
    (["phrases", "{src}", "--min-length", HUGE], "min_length="),
    (["phrases", "{src}", "--sigma", HUGE], "sigma="),
    (["phrases", "{src}", "--filter-bytes", HUGE], "filter_bytes="),
    (["report", "{src}", "--min-length", HUGE], "min_length="),
    (["report", "{src}", "--template-share", "nan"], "template_share"),
    (["report", "{src}", "--top", "-1"], "top must be"),
    (["clean", "{src}", "--sigma", HUGE, "-o", "{tmp}/o.jsonl"], "sigma="),
    (["clean", "{src}", "--drop-above", "inf", "-o", "{tmp}/o.jsonl"], "drop_above"),
    (["generate", "web", "--docs", HUGE, "-o", "{tmp}/o.jsonl"], "n_docs="),
    (["generate", "web", "--docs", "1", "--body-words", HUGE, "-o", "{tmp}/o.jsonl"],
     "mean_body_words="),
    (["generate", "synthetic1", "--words-per-doc", HUGE, "-o", "{tmp}/o.jsonl"],
     "words_per_doc="),
    (["generate", "synthetic2", "--docs", "100000", "--words-per-doc", "100000",
      "-o", "{tmp}/o.jsonl"], "at most 2^32"),
])
def test_absurd_numbers_are_one_line_errors(source, tmp_path, capsys, argv, message):
    assert main([a.format(src=source, tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and message in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


@pytest.mark.parametrize("argv", [
    ["clean", "{src}", "--mode", "mask", "--mask-text", BAD_UTF8, "-o", "{tmp}/o.jsonl"],
    ["report", "{src}", "--title", BAD_UTF8],
    ["stats", "{src}", "--text-field", BAD_UTF8],
    ["generate", "synthetic1", "--phrase", f"a{BAD_UTF8}:2", "-o", "{tmp}/o.jsonl"],
])
def test_text_arguments_that_are_not_utf8_are_usage_errors(source, tmp_path, capsys, argv):
    # such text would end up in an output that cannot hold it (a lone surrogate in Python)
    with pytest.raises(SystemExit) as stop:
        main([a.format(src=source, tmp=tmp_path) for a in argv])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\\xff" in err and "' is not valid UTF-8" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_input_file_names_that_are_not_utf8_reach_reports_readably(tmp_path, source):
    folder = tmp_path / BAD_UTF8
    folder.mkdir()
    (folder / "in.jsonl").write_bytes(source.read_bytes())
    (folder / f"{BAD_UTF8}.txt").write_text("a text whose name is not UTF-8")
    out = tmp_path / "r.json"
    assert main(["report", str(folder / "in.jsonl"), "--json", str(out), "-o",
                 str(tmp_path / "r.html")]) == 0
    assert json.loads(out.read_text())["inputs"] == [f"{tmp_path}/\ufffd/in.jsonl"]
    (folder / "in.jsonl").unlink()
    assert main(["dedup", str(folder), "-o", str(tmp_path / "d.jsonl")]) == 0
    assert json.loads((tmp_path / "d.jsonl").read_text())["id"] == "\ufffd.txt"
