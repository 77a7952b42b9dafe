"""The filter steps (word df, window hashes, the partitioned counting filter) against plain
Python references on raw arrays."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from corpus_miner._numba.bitmask import bit_get, bitmask_count
from corpus_miner._numba.hashing import splitmix64, window_hash
from corpus_miner.phrases import window_filter as wf
from corpus_miner.phrases.doc_index import doc_block_shift, doc_block_table

M64 = (1 << 64) - 1


def random_corpus(rng, n_docs=30, alphabet=6, max_len=25):
    docs = [list(rng.integers(0, alphabet, size=int(rng.integers(0, max_len))))
            for _ in range(n_docs)]
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    return docs, tokens, offsets


@pytest.fixture(params=[0, 1, 2])
def corpus(request):
    return random_corpus(np.random.default_rng(request.param))


def doc_index(tokens, offsets):
    shift = doc_block_shift(len(tokens), len(offsets) - 1)
    return doc_block_table(offsets, shift), shift


def windows(docs, length, word_ok):
    """(position, window tuple) of every window inside a document made of frequent words."""
    out, pos = [], 0
    for doc in docs:
        for i in range(len(doc) - length + 1):
            window = tuple(int(t) for t in doc[i:i + length])
            if all(word_ok[t] for t in window):
                out.append((pos + i, window))
        pos += len(doc)
    return out


def py_window_hash(window):
    h = 0
    for t in window:
        h = (h * 0x9E3779B97F4A7C15 + t + 1) & M64
    return int(splitmix64(np.uint64(h))) | 1


@pytest.mark.parametrize("sigma", [1, 2, 5, 70000])
@pytest.mark.parametrize("n_blocks", [1, 2, 3, 50])
def test_frequent_words_and_ranks(corpus, sigma, n_blocks):
    docs, tokens, offsets = corpus
    got = wf.frequent_words(tokens, offsets, 8, sigma, n_blocks)
    df = [sum(t in set(int(x) for x in d) for d in docs) for t in range(8)]
    assert got.tolist() == [x >= min(sigma, 65535) for x in df]
    ranks = wf.word_ranks(got)
    assert ranks.tolist() == [int(got[:t].sum()) if got[t] else -1 for t in range(8)]


@pytest.mark.parametrize("length", [2, 3, 7])
def test_window_counts(corpus, length):
    docs, tokens, offsets = corpus
    word_ok = np.array([True, False, True, True, True, True, True, True])
    assert wf.count_windows(offsets, length) == sum(max(len(d) - length + 1, 0) for d in docs)
    for n_blocks in (1, 2, 7):
        assert wf.count_frequent_windows(tokens, offsets, word_ok, length, n_blocks) \
            == len(windows(docs, length, word_ok))


@pytest.mark.parametrize("length", [2, 3, 5])
def test_hash_windows_against_python(corpus, length):
    docs, tokens, offsets = corpus
    word_ok = np.array([True, True, True, False, True, True, True, True])
    table, shift = doc_index(tokens, offsets)
    expected = np.zeros(len(tokens), dtype=np.uint64)
    for p, window in windows(docs, length, word_ok):
        expected[p] = py_window_hash(window)
        assert int(window_hash(tokens, p, length)) == int(window_hash(
            np.array(window, np.uint32), 0, length))
    n = len(tokens)
    for start, end in ((0, n), (0, n // 2), (n // 3, n), (5, 6)):
        if start >= end:
            continue
        out = np.full(end - start, 7, dtype=np.uint64)
        wf.hash_windows(tokens, offsets, table, shift, word_ok, length, start, end, out)
        assert out.tolist() == expected[start:end].tolist()


@pytest.mark.parametrize("n_cells, num_hashes", [(64, 1), (97, 2), (5000, 3), (1 << 20, 1)])
@pytest.mark.parametrize("length", [2, 4])
def test_counting_filter_counts_every_window_and_passes_exactly_the_full_cells(
        corpus, n_cells, num_hashes, length, monkeypatch):
    docs, tokens, offsets = corpus
    monkeypatch.setattr(wf, "CHUNK_POSITIONS", 24)  # many chunks, ranges of one position or none
    monkeypatch.setattr(wf, "REGION_CELLS", 16)  # many buckets
    word_ok = np.array([True] * 7 + [False])
    table, shift = doc_index(tokens, offsets)
    counters, bucket_bits = wf.fill_filter(tokens, offsets, table, shift, word_ok, length,
                                           n_cells, num_hashes)
    region = len(counters) >> bucket_bits
    assert len(counters) >= n_cells and region * (1 << bucket_bits) == len(counters)

    def cells(h):
        bucket = (h >> 32) >> (32 - bucket_bits)
        h1, h2 = h & 0xFFFFFFFF, (h >> 32) | 1
        return [bucket * region + ((((h1 + j * h2) & 0xFFFFFFFF) * region) >> 32)
                for j in range(num_hashes)]

    expected = np.zeros(len(counters), dtype=np.int64)
    count = defaultdict(int)
    for _, window in windows(docs, length, word_ok):
        count[window] += 1
        for c in cells(py_window_hash(window)):
            expected[c] += 1
    assert counters.tolist() == np.minimum(expected, 255).tolist()
    for window, c in count.items():  # never undercounts
        assert min(counters[cells(py_window_hash(window))]) >= min(c, 255)
    sigma = 3
    mask, n_passed = wf.query_filter(tokens, offsets, table, shift, word_ok, length, counters,
                                     bucket_bits, num_hashes, sigma)
    passing = {p for p, window in windows(docs, length, word_ok)
               if min(counters[cells(py_window_hash(window))]) >= sigma}
    assert {p for p in range(len(tokens)) if bit_get(mask, p)} == passing
    assert n_passed == len(passing) == bitmask_count(mask, len(tokens))
    assert passing >= {p for p, window in windows(docs, length, word_ok) if count[window] >= sigma}


def test_saturation_at_255():
    tokens = np.array([1, 2] * 400, dtype=np.uint32)
    offsets = np.array([0, 800], dtype=np.int64)
    table, shift = doc_index(tokens, offsets)
    counters, _ = wf.fill_filter(tokens, offsets, table, shift, np.ones(3, dtype=bool), 2, 64, 1)
    assert counters.max() == 255


def test_filter_layout():
    assert wf.filter_layout(100) == (0, 100)
    bits, region = wf.filter_layout(wf.REGION_CELLS * 5)
    assert bits == 3 and region * 8 >= wf.REGION_CELLS * 5 and region <= wf.REGION_CELLS
    bits, region = wf.filter_layout(wf.REGION_CELLS << (wf.MAX_BUCKET_BITS + 2))
    assert bits == wf.MAX_BUCKET_BITS and region == wf.REGION_CELLS * 4
