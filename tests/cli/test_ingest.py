"""`corpus-miner stats` and `tokenize` through `corpus_miner.cli.main(argv)`."""

from __future__ import annotations

import json

import pytest

from corpus_miner.cli import main
from corpus_miner.corpus import TokenCorpus

ROWS = [{"id": "a", "text": "Hello hello world"}, {"id": "b", "text": "World peace"}]


@pytest.fixture
def docs(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def test_stats_json(docs, capsys):
    assert main(["stats", str(docs), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert {k: figures[k] for k in ("documents", "tokens", "vocabulary", "bytes")} == {
        "documents": 2, "tokens": 5, "vocabulary": 3, "bytes": 28}
    assert figures["seconds"] >= 0 and figures["null_texts"] == 0


def test_stats_text(docs, capsys):
    assert main(["stats", str(docs)]) == 0
    out = capsys.readouterr().out
    assert "documents" in out and "tokens per second" in out
    assert [line.split()[-1] for line in out.splitlines()[:3]] == ["2", "5", "3"]


def test_tokenize_then_stats_on_saved_folder(docs, tmp_path, capsys):
    out_dir = tmp_path / "tok"
    assert main(["tokenize", str(docs), "-o", str(out_dir)]) == 0
    assert "tokenized into" in capsys.readouterr().err
    corpus = TokenCorpus.load(out_dir)
    assert list(corpus.doc_ids) == ["a", "b"] and corpus.decode(corpus.doc_tokens(0)) == \
        "hello hello world"
    assert main(["stats", str(out_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tokens"] == 5


def test_missing_file_exits_2_with_one_line(tmp_path, capsys):
    assert main(["stats", str(tmp_path / "nope.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err == f"corpus-miner: error: {tmp_path / 'nope.jsonl'}: no such file or directory\n"


def test_malformed_line_exits_2_unless_skipped(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "ok"}\n{"text": oops}\n')
    assert main(["stats", str(path)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl: line 2: malformed JSON" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert main(["stats", str(path), "--skip-bad", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["bad_lines_skipped"] == 1
    assert main(["stats", str(path), "--skip-bad"]) == 0
    assert "warning: bad lines skipped 1" in capsys.readouterr().err


def test_missing_text_field_exits_2(docs, capsys):
    assert main(["stats", str(docs), "--text-field", "body"]) == 2
    assert "no field 'body' (fields: id, text)" in capsys.readouterr().err


def test_usage_errors_and_help(capsys):
    with pytest.raises(SystemExit) as info:
        main(["stats"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["tokenize", "x.jsonl"])  # -o is required
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["stats", "--help"])
    assert info.value.code == 0
    assert "--text-field" in capsys.readouterr().out
