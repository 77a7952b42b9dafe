"""The verifying pass (matching.bind) and the slot statistics against the plain-Python
reference, on hand-made cases and on random corpora with planted slotted templates."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.templates.masking import MaskedVocab, mask_tokens, slot_classes
from corpus_miner.templates.matching import bind
from corpus_miner.templates.pattern import Pattern
from corpus_miner.templates.select import support
from corpus_miner.templates.slots import filler_counts, slot_layout, slot_spans
from tests.helpers import encode_words
from tests.templates import oracle


def _pattern(anchors, vocab_index, n_vocab, max_gap):
    classes = {"<num>": n_vocab, "<month>": n_vocab + 1}
    return Pattern(tuple(tuple(classes.get(w, vocab_index.get(w, 10**9)) for w in a)
                         for a in anchors), max_gap)


def _check(docs, anchors_list, max_gap, lines=None):
    tokens, offsets, vocab = encode_words(docs)
    index = {w: i for i, w in enumerate(vocab)}
    masked = mask_tokens(tokens, slot_classes(vocab))
    mvocab = MaskedVocab(vocab)
    usable = [a for a in anchors_list if all(w in index or w in ("<num>", "<month>")
                                             for piece in a for w in piece)]
    patterns = [_pattern(a, index, len(vocab), max_gap) for a in usable]
    line_starts = None if lines is None else np.array(
        sorted(int(offsets[d]) + i for d, doc in enumerate(docs) for i in lines[d]
               if i < len(doc)), dtype=np.int64)
    occ = bind(patterns, masked, offsets, mvocab, line_starts)
    df, n = support(occ, len(patterns))
    for t, anchors in enumerate(usable):
        expected = oracle.occurrences(docs, anchors, max_gap, lines)
        rows = occ.of(t)
        got = [(int(d), [int(x) - int(offsets[d]) for x in a[:len(anchors)]])
               for d, a in zip(occ.doc[rows], occ.anchor_starts[rows])]
        assert got == expected
        assert int(n[t]) == len(expected)
        assert int(df[t]) == len({d for d, _ in expected})
        want = oracle.slot_fillers(docs, anchors, expected)
        layouts = slot_layout(patterns[t], len(vocab))
        assert len(layouts) == len(want)
        for layout, counter in zip(layouts, want):
            start, end = slot_spans(patterns[t], layout, occ, rows)
            got_fillers = filler_counts(tokens, start, end)
            assert {tuple(vocab[i] for i in k): v for k, v in got_fillers.items()} == counter


def test_leftmost_shortest_binding_by_hand():
    docs = [["posted", "on", "march", "3", "2024", "by", "ann", "lee", "by", "x"],
            ["posted", "on", "may", "1", "1999", "by", "by", "bo"],
            ["posted", "on", "june", "x", "by"],
            ["posted", "on", "june", "7", "by"]]
    _check(docs, [[["posted", "on", "<month>", "<num>"], ["by"]],
                  [["on", "<month>", "<num>", "<num>", "by"]],
                  [["posted"], ["<num>"], ["by"]]], max_gap=3)


def test_no_occurrence_across_documents():
    docs = [["a", "b", "c"], ["d", "e"]]
    _check(docs, [[["a"], ["d"]], [["b"], ["e"]]], max_gap=5)


WORDS = [f"w{i}" for i in range(12)] + ["by", "on", "page", "of", "7", "12", "2024",
                                         "march", "may"]


@st.composite
def corpora(draw):
    seed = draw(st.integers(0, 10**6))
    rng = random.Random(seed)
    n_docs = draw(st.integers(1, 12))
    docs = []
    for _ in range(n_docs):
        doc = [rng.choice(WORDS) for _ in range(rng.randint(0, 25))]
        for _ in range(rng.randint(0, 3)):  # a planted template with varying slots
            at = rng.randint(0, len(doc))
            filler = [rng.choice(WORDS) for _ in range(rng.randint(1, 4))]
            doc[at:at] = ["page", str(rng.randint(1, 30)), "of"] + filler + ["by", "w1"]
        docs.append(doc)
    anchors = [[["page", "<num>", "of"], ["by", "w1"]], [["page"], ["of"], ["by"]],
               [["<num>", "of"], ["w1"]], [["w2"], ["w3"]], [["by"]], [["<month>"], ["<num>"]]]
    return docs, anchors, draw(st.integers(1, 5))


@settings(max_examples=60, deadline=None)
@given(corpora())
def test_bind_matches_the_reference(case):
    docs, anchors, max_gap = case
    _check(docs, anchors, max_gap)


@settings(max_examples=60, deadline=None)
@given(corpora(), st.integers(0, 10**6))
def test_occurrences_stay_inside_one_line(case, seed):
    docs, anchors, max_gap = case
    rng = random.Random(seed)
    lines = [{0} | {i for i in range(1, len(doc)) if rng.random() < 0.15} for doc in docs]
    _check(docs, anchors, max_gap, lines)


def test_a_binding_that_runs_into_the_next_line_is_none():
    docs = [["class", "in", "java", "updated", "on", "may", "3", "2024", "by", "ann"]]
    _check(docs, [[["java", "updated", "on", "<month>"]], [["updated", "on"], ["by"]],
                  [["java"], ["by"]]], max_gap=5, lines=[{0, 3}])


@settings(max_examples=60, deadline=None)
@given(corpora(), st.integers(0, 10**6))
def test_line_end_slots_match_the_reference(case, seed):
    docs, anchors_list, max_gap = case
    rng = random.Random(seed)
    lines = [{0} | {i for i in range(1, len(doc)) if rng.random() < 0.2} for doc in docs]
    tokens, offsets, vocab = encode_words(docs)
    index = {w: i for i, w in enumerate(vocab)}
    masked = mask_tokens(tokens, slot_classes(vocab))
    line_starts = np.array(sorted(int(offsets[d]) + i for d, doc in enumerate(docs)
                                  for i in lines[d] if i < len(doc)), dtype=np.int64)
    usable = [a for a in anchors_list if all(w in index or w in ("<num>", "<month>")
                                             for piece in a for w in piece)]
    patterns = [Pattern(_pattern(a, index, len(vocab), max_gap).pieces, max_gap, True)
                for a in usable]
    occ = bind(patterns, masked, offsets, MaskedVocab(vocab), line_starts)
    for t, anchors in enumerate(usable):
        expected = oracle.line_end_occurrences(docs, lines, anchors, max_gap)
        rows = occ.of(t)
        got = [(int(d), [int(x) - int(offsets[d]) for x in a[:len(anchors)]],
                int(e) - int(offsets[d]))
               for d, a, e in zip(occ.doc[rows], occ.anchor_starts[rows], occ.end[rows])]
        assert got == expected
