"""Each BloomSpan kernel against a plain Python/numpy reference, on raw arrays."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import defaultdict

import numpy as np
import pytest

from corpus_miner.phrases import growth_kernels as gk
from corpus_miner.phrases import kernels as k

M64 = (1 << 64) - 1


def test_bigram_ids_survive_table_growth():
    """Far more distinct bigrams than the first table holds: ids stay one per bigram."""
    rng = np.random.default_rng(8)
    tokens = rng.integers(0, 3000, size=300_000).astype(np.uint32)
    starts_pair = np.arange(len(tokens)) < len(tokens) - 1  # every position but the last
    survivors = np.packbits(starts_pair, bitorder="little")
    dead = k.bitmask_new(len(tokens))
    n = len(tokens) - 1
    occ, n_ids = k.pack_survivors_by_bigram_id(tokens, survivors, dead, n, 19)
    ids, positions = occ >> np.uint64(19), occ & np.uint64((1 << 19) - 1)
    assert positions.tolist() == list(range(n))
    pairs = tokens[:-1].astype(np.uint64) << np.uint64(32) | tokens[1:].astype(np.uint64)
    distinct = len(np.unique(pairs))
    assert n_ids == distinct > (1 << 16)
    # the same bigram always gets the same id, different bigrams different ids
    assert len(np.unique(ids)) == distinct
    assert len(np.unique(pairs.astype(object) * (1 << 40) + ids.astype(object))) == distinct


def random_corpus(rng, n_docs=30, alphabet=6, max_len=25):
    docs = [list(rng.integers(0, alphabet, size=int(rng.integers(0, max_len))))
            for _ in range(n_docs)]
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    return docs, tokens, offsets


def bigram_positions(docs):
    """bigram -> list of (position, doc), positions ascending."""
    out = defaultdict(list)
    pos = 0
    for d, doc in enumerate(docs):
        for i in range(len(doc) - 1):
            out[(int(doc[i]), int(doc[i + 1]))].append((pos + i, d))
        pos += len(doc)
    return out


def py_hash(a, b):
    h = 0xCBF29CE484222325
    h = ((h ^ a) * 0x100000001B3) & M64
    h = ((h ^ b) * 0x100000001B3) & M64
    for mult in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        h ^= h >> 33
        h = (h * mult) & M64
    return h ^ (h >> 33)


def py_cell(h, j, n_cells):
    h1, h2 = h >> 32, (h & 0xFFFFFFFF) | 1
    return (((h1 + j * h2) & 0xFFFFFFFF) * n_cells) >> 32


@pytest.fixture(params=[0, 1, 2])
def corpus(request):
    return random_corpus(np.random.default_rng(request.param))


def test_bitmask_helpers():
    mask = k.bitmask_new(100)
    for i in (0, 7, 8, 63, 99):
        k.bit_set(mask, i)
    assert [i for i in range(100) if k.bit_get(mask, i)] == [0, 7, 8, 63, 99]
    assert k.bitmask_count(mask, 100) == 5


@pytest.mark.parametrize("sigma", [1, 2, 5, 70000])
def test_frequent_words_and_ranks(corpus, sigma):
    docs, tokens, offsets = corpus
    got = k.frequent_words(tokens, offsets, 8, sigma)
    df = [sum(t in set(int(x) for x in d) for d in docs) for t in range(8)]
    assert got.tolist() == [x >= min(sigma, 65535) for x in df]
    ranks = k.word_ranks(got)
    assert ranks.tolist() == [int(got[:t].sum()) if got[t] else -1 for t in range(8)]


def test_count_bigrams(corpus):
    docs, tokens, offsets = corpus
    word_ok = np.array([True, False, True, True, False, True, True, True])
    total, passing = k.count_bigrams(tokens, offsets, word_ok)
    assert total == sum(max(len(d) - 1, 0) for d in docs)
    assert passing == sum(word_ok[d[i]] and word_ok[d[i + 1]]
                          for d in docs for i in range(len(d) - 1))


def test_hash_and_cells_match_python():
    rng = np.random.default_rng(5)
    for a, b in rng.integers(0, 2**32 - 1, size=(200, 2)):
        h = int(k.bigram_hash(np.uint32(a), np.uint32(b)))
        assert h == py_hash(int(a), int(b))
        for j in range(3):
            for n_cells in (64, 1000, 2**32):
                cell = int(k.cell_index(np.uint64(h), j, n_cells))
                assert cell == py_cell(h, j, n_cells) and 0 <= cell < n_cells


@pytest.mark.parametrize("num_hashes", [1, 3])
def test_counting_filter_matches_reference_and_never_undercounts(corpus, num_hashes):
    docs, tokens, offsets = corpus
    word_ok = np.ones(8, dtype=bool)
    word_ok[4] = False
    n_cells = 97
    counters = np.zeros(n_cells, dtype=np.uint8)
    k.fill_counting_filter(tokens, offsets, word_ok, counters, num_hashes)
    expected = np.zeros(n_cells, dtype=np.int64)
    counts = defaultdict(int)
    for (a, b), occ in bigram_positions(docs).items():
        if word_ok[a] and word_ok[b]:
            counts[(a, b)] = len(occ)
            for j in range(num_hashes):
                expected[py_cell(py_hash(a, b), j, n_cells)] += len(occ)
    assert counters.tolist() == np.minimum(expected, 255).tolist()
    for (a, b), c in counts.items():
        cells = [py_cell(py_hash(a, b), j, n_cells) for j in range(num_hashes)]
        assert min(counters[cells]) >= min(c, 255)


def test_saturation_at_255():
    tokens = np.array([1, 2] * 400, dtype=np.uint32)
    offsets = np.array([0, 800], dtype=np.int64)
    counters = np.zeros(64, dtype=np.uint8)
    k.fill_counting_filter(tokens, offsets, np.ones(3, dtype=bool), counters, 1)
    assert counters.max() == 255


def test_survivors_are_exactly_the_cells_over_threshold(corpus):
    docs, tokens, offsets = corpus
    word_ok = np.ones(8, dtype=bool)
    word_ok[5] = False
    counters = np.zeros(64, dtype=np.uint8)
    k.fill_counting_filter(tokens, offsets, word_ok, counters, 2)
    survivors = k.bitmask_new(len(tokens))
    kept, _ = k.mark_filter_survivors(tokens, offsets, word_ok, counters, 2, 3, survivors, 2,
                                      k.bitmask_new(len(tokens)))
    expected = set()
    for (a, b), occ in bigram_positions(docs).items():
        cells = [py_cell(py_hash(a, b), j, 64) for j in range(2)]
        if word_ok[a] and word_ok[b] and min(counters[cells]) >= 3:
            expected.update(p for p, _ in occ)
    got = {i for i in range(len(tokens)) if k.bit_get(survivors, i)}
    assert got == expected and kept == len(expected)


@pytest.mark.parametrize("packed", ["ranks", "bigram_ids", None])
def test_exact_seeds_match_dictionary_counting(corpus, packed):
    """Seeds = bigrams whose packed (surviving, not dead) occurrences cover >= sigma documents."""
    docs, tokens, offsets = corpus
    sigma = 3
    n = len(tokens)
    survivors = k.bitmask_new(n)
    doc_of_pos = np.searchsorted(offsets, np.arange(n), side="right") - 1
    for i in range(n - 1):  # every in-document bigram survives the filters
        if doc_of_pos[i] == doc_of_pos[i + 1]:
            k.bit_set(survivors, i)
    dead = k.bitmask_new(n)
    dead_positions = set(np.random.default_rng(4).choice(n, size=n // 3, replace=False).tolist())
    for p in dead_positions:
        k.bit_set(dead, p)
    packed_positions = [i for i in range(n) if k.bit_get(survivors, i) and i not in dead_positions]
    shift = k.doc_block_shift(n, len(docs))
    table = k.doc_block_table(offsets, shift)
    rank = k.word_ranks(np.ones(8, dtype=bool))
    if packed:
        if packed == "ranks":
            occ = k.pack_survivors(tokens, survivors, dead, len(packed_positions), rank, 3, 12)
        else:
            occ, n_ids = k.pack_survivors_by_bigram_id(tokens, survivors, dead,
                                                       len(packed_positions), 12)
            assert n_ids == len({(int(tokens[p]), int(tokens[p + 1])) for p in packed_positions})
        occ.sort()
        lo, hi, df = k.exact_seeds(occ, np.empty(0, np.int64), 12, offsets, table, shift, sigma)
        k.unpack_positions_inplace(occ, 12)
    else:
        occ = k.survivor_positions(survivors, dead, len(packed_positions), n)
        assert occ.tolist() == packed_positions
        keys = (tokens[occ].astype(np.uint64) << np.uint64(32)) | tokens[occ + 1].astype(np.uint64)
        order = np.argsort(keys, kind="stable")
        keys, occ = keys[order], occ[order]
        lo, hi, df = k.exact_seeds(keys, occ, 0, offsets, table, shift, sigma)
    got = {}
    for a, b, c in zip(lo, hi, df):
        positions = [int(p) for p in occ[a:b]]
        bigram = (int(tokens[positions[0]]), int(tokens[positions[0] + 1]))
        got[bigram] = (positions, int(c))
    expected = {}
    for bigram, o in bigram_positions(docs).items():
        alive = [(p, d) for p, d in o if p not in dead_positions]
        if len({d for _, d in alive}) >= sigma:
            expected[bigram] = ([p for p, _ in alive], len({d for _, d in alive}))
    assert got == expected


def test_doc_block_table_lookup():
    rng = np.random.default_rng(2)
    for _ in range(50):
        lengths = rng.integers(0, 12, size=int(rng.integers(1, 30)))
        lengths[rng.integers(0, len(lengths))] += 1  # at least one token
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        n = int(offsets[-1])
        for shift in (0, 1, 3, k.doc_block_shift(n, len(lengths)), 10):
            table = k.doc_block_table(offsets, shift)
            for pos in range(n):
                expected = int(np.searchsorted(offsets, pos, side="right") - 1)
                assert k.doc_at(offsets, table, shift, pos) == expected


def test_doc_of_with_empty_documents():
    offsets = np.array([0, 0, 3, 3, 3, 7, 8], dtype=np.int64)
    for pos in range(8):
        expected = max(d for d in range(6) if offsets[d] <= pos < offsets[d + 1])
        for shift in (0, 2):
            assert k.doc_at(offsets, k.doc_block_table(offsets, shift), shift, pos) == expected


def occurrence_buffers(tokens, offsets, positions):
    wpos = np.array(positions, dtype=np.int64)
    wdoc = np.searchsorted(offsets, wpos, side="right").astype(np.int64) - 1
    return wpos, wdoc


def test_left_uniform_and_left_maximal_against_python():
    rng = np.random.default_rng(9)
    for _ in range(300):
        docs, tokens, offsets = random_corpus(rng, n_docs=8, alphabet=4, max_len=8)
        if len(tokens) < 2:
            continue
        positions = sorted(rng.choice(len(tokens), size=int(rng.integers(1, len(tokens) + 1)),
                                      replace=False))
        wpos, wdoc = occurrence_buffers(tokens, offsets, positions)
        lefts = [None if p == offsets[d] else int(tokens[p - 1]) for p, d in zip(wpos, wdoc)]
        uniform = lefts[0] is not None and all(x == lefts[0] for x in lefts)
        assert gk.left_uniform(tokens, offsets, wpos, wdoc, 0, len(wpos)) == uniform
        sigma = int(rng.integers(2, 4))
        frequent = rng.random(4) < 0.75  # words below sigma documents have rank -1
        word_rank = np.where(frequent, np.cumsum(frequent) - 1, -1).astype(np.int32)
        groups = defaultdict(set)
        for left, d in zip(lefts, wdoc):
            if left is not None and frequent[left]:
                groups[left].add(int(d))
        expected = all(len(g) < sigma for g in groups.values())
        count = np.zeros(5, dtype=np.int64)
        last_doc = np.full(5, -2, dtype=np.int64)
        touched = np.empty(5, dtype=np.int64)
        got = gk.left_maximal(tokens, offsets, wpos, wdoc, 0, len(wpos), sigma, word_rank,
                              count, last_doc, touched)
        assert got == expected
        assert not count.any() and (last_doc == -2).all()  # workspace handed back clean


def test_short_runs_are_marked_dead_against_python():
    rng = np.random.default_rng(11)
    for trial in range(20):
        docs, tokens, offsets = random_corpus(rng, n_docs=6, alphabet=5, max_len=40)
        n = len(tokens)
        word_ok = np.array([True, True, True, True, False])  # word 4 breaks runs
        survivors = k.bitmask_new(n)
        counters = np.full(64, 255, dtype=np.uint8)  # every word-filtered bigram survives
        for min_length in (2, 3, 6):
            dead = k.bitmask_new(n)
            _, marked = k.mark_filter_survivors(tokens, offsets, word_ok, counters, 1, 1,
                                                survivors, min_length, dead)
            starts = {i for i in range(n) if k.bit_get(survivors, i)}
            expected = set()
            for p in starts:
                run = 0
                while p + run in starts:
                    run += 1
                if run < min_length - 1:
                    expected.add(p)
            assert {p for p in range(n) if k.bit_get(dead, p)} == expected
            assert marked == len(expected)


def test_mark_found_sets_coverage_and_dead_bits():
    # docs: [5 1 2 3 4 9] [6 1 2 3 4] ; frequent bigrams: (1,2) (2,3) (3,4) and (4,9) in doc 0
    tokens = np.array([5, 1, 2, 3, 4, 9, 6, 1, 2, 3, 4], dtype=np.uint32)
    offsets = np.array([0, 6, 11], dtype=np.int64)
    frequent = k.bitmask_new(len(tokens))
    for p in (1, 2, 3, 4, 7, 8, 9):
        k.bit_set(frequent, p)
    dead, covered = k.bitmask_new(11), k.bitmask_new(11)
    wpos, _ = occurrence_buffers(tokens, offsets, [1, 7])  # phrase "1 2 3 4", length 4
    gk.mark_found(wpos, 0, 2, 4, frequent, dead, covered)
    assert [i for i in range(11) if k.bit_get(covered, i)] == [1, 2, 3, 4, 7, 8, 9, 10]
    # doc 0: bigram (4,9) after the occurrence is frequent -> nothing dead there;
    # doc 1: the occurrence ends the document -> positions 8, 9 are dead (7 is the start)
    assert [i for i in range(11) if k.bit_get(dead, i)] == [8, 9]
    assert gk.distinct_documents(np.array([0, 1, 1, 4], dtype=np.int64), 0, 4) == 3
    assert gk.distinct_documents(np.array([0, 1, 1, 4], dtype=np.int64), 1, 3) == 1


def test_has_dead_occurrence_against_python():
    rng = np.random.default_rng(12)
    for _ in range(200):
        docs, tokens, offsets = random_corpus(rng, n_docs=6, alphabet=2, max_len=10)
        n = len(tokens)
        if n < 3:
            continue
        shift = k.doc_block_shift(n, len(docs))
        table = k.doc_block_table(offsets, shift)
        start = int(rng.integers(0, n - 1))
        doc_end = int(offsets[np.searchsorted(offsets, start, side="right")])
        if doc_end - start < 2:
            continue
        length = int(rng.integers(2, doc_end - start + 1))
        phrase = tokens[start:start + length].tolist()
        # "dead" occurrences of the seed: positions starting with the phrase's first two tokens
        seed_positions = [p for p in range(n - 1) if tokens[p] == phrase[0]
                          and tokens[p + 1] == phrase[1] and k.doc_at(offsets, table, shift, p)
                          == k.doc_at(offsets, table, shift, p + 1)]
        chosen = [p for p in seed_positions if rng.random() < 0.5]
        expected = any(
            tokens[p:p + length].tolist() == phrase
            and p + length <= offsets[np.searchsorted(offsets, p, side="right")] for p in chosen)
        got = gk.has_dead_occurrence(tokens, offsets, table, shift,
                                     np.array(chosen + [0], dtype=np.int64), len(chosen), start,
                                     length)
        assert got == expected


def test_kernels_without_jit():
    """The same kernels run as plain Python (NUMBA_DISABLE_JIT=1) give the oracle's answer."""
    script = textwrap.dedent("""
        import warnings, numpy as np, sys
        warnings.simplefilter("ignore")
        sys.path.insert(0, "tests/phrases")
        from oracle import brute_force_mcfp
        from corpus_miner.phrases.bloomspan import mine_bloomspan
        rng = np.random.default_rng(3)
        for trial in range(25):
            docs = [list(rng.integers(0, 3, size=int(rng.integers(0, 9)))) for _ in range(6)]
            tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
            offsets = np.cumsum([0] + [len(d) for d in docs])
            table, _ = mine_bloomspan(tokens, offsets, 2, 2, ["a", "b", "c"], filter_bytes=64,
                                      key_layout=("ranks", "bigram_ids", "pairs")[trial % 3])
            assert table.key_set() == brute_force_mcfp(docs, 2, 2), (docs, table.key_set())
        print("ok")
    """)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=root, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
