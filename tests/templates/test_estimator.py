"""SlotTemplates: the estimator convention, planted templates found, every reported figure
equal to the plain-Python reference's, the same bytes for any thread count and without the
JIT."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import TokenCorpus, tokenize
from corpus_miner.errors import NotFittedError, ParameterError
from corpus_miner.templates import SlotTemplates
from tests.helpers import run_python
from tests.templates import oracle
from tests.templates.planted import planted_texts


def corpus_of(texts: list[str]) -> TokenCorpus:
    vocab: dict[str, int] = {}
    docs = [[vocab.setdefault(w, len(vocab)) for w in tokenize(t)] for t in texts]
    import numpy as np

    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    return TokenCorpus(tokens, offsets, [f"d{i}" for i in range(len(docs))], list(vocab))


def check_against_oracle(texts: list[str], found: SlotTemplates) -> None:
    docs = [tokenize(t) for t in texts]
    for row in found.templates_.rows:
        anchors = [part.split() for part in row["pattern"].split(" <*> ")]
        expected = oracle.occurrences(docs, anchors, row["max_gap"])
        assert row["occurrences"] == len(expected), row["pattern"]
        assert row["df"] == len({d for d, _ in expected}), row["pattern"]
        fillers = oracle.slot_fillers(docs, anchors, expected)
        assert len(fillers) == len(row["slots"])
        for slot, counter in zip(row["slots"], fillers):
            assert slot["distinct"] == len(counter)
            top = sorted(((" ".join(k), v) for k, v in counter.items()),
                         key=lambda kv: (-kv[1], kv[0]))
            assert [c for _, c in slot["top"]] == [c for _, c in top[:len(slot["top"])]]
            lengths = {}
            for filler, count in counter.items():
                lengths[str(len(filler))] = lengths.get(str(len(filler)), 0) + count
            assert slot["len_hist"] == dict(sorted(lengths.items(), key=lambda kv: int(kv[0])))
        assert row["df"] >= found.sigma


def test_planted_bylines_and_counters_are_found_once_with_their_slots():
    texts = planted_texts(seed=1, n_docs=80)
    found = SlotTemplates(sigma=10).fit(corpus_of(texts))
    patterns = [row["pattern"] for row in found.templates_.rows]
    assert any(p.startswith("updated on <month> <num> <num> by") for p in patterns), patterns
    assert any(p.startswith("page <num> of <num>") for p in patterns), patterns
    assert "written by <*> on <month> <num> <num>" in patterns, patterns
    byline = next(r for r in found.templates_.rows if r["pattern"].startswith("updated on"))
    assert byline["slots"][0]["type"] == "date"
    written = next(r for r in found.templates_.rows if r["pattern"].startswith("written by"))
    assert written["slots"][0]["type"] == "name-like"
    assert written["slots"][0]["len_hist"] == {"2": written["occurrences"]}
    check_against_oracle(texts, found)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10**6), st.integers(20, 60), st.sampled_from([5, 8]))
def test_every_reported_figure_equals_the_reference(seed, n_docs, sigma):
    texts = planted_texts(seed=seed, n_docs=n_docs, vocabulary=200)
    check_against_oracle(texts, SlotTemplates(sigma=sigma).fit(corpus_of(texts)))


def test_estimator_convention():
    est = SlotTemplates(sigma=7, max_gap=3)
    assert est.get_params()["sigma"] == 7 and est.get_params()["max_gap"] == 3
    assert est.set_params(sigma=9) is est and est.sigma == 9
    with pytest.raises(NotFittedError, match="fit"):
        _ = est.templates_
    with pytest.raises(ParameterError, match="max_gap"):
        SlotTemplates(max_gap=0).fit(corpus_of(["a b c"]))
    with pytest.raises(ParameterError):
        est.set_params(no_such=1)
    assert est.fit(corpus_of(planted_texts(n_docs=30))) is est


_RUN = """
import json, sys
from tests.templates.planted import planted_texts
from tests.templates.test_estimator import corpus_of
from corpus_miner.templates import SlotTemplates
found = SlotTemplates(sigma=8).fit(corpus_of(planted_texts(seed=3, n_docs=60)))
print(json.dumps(found.templates_.rows, sort_keys=True))
"""


@pytest.mark.parametrize("threads,jit", [("1", True), ("2", True), ("1", False)])
def test_same_answer_for_any_thread_count_and_without_the_jit(threads, jit):
    expected = SlotTemplates(sigma=8).fit(corpus_of(planted_texts(seed=3, n_docs=60)))
    got = run_python(_RUN, jit=jit, NUMBA_NUM_THREADS=threads)
    assert json.loads(got) == json.loads(json.dumps(expected.templates_.rows, sort_keys=True))
