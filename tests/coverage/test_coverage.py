"""Coverage figures against a brute-force oracle (every window, df via sets) on random corpora."""

from __future__ import annotations

from types import SimpleNamespace
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.coverage import kernels as kernels
from corpus_miner.coverage.coverage import Coverage, find_occurrences, phrases_from_texts
from corpus_miner.errors import ParameterError
from corpus_miner.phrases.result import PhraseTable
from tests.helpers import run_python
from tests.phrases.oracle import brute_force_mcfp


def make_corpus(docs):
    lengths = [len(d) for d in docs]
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    vocab = [f"w{i}" for i in range(max([t for d in docs for t in d], default=0) + 1)]
    return SimpleNamespace(tokens=tokens, doc_offsets=offsets, vocab=vocab, n_docs=len(docs),
                           n_tokens=len(tokens), doc_ids=[f"d{i}" for i in range(len(docs))])


def mined_table(docs, sigma, min_length, vocab):
    answer = sorted(brute_force_mcfp(docs, sigma, min_length))
    return PhraseTable.from_lists([p for p, _, _ in answer], [d for _, d, _ in answer],
                                  [o for _, _, o in answer], vocab)


def brute_mined_coverage(docs, sigma, k, table):
    """Covered mask: inside an occurrence of a k-gram found in >= sigma documents. Owner: best
    canonical rank among the table's phrases occurring in full over the token, else among those
    having the covering k-gram as a window."""
    found_in: dict[tuple, set] = {}
    for d, doc in enumerate(docs):
        for s in range(len(doc) - k + 1):
            found_in.setdefault(tuple(doc[s:s + k]), set()).add(d)
    frequent = {g for g, ds in found_in.items() if len(ds) >= sigma}
    phrases = [tuple(int(t) for t in table.phrase_ids(r)) for r in range(len(table))]
    owner_of = {}
    for rank, phrase in enumerate(phrases):
        for s in range(len(phrase) - k + 1):
            owner_of.setdefault(phrase[s:s + k], rank)  # ranks ascend: first is best
    masks, owners = [], []
    for doc in docs:
        mask = [0] * len(doc)
        by_window = [None] * len(doc)
        by_full = [None] * len(doc)
        for s in range(len(doc)):
            g = tuple(doc[s:s + k])
            if len(g) == k and g in frequent:
                for p in range(s, s + k):
                    mask[p] = 1
                    by_window[p] = min(owner_of[g], by_window[p] if by_window[p] is not None
                                       else owner_of[g])
            for rank, phrase in enumerate(phrases):
                if tuple(doc[s:s + len(phrase)]) == phrase:
                    for p in range(s, s + len(phrase)):
                        by_full[p] = rank if by_full[p] is None else min(rank, by_full[p])
        masks.append(mask)
        owners.append([f if f is not None else w for f, w in zip(by_full, by_window)])
    return masks, owners


docs_strategy = st.lists(st.lists(st.integers(0, 3), max_size=14), min_size=1, max_size=8)


@settings(max_examples=150, deadline=None)
@given(docs=docs_strategy, sigma=st.integers(2, 4), k=st.integers(2, 4))
def test_mined_coverage_equals_brute_force(docs, sigma, k):
    corpus = make_corpus(docs)
    cov = Coverage.from_phrases(corpus, mined_table(docs, sigma, k, corpus.vocab), k, sigma)
    masks, owners = brute_mined_coverage(docs, sigma, k, cov.phrases)
    assert cov.covered.tolist() == [m for mask in masks for m in mask]
    assert cov.doc_covered.tolist() == [sum(m) for m in masks]
    assert cov.tokens_covered == sum(map(sum, masks))
    expected_by_phrase = np.zeros(len(cov.phrases), dtype=np.int64)
    for owner in owners:
        for o in owner:
            if o is not None:
                expected_by_phrase[o] += 1
    assert cov.tokens_by_phrase.tolist() == expected_by_phrase.tolist()
    total = sum(map(len, docs))
    assert cov.share == (sum(map(sum, masks)) / total if total else 0.0)


@settings(max_examples=150, deadline=None)
@given(docs=docs_strategy,
       listed=st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=4), min_size=1,
                       max_size=5),
       threads=st.integers(1, 5))
def test_occurrences_on_threads_equal_brute_force(docs, listed, threads):
    """Documents are split into ranges scanned on threads; the concatenation is every full
    occurrence in corpus order, whatever the number of ranges (more than documents, too)."""
    from corpus_miner.coverage.coverage import PhraseTables

    corpus = make_corpus(docs)
    vocab = [f"w{i}" for i in range(5)]
    table = PhraseTable.from_lists(listed, [0] * len(listed), [0] * len(listed), vocab)
    with mock.patch("corpus_miner.coverage.coverage.mining_threads", lambda n: threads):
        occ = PhraseTables(table).occurrences(corpus.tokens, corpus.doc_offsets)
    phrases = [tuple(int(t) for t in table.phrase_ids(r)) for r in range(len(table))]
    expected = sorted((int(corpus.doc_offsets[d]) + s, r, d) for d, doc in enumerate(docs)
                      for s in range(len(doc)) for r, phrase in enumerate(phrases)
                      if tuple(doc[s:s + len(phrase)]) == phrase)
    got = list(zip(occ.start.tolist(), occ.phrase.tolist(), occ.doc.tolist()))
    assert [g[0] for g in got] == sorted(g[0] for g in got)  # corpus order
    assert sorted(got) == expected


@settings(max_examples=150, deadline=None)
@given(docs=docs_strategy, sigma=st.integers(2, 4), k=st.integers(2, 4),
       threads=st.integers(1, 5))
def test_mined_coverage_on_threads_equals_brute_force(docs, sigma, k, threads):
    """Marking, occurrences and attribution each run on 1-5 ranges of documents: the same
    mask, attribution and occurrences whatever the number of ranges."""
    corpus = make_corpus(docs)
    table = mined_table(docs, sigma, k, corpus.vocab)
    with mock.patch("corpus_miner.coverage.coverage.mining_threads", lambda n: threads):
        cov = Coverage.from_phrases(corpus, table, k, sigma)
    masks, owners = brute_mined_coverage(docs, sigma, k, cov.phrases)
    assert cov.covered.tolist() == [m for mask in masks for m in mask]
    expected_by_phrase = np.bincount([o for owner in owners for o in owner if o is not None],
                                     minlength=len(cov.phrases))
    assert cov.tokens_by_phrase.tolist() == expected_by_phrase.tolist()
    phrases = [tuple(int(t) for t in cov.phrases.phrase_ids(r)) for r in range(len(cov.phrases))]
    expected = [(int(corpus.doc_offsets[d]) + s, r, d) for d, doc in enumerate(docs)
                for s in range(len(doc)) for r, phrase in enumerate(phrases)
                if tuple(doc[s:s + len(phrase)]) == phrase]
    occ = cov.occurrences
    assert sorted(zip(occ.start.tolist(), occ.phrase.tolist(), occ.doc.tolist())) == expected
    assert occ.start.tolist() == sorted(occ.start.tolist())


@settings(max_examples=100, deadline=None)
@given(docs=docs_strategy,
       listed=st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=4), max_size=5))
def test_list_coverage_equals_brute_force(docs, listed):
    corpus = make_corpus(docs)
    vocab = [f"w{i}" for i in range(5)]
    corpus.vocab = vocab
    table = PhraseTable.from_lists(listed, [0] * len(listed), [0] * len(listed), vocab)
    cov = Coverage.from_phrase_list(corpus, table)
    ranked = [tuple(int(t) for t in cov.phrases.phrase_ids(r)) for r in range(len(cov.phrases))]
    mask, owner = [], []
    for doc in docs:
        m, o = [0] * len(doc), [None] * len(doc)
        for s in range(len(doc)):
            for rank, phrase in enumerate(ranked):
                if tuple(doc[s:s + len(phrase)]) == phrase:
                    for p in range(s, s + len(phrase)):
                        m[p] = 1
                        o[p] = rank if o[p] is None else min(o[p], rank)
        mask += m
        owner += o
    assert cov.covered.tolist() == mask
    counts = np.bincount([o for o in owner if o is not None], minlength=len(ranked))
    assert cov.tokens_by_phrase.tolist() == counts.tolist()
    for rank, phrase in enumerate(ranked):
        in_docs = {d for d, doc in enumerate(docs) for s in range(len(doc))
                   if tuple(doc[s:s + len(phrase)]) == phrase}
        assert cov.phrases.df[rank] == len(in_docs)


def test_article_toy_example_figures():
    words = "new laptop acer swift free shipping on orders over 50 dollars case for iphone 15 " \
            "sony headphones wh 1000".split()
    ids = {w: i for i, w in enumerate(dict.fromkeys(words))}
    texts = ["new laptop acer swift free shipping on orders over 50 dollars",
             "case for iphone 15 free shipping on orders over 50 dollars",
             "free shipping on orders over 50 dollars sony headphones",
             "sony headphones wh 1000 free shipping"]
    docs = [[ids[w] for w in t.split()] for t in texts]
    corpus = make_corpus(docs)
    corpus.vocab = list(ids)
    cov = Coverage.from_phrases(corpus, mined_table(docs, 3, 2, corpus.vocab), 2, 3)
    assert cov.phrases.text(0) == "free shipping on orders over 50 dollars"
    # "free shipping" in D4 is a frequent 2-gram too: covered although not a full occurrence
    assert cov.doc_covered.tolist() == [7, 7, 7, 2]
    assert cov.tokens_covered == 23 and cov.n_tokens == 37
    assert cov.tokens_by_phrase.tolist() == [23]
    assert cov.template_documents(0.7).tolist() == [2]
    counts, _ = cov.histogram(bins=10)
    assert counts.tolist() == [0, 0, 0, 1, 0, 0, 2, 1, 0, 0]  # 2/6, 7/11, 7/11, 7/9


def test_figures_on_known_shares():
    # doc shares 0, 0.5, 1.0, 1.0 (one empty document is ignored by the distribution)
    docs = [[5, 6], [0, 1, 7, 8], [0, 1], [0, 1], []]
    corpus = make_corpus(docs)
    cov = Coverage.from_phrases(corpus, mined_table(docs, 3, 2, corpus.vocab), 2, 3)
    assert cov.doc_share.tolist() == [0.0, 0.5, 1.0, 1.0, 0.0]
    assert cov.template_documents(0.9).tolist() == [2, 3]
    counts, edges = cov.histogram(bins=4)
    assert counts.tolist() == [1, 0, 1, 2] and edges[-1] == 1.0
    assert cov.deciles().tolist() == pytest.approx(np.quantile([0, 0.5, 1, 1], np.linspace(
        0.1, 0.9, 9)).tolist())
    summary = cov.summary()
    assert (summary["documents"], summary["tokens"], summary["tokens_covered"]) == (5, 10, 6)
    assert summary["coverage"] == pytest.approx(0.6)


def test_hogs_rankings_differ_when_overlaps_are_counted_once():
    # A = 1 2 3 4 (df 3) and B = 3 4 5 6 7 (df 2) overlap in D1; C = 8 9 10 (df 3) stands alone
    docs = [[1, 2, 3, 4, 5, 6, 7], [1, 2, 3, 4, 11], [0, 3, 4, 5, 6, 7], [1, 2, 3, 4, 12],
            [13, 8, 9, 10], [14, 8, 9, 10], [8, 9, 10, 15]]
    corpus = make_corpus(docs)
    cov = Coverage.from_phrases(corpus, mined_table(docs, 2, 2, corpus.vocab), 2, 2)
    by_psi = [cov.phrases.text(i) for i in cov.hogs(by="psi")]
    by_covered = [cov.phrases.text(i) for i in cov.hogs(by="covered")]
    assert by_psi == ["w1 w2 w3 w4", "w3 w4 w5 w6 w7", "w8 w9 w10"]  # Psi 12, 10, 9
    # in D1, "w3 w4" lies in full occurrences of A and B: counted once, for A (better Psi)
    assert by_covered == ["w1 w2 w3 w4", "w8 w9 w10", "w3 w4 w5 w6 w7"]  # 12, 9, 8 tokens
    assert cov.tokens_by_phrase.tolist() == [12, 8, 9]
    assert cov.tokens_covered == 29


def test_find_occurrences_and_text_mapping():
    corpus = make_corpus([[0, 1, 2, 0, 1], [1, 2], [0, 1, 0, 1]])
    table, unmatched = phrases_from_texts(["W0 w1", "w1, W2!", "w9 w1", "", "w0  w1"],
                                          corpus.vocab, lambda s: s.lower().replace(",", " ")
                                          .replace("!", " ").split())
    assert unmatched == ["w9 w1", ""]
    assert [table.text(i) for i in range(len(table))] == ["w0 w1", "w1 w2"]
    occ = find_occurrences(corpus, table)
    got = sorted(zip(occ.phrase.tolist(), occ.doc.tolist(), occ.start.tolist()))
    assert got == [(0, 0, 0), (0, 0, 3), (0, 2, 7), (0, 2, 9), (1, 0, 1), (1, 1, 5)]


def test_rejects_phrases_shorter_than_min_length():
    corpus = make_corpus([[0, 1, 2]])
    table = PhraseTable.from_lists([[0, 1]], [2], [2], corpus.vocab)
    with pytest.raises(ParameterError, match="min_length"):
        Coverage.from_phrases(corpus, table, 3)


_PLAIN_SCRIPT = """
import json, sys, warnings
import numpy as np
warnings.simplefilter("error")
from corpus_miner.coverage import kernels as k
a = json.loads(sys.argv[1])
arr = lambda key, dt: np.array(a[key], dtype=dt)
with np.errstate(over="ignore"):  # the 64-bit hash wraps on purpose
    table = k.build_window_table(arr("pt", np.uint32), arr("po", np.int64), 3,
                                 np.arange(len(a["po"]) - 1, dtype=np.int64))
    cov = k.cover_by_windows(arr("t", np.uint32), arr("o", np.int64), 3, *table,
                             arr("pt", np.uint32), len(a["po"]) - 1, arr("skip", np.uint8))
    pre = k.build_prefix_table(arr("pt", np.uint32), arr("po", np.int64), 3)
sweep = k.cover_by_occurrences(12, arr("s", np.int64), arr("l", np.int64), arr("r", np.int64), 3)
print(json.dumps({"numba": type(k.cover_by_windows).__name__,
                  "table": [x.tolist() for x in table], "cov": [x.tolist() for x in cov],
                  "pre": [x.tolist() for x in pre], "sweep": [x.tolist() for x in sweep],
                  "runs": k.covered_runs(sweep[0], 0, 12).tolist(),
                  "marks": k.mark_intervals(12, arr("s", np.int64), arr("l", np.int64)).tolist()}))
"""


def test_kernels_without_jit_match_compiled():
    """NUMBA_DISABLE_JIT=1 runs the kernels as plain Python: same results as compiled."""
    import json

    rng = np.random.default_rng(7)
    docs = [rng.integers(0, 3, size=n).tolist() for n in (9, 0, 12, 7, 11)]
    corpus = make_corpus(docs)
    table = mined_table(docs, 2, 3, corpus.vocab).sorted()
    skip = np.zeros(len(corpus.tokens), dtype=np.uint8)
    skip[::3] = 1
    starts, lengths, ranks = [0, 2, 2, 9], [3, 1, 4, 2], [1, 0, 2, 0]
    payload = {"t": corpus.tokens.tolist(), "o": corpus.doc_offsets.tolist(),
               "pt": table.tokens.tolist(), "po": table.offsets.tolist(), "skip": skip.tolist(),
               "s": starts, "l": lengths, "r": ranks}
    plain = json.loads(run_python(_PLAIN_SCRIPT, json.dumps(payload), jit=False))
    assert plain["numba"] == "function"  # really ran without the JIT
    built = kernels.build_window_table(table.tokens, table.offsets, 3,
                                       np.arange(len(table), dtype=np.int64))
    assert plain["table"] == [x.tolist() for x in built]
    fast = kernels.cover_by_windows(corpus.tokens, corpus.doc_offsets, 3, *built, table.tokens,
                                    len(table), skip)
    assert plain["cov"] == [x.tolist() for x in fast]
    assert plain["pre"] == [x.tolist() for x in kernels.build_prefix_table(table.tokens,
                                                                           table.offsets, 3)]
    assert plain["sweep"][0] == [1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0]
    assert plain["sweep"][1] == [3, 2, 3]
    assert plain["marks"] == plain["sweep"][0]
    assert plain["runs"] == [[0, 6], [9, 11]]


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, sigma=st.integers(2, 3), k=st.integers(2, 3),
       algorithm=st.sampled_from(["bloomspan", "fhk"]))
def test_coverage_of_a_real_mining_run_equals_brute_force(docs, sigma, k, algorithm):
    from corpus_miner.phrases import BloomSpan

    corpus = make_corpus(docs)
    if sigma > len(docs):
        return
    miner = BloomSpan(sigma=sigma, min_length=k, algorithm=algorithm).fit(corpus)
    cov = Coverage.from_miner(miner, corpus)
    masks, _ = brute_mined_coverage(docs, sigma, k, cov.phrases)
    assert cov.covered.tolist() == [m for mask in masks for m in mask]
    assert int(cov.tokens_by_phrase.sum()) == cov.tokens_covered
