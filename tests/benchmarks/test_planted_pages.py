"""The planted generator: labels partition every text, every kind is planted, same seed same
bytes; and the line rule script against a direct count."""
from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys

from tests.benchmarks.conftest import BENCHMARKS

from planted_pages import write
from planted_world import KINDS


def _fake_corpora(folder, n_docs=300):
    """A corpus of unique prose lines and titles in the Debian corpora's format."""
    rng = random.Random(5)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6))
             for _ in range(4000)]
    folder.mkdir()
    with gzip.open(folder / "python3.11-doc.jsonl.gz", "wt", encoding="utf-8") as out:
        for d in range(n_docs):
            lines = [" ".join(["Title", *rng.sample(words, 4)]) for _ in range(3)]
            lines += [" ".join(["The", *rng.sample(words, 20)]) + "." for _ in range(12)]
            out.write(json.dumps({"id": f"doc{d}", "text": "\n".join(lines)}) + "\n")
    return folder


def _read(path):
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_labels_partition_the_text_and_every_kind_is_planted(tmp_path):
    corpora = _fake_corpora(tmp_path / "corpora")
    meta = write(tmp_path / "a", corpora, n_pages=600, n_sites=12, seed=3, sigma=20)
    pages, labels = _read(tmp_path / "a/pages.jsonl.gz"), _read(tmp_path / "a/labels.jsonl.gz")
    assert len(pages) == len(labels) == 600 == meta["pages"]
    kinds, tags = set(), set()
    for page, label in zip(pages, labels):
        assert page["id"] == label["id"]
        at = 0
        for start, end, kind, template in label["spans"]:
            assert start == at < end
            at = end
            kinds.add(kind)
            tags.add(template)
        assert at == len(page["text"])
    assert kinds == {"content", *KINDS}
    assert {"repeat_below_sigma", "repeat_above_sigma", "title", "paragraph"} <= tags
    assert 1 <= meta["sites_below_sigma"] < 12
    assert all(meta["chars"][k] > 0 for k in KINDS)


def test_the_same_seed_gives_the_same_bytes(tmp_path):
    corpora = _fake_corpora(tmp_path / "corpora")
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        write(tmp_path / name, corpora, n_pages=200, n_sites=6, seed=seed, sigma=20)
    same = [(tmp_path / n / "labels.jsonl.gz").read_bytes() for n in "abc"]
    assert same[0] == same[1] != same[2]
    assert (tmp_path / "a/pages.jsonl.gz").read_bytes() == (tmp_path / "b/pages.jsonl.gz"
                                                             ).read_bytes()


def test_line_rule_drops_lines_seen_in_sigma_pages(tmp_path):
    texts = ["Menu\nalpha one\n  Menu  ", "Menu\nbeta two", "gamma\nMenu\nbeta two"]
    pages = tmp_path / "pages.jsonl"
    pages.write_text("".join(json.dumps({"id": i, "text": t}) + "\n"
                             for i, t in enumerate(texts)))
    subprocess.run([sys.executable, str(BENCHMARKS / "clean_tools" / "line_rule.py"),
                    str(pages), str(tmp_path / "out.jsonl"), "2"], check=True)
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    removed = [[t[s:e] for s, e, _ in r["removed_spans"]] for t, r in zip(texts, out)]
    assert removed == [["Menu", "  Menu  "], ["Menu", "beta two"], ["Menu", "beta two"]]
