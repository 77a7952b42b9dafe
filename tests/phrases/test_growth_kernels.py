"""The growth kernels' helpers and the dead-position rule against plain Python and the oracle."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from corpus_miner._numba.bitmask import bit_get, bit_set, bitmask_new
from corpus_miner.phrases import growth_kernels as gk
from corpus_miner.phrases.doc_index import doc_at, doc_block_shift, doc_block_table
from tests.phrases.oracle import brute_force_mcfp, substring_support

from .test_window_filter import random_corpus


def occurrence_buffers(offsets, positions):
    wpos = np.array(positions, dtype=np.int64)
    wdoc = np.searchsorted(offsets, wpos, side="right").astype(np.int64) - 1
    return wpos, wdoc


def workspace_with(wpos, wdoc, n_ranks):
    ws = gk.new_workspace(len(wpos), n_ranks)
    ws.pos[:len(wpos)] = wpos
    ws.doc[:len(wdoc)] = wdoc
    return ws


def test_left_uniform_and_word_grouping_against_python():
    rng = np.random.default_rng(9)
    for _ in range(300):
        docs, tokens, offsets = random_corpus(rng, n_docs=8, alphabet=4, max_len=8)
        if len(tokens) < 2:
            continue
        positions = sorted(rng.choice(len(tokens), size=int(rng.integers(1, len(tokens) + 1)),
                                      replace=False))
        wpos, wdoc = occurrence_buffers(offsets, positions)
        lefts = [None if p == offsets[d] else int(tokens[p - 1]) for p, d in zip(wpos, wdoc)]
        uniform = lefts[0] is not None and all(x == lefts[0] for x in lefts)
        assert gk.left_uniform(tokens, offsets, wpos, wdoc, 0, len(wpos)) == uniform
        frequent = rng.random(4) < 0.75  # words below sigma documents have rank -1
        word_rank = np.where(frequent, np.cumsum(frequent) - 1, -1).astype(np.int32)
        docs_by_word, size_by_word = defaultdict(set), defaultdict(int)
        for left, d in zip(lefts, wdoc):
            if left is not None and frequent[left]:
                docs_by_word[word_rank[left]].add(int(d))
                size_by_word[word_rank[left]] += 1
        g = gk.Growth(tokens, offsets, np.zeros(0, np.uint64), np.zeros(0, np.int64),
                      np.zeros(0, np.int64), word_rank, bitmask_new(len(tokens)), 8, 2, 2, 0, 0)
        ws = workspace_with(wpos, wdoc, 4)
        gk.left_words(g, ws, 0, len(wpos))
        n_touched = gk.count_by_word(ws, 0, len(wpos))
        touched = sorted(ws.touched[:n_touched].tolist())
        assert touched == sorted(docs_by_word)
        assert [int(ws.docs_of_word[r]) for r in touched] == [len(docs_by_word[r]) for r in touched]
        assert [int(ws.size_of_word[r]) for r in touched] == [size_by_word[r] for r in touched]
        assert gk.max_word_documents(ws, n_touched) == max(map(len, docs_by_word.values()),
                                                           default=0)
        gk.reset_counts(ws, n_touched)
        assert not ws.docs_of_word.any() and not ws.size_of_word.any()
        assert (ws.last_doc == -2).all()  # workspace handed back clean


def test_distinct_documents():
    assert gk.distinct_documents(np.array([0, 1, 1, 4], dtype=np.int64), 0, 4) == 3
    assert gk.distinct_documents(np.array([0, 1, 1, 4], dtype=np.int64), 1, 3) == 1


def test_mark_found_sets_coverage_and_dead_bits():
    # docs: [5 1 2 3 4 9 8] [6 1 2 3 4]; phrase "1 2 3 4" found at 1 and 8, min_length 3
    tokens = np.array([5, 1, 2, 3, 4, 9, 8, 6, 1, 2, 3, 4], dtype=np.uint32)
    window_ok = bitmask_new(len(tokens))
    for p in (1, 2, 3, 8, 9):  # the window "3 4 9" at 3 passes the filter, nothing after 9
        bit_set(window_ok, p)
    dead, covered = bitmask_new(12), bitmask_new(12)
    gk.mark_found(np.array([1, 8], np.int64), 0, 2, 4, 3, window_ok, dead, covered)
    assert [i for i in range(12) if bit_get(covered, i)] == [1, 2, 3, 4, 8, 9, 10, 11]
    # doc 0: the window at 5 - 3 + 1 = 3, running past the occurrence, is window_ok: nothing dead
    # doc 1: the occurrence ends the document: 9 and 10 (up to 12 - 3 + 1) are dead
    assert [i for i in range(12) if bit_get(dead, i)] == [9, 10]


def test_dead_positions_never_start_an_answer():
    """mark_found's claim, on random corpora with the exact window_ok: after marking every
    answer, no occurrence of an answer starts at a dead position."""
    rng = np.random.default_rng(5)
    for _ in range(150):
        docs, tokens, offsets = random_corpus(rng, n_docs=7, alphabet=3, max_len=14)
        sigma, min_length = int(rng.integers(2, 4)), int(rng.integers(2, 5))
        doc_sets, _ = substring_support(docs)
        n = len(tokens)
        window_ok = bitmask_new(n)
        starts, pos = defaultdict(list), 0
        for doc in docs:
            for i in range(len(doc)):
                for j in range(i + 1, len(doc) + 1):
                    starts[tuple(int(t) for t in doc[i:j])].append(pos + i)
                if i + min_length <= len(doc) \
                        and len(doc_sets[tuple(int(t) for t in doc[i:i + min_length])]) >= sigma:
                    bit_set(window_ok, pos + i)
            pos += len(doc)
        dead, covered = bitmask_new(n), bitmask_new(n)
        answer = brute_force_mcfp(docs, sigma, min_length)
        for phrase, _, _ in answer:
            gk.mark_found(np.array(starts[phrase], np.int64), 0, len(starts[phrase]), len(phrase),
                          min_length, window_ok, dead, covered)
        for phrase, _, _ in answer:
            assert not any(bit_get(dead, p) for p in starts[phrase])
            assert all(bit_get(window_ok, p) for p in starts[phrase])


def test_has_dead_occurrence_against_python():
    rng = np.random.default_rng(12)
    for _ in range(200):
        docs, tokens, offsets = random_corpus(rng, n_docs=6, alphabet=2, max_len=10)
        n = len(tokens)
        if n < 3:
            continue
        shift = doc_block_shift(n, len(docs))
        table = doc_block_table(offsets, shift)
        start = int(rng.integers(0, n - 1))
        doc_end = int(offsets[np.searchsorted(offsets, start, side="right")])
        if doc_end - start < 2:
            continue
        length = int(rng.integers(2, doc_end - start + 1))
        phrase = tokens[start:start + length].tolist()
        # "dead" occurrences of the seed: positions starting with the phrase's first two tokens
        seed_positions = [p for p in range(n - 1) if tokens[p] == phrase[0]
                          and tokens[p + 1] == phrase[1] and doc_at(offsets, table, shift, p)
                          == doc_at(offsets, table, shift, p + 1)]
        chosen = [p for p in seed_positions if rng.random() < 0.5]
        expected = any(
            tokens[p:p + length].tolist() == phrase
            and p + length <= offsets[np.searchsorted(offsets, p, side="right")] for p in chosen)
        dead_pos, dead_doc = occurrence_buffers(offsets, chosen + [0])
        got = gk.has_dead_occurrence(tokens, offsets, dead_pos, dead_doc, len(chosen), start,
                                     length)
        assert got == expected
