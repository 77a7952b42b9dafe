"""Selection rules (templates.select) against plain-Python references, and the count rule seen
through the estimator: boilerplate a layout places a fixed number of times per page is kept, a
convention that recurs as often as the text needs is not."""

from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import load_corpus
from corpus_miner.templates import SlotTemplates
from corpus_miner.templates import select
from corpus_miner.templates.matching import TemplateOccurrences


def occurrences_of(rows: list[tuple[int, int]]) -> TemplateOccurrences:
    rows = sorted(rows)
    template = np.array([t for t, _ in rows], dtype=np.int64)
    doc = np.array([d for _, d in rows], dtype=np.int64)
    start = np.arange(len(rows), dtype=np.int64)
    return TemplateOccurrences(template, doc, start, start + 1,
                               np.full((len(rows), 1), -1, dtype=np.int64))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 6)), max_size=60))
def test_count_share_matches_the_reference(rows):
    got = select.count_share(occurrences_of(rows), 6)
    for t in range(6):
        per_doc = Counter(d for u, d in rows if u == t)
        if not per_doc:
            assert got[t] == 0
            continue
        commonest = Counter(per_doc.values()).most_common(1)[0][1]
        assert got[t] == commonest / len(per_doc)


def _pages(seed: int, n_docs: int) -> list[str]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(400)]
    texts = []
    for _ in range(n_docs):
        lines = [" ".join(rng.choices(words, k=8)) for _ in range(6)]
        lines.insert(1, f"Page {rng.randint(1, 9)} of {rng.randint(10, 40)}")  # once per page
        # a content convention: one to three notes per page, where the text needs them
        for _ in range(rng.choice([1, 1, 2, 3])):
            lines.insert(rng.randint(3, len(lines)),
                         f"Changed in version {rng.randint(1, 3)}.{rng.randint(0, 9)}")
        texts.append("\n".join(lines))
    return texts


def test_a_fixed_count_per_page_is_kept_and_a_varying_one_is_not(tmp_path):
    path = tmp_path / "pages.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n"
                            for i, t in enumerate(_pages(seed=5, n_docs=60))))
    corpus = load_corpus(path)
    patterns = [row["pattern"] for row in SlotTemplates(sigma=20).fit(corpus).templates_.rows]
    assert "page <num> of <num>" in patterns
    assert not any(p.startswith("changed in version") for p in patterns)
    loose = SlotTemplates(sigma=20, min_count_share=0).fit(corpus)
    assert any(row["pattern"].startswith("changed in version") for row in loose.templates_.rows)
