"""The BloomSpan estimator: sklearn habits (init stores, fit validates and returns self)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from corpus_miner.errors import InputError, NotFittedError, ParameterError
from corpus_miner.phrases import BloomSpan, PhraseTable
from tests.phrases.test_bloomspan import TOY, arrays, encode


def toy_corpus(repeat=1):
    docs, vocab = encode(TOY * repeat)
    tokens, offsets = arrays(docs)
    return SimpleNamespace(tokens=tokens, doc_offsets=offsets, vocab=vocab)


def test_fit_returns_self_and_learns_phrases():
    miner = BloomSpan(sigma=3, min_length=2)
    assert miner.fit(toy_corpus()) is miner
    assert isinstance(miner.phrases_, PhraseTable)
    assert [miner.phrases_.text(i) for i in range(len(miner.phrases_))] == [
        "free shipping on orders over 50 dollars"]
    assert miner.stats_["algorithm"] == "bloomspan" and miner.stats_["phrases"] == 1


def test_phrases_in_canonical_order():
    miner = BloomSpan(sigma=2, min_length=2).fit(toy_corpus())
    assert list(miner.phrases_.rows()) == list(miner.phrases_.sorted().rows())
    assert len(miner.phrases_) == 2  # plus "sony headphones" at sigma 2


@pytest.mark.parametrize("sigma, min_length", [(2, 2), (3, 2), (6, 3), (4, 7)])
def test_fhk_gives_the_same_answer(sigma, min_length):
    corpus = toy_corpus(repeat=2)
    ours = BloomSpan(sigma=sigma, min_length=min_length).fit(corpus)
    theirs = BloomSpan(sigma=sigma, min_length=min_length, algorithm="fhk").fit(corpus)
    assert list(ours.phrases_.rows()) == list(theirs.phrases_.rows())
    assert theirs.stats_["algorithm"] == "fhk"


def test_not_fitted():
    miner = BloomSpan()
    for name in ("phrases_", "stats_"):
        with pytest.raises(NotFittedError, match="fit"):
            getattr(miner, name)
    with pytest.raises(AttributeError):
        miner.no_such_thing


def test_init_only_stores_and_fit_validates():
    miner = BloomSpan(sigma=0, min_length=1, algorithm="nope")  # no error yet (sklearn habit)
    assert miner.get_params()["sigma"] == 0
    with pytest.raises(ParameterError, match="sigma=0"):
        miner.fit(toy_corpus())
    with pytest.raises(ParameterError, match="algorithm='nope'"):
        BloomSpan(algorithm="nope").fit(toy_corpus())


def test_fit_rejects_non_corpus():
    with pytest.raises(InputError, match="TokenCorpus"):
        BloomSpan().fit([[1, 2, 3]])


def test_progress_callback_sees_every_stage():
    seen = []
    BloomSpan(sigma=3, min_length=2, progress=seen.append).fit(toy_corpus())
    assert seen == ["word_df", "counting_filter", "candidates", "exact_seeds", "psi_order",
                    "growth", "output"]


def test_sigma_above_documents():
    miner = BloomSpan(sigma=50, min_length=2).fit(toy_corpus())
    assert len(miner.phrases_) == 0 and "exceeds" in miner.stats_["note"]


def test_numpy_integer_parameters_accepted():
    miner = BloomSpan(sigma=np.int64(3), min_length=np.int32(2)).fit(toy_corpus())
    assert len(miner.phrases_) == 1
