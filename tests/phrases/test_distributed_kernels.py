"""The distributed miner's worker-side kernels against obvious references over random inputs:
merges of sorted runs, gram statistics merges, key sets, word tables, bigram counts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner._numba.sorted_runs import sum_sorted_runs
from corpus_miner.phrases.distributed import counts

KEY_POOLS = st.sampled_from([
    [0, 1, 2, 3],  # many equal keys
    [0, 5, 2**63, 2**64 - 1],  # extremes of uint64
    list(range(40)),
])


@st.composite
def keyed_rows(draw, max_rows=80):
    """(keys, runs): keys drawn from a small pool, then cut into runs that are sorted or not."""
    pool = draw(KEY_POOLS)
    keys = draw(st.lists(st.sampled_from(pool), max_size=max_rows))
    cuts = sorted(draw(st.lists(st.integers(0, len(keys)), max_size=6)))
    runs = [keys[a:b] for a, b in zip([0] + cuts, cuts + [len(keys)], strict=True)]
    if draw(st.booleans()):
        runs = [sorted(run) for run in runs]
    return np.array([k for run in runs for k in run], dtype=np.uint64), len(runs)


@given(keyed_rows(), st.randoms(use_true_random=False))
@settings(max_examples=400, deadline=None)
def test_sum_of_sorted_runs_equals_unique_and_add_at(rows, rnd):
    keys, _ = rows
    values = np.array([rnd.randint(-(2**40), 2**40) for _ in keys], dtype=np.int64)
    before = (keys.copy(), values.copy())
    cut = rnd.randint(0, len(keys))  # the rows in two pieces, each holding sorted runs or not
    got_keys, got_sums = sum_sorted_runs([(keys[:cut], values[:cut]), (keys[cut:], values[cut:])])
    want_keys, inverse = np.unique(keys, return_inverse=True)
    want_sums = np.zeros(len(want_keys), np.int64)
    np.add.at(want_sums, inverse, values)
    assert got_keys.dtype == np.uint64 and got_sums.dtype == np.int64
    assert got_keys.tolist() == want_keys.tolist()
    assert got_sums.tolist() == want_sums.tolist()
    assert keys.tolist() == before[0].tolist() and values.tolist() == before[1].tolist()


def test_sum_of_sorted_runs_of_nothing_and_of_read_only_inputs():
    for nothing in ([], [(np.zeros(0, np.uint64), np.zeros(0, np.int64))]):
        keys, values = sum_sorted_runs(nothing)
        assert keys.tolist() == [] and values.tolist() == []
    frozen = np.array([3, 1, 3], np.uint64)
    frozen.flags.writeable = False
    keys, values = sum_sorted_runs([(frozen, np.array([1, 2, 3], np.uint32))])
    assert (keys.tolist(), values.tolist()) == ([1, 3], [2, 4])


@st.composite
def gram_parts(draw):
    """Gram statistics of a few parts, each sorted by distinct fingerprints."""
    pool = draw(KEY_POOLS)
    parts = []
    for _ in range(draw(st.integers(0, 6))):
        fp = sorted(set(draw(st.lists(st.sampled_from(pool), max_size=30))))
        n = len(fp)
        df = draw(st.lists(st.integers(1, 2**33), min_size=n, max_size=n))
        occ = [d + draw(st.integers(0, 5)) for d in df]
        lo = draw(st.lists(st.integers(0, 0xFFFFFFFF), min_size=n, max_size=n))
        hi = [max(x, draw(st.integers(0, 0xFFFFFFFF))) for x in lo]
        none = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
        part = {"fp": np.array(fp, np.uint64), "df": np.array(df, np.int64),
                "occurrences": np.array(occ, np.int64), "min_left": np.array(lo, np.int64),
                "max_left": np.array(hi, np.int64), "has_no_left": np.array(none, np.int64)}
        parts.append(part)
    return parts


@given(gram_parts())
@settings(max_examples=300, deadline=None)
def test_gram_statistics_merge_equals_a_dictionary_of_rows(parts):
    want: dict[int, list[int]] = {}
    for part in parts:
        for i, fp in enumerate(part["fp"].tolist()):
            row = [int(part[name][i]) for name in counts.GRAM_FIELDS[1:]]
            if fp in want:
                old = want[fp]
                row = [old[0] + row[0], old[1] + row[1], min(old[2], row[2]),
                       max(old[3], row[3]), max(old[4], row[4])]
            want[fp] = row
    merged = counts.merge_gram_statistics(parts)
    assert list(merged) == list(counts.GRAM_FIELDS)
    assert merged["fp"].tolist() == sorted(want)
    for c, name in enumerate(counts.GRAM_FIELDS[1:]):
        assert merged[name].tolist() == [want[fp][c] for fp in sorted(want)], name


@given(st.lists(st.sampled_from([0, 1, 2, 3, 2**63, 2**64 - 1]) | st.integers(0, 2**64 - 1),
                max_size=60),
       st.lists(st.sampled_from([0, 1, 2, 3, 2**63, 2**64 - 1]) | st.integers(0, 2**64 - 1),
                max_size=60))
@settings(max_examples=300, deadline=None)
def test_key_set_membership_equals_a_python_set(keys, queries):
    """0 is the table's empty slot and is remembered apart: sets with and without it."""
    from corpus_miner._numba.keyset import KeySet

    got = KeySet(np.array(keys, np.uint64))(np.array(keys + queries, np.uint64))
    assert got.tolist() == [q in set(keys) for q in keys + queries]


@given(st.lists(st.integers(0, 2**64 - 1), max_size=300),
       st.lists(st.integers(0, 2**64 - 1), max_size=50))
@settings(max_examples=300, deadline=None)
def test_block_filter_holds_every_key(keys, queries):
    """A split-block filter may answer yes for an absent key, never no for a present one."""
    from corpus_miner._numba.block_filter import BlockFilter

    test = BlockFilter(np.array(keys, np.uint64))
    assert test(np.array(keys, np.uint64)).all()
    assert len(test(np.array(queries, np.uint64))) == len(queries)


@pytest.mark.parametrize("n_keys", [1_000, 364_000])
def test_block_filter_errs_at_its_predicted_rate(n_keys):
    from corpus_miner._numba.block_filter import BlockFilter

    rng = np.random.default_rng(n_keys)
    keys = rng.integers(0, 2**63, n_keys, dtype=np.uint64)
    absent = rng.integers(2**63, 2**64 - 1, 2_000_000, dtype=np.uint64)  # disjoint ranges
    test = BlockFilter(keys)
    predicted = test.false_positive_rate(n_keys)
    assert 0.0003 < predicted < 0.003  # 16 bits a key
    assert abs(test(absent).mean() - predicted) < 0.25 * predicted


# words sharing their first 8 bytes, lengths around 8 and 255, non-ASCII, the empty word
WORDS = st.sampled_from(["", "a", "ab", "abcdefgh", "abcdefghi", "abcdefghj", "abcdefgh\x00",
                         "été", "漢字", "x" * 254, "x" * 255, "x" * 256, "x" * 300]) | \
    st.text(alphabet="ab\x00é", max_size=12)


@given(st.lists(st.lists(WORDS, max_size=20), max_size=5), st.randoms(use_true_random=False))
@settings(max_examples=300, deadline=None)
def test_word_counter_sums_like_a_dictionary(batches, rnd):
    from corpus_miner.io.strings import StringList
    from corpus_miner.phrases.distributed.word_table import WordCounter

    counter, want = WordCounter(), {}
    for batch in batches:
        distinct = list(dict.fromkeys(batch))  # a batch vocabulary holds each word once
        df = [rnd.randint(1, 9) for _ in distinct]
        counter.add(StringList.from_strings(distinct), np.array(df, np.int64))
        for word, d in zip(distinct, df, strict=True):
            want[word] = want.get(word, 0) + d
    words, counts_ = counter.result()
    assert dict(zip(list(words), counts_.tolist(), strict=True)) == want
    assert len(words) == len(want)


@given(st.lists(WORDS, max_size=40), st.lists(WORDS, max_size=40))
@settings(max_examples=300, deadline=None)
def test_word_index_finds_exactly_the_vocabulary(vocab, queries):
    from corpus_miner.io.strings import StringList
    from corpus_miner.phrases.distributed.encode import BREAK, WordIndex

    vocab = sorted(set(vocab))
    index = WordIndex(StringList.from_strings(vocab))
    asked = vocab + queries
    got = index.ids(StringList.from_strings(asked)).tolist()
    assert got == [vocab.index(w) if w in vocab else int(BREAK) for w in asked]


def test_word_counter_grows_past_its_first_table():
    from corpus_miner.io.strings import StringList
    from corpus_miner.phrases.distributed.word_table import WordCounter

    counter = WordCounter()
    words = [f"w{i}" for i in range(70_000)]  # more than the first table holds half full
    for _ in range(2):
        counter.add(StringList.from_strings(words), np.ones(len(words), np.int64))
    got, df = counter.result()
    assert list(got) == words and df.tolist() == [2] * len(words)


@given(st.lists(st.tuples(st.sampled_from([0, 1, 7, 2**40 - 1]), st.integers(0, 5)),
                max_size=60))
@settings(max_examples=200, deadline=None)
def test_documents_per_key_counts_each_document_once(pairs):
    shift = counts.PAIR_DOC_BITS
    packed = np.sort(np.array([(k << shift) | d for k, d in pairs], np.uint64))
    keys, docs = counts.documents_per_key(packed, shift)
    want = {}
    for k, _doc in set(pairs):
        want[k] = want.get(k, 0) + 1
    assert keys.tolist() == sorted(want)
    assert docs.tolist() == [want[k] for k in sorted(want)]
