"""Python API edges that ended in the wrong exception (issue 22): every bad argument is a
corpus-miner error naming it, the same for every algorithm and mode."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
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


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
def test_a_dataframe_gives_its_text_column(mode):
    pandas = pytest.importorskip("pandas")
    texts = ["a b c d e f", "a b c d e f", None, "x y z w v u", "a b c d e f"]
    frame = pandas.DataFrame({"body": texts, "n": range(5)})
    as_texts = [t or "" for t in texts]
    model = LSHBloom(num_perm=16, mode=mode)
    expected = LSHBloom(num_perm=16, mode=mode).deduplicate(as_texts).is_duplicate.tolist()
    assert model.deduplicate(frame, text_col="body").is_duplicate.tolist() == expected
    assert model.query(frame, text_col="body").is_duplicate.all()
    table = LSHBloom(num_perm=16, mode=mode).fit(pa.table({"text": as_texts[:2]}))
    assert table.query(frame, text_col="body").is_duplicate.tolist() == [True, True, False,
                                                                        False, True]
    with pytest.raises(InputError, match="text_col='text' is not a column"):
        model.deduplicate(frame)
    with pytest.raises(InputError, match="column 'n' has type int64, expected strings"):
        model.partial_fit(frame, text_col="n")


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
def test_a_wrong_number_of_ids_is_refused_in_every_mode(mode):
    texts = ["a b c d e f", "a b c d e f", "x y z w v u"]
    with pytest.raises(InputError, match="got 1 ids for 3 texts"):
        LSHBloom(num_perm=16, mode=mode).deduplicate(texts, ids=["1"])
    with pytest.raises(InputError, match="got 4 ids for 3 texts"):
        LSHBloom(num_perm=16, mode=mode).deduplicate(texts, ids=["1", "2", "3", "4"])
    assert len(LSHBloom(num_perm=16, mode=mode).deduplicate(texts, ids=["a", "b", "c"])) == 3
