"""The BloomSpan estimator: sklearn habits (init stores, fit validates and returns self)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from corpus_miner.errors import InputError, NotFittedError, ParameterError
from corpus_miner.phrases import BloomSpan, PhraseTable
from tests.helpers import as_arrays, word_ids
from tests.phrases.test_bloomspan import TOY


def toy_corpus(repeat=1):
    docs, vocab = word_ids(TOY * repeat)
    tokens, offsets = as_arrays(docs)
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
        _ = miner.no_such_thing


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


def test_auto_is_the_default_and_picks_bloomspan_for_text():
    miner = BloomSpan(sigma=3, min_length=2).fit(toy_corpus())
    assert miner.get_params()["algorithm"] == "auto"
    assert miner.stats_["auto_choice"] == miner.stats_["algorithm"] == "bloomspan"
    assert miner.stats_["auto_windows_per_frequent_word"] < 20_000


def dense_corpus():
    """A few words in overlapping windows of two long families: the shape where fhk wins."""
    from corpus_miner import synth

    docs = synth.synthetic2(300, 10, n_families=2, family_length=60, windows_per_doc=6,
                            max_window=40, seed=2)
    vocab = sorted({w for d in docs for w in d})
    ids = {w: i for i, w in enumerate(vocab)}
    tokens, offsets = as_arrays([[ids[w] for w in d] for d in docs])
    return SimpleNamespace(tokens=tokens, doc_offsets=offsets, vocab=vocab)


def test_auto_picks_fhk_for_dense_repeats_of_few_words(monkeypatch):
    import corpus_miner.phrases.auto as auto

    corpus = dense_corpus()
    monkeypatch.setattr(auto, "DENSE_WINDOWS_PER_WORD", 1_000)  # the corpus is small
    chosen = BloomSpan(sigma=5, min_length=4).fit(corpus)
    assert chosen.stats_["auto_choice"] == chosen.stats_["algorithm"] == "fhk"
    assert chosen.stats_["auto_windows_per_frequent_word"] >= 1_000
    forced = BloomSpan(sigma=5, min_length=4, algorithm="bloomspan").fit(corpus)
    assert list(chosen.phrases_.rows()) == list(forced.phrases_.rows()) and len(forced.phrases_)
    monkeypatch.setattr(auto, "_available_memory", lambda: 1024)  # fhk would not fit
    assert BloomSpan(sigma=5, min_length=4).fit(corpus).stats_["algorithm"] == "bloomspan"
