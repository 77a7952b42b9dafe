import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.dedup.shingles import normalize_texts, shingle_batch
from corpus_miner.errors import InputError, ParameterError

from . import reference as ref

# Letters without special-case lowering (Python and utf8proc agree on them), multi-byte included,
# plus every kind of whitespace the normaliser collapses.
ALPHABET = ("abcXYZ éÉßøЖж漢字😀 \t\n\r\u00a0\u2003\x0b\x1c\u3000\x85\u1680\u2028\u2029\u202f"
            "\u205f\u200a\x1f"
            "\u200b\u2030\u00a1\u2080\u3001\u1681")  # last line: near misses, not whitespace
texts_strategy = st.lists(st.text(alphabet=ALPHABET, max_size=40), min_size=1, max_size=8)


def _split(hashes, offsets):
    return [list(map(int, hashes[offsets[d]:offsets[d + 1]])) for d in range(len(offsets) - 1)]


@settings(max_examples=150, deadline=None)
@given(texts_strategy)
def test_normalize_matches_python_split(texts):
    assert normalize_texts(texts).to_pylist() == [ref.normalize(t) for t in texts]


@settings(max_examples=150, deadline=None)
@given(texts_strategy, st.integers(1, 6), st.sampled_from(["char", "word"]))
def test_shingle_hashes_equal_reference(texts, size, kind):
    hashes, offsets = shingle_batch(texts, size, kind)
    assert offsets.dtype == np.int64 and hashes.dtype == np.uint64
    assert _split(hashes, offsets) == [ref.shingles(t, size, kind) for t in texts]


@settings(max_examples=100, deadline=None)
@given(texts_strategy, st.integers(1, 4), st.integers(1, 12))
def test_max_shingles_keeps_smallest_distinct(texts, size, cap):
    hashes, offsets = shingle_batch(texts, size, "char", max_shingles=cap)
    for got, text in zip(_split(hashes, offsets), texts):
        full = ref.shingles(text, size)
        # an uncapped document keeps its shingles in order; a capped one, a set of them
        assert (got if len(full) <= cap else sorted(got)) == ref.capped(full, cap)


def test_char_shingles_count_code_points_not_bytes():
    hashes, offsets = shingle_batch(["漢字漢字", "abcd"], 2)
    assert list(np.diff(offsets)) == [3, 3]
    # "漢字" occurs twice in the first document: same hash both times
    assert hashes[0] == hashes[2] != hashes[1]


def test_short_and_empty_documents():
    hashes, offsets = shingle_batch(["ab", "", "   ", "abcde"], 5)
    assert list(np.diff(offsets)) == [1, 0, 0, 1]
    assert int(hashes[0]) == ref.hash_bytes(b"ab")


def test_pyarrow_input_and_sliced_arrays():
    texts = ["one two three", "Four  five", "six"]
    whole, whole_offsets = shingle_batch(pa.array(texts), 3)
    sliced, sliced_offsets = shingle_batch(pa.chunked_array([pa.array(texts)[1:]]), 3)
    assert _split(sliced, sliced_offsets) == _split(whole, whole_offsets)[1:]


def test_null_texts_and_bad_parameters_are_refused():
    with pytest.raises(InputError, match="document 1"):
        shingle_batch(["a", None], 3)
    with pytest.raises(InputError):
        shingle_batch([1, 2], 3)
    with pytest.raises(ParameterError):
        shingle_batch(["a"], 0)
    with pytest.raises(ParameterError):
        shingle_batch(["a"], 3, "sentence")
