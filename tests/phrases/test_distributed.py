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
    exact, _ = mine_partitions(partitioned(texts, 3), plan)
    loose, _ = mine_partitions(partitioned(texts, 3), plan,
                               make_filter=lambda keys: lambda q: np.ones(len(q), bool))
    assert list(exact.rows()) == list(loose.rows()) == local_rows(texts, 3, 4)
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
