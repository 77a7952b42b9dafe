"""Seeds (packed and unpacked keys) and Psi order against dictionary counting."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from corpus_miner._numba.bitmask import bit_set, bitmask_new
from corpus_miner.errors import InputError
from corpus_miner.phrases import seeds as sd
from corpus_miner.phrases.doc_index import doc_block_shift, doc_block_table
from corpus_miner.phrases.window_filter import word_ranks

from .test_window_filter import random_corpus


def window_ok_sample(rng, tokens, offsets):
    """A random set of positions where a bigram starts inside a document, as a bit mask."""
    n = len(tokens)
    doc_of = np.searchsorted(offsets, np.arange(n), side="right") - 1
    chosen = [p for p in range(n - 1) if doc_of[p] == doc_of[p + 1] and rng.random() < 0.7]
    mask = bitmask_new(n)
    for p in chosen:
        bit_set(mask, p)
    return mask, chosen, doc_of


def expected_seeds(tokens, chosen, doc_of, sigma):
    by_bigram = defaultdict(list)
    for p in chosen:
        by_bigram[(int(tokens[p]), int(tokens[p + 1]))].append(p)
    return {bigram: (positions, len({int(doc_of[p]) for p in positions}))
            for bigram, positions in by_bigram.items()
            if len({int(doc_of[p]) for p in positions}) >= sigma}


def got_seeds(tokens, occurrences, lo, hi, df, pos_bits, doc_of):
    got = {}
    for a, b, c in zip(lo, hi, df):
        values = [int(v) for v in occurrences[a:b]]
        positions = [v & ((1 << pos_bits) - 1) for v in values]
        assert [v >> pos_bits for v in values] == [int(doc_of[p]) for p in positions]
        got[(int(tokens[positions[0]]), int(tokens[positions[0] + 1]))] = (positions, int(c))
    return got


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("bucket_bits", [0, 1, 3])
def test_packed_and_unpacked_seeds_match_dictionary_counting(seed, bucket_bits):
    rng = np.random.default_rng(seed)
    docs, tokens, offsets = random_corpus(rng, n_docs=25, alphabet=9, max_len=30)
    window_ok, chosen, doc_of = window_ok_sample(rng, tokens, offsets)
    sigma = 3
    shift = doc_block_shift(len(tokens), len(docs))
    table = doc_block_table(offsets, shift)
    rank = word_ranks(np.ones(9, dtype=bool))
    pos_bits = sd.bits_for(len(tokens))
    expected = expected_seeds(tokens, chosen, doc_of, sigma)
    found = sd.packed_seeds(tokens, window_ok, rank, 4, pos_bits, bucket_bits, offsets, table,
                            shift, sigma, threads=2)
    assert got_seeds(tokens, *found, pos_bits, doc_of) == expected
    found = sd.unpacked_seeds(tokens, window_ok, len(chosen), pos_bits, offsets, table, shift,
                              sigma)
    assert got_seeds(tokens, *found, pos_bits, doc_of) == expected


def test_seed_bucket_bits():
    assert sd.seed_bucket_bits(10, 30, 100) == 0  # fits, one bucket is enough
    assert sd.seed_bucket_bits(19, 30, 100) == 4  # 68 bits: four of them go to the bucket
    assert sd.seed_bucket_bits(19, 30, sd.KEYS_PER_BUCKET * 40) == 6  # for the threads
    assert sd.seed_bucket_bits(26, 30, 100) is None  # 82 bits: beyond MAX_BUCKET_BITS
    assert sd.seed_bucket_bits(3, 63, 100) is None  # the bucket bits come from the second rank


def test_occurrence_bits_limit():
    sd.check_occurrence_bits(1 << 20, 44)
    with pytest.raises(InputError, match="does not fit 64 bits"):
        sd.check_occurrence_bits((1 << 20) + 1, 45)


def test_psi_order_is_total_and_independent_of_seed_order():
    tokens = np.array([3, 4, 1, 2, 1, 2, 3, 4, 0, 5], dtype=np.uint32)
    first = np.array([2, 0, 8, 6], dtype=np.int64)  # bigrams (1,2) (3,4) (0,5) (3,4)
    occurrences = first.astype(np.uint64) | (np.uint64(7) << np.uint64(4))  # document bits
    df = np.array([5, 5, 9, 1])
    order = sd.psi_order(tokens, occurrences, np.arange(4), df, 15)
    assert order.tolist() == [2, 0, 1, 3]  # df 9, then df 5 by token ids (1,2) < (3,4), then df 1
    shuffled = np.array([3, 1, 0, 2])
    again = sd.psi_order(tokens, occurrences[shuffled], np.arange(4), df[shuffled], 15)
    assert shuffled[again].tolist() == order.tolist()
