"""bloomspan == fhk == oracle: the BloomSpan miner and the suffix-array baseline give the same
exact answer everywhere (their shortcuts must never change it)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner import synth
from corpus_miner.phrases.exact import mine_fhk
from tests.helpers import encode_words

from .corpora import flatten, small_corpora
from .oracle import brute_force_mcfp

bloomspan = pytest.importorskip("corpus_miner.phrases.bloomspan",
                                reason="the BloomSpan miner has not landed yet")


def rows(table):
    return [(table.text(i), int(table.df[i]), int(table.occurrences[i])) for i in range(len(table))]


@settings(max_examples=1500, deadline=None)
@given(small_corpora(), st.sampled_from([None, 64]))
def test_bloomspan_equals_fhk_equals_oracle(case, filter_bytes):
    docs, sigma, min_length = case
    tokens, offsets, vocab = flatten(docs)
    expected = brute_force_mcfp(docs, sigma, min_length)
    exact, _ = mine_fhk(tokens, offsets, sigma, min_length, vocab)
    # filter_bytes=64: a tiny counting filter lets many false-positive bigrams through.
    fast, _ = bloomspan.mine_bloomspan(tokens, offsets, sigma, min_length, vocab,
                                       filter_bytes=filter_bytes)
    assert exact.key_set() == expected
    assert fast.key_set() == expected
    assert rows(fast) == rows(exact)  # same canonical order too


@pytest.mark.parametrize("sigma,min_length", [(2, 2), (3, 5), (10, 4), (6, 8)])
def test_bloomspan_equals_fhk_on_dense_nested_overlaps(sigma, min_length):
    docs = synth.synthetic2(60, words_per_doc=40, family_length=24, windows_per_doc=8, seed=3)
    tokens, offsets, vocab = encode_words(docs)
    exact, _ = mine_fhk(tokens, offsets, sigma, min_length, vocab)
    fast, _ = bloomspan.mine_bloomspan(tokens, offsets, sigma, min_length, vocab)
    assert len(exact) > 0
    assert rows(fast) == rows(exact)


@pytest.mark.parametrize("sigma,min_length", [(3, 2), (5, 6), (20, 10)])
def test_bloomspan_equals_fhk_on_web_like_pages(sigma, min_length):
    docs = synth.web(300, n_sites=8, vocabulary=2000, mean_body_words=60, seed=5)
    tokens, offsets, vocab = encode_words(docs)
    exact, _ = mine_fhk(tokens, offsets, sigma, min_length, vocab)
    fast, _ = bloomspan.mine_bloomspan(tokens, offsets, sigma, min_length, vocab)
    assert len(exact) > 0
    assert rows(fast) == rows(exact)


def test_bloomspan_and_fhk_find_the_synthetic1_answer():
    docs = synth.synthetic1(30, words_per_doc=200, seed=11)
    tokens, offsets, vocab = encode_words(docs)
    expected = [("another unique phrase for testing", 5, 5),
                ("this is the first test sentence", 3, 3), ("a third sentence", 4, 4)]
    for miner in (mine_fhk, bloomspan.mine_bloomspan):
        table, _ = miner(tokens, offsets, 3, 2, vocab)
        assert rows(table) == expected


def test_seeded_planted_templates_with_repeats_inside_documents():
    rng = np.random.default_rng(99)
    for _ in range(150):
        templates = [rng.integers(0, 6, int(rng.integers(3, 12))).tolist() for _ in range(3)]
        docs = []
        for _ in range(int(rng.integers(3, 12))):
            doc = rng.integers(0, 3, int(rng.integers(0, 20))).tolist()
            for template in templates:
                for _ in range(int(rng.integers(0, 3))):
                    at = int(rng.integers(0, len(doc) + 1))
                    doc[at:at] = template
            docs.append(doc)
        sigma, min_length = int(rng.integers(2, 5)), int(rng.integers(2, 7))
        tokens, offsets, vocab = flatten(docs)
        expected = brute_force_mcfp(docs, sigma, min_length)
        fast, _ = bloomspan.mine_bloomspan(tokens, offsets, sigma, min_length, vocab)
        exact, _ = mine_fhk(tokens, offsets, sigma, min_length, vocab)
        assert fast.key_set() == expected == exact.key_set(), (docs, sigma, min_length)
