"""Hypothesis strategy for small corpora that stress phrase miners: tiny alphabets, planted
templates (nested and overlapping, several per document, repeated inside one document)."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.helpers import as_arrays


@st.composite
def small_corpora(draw, max_docs: int = 8, max_background: int = 12):
    alphabet = draw(st.integers(1, 5))
    templates = draw(st.lists(st.lists(st.integers(0, alphabet + 3), min_size=2, max_size=9),
                              max_size=3))
    if templates and draw(st.booleans()):  # a nested template: a piece of the first one
        first = templates[0]
        start = draw(st.integers(0, len(first) - 2))
        templates.append(first[start:draw(st.integers(start + 2, len(first)))])
    docs = []
    for _ in range(draw(st.integers(1, max_docs))):
        doc = draw(st.lists(st.integers(0, alphabet - 1), max_size=max_background))
        for template in templates:
            for _ in range(draw(st.integers(0, 2))):  # 0, 1 or 2 copies in this document
                at = draw(st.integers(0, len(doc)))
                doc[at:at] = template
        docs.append(doc)
    sigma = draw(st.integers(2, 5))
    min_length = draw(st.integers(2, 6))
    return docs, sigma, min_length


def flatten(docs):
    """docs -> (uint32 tokens, int64 doc_offsets, vocab) as a TokenCorpus holds them."""
    tokens, offsets = as_arrays(docs)
    vocab = [f"w{i}" for i in range(int(tokens.max()) + 1 if len(tokens) else 0)]
    return tokens, offsets, vocab
