"""Line forms (templates.lines): occurrences against the plain-Python reference on random
corpora with planted line structure, the kernels with the JIT off, and related lists and
breadcrumbs found by the estimator."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import TokenCorpus
from corpus_miner.templates import SlotTemplates
from corpus_miner.templates import lines as line_forms
from tests.templates import oracle


def corpus_of_lines(docs) -> tuple[TokenCorpus, dict]:
    """A TokenCorpus with line and paragraph starts from docs of paragraphs of lines of words."""
    vocab: dict[str, int] = {}
    tokens, offsets, line_starts, paragraph_starts = [], [0], [], []
    for doc in docs:
        for paragraph in doc:
            for i, line in enumerate(paragraph):
                if not i:
                    paragraph_starts.append(len(tokens))
                line_starts.append(len(tokens))
                tokens += [vocab.setdefault(w, len(vocab)) for w in line]
        offsets.append(len(tokens))
    corpus = TokenCorpus(np.array(tokens, dtype=np.uint32), np.array(offsets, dtype=np.int64),
                         [f"d{i}" for i in range(len(docs))], list(vocab),
                         line_starts=np.array(line_starts, dtype=np.int64),
                         paragraph_starts=np.array(paragraph_starts, dtype=np.int64))
    return corpus, vocab


WORDS = ["related", "home", "a", "b", "c", "d", "e", "may"]


@st.composite
def line_corpora(draw):
    rng = random.Random(draw(st.integers(0, 10**6)))
    titles = [[rng.choice(WORDS[2:]) for _ in range(rng.randint(1, 3))] for _ in range(4)]
    docs = []
    for _ in range(draw(st.integers(1, 8))):
        doc = []
        for _ in range(rng.randint(1, 5)):
            kind = rng.random()
            if kind < 0.3:
                doc.append([rng.choice(titles)])
            elif kind < 0.5:
                doc.append([["related"] + rng.choice(titles) + rng.choice(titles)])
            elif kind < 0.7:
                doc.append([["related", "a"]] + [rng.choice(titles)
                                                  for _ in range(rng.randint(1, 3))])
            else:
                doc.append([[rng.choice(WORDS) for _ in range(rng.randint(1, 6))]
                            for _ in range(rng.randint(1, 3))])
        docs.append(doc)
    return docs, draw(st.integers(0, 3))


def _anchors(docs):
    rest, block = set(), set()
    for doc in docs:
        for paragraph in doc:
            block.add(tuple(paragraph[0]))
            for line in paragraph:
                for k in range(1, 4):
                    rest.add(tuple(line[:k]))
    return sorted(rest), sorted(block)


@settings(max_examples=60, deadline=None)
@given(line_corpora())
def test_line_form_occurrences_match_the_reference(case):
    docs, max_gap = case
    corpus, vocab = corpus_of_lines(docs)
    index = line_forms.line_index(corpus, max_gap)
    offsets = corpus.doc_offsets
    rest, block = _anchors(docs)
    for form, anchors in (("rest", rest), ("lines", block)):
        for anchor in anchors:
            start, end = line_forms.occurrences(index, form, tuple(vocab[w] for w in anchor))
            doc = np.searchsorted(offsets, start, side="right") - 1
            got = [(int(d), int(s - offsets[d]), int(e - offsets[d]))
                   for d, s, e in zip(doc, start, end)]
            assert got == oracle.line_form_occurrences(docs, form, list(anchor), max_gap), \
                (form, anchor)


@settings(max_examples=20, deadline=None)
@given(line_corpora())
def test_kernels_without_the_jit_agree(case):
    docs, max_gap = case
    corpus, _ = corpus_of_lines(docs)
    index = line_forms.line_index(corpus, max_gap)
    tokens, starts, lengths = index.tokens, index.starts, index.lengths
    with np.errstate(over="ignore"):  # the hashes wrap modulo 2^64 by design
        hashes = line_forms._line_hashes.py_func(tokens, starts, lengths)
        order = np.argsort(hashes, kind="stable")
        keys, bits = hashes[order], line_forms._bitmap.py_func(hashes)
        masks = line_forms._rest_masks.py_func(tokens, starts, lengths, keys, order, bits,
                                               line_forms.MAX_PREFIX, max_gap,
                                               line_forms.MAX_REST, line_forms.MIN_JOINED)
    assert np.array_equal(hashes, line_forms._line_hashes(tokens, starts, lengths))
    assert np.array_equal(masks, index.rest_mask)


def test_related_lists_and_breadcrumbs_are_found():
    rng = random.Random(3)
    titles = [[f"t{i}", f"w{i % 7}", f"x{i % 5}"] for i in range(60)]
    docs = []
    for i in range(60):
        body = [[[f"p{i}", f"q{j}", "text"]] for j in range(3)]
        picks = rng.sample([t for j, t in enumerate(titles) if j != i], 3)
        docs.append([[titles[i]], [["home", rng.choice(["news", "blog"])] + titles[i]]] + body
                    + [[["related", "articles"]] + picks])
    corpus, _ = corpus_of_lines(docs)
    found = SlotTemplates(sigma=20).fit(corpus)
    patterns = [row["pattern"] for row in found.templates_.rows]
    assert "^related articles <lines>" in patterns
    assert {"^home news <rest>", "^home blog <rest>"} <= set(patterns)  # no free head
    row = next(r for r in found.templates_.rows if r["pattern"] == "^related articles <lines>")
    assert row["df"] == 60 and row["occurrences"] == 60
    assert not any(p.startswith("^p") for p in patterns)  # body lines are not made of lines


def test_short_known_lines_join_only_as_the_whole_filler():
    # "true", "x" and "y" are lines of their own (code output, identifiers): "while true" is one
    # known line after the anchor, "while x y" two one-token lines joined, which code is made of
    docs = [[[["true"], ["x"], ["y"], ["x", "y", "z"]]],
            [[["while", "true"], ["while", "x", "y"], ["while", "x", "y", "z"],
              ["while", "x", "y", "x", "y", "z"]]]]
    corpus, vocab = corpus_of_lines(docs)
    index = line_forms.line_index(corpus, 5)
    start, end = line_forms.occurrences(index, "rest", (vocab["while"],))
    lines = [[corpus.vocab[t] for t in corpus.tokens[s:e]] for s, e in zip(start, end)]
    assert lines == [["while", "true"], ["while", "x", "y", "z"]]
    assert oracle.line_form_occurrences(docs, "rest", ["while"], 5) == [(1, 0, 2), (1, 5, 9)]
