"""FHK (suffix array + LCP intervals) against the brute-force oracle and naive references."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.errors import InputError, ParameterError
from corpus_miner.phrases.exact import mine_fhk
from corpus_miner.phrases.suffix_array import (
    build_text,
    inverse_suffix_array,
    lcp_array,
    suffix_array,
)
from tests.helpers import run_python

from .corpora import flatten, small_corpora
from .oracle import brute_force_mcfp


def naive_suffix_array(text):
    symbols = [int(s) for s in text]
    return sorted(range(len(symbols)), key=lambda i: symbols[i:])


def naive_lcp(text, order):
    symbols = [int(s) for s in text]
    lcp = [0] * len(order)
    for j in range(1, len(order)):
        a, b = symbols[order[j - 1]:], symbols[order[j]:]
        while lcp[j] < min(len(a), len(b)) and a[lcp[j]] == b[lcp[j]]:
            lcp[j] += 1
    return lcp


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), max_size=15), min_size=1, max_size=6),
       st.sampled_from([1, 7, 2**32 - 1]))
def test_suffix_array_and_lcp_match_naive_sort(docs, scale):
    tokens = np.array([t for doc in docs for t in doc], dtype=np.uint64) * scale % 2**32
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    text, alphabet = build_text(tokens.astype(np.uint32), offsets)
    assert len(text) == len(tokens) + len(docs)
    assert text.min() >= 0 and text.max() < alphabet
    sa = suffix_array(text, alphabet)
    expected = naive_suffix_array(text)
    assert sa.tolist() == expected
    inverse = inverse_suffix_array(sa)
    assert lcp_array(text, sa).tolist() == naive_lcp(text, expected)
    assert inverse[sa].tolist() == list(range(len(sa)))


def test_suffix_array_with_long_repeats_and_big_tied_groups():
    rng = np.random.default_rng(5)
    motif = rng.integers(0, 3, 40).tolist()
    docs = [motif * 3 + rng.integers(0, 2, 30).tolist() for _ in range(5)] + [[1] * 60]
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    text, alphabet = build_text(tokens, offsets)
    expected = naive_suffix_array(text)
    assert suffix_array(text, alphabet).tolist() == expected


def test_terminators_keep_suffixes_of_identical_documents_apart():
    text, alphabet = build_text(np.array([4, 4, 4, 4], dtype=np.uint32), np.array([0, 2, 4]))
    sa = suffix_array(text, alphabet)
    lcp = lcp_array(text, sa)
    # Two identical documents "4 4": the longest shared prefix is the whole document, never more.
    assert lcp.max() == 2
    assert sa[:2].tolist() == [2, 5]  # terminators sort first, in document order


@settings(max_examples=2500, deadline=None)
@given(small_corpora())
def test_fhk_equals_oracle_on_small_corpora(case):
    docs, sigma, min_length = case
    tokens, offsets, vocab = flatten(docs)
    table, stats = mine_fhk(tokens, offsets, sigma, min_length, vocab)
    assert table.key_set() == brute_force_mcfp(docs, sigma, min_length)
    assert stats["phrases"] == len(table)


def test_fhk_equals_oracle_on_seeded_random_corpora():
    rng = np.random.default_rng(2024)
    for _ in range(600):
        alphabet = int(rng.integers(1, 4))
        docs = [rng.integers(0, alphabet, int(rng.integers(0, 25))).tolist()
                for _ in range(int(rng.integers(2, 10)))]
        sigma, min_length = int(rng.integers(2, 6)), int(rng.integers(2, 5))
        tokens, offsets, vocab = flatten(docs)
        table, _ = mine_fhk(tokens, offsets, sigma, min_length, vocab)
        expected = brute_force_mcfp(docs, sigma, min_length)
        assert table.key_set() == expected, (docs, sigma, min_length)


def test_article_toy_example():
    texts = ["new laptop acer swift free shipping on orders over 50 dollars",
             "case for iphone 15 free shipping on orders over 50 dollars",
             "free shipping on orders over 50 dollars sony headphones",
             "sony headphones wh 1000 free shipping"]
    vocab: dict[str, int] = {}
    docs = [[vocab.setdefault(w, len(vocab)) for w in text.split()] for text in texts]
    tokens, offsets, _ = flatten(docs)
    table, _ = mine_fhk(tokens, offsets, 3, 2, list(vocab))
    found = [(table.text(i), int(table.df[i]), int(table.occurrences[i]))
             for i in range(len(table))]
    assert found == [("free shipping on orders over 50 dollars", 3, 3)]


def test_output_is_in_canonical_order_with_vocab_text():
    docs = [[0, 1, 2, 3, 9], [0, 1, 2, 3, 8], [5, 6, 7], [5, 6, 7], [5, 6, 7], [0, 1, 2, 3]]
    tokens, offsets, vocab = flatten(docs)
    table, _ = mine_fhk(tokens, offsets, 3, 2, vocab)
    # Psi: "w0 w1 w2 w3" = 4 x 3 = 12 before "w5 w6 w7" = 3 x 3 = 9.
    assert [table.text(i) for i in range(len(table))] == ["w0 w1 w2 w3", "w5 w6 w7"]


def test_sparse_token_ids_up_to_uint32_max():
    docs = [[2**32 - 1, 5, 2**31], [2**32 - 1, 5, 2**31, 7], [1, 2**32 - 1, 5, 2**31]]
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.array([0, 3, 7, 11], dtype=np.int64)
    vocab = {int(t): f"w{t}" for t in tokens}  # a mapping: the ids are far too sparse for a list
    table, _ = mine_fhk(tokens, offsets, 3, 2, vocab)
    assert table.key_set() == {((2**32 - 1, 5, 2**31), 3, 3)}


def test_empty_documents_and_empty_corpus():
    tokens, offsets, vocab = flatten([[], [1, 2], [], [1, 2], []])
    assert mine_fhk(tokens, offsets, 2, 2, vocab)[0].key_set() == {((1, 2), 2, 2)}
    table, stats = mine_fhk(np.zeros(0, np.uint32), np.zeros(3, np.int64), 2, 2, [])
    assert len(table) == 0 and stats["phrases"] == 0


def test_sigma_above_document_count_reports_an_empty_answer():
    tokens, offsets, vocab = flatten([[1, 2], [1, 2]])
    table, stats = mine_fhk(tokens, offsets, 3, 2, vocab)
    assert len(table) == 0
    assert "exceeds the 2 documents" in stats["note"]


@pytest.mark.parametrize("sigma,min_length,message", [
    (1, 2, "sigma=1"), (2, 1, "min_length=1"), (2.5, 2, "sigma=2.5")])
def test_bad_parameters_raise_parameter_error(sigma, min_length, message):
    tokens, offsets, vocab = flatten([[1, 2], [1, 2]])
    with pytest.raises(ParameterError, match=message):
        mine_fhk(tokens, offsets, sigma, min_length, vocab)


def test_inconsistent_arrays_raise_input_error_like_bloomspan():
    with pytest.raises(InputError, match="doc_offsets"):
        mine_fhk(np.arange(4, dtype=np.uint32), np.array([0, 3, 2, 4]), 2, 2, [])
    with pytest.raises(InputError, match="doc_offsets"):
        mine_fhk(np.arange(4, dtype=np.uint32), np.array([0, 3]), 2, 2, [])


def test_stats_report_stages_and_memory():
    tokens, offsets, vocab = flatten([[1, 2, 3], [1, 2, 3], [0]])
    _, stats = mine_fhk(tokens, offsets, 2, 2, vocab)
    assert set(stats["seconds"]) >= {"suffix_array", "lcp", "traversal"}
    assert stats["peak_rss_mb"] > 0 and stats["tokens"] == 7 and stats["documents"] == 3


def test_progress_callback_sees_every_stage():
    tokens, offsets, vocab = flatten([[1, 2, 3], [1, 2, 3]])
    seen = []
    mine_fhk(tokens, offsets, 2, 2, vocab, progress=seen.append)
    assert seen == ["text", "suffix_array", "lcp", "traversal", "left_maximality", "output"]


def test_kernels_agree_with_oracle_without_jit():
    """The same kernels interpreted as plain Python (NUMBA_DISABLE_JIT=1) in a fresh process."""
    script = """
        import numpy as np
        from corpus_miner.phrases.exact import mine_fhk
        from tests.phrases.oracle import brute_force_mcfp
        rng = np.random.default_rng(7)
        for _ in range(40):
            docs = [rng.integers(0, 3, int(rng.integers(0, 12))).tolist() for _ in range(5)]
            tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
            offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
            table, _ = mine_fhk(tokens, offsets, 2, 2, ["a", "b", "c"])
            assert table.key_set() == brute_force_mcfp(docs, 2, 2), docs
        print("agree")
    """
    assert run_python(script, jit=False).strip() == "agree"
