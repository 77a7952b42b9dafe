"""`corpus-miner templates`, `clean --slots / --templates` and `report --slots` through
cli.main: outputs, the safety promises of clean, refusals in one line."""

from __future__ import annotations

import json

import pytest

from corpus_miner.cli import main
from corpus_miner.corpus import token_spans, tokenize
from tests.templates.planted import planted_texts

PARAMS = ["--sigma", "10", "--min-length", "10"]


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    path = tmp_path_factory.mktemp("templates") / "pages.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for i, text in enumerate(planted_texts(seed=2, n_docs=80)):
            out.write(json.dumps({"id": f"p{i}", "text": text, "site": i % 3}) + "\n")
    return path


def _rows(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_templates_command_writes_one_row_per_template(pages, tmp_path, capsys):
    out = tmp_path / "t.jsonl"
    assert main(["templates", str(pages), *PARAMS, "-o", str(out)]) == 0
    rows = _rows(out)
    assert any(r["pattern"].startswith("updated on <month> <num> <num> by") for r in rows)
    for r in rows:
        assert r["df"] >= 10 and r["slots"] and r["examples"]
        assert {"len_hist", "distinct", "top", "type"} <= set(r["slots"][0])
    assert "templates with slots" in capsys.readouterr().err


def test_clean_slots_annotate_keeps_records_and_marks_template_spans(pages, tmp_path):
    plain, slots = tmp_path / "plain.jsonl", tmp_path / "slots.jsonl"
    assert main(["clean", str(pages), *PARAMS, "--mode", "annotate", "-o", str(plain)]) == 0
    assert main(["clean", str(pages), *PARAMS, "--slots", "--mode", "annotate", "-o",
                 str(slots)]) == 0
    before, after = _rows(plain), _rows(slots)
    originals = _rows(pages)
    assert [r["id"] for r in after] == [r["id"] for r in originals]
    for orig, row in zip(originals, after):
        assert row["text"] == orig["text"] and row["site"] == orig["site"]
        for s, e, _pattern in row["junk_patterns"]:
            assert any(a <= int(s) and int(e) <= b for a, b in row["junk_spans"])
    marked = sum(e - s for r in after for s, e in r["junk_spans"])
    assert marked > sum(e - s for r in before for s, e in r["junk_spans"])
    byline = [p for r in after for _, _, p in r["junk_patterns"] if p.startswith("updated on")]
    assert byline


def test_clean_slots_remove_leaves_exactly_the_unhandled_tokens(pages, tmp_path):
    annotated, removed = tmp_path / "a.jsonl", tmp_path / "r.jsonl"
    assert main(["clean", str(pages), *PARAMS, "--slots", "--mode", "annotate", "-o",
                 str(annotated)]) == 0
    assert main(["clean", str(pages), *PARAMS, "--slots", "-o", str(removed)]) == 0
    for ann, rem in zip(_rows(annotated), _rows(removed)):
        starts, ends = token_spans(ann["text"])
        words = tokenize(ann["text"])
        kept = [w for w, s, e in zip(words, starts, ends)
                if not any(a <= s and e <= b for a, b in ann["junk_spans"])]
        assert tokenize(rem["text"]) == kept


def test_a_templates_file_applies_like_mining_in_the_run(pages, tmp_path):
    listed = tmp_path / "t.jsonl"
    assert main(["templates", str(pages), *PARAMS, "-o", str(listed)]) == 0
    mined, applied = tmp_path / "m.jsonl", tmp_path / "f.jsonl"
    assert main(["clean", str(pages), *PARAMS, "--slots", "-o", str(mined)]) == 0
    assert main(["clean", str(pages), *PARAMS, "--templates", str(listed), "-o",
                 str(applied)]) == 0
    assert mined.read_bytes() == applied.read_bytes()


def test_report_lists_each_template_once_with_its_slots(pages, tmp_path):
    js, html = tmp_path / "r.json", tmp_path / "r.html"
    assert main(["report", str(pages), *PARAMS, "--slots", "--json", str(js), "-o",
                 str(html)]) == 0
    data = json.loads(js.read_text(encoding="utf-8"))
    patterns = [r["pattern"] for r in data["templates"]["rows"]]
    assert len(patterns) == len(set(patterns)) == data["templates"]["count"]
    assert data["templates"]["coverage_with_phrases"] >= data["coverage"]
    assert "Templates with slots" in html.read_text(encoding="utf-8")


@pytest.mark.parametrize("extra,message", [
    (["--slots", "--engine", "spark"], "local engine only"),
    (["--slots", "--templates", "x.jsonl"], "use one"),
    (["--slots", "--max-gap", "0"], "max_gap"),
])
def test_refusals_are_one_line(pages, tmp_path, capsys, extra, message):
    code = main(["clean", str(pages), *PARAMS, *extra, "-o", str(tmp_path / "o.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o.jsonl").exists()


def test_a_bad_templates_file_is_refused(pages, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pattern": "a <*> b"}\n', encoding="utf-8")
    code = main(["clean", str(pages), *PARAMS, "--templates", str(bad), "-o",
                 str(tmp_path / "o.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and "max_gap" in err and not (tmp_path / "o.jsonl").exists()


def test_allowed_phrases_are_never_cut_by_a_template_span(pages, tmp_path):
    allow = tmp_path / "allow.txt"
    allow.write_text("page\n", encoding="utf-8")
    out = tmp_path / "a.jsonl"
    assert main(["clean", str(pages), *PARAMS, "--slots", "--allow", str(allow), "--mode",
                 "annotate", "-o", str(out)]) == 0
    seen = 0
    for row in _rows(out):
        starts, ends = token_spans(row["text"])
        for word, s, e in zip(tokenize(row["text"]), starts, ends):
            if word == "page":
                seen += 1
                assert not any(a <= s and e <= b for a, b in row["junk_spans"])
    assert seen
