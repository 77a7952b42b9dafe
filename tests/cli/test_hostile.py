"""What a hostile user tries ends in one line and exit 2 (nothing written) or in a counted,
warned tolerance, never in a traceback (issue 10, "other tracebacks"): absurd numbers, text
arguments that are not UTF-8, and odd inputs."""

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
      "-o", "{tmp}/o.jsonl"], "at most 2^28"),
    (["generate", "web", "--vocabulary", "2147483647", "-o", "{tmp}/o.jsonl"], "vocabulary="),
    (["generate", "web", "--sites", "2000000", "-o", "{tmp}/o.jsonl"], "n_sites="),
    (["generate", "web", "--body-words", "65536", "-o", "{tmp}/o.jsonl"], "mean_body_words="),
    (["generate", "web", "--tokens", "nan", "-o", "{tmp}/o.jsonl"], "--tokens nan"),
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


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.mark.parametrize("argv, message", [
    (["stats", ""], "an input name is empty"),
    (["stats", "{tmp}/deep.jsonl"], "line 2: malformed JSON (nested deeper than 100 levels)"),
    (["stats", "{tmp}/twice.parquet"], "more than one column named text"),
    (["clean", "{src}", "--phrases", "{tmp}/cut.jsonl.gz", "-o", "{tmp}/o.jsonl"],
     "cannot read the phrase list"),
    (["clean", "{src}", "--phrases", "{tmp}/latin1.txt", "-o", "{tmp}/o.jsonl"],
     "cannot read the phrase list"),
])
def test_odd_inputs_are_one_line_errors(source, tmp_path, capsys, argv, message):
    import gzip

    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "deep.jsonl").write_text(json.dumps({"text": "ok", "x": _deep(99)}) + "\n"
                                         + json.dumps({"text": "no", "x": _deep(100)}) + "\n")
    pq.write_table(pa.Table.from_arrays([pa.array(["a"]), pa.array(["b"])], ["text", "text"]),
                   tmp_path / "twice.parquet")
    (tmp_path / "cut.jsonl.gz").write_bytes(gzip.compress(b'{"phrase": "a b"}\n')[:15])
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main([a.format(src=source, tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("corpus-miner: error:") and err.count("\n") == 1 and message in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_folders_skip_and_count_what_is_not_a_document(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = tmp_path / "texts"
    texts.mkdir()
    (texts / "a.txt").write_text("a readable document")
    os.mkfifo(texts / "pipe")  # reading it would wait forever
    parts = tmp_path / "parts"
    parts.mkdir()
    pq.write_table(pa.table({"text": ["from parquet"]}), parts / "part-0.parquet")
    (parts / "_SUCCESS").write_text("")  # Spark's marker: expected, not counted
    (parts / "notes.txt").write_text("not a Parquet part")
    assert main(["stats", str(texts), str(parts), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["documents"] == 2
    assert "warning: files skipped 2" in captured.err


def test_group_by_values_that_are_no_urls_and_fields_absent_from_some_batches(tmp_path):
    rows = [{"text": "same words here", "u": v} for v in ("[1, 2]", "http://a.org/x", 5)]
    rows += [{"text": "same words here"}] * 3  # a later batch without the field
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from corpus_miner.corpus import load_corpus
    from corpus_miner.coverage.coverage import Coverage
    from corpus_miner.coverage.report import MISSING_GROUP, CoverageReport
    from corpus_miner.io import read_documents
    from corpus_miner.phrases import BloomSpan

    corpus = load_corpus([path])
    coverage = Coverage.from_miner(BloomSpan(sigma=2, min_length=2).fit(corpus), corpus)
    report = CoverageReport(coverage, group_by="u:host").collect(
        read_documents([path], batch_size=100), corpus.doc_ids)
    groups = {g["group"]: g["documents"] for g in report.groups}
    assert groups == {MISSING_GROUP: 4, "a.org": 1, "5": 1}
