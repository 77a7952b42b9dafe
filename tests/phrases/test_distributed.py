"""The distributed miner's decomposition (phrases/distributed) against the oracle and the local
engine, run by the in-process driver: any partitioning, window cap, bucket count, salting and
fingerprint width gives the exact answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner import synth
from corpus_miner._numba.keyset import KeySet
from corpus_miner.corpus import TokenIdAssigner
from corpus_miner.io.strings import StringList
from corpus_miner.phrases.bloomspan import mine_bloomspan
from corpus_miner.phrases.distributed import windows
from corpus_miner.phrases.distributed.driver import mine_partitions
from corpus_miner.phrases.distributed.encode import BREAK, WordIndex
from corpus_miner.phrases.distributed.stages import Plan
from corpus_miner.phrases.distributed.window_pool import compact_pool
from corpus_miner.phrases.distributed.window_sort import (
    adjacent_lcp,
    ranks_from_lcp,
    sort_windows,
)
from corpus_miner.phrases.distributed.windows import Occurrences, Summary

from .corpora import small_corpora
from .oracle import brute_force_mcfp
from .passages import shared_passage_texts


def as_texts(docs) -> list[str]:
    return [" ".join(f"w{t}" for t in doc) for doc in docs]


def partitioned(texts: list[str], n_partitions: int, batches: int = 1) -> list[list[pa.Array]]:
    """Documents dealt round-robin to partitions, each cut into `batches` arrays."""
    parts = []
    for p in range(n_partitions):
        mine = texts[p::n_partitions]
        step = max(1, -(-len(mine) // batches))
        parts.append([pa.array(mine[i:i + step], pa.string()) for i in range(0, len(mine), step)]
                     or [pa.array([], pa.string())])
    return parts


def local_rows(texts: list[str], sigma: int, min_length: int) -> list[dict]:
    assigner = TokenIdAssigner()
    assigner.add_texts(pa.array(texts, pa.string()))
    tokens, offsets, vocab = assigner.finish()
    table, _ = mine_bloomspan(tokens, offsets, sigma, min_length, vocab)
    return list(table.rows())


def as_keys(rows: list[dict]) -> set:
    return {(tuple(int(w[1:]) for w in row["phrase"].split()), row["df"], row["occurrences"])
            for row in rows}


@settings(max_examples=600, deadline=None)
@given(small_corpora(), st.integers(1, 9), st.integers(1, 3), st.sampled_from([1, 2, 3, 64]),
       st.sampled_from([1, 3, 16]), st.sampled_from([2, 7, 10**9]), st.sampled_from([2, 64]))
def test_distributed_equals_oracle_and_local_engine(case, n_partitions, batches, cap, buckets,
                                                    salt_threshold, fingerprint_bits):
    docs, sigma, min_length = case
    texts = as_texts(docs)
    plan = Plan(sigma, min_length, window_cap=cap, buckets=buckets,
                salt_threshold=salt_threshold, fingerprint_bits=fingerprint_bits)
    table, _ = mine_partitions(partitioned(texts, n_partitions, batches), plan)
    rows = list(table.rows())
    assert as_keys(rows) == brute_force_mcfp(docs, sigma, min_length)
    assert rows == local_rows(texts, sigma, min_length)  # same canonical order too


def test_all_positive_filters_change_nothing():
    """Filters may only err by letting keys through: all-positive ones give the same answer."""
    docs = synth.web(120, n_sites=4, vocabulary=300, mean_body_words=40, seed=2)
    texts = [" ".join(doc) for doc in docs]
    plan = Plan(3, 4, window_cap=2, buckets=5)
    exact, _ = mine_partitions(partitioned(texts, 3), plan, make_filter=KeySet)
    blocks, _ = mine_partitions(partitioned(texts, 3), plan)  # split-block filters: may err
    loose, _ = mine_partitions(partitioned(texts, 3), plan,
                               make_filter=lambda keys: lambda q: np.ones(len(q), bool))
    assert list(exact.rows()) == list(blocks.rows()) == list(loose.rows()) \
        == local_rows(texts, 3, 4)
    assert len(exact) > 10


@pytest.mark.parametrize("repeats", [1, 7, 300])
def test_periodic_runs_and_long_templates(repeats):
    """Runs of one short pattern (self-overlapping occurrences) and phrases far longer than the
    window cap (many continuation rounds)."""
    long_template = " ".join(f"t{i}" for i in range(150))
    texts = []
    for d in range(6):
        run = " ".join(["ha"] * (repeats + d)) if d % 2 else " ".join(["ab", "cd"] * repeats)
        texts.append(f"x{d} {run} y{d} {long_template} z{d}")
    plan = Plan(3, 3, window_cap=2, buckets=4, salt_threshold=5)
    table, stats = mine_partitions(partitioned(texts, 4), plan)
    assert list(table.rows()) == local_rows(texts, 3, 3)
    assert stats["rounds"] >= 7


@pytest.mark.parametrize("n_partitions, cap, buckets, salt_threshold",
                         [(1, 8, 1, 10**9), (3, 8, 4, 10**9), (14, 4, 3, 10**9), (5, 8, 3, 40)])
def test_long_shared_passages_ship_each_token_at_most_once_per_bucket(n_partitions, cap, buckets,
                                                                       salt_threshold):
    """Two 600-token passages, each in 3 documents, in text whose grams are all live, and a
    1,000-token run of one word in 3 documents: continuation rounds to depth 1,027. The local
    engine's answer; a left-unique window is not deferred (only the passages' first positions
    go on); and a round ships window pools, never more tokens to one bucket than the partitions'
    covered tokens (copied windows would ship occurrences x window length: over 20 times that
    here, from the run)."""
    texts = shared_passage_texts()
    plan = Plan(3, 3, window_cap=cap, buckets=buckets, salt_threshold=salt_threshold)
    table, stats = mine_partitions(partitioned(texts, n_partitions), plan)
    assert list(table.rows()) == local_rows(texts, 3, 3)
    assert stats["rounds"] >= 8
    covered = stats["tokens_in_frequent_gram_chains"]
    salted = salt_threshold < 10**9  # a salted group's tokens arrive once more, merged
    for r in range(stats["rounds"]):
        assert stats[f"round_{r}_largest_bucket_tokens"] <= covered * (2 if salted else 1)
        assert stats[f"round_{r}_shipped_tokens"] <= covered * buckets * (2 if salted else 1)
    assert max(stats[f"round_{r}_deferred"] for r in range(stats["rounds"])) <= 10
    copied = max(stats[f"round_{r}_window_tokens"] for r in range(stats["rounds"]))
    assert copied > 20 * covered


def test_web_pages_in_many_partitions_with_salting():
    docs = synth.web(400, n_sites=6, vocabulary=1500, mean_body_words=60, seed=8)
    texts = [" ".join(doc) for doc in docs]
    expected = local_rows(texts, 5, 6)
    assert len(expected) > 20
    for n_partitions, threshold in ((1, 10**9), (7, 10**9), (13, 3)):
        plan = Plan(5, 6, window_cap=8, buckets=6, salt_threshold=threshold)
        table, _ = mine_partitions(partitioned(texts, n_partitions, 2), plan)
        assert list(table.rows()) == expected


# ---------------------------------------------------------------- kernels

@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), max_size=7), min_size=1, max_size=40))
def test_window_sort_ranks_and_lcp(words):
    data = np.array([t for w in words for t in w], dtype=np.uint32)
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    order = sort_windows(data, starts, lengths)
    assert [words[i] for i in order] == sorted(words)
    lcp = adjacent_lcp(data, starts, lengths, order)
    for j in range(1, len(order)):
        a, b = words[order[j - 1]], words[order[j]]
        common = 0
        while common < min(len(a), len(b)) and a[common] == b[common]:
            common += 1
        assert lcp[j] == common
    rank = ranks_from_lcp(lengths, order, lcp)
    distinct = sorted(set(map(tuple, words)))
    assert [distinct.index(tuple(w)) for w in words] == rank.tolist()


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 5))
def test_summaries_of_disjoint_documents_merge_to_the_whole(seed, n_parts):
    """A summary of all documents equals the merge of summaries of any split of them."""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, 3, 80).astype(np.uint32)
    n = 40
    doc = np.sort(rng.integers(0, 8, n))
    start = rng.integers(0, 70, n)
    length = rng.integers(2, 9, n)
    left = np.where(rng.random(n) < 0.3, BREAK, rng.integers(0, 3, n)).astype(np.uint32)
    gkey = (tokens[start] % 2).astype(np.uint64)  # group keys follow the content
    lo = int(rng.integers(1, 4))
    whole = windows.build_summary(tokens, Occurrences(gkey, doc, left, start, length), lo)
    cut = np.sort(rng.integers(0, 9, n_parts - 1))
    pieces = []
    for part in np.split(np.arange(n), np.searchsorted(doc, cut)):
        occ = Occurrences(gkey[part], doc[part], left[part], start[part], length[part])
        pieces.append(Summary.from_bytes(windows.build_summary(tokens, occ, lo).to_bytes()))
    merged = windows.merge_summaries(pieces)
    for name in Summary.__dataclass_fields__:
        if name not in ("tokens", "starts"):  # the pool's layout depends on the split
            assert np.array_equal(getattr(whole, name), getattr(merged, name)), name
    assert window_contents(whole) == window_contents(merged)
    assert len(whole.tokens) <= len(tokens)  # each token of the text at most once
    assert len(merged.tokens) <= sum(len(p.tokens) for p in pieces)


def window_contents(summary: Summary) -> list[list[int]]:
    return [summary.tokens[s:s + n].tolist()
            for s, n in zip(summary.starts, summary.lengths, strict=True)]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6))
def test_window_pool_holds_each_window_once(seed):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, 5, 60).astype(np.uint32)
    starts = rng.integers(0, 50, int(rng.integers(0, 30)))
    lengths = rng.integers(0, 11, len(starts))
    pool, pool_starts = compact_pool(tokens, starts, lengths)
    for s, n, t in zip(starts, lengths, pool_starts, strict=True):
        assert pool[t:t + n].tolist() == tokens[s:s + n].tolist()
    spanned = np.zeros(len(tokens), bool)
    for s, n in zip(starts, lengths, strict=True):
        spanned[s:s + n] = True
    assert len(pool) == spanned.sum()  # the union of the spans, nothing twice


def test_key_set_and_word_index_are_exact():
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 2**63, 1000, dtype=np.uint64)
    queries = np.concatenate([keys[::3], rng.integers(0, 2**63, 1000, dtype=np.uint64)])
    assert KeySet(keys)(queries).tolist() == [q in set(keys.tolist()) for q in queries.tolist()]
    vocab = StringList.from_strings(sorted({"a", "ab", "été", "漢字", "b", ""}))
    index = WordIndex(vocab)
    asked = StringList.from_strings(["ab", "x", "été", "", "漢", "b"])
    expected = [vocab.index(w) if w in vocab else int(BREAK) for w in asked]
    assert index.ids(asked).tolist() == expected


NO_JIT_SCRIPT = r"""
import json
import numpy as np
import pyarrow as pa
np.seterr(over="ignore")  # the fingerprints wrap modulo 2^64 on purpose
from corpus_miner.phrases.distributed.driver import mine_partitions
from corpus_miner.phrases.distributed.stages import Plan
texts = ["a b c d e x", "q a b c d e", "a b c d y", "z a b c d e f", "a b c d e f g"] * 2
parts = [[pa.array(texts[i::3])] for i in range(3)]
table, _ = mine_partitions(parts, Plan(3, 2, window_cap=1, buckets=2, salt_threshold=2))
print(json.dumps(list(table.rows())))
"""


def test_kernels_without_jit_give_the_jitted_answer():
    def run(disable: str) -> list:
        env = dict(os.environ, NUMBA_DISABLE_JIT=disable)
        proc = subprocess.run([sys.executable, "-c", NO_JIT_SCRIPT], capture_output=True,
                              text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    jitted = run("0")
    assert jitted and run("1") == jitted


# -- keyed counts: bucketing, packing and widths -------------------------------------------------

@given(st.lists(st.integers(0, 2**64 - 1), max_size=200), st.sampled_from([1, 3, 33, 40, 64]),
       st.integers(1, 70))
@settings(max_examples=200, deadline=None)
def test_sorted_key_buckets_slice_sorted_keys_by_their_top_bits(values, bits, n_buckets):
    from corpus_miner.phrases.distributed.stages import sorted_key_buckets

    keys = np.unique(np.array([v % (1 << bits) for v in values], dtype=np.uint64))
    slices = list(sorted_key_buckets(keys, bits, n_buckets))
    bounds = [0] + [hi for _, _, hi in slices]
    assert [lo for _, lo, _ in slices] == bounds[:-1] and bounds[-1] == len(keys)
    for bucket, lo, hi in slices:
        assert lo < hi and 0 <= bucket < n_buckets
        for key in keys[lo:hi]:
            assert bucket == int(key) * n_buckets >> bits
    assert [b for b, _, _ in slices] == sorted({b for b, _, _ in slices})


def test_bigram_counts_are_exact_whatever_their_size():
    from corpus_miner.phrases.distributed.stages import frequent_keys, pair_blob

    keys = np.array([1, 5, 2**40 - 1], dtype=np.uint64)
    small = pair_blob(keys, np.array([3, 1, 2], np.uint32))
    large = pair_blob(keys, np.array([1, 2**32 - 1, 1], np.uint32))
    assert frequent_keys([small, large], 4).tolist() == [1, 5]
    assert frequent_keys([small, small], 4).tolist() == [1, 2**40 - 1]
    assert frequent_keys([pair_blob(keys[:0], np.zeros(0, np.uint32)), small], 3).tolist() == [1]


@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1)), max_size=80),
       st.booleans())
@settings(max_examples=300, deadline=None)
def test_delta_varints_decode_to_the_rows_in_any_order(rows, ordered):
    from corpus_miner._numba.delta_varint import decode_key_counts, encode_key_counts

    if ordered:
        rows = sorted(rows)
    keys = np.array([k for k, _ in rows], np.uint64)
    counts = np.array([c for _, c in rows], np.uint32)
    coded = encode_key_counts(keys, counts)
    got_keys, got_counts = decode_key_counts(coded, len(rows))
    assert got_keys.tolist() == keys.tolist() and got_counts.tolist() == counts.tolist()
    previous = ([0] + [k for k, _ in rows])[:len(rows)]
    assert len(coded) == sum(_varint_bytes((k - p) % 2**64) + _varint_bytes(c)
                             for (k, c), p in zip(rows, previous, strict=True))


def _varint_bytes(value: int) -> int:
    return max(1, -(-value.bit_length() // 7))


LEFTS = st.integers(0, 0xFFFFFFFE) | st.just(0xFFFFFFFF)  # token ids, NO_LEFT


@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(1, 2**40), st.integers(0, 5),
                          LEFTS, LEFTS, st.integers(0, 1)), max_size=60),
       st.integers(1, 5))
@settings(max_examples=300, deadline=None)
def test_gram_rows_cross_the_shuffle_exactly(rows, n_buckets):
    """keyed_gram_blobs and gram_rows_from_blob: every row back, whatever its values (lefts are
    32-bit: a token id or NO_LEFT, the min above the max when no real left was seen)."""
    from corpus_miner.phrases.distributed import counts, stages

    rows = sorted({r[0]: r for r in rows}.values())
    stats = {"fp": np.array([r[0] for r in rows], np.uint64),
             "df": np.array([r[1] for r in rows], np.int64),
             "occurrences": np.array([r[1] + r[2] for r in rows], np.int64),
             "min_left": np.array([r[3] for r in rows], np.int64),
             "max_left": np.array([r[4] for r in rows], np.int64),
             "has_no_left": np.array([r[5] for r in rows], np.int64)}
    blobs = list(stages.keyed_gram_blobs(stats, Plan(2, 3, buckets=n_buckets)))
    got = counts.merge_gram_statistics([stages.gram_rows_from_blob(b) for _, b in blobs])
    for name in counts.GRAM_FIELDS:
        assert got[name].tolist() == stats[name].tolist(), name


@given(small_corpora(), st.integers(1, 6), st.integers(1, 40))
@settings(max_examples=60, deadline=None)
def test_partition_gram_chunks_add_up_to_one_merge(corpus, n_batches, flush_rows):
    """Chunks flushed every flush_rows pending rows: each sorted, and their merge (the
    reducers') equals one merge of every batch's statistics."""
    from corpus_miner.phrases.distributed import counts, stages
    from corpus_miner.phrases.distributed.encode import TokenBatch

    docs, _sigma, min_length = corpus
    plan = Plan(2, min_length)
    tokens = [np.array(d, np.uint32) for d in docs]
    cuts = np.linspace(0, len(tokens), n_batches + 1).astype(int)
    batches = []
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        part = tokens[lo:hi]
        offsets = np.concatenate(([0], np.cumsum([len(t) for t in part]))).astype(np.int64)
        flat = np.concatenate(part) if part else np.zeros(0, np.uint32)
        batches.append(TokenBatch(flat, offsets))
    original = stages.PartitionGrams.FLUSH_ROWS
    stages.PartitionGrams.FLUSH_ROWS = flush_rows
    try:
        chunks = list(stages.partition_gram_chunks(batches, plan))
    finally:
        stages.PartitionGrams.FLUSH_ROWS = original
    for chunk in chunks:
        assert list(chunk) == list(counts.GRAM_FIELDS)
        assert (np.diff(chunk["fp"].astype(object)) > 0).all()  # sorted, distinct
    got = counts.merge_gram_statistics(chunks)
    want = counts.merge_gram_statistics([
        counts.gram_statistics(b.tokens, b.doc_offsets, min_length, plan.mask) for b in batches])
    for name in counts.GRAM_FIELDS:
        assert got[name].tolist() == want[name].tolist(), name
