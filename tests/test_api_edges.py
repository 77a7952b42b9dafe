"""Python API edges that ended in the wrong exception (issue 22): every bad argument is a
corpus-miner error naming it, the same for every algorithm and mode."""

from __future__ import annotations

import numpy as np
import pytest

from corpus_miner.corpus.token_corpus import TokenCorpus
from corpus_miner.dedup import LSHBloom
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.phrases.miner import BloomSpan


@pytest.mark.parametrize("algorithm", ["auto", "bloomspan", "fhk"])
def test_token_ids_beyond_the_vocabulary_are_refused_by_every_algorithm(algorithm):
    corpus = TokenCorpus(np.array([0, 1, 2, 5, 0, 1, 2, 5], np.uint32), np.array([0, 4, 8]),
                         ["a", "b"], ["w0", "w1", "w2"])
    with pytest.raises(InputError, match="outside the vocabulary"):
        BloomSpan(sigma=2, min_length=2, algorithm=algorithm).fit(corpus)


def test_a_progress_that_is_not_callable_is_a_parameter_error():
    corpus = TokenCorpus(np.array([0, 1, 0, 1], np.uint32), np.array([0, 2, 4]), ["a", "b"],
                         ["x", "y"])
    with pytest.raises(ParameterError, match="progress must be a callable"):
        BloomSpan(sigma=2, min_length=2, progress=1).fit(corpus)
    seen = []
    BloomSpan(sigma=2, min_length=2, progress=seen.append).fit(corpus)
    assert seen


def test_a_dataframe_is_refused_with_its_column_named():
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"text": ["a b c d e f", "a b c d e f"]})
    with pytest.raises(InputError, match=r"DataFrame; pass its text column"):
        LSHBloom(num_perm=16).deduplicate(frame)
    assert LSHBloom(num_perm=16).deduplicate(frame["text"]).is_duplicate.tolist() == [False,
                                                                                     True]


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
def test_a_wrong_number_of_ids_is_refused_in_every_mode(mode):
    texts = ["a b c d e f", "a b c d e f", "x y z w v u"]
    with pytest.raises(InputError, match="got 1 ids for 3 texts"):
        LSHBloom(num_perm=16, mode=mode).deduplicate(texts, ids=["1"])
    with pytest.raises(InputError, match="got 4 ids for 3 texts"):
        LSHBloom(num_perm=16, mode=mode).deduplicate(texts, ids=["1", "2", "3", "4"])
    assert len(LSHBloom(num_perm=16, mode=mode).deduplicate(texts, ids=["a", "b", "c"])) == 3
