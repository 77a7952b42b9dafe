"""Edge phrases through the CLI: `phrases --min-edge-length` with its edge column, `clean` and
`report` with them, phrase files that keep the side, saved corpora with and without sentence
starts, bad values."""

from __future__ import annotations

import json
import random

import pytest

from corpus_miner.cli import main

FOLLOW = "Follow us on social media for more updates."
READ = "Read more:"
PARAMS = ["--sigma", "5", "--min-length", "10", "--min-line-length", "0"]


def page(i: int, rng: random.Random) -> str:
    words = [f"w{rng.randrange(10_000)}" for _ in range(60)]
    content = [" ".join(words[k:k + 15]) + "." for k in range(0, 60, 15)]
    if i % 4 == 3:  # the snippet inside a sentence (no break): content, kept
        content[1] = content[1][:-1] + " follow us on social media for more updates today."
    else:  # glued to the end of one paragraph, and "Read more:" to the start of another
        content[1] += " " + FOLLOW
        content[3] = f"{READ} {content[3]}"
    return "\n\n".join(content)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    rng = random.Random(11)
    path = tmp_path_factory.mktemp("edges") / "pages.jsonl"
    path.write_text("".join(json.dumps({"id": f"p{i}", "text": page(i, rng)}) + "\n"
                            for i in range(24)), encoding="utf-8")
    return str(path)


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_phrases_lists_edges_only_when_asked(pages, tmp_path, capsys):
    assert main(["phrases", pages, *PARAMS, "-o", str(tmp_path / "plain.jsonl")]) == 0
    assert read_jsonl(tmp_path / "plain.jsonl") == []
    assert main(["phrases", pages, *PARAMS, "--min-edge-length", "2",
                 "-o", str(tmp_path / "edges.tsv")]) == 0
    assert "2 edges of at least 2" in capsys.readouterr().err
    rows = (tmp_path / "edges.tsv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "phrase\tlength\tdf\toccurrences\tedge"
    assert sorted(rows[1:]) == ["follow us on social media for more updates\t8\t18\t18\tend",
                                "read more\t2\t18\t18\tstart"]


def test_clean_removes_the_snippets_only_at_their_edge(pages, tmp_path):
    assert main(["clean", pages, *PARAMS, "--min-edge-length", "2",
                 "-o", str(tmp_path / "c.jsonl")]) == 0
    for i, record in enumerate(read_jsonl(tmp_path / "c.jsonl")):
        assert ("Follow us" in record["text"]) is False
        assert ("follow us on social" in record["text"]) == (i % 4 == 3)  # inside a sentence
        assert ("Read more" in record["text"]) is False
    assert main(["clean", pages, *PARAMS, "--min-edge-length", "0",
                 "-o", str(tmp_path / "off.jsonl")]) == 0
    assert [r["text"] for r in read_jsonl(tmp_path / "off.jsonl")] == \
        [r["text"] for r in read_jsonl(pages)]
    # clean's default finds edges of 5 tokens or more: the 8 of "Follow us...", not "Read more"
    assert main(["clean", pages, *PARAMS, "-o", str(tmp_path / "default.jsonl")]) == 0
    for i, record in enumerate(read_jsonl(tmp_path / "default.jsonl")):
        assert "Follow us" not in record["text"]
        assert ("Read more" in record["text"]) == (i % 4 != 3)


def test_report_marks_edge_phrases(pages, tmp_path, capsys):
    assert main(["report", pages, *PARAMS, "--min-edge-length", "2", "--json",
                 str(tmp_path / "r.json"), "-o", str(tmp_path / "r.html")]) == 0
    assert "[end] follow us on social media" in capsys.readouterr().err
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["min_edge_length"] == 2 and data["edge_phrases"] == 2
    assert sorted(row["edge"] for row in data["hogs_by_psi"]) == ["end", "start"]
    assert "end edge" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_a_phrase_file_keeps_the_side(pages, tmp_path):
    listed = tmp_path / "p.jsonl"
    assert main(["phrases", pages, *PARAMS, "--min-edge-length", "2", "-o", str(listed)]) == 0
    assert main(["clean", pages, "--phrases", str(listed), "-o", str(tmp_path / "c.jsonl")]) == 0
    for i, record in enumerate(read_jsonl(tmp_path / "c.jsonl")):
        assert ("follow us on social" in record["text"]) == (i % 4 == 3)
    # without the side the same texts are removed wherever they occur
    rows = [{"phrase": row["phrase"]} for row in read_jsonl(listed)]
    listed.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["clean", pages, "--phrases", str(listed), "-o", str(tmp_path / "d.jsonl")]) == 0
    assert not any("follow us on social" in r["text"] for r in read_jsonl(tmp_path / "d.jsonl"))


def test_saved_corpora_and_bad_values(pages, tmp_path, capsys):
    assert main(["clean", pages, "--min-edge-length", "-1", "-o", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert "--min-edge-length -1" in err and "\n" not in err
    assert main(["tokenize", pages, "-o", str(tmp_path / "plain")]) == 0
    capsys.readouterr()
    assert main(["phrases", str(tmp_path / "plain"), *PARAMS, "--min-edge-length", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no sentence starts" in err and "\n" not in err
    assert main(["tokenize", pages, "--sentences", "-o", str(tmp_path / "full")]) == 0
    assert main(["phrases", str(tmp_path / "full"), *PARAMS, "--min-edge-length", "2",
                 "-o", str(tmp_path / "p.jsonl")]) == 0
    assert len(read_jsonl(tmp_path / "p.jsonl")) == 2
