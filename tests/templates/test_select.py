"""Selection rules (templates.select) against plain-Python references, and the count rule seen
through the estimator: boilerplate a layout places a fixed number of times per page is kept, a
convention that recurs as often as the text needs is not; merge candidates against their
definition, and one template for every site's copyright line."""

from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import load_corpus
from corpus_miner.templates import SlotTemplates, candidates, select
from corpus_miner.templates.matching import TemplateOccurrences
from corpus_miner.templates.pattern import Pattern


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


N_VOCAB = 6  # ids >= N_VOCAB are typed


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.integers(0, N_VOCAB + 1), min_size=1, max_size=9), max_size=8),
       st.integers(1, 4))
def test_slot_merges_match_the_reference(pieces, max_gap):
    seeds = [Pattern((tuple(p),), max_gap) for p in pieces]
    got = {p.pieces for p in candidates.slot_merges(seeds, N_VOCAB, max_gap)}
    middles: dict[tuple, set] = {}
    context = candidates.MERGE_CONTEXT
    for ids in map(tuple, pieces):
        for a in range(1, len(ids)):
            for b in range(a + 1, min(len(ids) - 1, a + max_gap) + 1):
                # a middle ids[a:b] of literal tokens right after a typed token, >= 1 token after
                if ids[a - 1] >= N_VOCAB and all(t < N_VOCAB for t in ids[a:b]):
                    key = (ids[max(0, a - context):a], ids[b:b + context])
                    middles.setdefault(key, set()).add(ids[a:b])
    assert got == {key for key, found in middles.items() if len(found) >= 2}
    assert all(p.max_gap == max_gap for p in candidates.slot_merges(seeds, N_VOCAB, max_gap))


def test_merges_join_each_sites_company_into_one_template(tmp_path):
    rng = random.Random(2)
    companies = ["rapid pixel ltd", "red river group", "blue canvas gmbh", "true atlas inc"]
    texts = []
    for i in range(80):
        site = companies[i % 4]
        body = "\n".join(" ".join(f"w{rng.randint(0, 300)}" for _ in range(8)) for _ in range(4))
        texts.append(f"{body}\n(c) {rng.randint(2015, 2025)} {site}. All rights reserved.")
    path = tmp_path / "pages.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n"
                            for i, t in enumerate(texts)))
    rows = SlotTemplates(sigma=20).fit(load_corpus(path)).templates_.rows
    # the longest span wins the canonical order: the slot takes "all" with the company
    merged = next(r for r in rows if r["pattern"] == "c <num> <*> rights reserved")
    assert merged["df"] == 80 and merged["occurrences"] == 80
    assert merged["slots"][1]["distinct"] == 4  # the four companies, one template
