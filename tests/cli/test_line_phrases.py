"""Whole-line phrases through the CLI: `phrases --min-line-length`, the default of `report` and
`clean`, phrase files that keep the flag, and a saved corpus of the previous folder version."""

from __future__ import annotations

import json
import random

import pytest

from corpus_miner.cli import main

SHORT = ["Share this: Twitter Facebook", "Posted in Tutorials", "Advertisement"]
PARAMS = ["--sigma", "5", "--min-length", "10"]


def page(i: int, rng: random.Random) -> str:
    words = [f"w{rng.randrange(10_000)}" for _ in range(60)]
    content = [" ".join(words[k:k + 15]) + "." for k in range(0, 60, 15)]
    if i % 4 == 3:  # the short line's words inside a content line: content, kept
        content[1] += " Share this: Twitter Facebook with friends"
        return "\n".join(content)
    return "\n".join([content[0], SHORT[0], content[1], "", SHORT[1], *content[2:], SHORT[2]])


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    rng = random.Random(7)
    path = tmp_path_factory.mktemp("lines") / "pages.jsonl"
    path.write_text("".join(json.dumps({"id": f"p{i}", "text": page(i, rng)}) + "\n"
                            for i in range(24)), encoding="utf-8")
    return str(path)


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_phrases_lists_whole_lines_only_when_asked(pages, tmp_path, capsys):
    assert main(["phrases", pages, *PARAMS, "-o", str(tmp_path / "plain.jsonl")]) == 0
    assert read_jsonl(tmp_path / "plain.jsonl") == []  # nothing of 10 tokens repeats
    assert main(["phrases", pages, *PARAMS, "--min-line-length", "1",
                 "-o", str(tmp_path / "lines.tsv")]) == 0
    assert "3 of them whole lines of at least 1" in capsys.readouterr().err
    rows = (tmp_path / "lines.tsv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "phrase\tlength\tdf\toccurrences\twhole_line"
    # in 18 pages each is a whole line; the 6 others hold "share this twitter facebook" inside
    # a content line, which does not count
    assert sorted(rows[1:]) == ["advertisement\t1\t18\t18\ttrue",
                                "posted in tutorials\t3\t18\t18\ttrue",
                                "share this twitter facebook\t4\t18\t18\ttrue"]


def test_clean_removes_short_lines_by_default_and_only_where_they_are_lines(pages, tmp_path):
    assert main(["clean", pages, *PARAMS, "-o", str(tmp_path / "c.jsonl")]) == 0
    cleaned = read_jsonl(tmp_path / "c.jsonl")
    for i, record in enumerate(cleaned):
        assert "Posted in" not in record["text"]
        # the default --min-line-length 3 leaves the one-token line
        assert ("Advertisement" in record["text"]) == (i % 4 != 3)
        assert ("Share this" in record["text"]) == (i % 4 == 3)  # kept inside content
    assert main(["clean", pages, *PARAMS, "--min-line-length", "0",
                 "-o", str(tmp_path / "off.jsonl")]) == 0
    originals = read_jsonl(pages)
    assert [r["text"] for r in read_jsonl(tmp_path / "off.jsonl")] == \
        [r["text"] for r in originals]


def test_report_flags_whole_line_phrases(pages, tmp_path):
    assert main(["report", pages, *PARAMS, "--min-line-length", "1", "--json",
                 str(tmp_path / "r.json"), "-o", str(tmp_path / "r.html")]) == 0
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["min_line_length"] == 1 and data["whole_line_phrases"] == 3
    assert all(row["whole_line"] for row in data["hogs_by_psi"])
    assert data["hogs_by_psi"][0]["examples"]
    assert "whole line" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_a_phrase_file_keeps_the_whole_line_flag(pages, tmp_path):
    listed = tmp_path / "p.jsonl"
    assert main(["phrases", pages, *PARAMS, "--min-line-length", "1", "-o", str(listed)]) == 0
    assert main(["clean", pages, "--phrases", str(listed), "-o", str(tmp_path / "c.jsonl")]) == 0
    for i, record in enumerate(read_jsonl(tmp_path / "c.jsonl")):
        assert ("Share this" in record["text"]) == (i % 4 == 3)
    # without the flag the same texts are removed wherever they occur
    rows = [{"phrase": row["phrase"]} for row in read_jsonl(listed)]
    listed.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["clean", pages, "--phrases", str(listed), "-o", str(tmp_path / "d.jsonl")]) == 0
    assert not any("Share this" in r["text"] for r in read_jsonl(tmp_path / "d.jsonl"))


def test_bad_values_and_old_saved_corpora(pages, tmp_path, capsys):
    assert main(["clean", pages, "--min-line-length", "-1", "-o", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert "--min-line-length -1" in err and "\n" not in err
    from tests.corpus.test_line_starts import as_version_2

    assert main(["tokenize", pages, "-o", str(tmp_path / "corpus")]) == 0
    as_version_2(tmp_path / "corpus")
    assert main(["report", str(tmp_path / "corpus"), *PARAMS, "--json", "-"]) == 0
    assert "has no line starts" in capsys.readouterr().err
    assert main(["phrases", str(tmp_path / "corpus"), *PARAMS, "--min-line-length", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no line starts" in err and "\n" not in err
