"""`corpus-miner phrases` through corpus_miner.cli.main(argv)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from corpus_miner.cli import main

TOY = ["new laptop acer swift free shipping on orders over 50 dollars",
       "case for iphone 15 Free shipping, on orders over 50 dollars!",
       "free shipping on orders over 50 dollars sony headphones",
       "sony headphones wh 1000 free shipping"]
EXPECTED = {"phrase": "free shipping on orders over 50 dollars", "length": 7, "df": 3,
            "occurrences": 3}


@pytest.fixture
def toy_jsonl(tmp_path):
    path = tmp_path / "toy.jsonl"
    path.write_text("".join(json.dumps({"id": f"D{i + 1}", "text": t}) + "\n"
                            for i, t in enumerate(TOY)), encoding="utf-8")
    return path


@pytest.mark.parametrize("argv, message", [
    (["--sigma", "1"], "sigma=1"), (["--min-length", "1"], "min_length=1"),
    (["--filter-bytes", "3"], "filter_bytes=3"), (["-o", "out.csv"], "unknown output type"),
    (["--algorithm", "fhk", "--filter-bytes", "4096"], "filter_bytes only applies")])
def test_parameter_errors_are_one_line(toy_jsonl, capsys, argv, message):
    assert main(["phrases", str(toy_jsonl), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_unknown_algorithm_is_a_usage_error(toy_jsonl, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["phrases", str(toy_jsonl), "--algorithm", "magic"])
    assert exc.value.code == 2


@pytest.mark.parametrize("algorithm", ["bloomspan", "fhk"])
def test_jsonl_to_stdout_with_summary_and_stats(toy_jsonl, tmp_path, capsys, algorithm):
    stats_path = tmp_path / "stats.json"
    code = main(["phrases", str(toy_jsonl), "--sigma", "3", "--min-length", "5",
                 "--algorithm", algorithm, "--stats", str(stats_path)])
    out, err = capsys.readouterr()
    assert code == 0
    assert [json.loads(line) for line in out.splitlines()] == [EXPECTED]
    assert err.startswith("phrases: 1 phrase of at least 5 tokens, each in at least 3 of 4 "
                          "documents") and f"found by {algorithm}" in err
    stats = json.loads(stats_path.read_text())
    assert stats["algorithm"] == algorithm and stats["phrases"] == 1 and stats["documents"] == 4


@pytest.mark.parametrize("suffix", [".jsonl", ".tsv", ".parquet"])
def test_output_formats(toy_jsonl, tmp_path, capsys, suffix):
    out_path = tmp_path / f"phrases{suffix}"
    assert main(["phrases", str(toy_jsonl), "--sigma", "3", "--min-length", "2",
                 "-o", str(out_path)]) == 0
    assert capsys.readouterr().out == ""
    if suffix == ".jsonl":
        rows = [json.loads(line) for line in out_path.read_text().splitlines()]
    elif suffix == ".tsv":
        header, *lines = out_path.read_text().splitlines()
        rows = [dict(zip(header.split("\t"), line.split("\t"))) for line in lines]
        rows = [{k: (v if k == "phrase" else int(v)) for k, v in r.items()} for r in rows]
    else:
        rows = pq.read_table(out_path).to_pylist()
    assert rows == [EXPECTED]


def test_sigma_above_documents_reports_empty_answer(toy_jsonl, capsys):
    assert main(["phrases", str(toy_jsonl), "--sigma", "9", "--min-length", "2"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "phrases: 0 phrases" in err and "exceeds the 4 documents" in err


def test_missing_input_is_one_line(tmp_path, capsys):
    assert main(["phrases", str(tmp_path / "nope.jsonl"), "--sigma", "2"]) == 2
    err = capsys.readouterr().err
    assert "nope.jsonl" in err and "Traceback" not in err


def test_saved_token_corpus_folder_as_input(toy_jsonl, tmp_path, capsys):
    folder = tmp_path / "toy.corpus"
    assert main(["tokenize", str(toy_jsonl), "-o", str(folder)]) == 0
    capsys.readouterr()
    assert main(["phrases", str(folder), "--sigma", "3", "--min-length", "7"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == [EXPECTED]


def test_min_length_above_every_phrase_gives_empty_output(toy_jsonl, capsys):
    assert main(["phrases", str(toy_jsonl), "--sigma", "3", "--min-length", "8"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "phrases: 0 phrases" in err
