"""`corpus-miner report` and `corpus-miner clean` through corpus_miner.cli.main(argv)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from corpus_miner.cli import main
from corpus_miner.corpus import load_corpus, tokenize
from tests.coverage.test_clean import MIN_LENGTH, SIGMA, TEMPLATES, web_documents, write_jsonl

PARAMS = ["--sigma", str(SIGMA), "--min-length", str(MIN_LENGTH)]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    docs = web_documents(seed=5)
    # two input files: order and ids must survive across files
    return [write_jsonl(folder / "a.jsonl", docs[:20]), write_jsonl(folder / "b.jsonl", docs[20:])]


def test_report_writes_html_and_json(inputs, tmp_path, capsys):
    html, js = tmp_path / "r.html", tmp_path / "r.json"
    code = main(["report", *map(str, inputs), *PARAMS, "-o", str(html), "--json", str(js),
                 "--group-by", "url:host"])
    assert code == 0
    data = json.loads(js.read_text(encoding="utf-8"))
    corpus = load_corpus(inputs)
    assert (data["documents"], data["tokens"]) == (corpus.n_docs, corpus.n_tokens)
    assert 0 < data["tokens_covered"] < data["tokens"]
    assert data["coverage"] == pytest.approx(data["tokens_covered"] / data["tokens"])
    assert {g["group"] for g in data["groups"]} == set(TEMPLATES)
    assert sum(g["tokens_covered"] for g in data["groups"]) == data["tokens_covered"]
    assert "<svg" in html.read_text(encoding="utf-8")
    err = capsys.readouterr().err
    assert f"{corpus.n_docs:,} documents" in err and "wrote" in err


def test_report_json_to_stdout(inputs, capsys):
    assert main(["report", str(inputs[0]), *PARAMS, "--json", "-"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["documents"] == 20


def test_report_with_reviewed_phrase_list(inputs, tmp_path, capsys):
    listed = tmp_path / "reviewed.txt"
    listed.write_text(TEMPLATES["blog.example.net"][0] + "\nzzz unknown words\n",
                      encoding="utf-8")
    js = tmp_path / "r.json"
    assert main(["report", *map(str, inputs), "--phrases", str(listed), "--json", str(js)]) == 0
    data = json.loads(js.read_text(encoding="utf-8"))
    assert data["source"] == "list" and data["phrases"] == 1
    assert data["hogs_by_psi"][0]["phrase"] == " ".join(tokenize(TEMPLATES["blog.example.net"][0]))
    assert "1 of 2 listed phrases" in capsys.readouterr().err


def test_clean_round_trip_parquet_annotate(inputs, tmp_path):
    out = tmp_path / "annotated.parquet"
    assert main(["clean", *map(str, inputs), *PARAMS, "-o", str(out), "--mode", "annotate"]) == 0
    table = pq.read_table(out)
    docs = web_documents(seed=5)
    assert table.column("id").to_pylist() == [d["id"] for d in docs]
    assert table.column("text").to_pylist() == [d["text"] for d in docs]
    assert any(table.column("junk_spans").to_pylist())


def test_clean_remove_with_phrases_from_a_phrases_run(inputs, tmp_path, capsys):
    phrases = tmp_path / "phrases.jsonl"
    assert main(["phrases", *map(str, inputs), *PARAMS, "-o", str(phrases)]) == 0
    out, stats = tmp_path / "clean.jsonl", tmp_path / "stats.json"
    assert main(["clean", *map(str, inputs), "--phrases", str(phrases), "-o", str(out),
                 "--json", str(stats), "--drop-above", "0.9"]) == 0
    figures = json.loads(stats.read_text(encoding="utf-8"))
    assert figures["documents_written"] == figures["documents"] - figures["documents_dropped"]
    assert figures["documents_dropped"] >= 1  # the all-template document
    cleaned = load_corpus([out])
    mined = [json.loads(line)["phrase"] for line in phrases.read_text().splitlines()]
    for doc in range(cleaned.n_docs):
        text = " " + cleaned.decode(cleaned.doc_tokens(doc)) + " "
        assert not any(f" {p} " in text for p in mined)
    assert "clean:" in capsys.readouterr().err


def test_clean_to_stdout_equals_the_file_output(inputs, tmp_path, capsys):
    out = tmp_path / "clean.jsonl"
    assert main(["clean", *map(str, inputs), *PARAMS, "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["clean", *map(str, inputs), *PARAMS, "-o", "-"]) == 0
    captured = capsys.readouterr()
    assert captured.out == out.read_text(encoding="utf-8") and captured.out
    assert "clean:" in captured.err


@pytest.mark.parametrize("argv, message", [
    (["clean", "{a}", *PARAMS, "-o", "-", "--json", "-"], "stdout"),
    (["clean", "{a}", "--sigma", "1", "-o", "{tmp}/x.jsonl"], "sigma"),
    (["clean", "{a}", "-o", "{tmp}/x.csv"], "x.csv"),
    (["clean", "{a}", "--drop-above", "1.5", "-o", "{tmp}/x.jsonl"], "drop_above"),
    (["clean", "{a}", "--phrases", "{tmp}/missing.jsonl", "-o", "{tmp}/x.jsonl"], "missing"),
    (["report", "{a}", "-o", "{tmp}/x.pdf"], ".html"),
    (["report", "{a}", *PARAMS, "--group-by", "url:path"], "group-by"),
    (["report", "{a}", *PARAMS, "--group-by", "nofield", "--json", "-"], "nofield"),
])
def test_user_errors_are_one_line(inputs, tmp_path, capsys, argv, message):
    argv = [x.format(a=inputs[0], tmp=tmp_path) for x in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("corpus-miner: error:") and "\n" not in err and message in err
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize("argv, offers_saved_corpus", [
    (["clean"], False), (["dedup"], False), (["index", "build"], False),
    (["index", "query"], False),
    (["report"], True), (["phrases"], True), (["stats"], True), (["tokenize"], True),
])
def test_help_offers_a_saved_corpus_only_where_it_is_accepted(capsys, argv, offers_saved_corpus):
    # clean/dedup/index refuse a saved corpus (no original text) but their help offered one
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert ("or one saved corpus folder" in help_text) == offers_saved_corpus


def test_clean_keeps_fields_of_mixed_types_and_non_string_texts(tmp_path, capsys):
    rows = [{"id": 1, "text": "alpha beta gamma delta epsilon unique one", "meta": 1},
            {"id": "b", "text": "alpha beta gamma delta epsilon unique two", "meta": "1"},
            {"id": "c", "text": 42, "meta": [1]},
            {"id": "d", "text": "alpha beta gamma delta epsilon unique three", "meta": None}]
    source = tmp_path / "mixed.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "clean.jsonl"
    assert main(["clean", str(source), "--sigma", "2", "--min-length", "3", "-o", str(out)]) == 0
    cleaned = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in cleaned] == [1, "b", "c", "d"]
    assert [r["meta"] for r in cleaned] == [1, "1", [1], None]
    assert cleaned[2]["text"] == 42  # not a string: left as it was
    assert [cleaned[i]["text"] for i in (0, 1, 3)] == ["one", "two", "three"]
