"""Coverage report: JSON figures, groups, example contexts, self-contained HTML, atomic writes."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from corpus_miner.corpus import load_corpus, tokenize
from corpus_miner.coverage.coverage import Coverage
from corpus_miner.coverage.report import CoverageReport, host_of, parse_group_by
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.io import read_documents
from corpus_miner.phrases import BloomSpan
from tests.coverage.test_clean import MIN_LENGTH, SIGMA, web_documents, write_jsonl


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    docs = web_documents(seed=3)
    del docs[10]["url"]  # a record without the group field
    path = write_jsonl(tmp_path_factory.mktemp("web") / "web.jsonl", docs)
    corpus = load_corpus([path])
    coverage = Coverage.from_miner(BloomSpan(sigma=SIGMA, min_length=MIN_LENGTH).fit(corpus),
                                   corpus)
    report = CoverageReport(coverage, top=10, examples=2, group_by="url:host",
                            inputs=[str(path)])
    report.collect(read_documents([path]), corpus.doc_ids)
    report.path = path
    return docs, corpus, coverage, report


def test_json_figures_match_the_coverage(web):
    docs, corpus, coverage, report = web
    data = json.loads(json.dumps(report.to_dict()))
    assert data["documents"] == len(docs) == corpus.n_docs
    assert data["tokens"] == corpus.n_tokens
    assert data["tokens_covered"] == int(coverage.covered.sum()) > 0
    assert data["coverage"] == pytest.approx(data["tokens_covered"] / data["tokens"])
    assert sum(data["document_share_histogram"]["documents"]) == corpus.n_docs
    assert data["template_documents"] == int(np.sum(coverage.doc_share >= 0.9))
    assert data["template_document_examples"][0]["doc"] == "doc-all-template"
    covered_rows = data["hogs_by_tokens_covered"]
    assert [r["tokens_covered"] for r in covered_rows] == sorted(
        (r["tokens_covered"] for r in covered_rows), reverse=True)
    assert [r["psi"] for r in data["hogs_by_psi"]] == sorted(
        (r["psi"] for r in data["hogs_by_psi"]), reverse=True)


def test_groups_partition_the_corpus(web):
    docs, corpus, coverage, report = web
    groups = {g["group"]: g for g in report.to_dict()["groups"]}
    assert set(groups) == {"shop.example.com", "news.example.org", "blog.example.net",
                           "(missing)"}
    assert sum(g["documents"] for g in groups.values()) == corpus.n_docs
    assert sum(g["tokens"] for g in groups.values()) == corpus.n_tokens
    assert sum(g["tokens_covered"] for g in groups.values()) == coverage.tokens_covered
    assert groups["(missing)"]["documents"] == 1
    shop = [i for i, d in enumerate(docs) if "shop.example.com" in d.get("url", "")]
    assert groups["shop.example.com"]["tokens_covered"] == int(coverage.doc_covered[shop].sum())


def test_examples_are_original_text_of_the_phrase(web):
    docs, _, coverage, report = web
    by_id = {d["id"]: d["text"] for d in docs}
    rows = report.to_dict()["hogs_by_psi"]
    assert rows and all(row["examples"] for row in rows)
    for row in rows:
        assert len({ex["doc"] for ex in row["examples"]}) == len(row["examples"]) <= 2
        for ex in row["examples"]:
            assert tokenize(ex["match"]) == tokenize(row["phrase"])
            assert ex["match"] in re.sub(r"\s+", " ", by_id[ex["doc"]])


def test_html_is_self_contained_and_escaped(web, tmp_path):
    _, _, _, report = web
    out = tmp_path / "report.html"
    report.write_html(out)
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert "<script" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "<link" not in html
    assert "<svg" in html and "shop.example.com" in html
    assert "Biggest hogs" in html and "<mark>" in html
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
    hostile = CoverageReport(report.coverage, title="<script>alert(1)</script>").to_html()
    assert "<script" not in hostile and "&lt;script&gt;alert(1)&lt;/script&gt;" in hostile


def test_interrupted_html_write_leaves_nothing(web, tmp_path, monkeypatch):
    _, _, _, report = web

    def broken(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(CoverageReport, "to_html", broken)
    with pytest.raises(KeyboardInterrupt):
        report.write_html(tmp_path / "r.html")
    assert list(tmp_path.iterdir()) == []


def test_terminal_summary_has_the_headline(web):
    _, corpus, coverage, report = web
    text = report.terminal_summary()
    assert f"{corpus.n_docs:,} documents" in text
    assert f"{100 * coverage.share:.1f}%" in text and "group shop.example.com" in text


def test_report_without_second_pass_and_on_empty_coverage():
    from tests.coverage.test_coverage import make_corpus

    corpus = make_corpus([[1, 2, 3], [4, 5, 6]])
    coverage = Coverage.from_phrases(corpus, BloomSpan(sigma=2, min_length=2).fit(
        corpus).phrases_, 2, 2)
    data = CoverageReport(coverage).to_dict()
    assert (data["tokens_covered"], data["coverage"], data["groups"]) == (0, 0.0, None)
    assert "No repeated phrases" in CoverageReport(coverage).to_html()


def test_group_by_parsing_and_hosts(web):
    assert parse_group_by("url:host") == ("url", True)
    assert parse_group_by("site") == ("site", False)
    with pytest.raises(ParameterError):
        parse_group_by("url:path")
    assert host_of("https://WWW.Example.com:8080/a?b") == "www.example.com"
    assert host_of("example.org/path") == "example.org"
    assert host_of("") == "(missing)"
    assert host_of("/relative/only") == "(missing)"
    docs, corpus, coverage, _ = web
    report = CoverageReport(coverage, group_by="nope")
    with pytest.raises(InputError, match="nope"):
        report.collect(read_documents([web[3].path]), corpus.doc_ids)


def test_group_by_a_mixed_type_field_uses_the_original_values():
    from corpus_miner.coverage.report import MISSING_GROUP, _group_values
    from corpus_miner.io.jsonl import _rows_to_table

    records = _rows_to_table([{"text": "a", "site": "x.org"}, {"text": "b", "site": 7},
                              {"text": "c"}])
    assert _group_values(records, "site", False) == ["x.org", "7", MISSING_GROUP]
