"""The Ray tasks of RayBloomSpan: each one a map or a reduce of phrases/distributed/stages.py
over one block or one bucket, as phrases/distributed/driver.py runs them in process."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow as pa
import ray

from corpus_miner._numba.block_filter import BlockFilter
from corpus_miner._numba.keyset import KeySet
from corpus_miner.phrases.distributed import stages
from corpus_miner.phrases.distributed.encode import WordIndex, tokenize_batch
from corpus_miner.phrases.distributed.stages import Plan, Round


def key_filter(keys: np.ndarray, fp_rate: float):
    """The membership test shipped for a key set (the split-block filter Spark ships too)."""
    del fp_rate  # BlockFilter sizes itself; kept for a filter with a tunable rate
    return BlockFilter(keys)


def round_spec(plan: Plan, index: int, live, deferred, group_keys, salts) -> Round:
    """Round `index`'s spec: round 0 tests live grams, later rounds the deferred keys."""
    lo, hi = plan.depths(index)
    chosen = salts > 1
    order = np.argsort(group_keys[chosen], kind="stable")
    return Round(index, lo, hi, live, None if deferred is None else KeySet(deferred),
                 group_keys[chosen][order], salts[chosen][order])


def _by_bucket(pieces, buckets: int) -> list[list[bytes]]:
    out: list[list[bytes]] = [[] for _ in range(buckets)]
    for bucket, blob in pieces:
        out[bucket].append(blob)
    return out


@ray.remote
def count_block(table, text_col: str, plan: Plan):
    """Stages 0 and 1, map: tokenize one block; returns its stored blobs, its word counts for
    buckets 0..B-1, its bigram counts for buckets 0..B-1, and (documents, tokens): 2 + 2 x
    buckets returns."""
    column = table.column(text_col)
    texts = column.combine_chunks() if len(column.chunks) != 1 else column.chunks[0]
    counts = stages.PartitionCounts(plan.mask)
    if pa.types.is_null(texts.type):  # a block whose texts are all null
        texts = texts.cast(pa.string())
    blobs, tokens = [], 0
    for piece in stages.text_slices(texts):
        local = tokenize_batch(piece)
        blobs.append(stages.local_to_blob(local))
        counts.add(local)
        tokens += len(local.batch.tokens)
    words = _by_bucket(stages.keyed_word_blobs(*counts.words(), plan.buckets), plan.buckets)
    pairs = _by_bucket(stages.keyed_pair_blobs(counts.pairs(), plan), plan.buckets)
    return (blobs, *words, *pairs, (len(texts), tokens))


@ray.remote
def frequent_words(plan: Plan, *parts):
    return stages.frequent_words([b for part in parts for b in part], plan.sigma)


@ray.remote
def frequent_pairs(plan: Plan, *parts):
    return stages.frequent_keys([b for part in parts for b in part], plan.sigma)


@ray.remote
def encode_block(stored: list[bytes], vocab, pair_filter, plan: Plan):
    """Stage 2, map: global ids, runs of frequent bigrams only; returns the batches, then the
    gram statistics for buckets 0..B-1 (1 + buckets returns)."""
    index = WordIndex(vocab)
    batches = [stages.encode_batch(stages.local_from_blob(raw), index, pair_filter, plan)
               for raw in stored]
    grams = _by_bucket([blob for chunk in stages.partition_gram_chunks(batches, plan)
                        for blob in stages.keyed_gram_blobs(chunk, plan)], plan.buckets)
    return (batches, *grams)


@ray.remote
def classify(plan: Plan, *parts):
    return stages.classify_grams([b for part in parts for b in part], plan)


@ray.remote
def reach_block(batches, gram_filter, plan: Plan):
    return [stages.mark_reach(batch, gram_filter, plan) for batch in batches]


@ray.remote
def route_block(reach, plan: Plan, spec: Round, partition: int):
    """Stage 3, map: the block's summary, as FINAL pieces for buckets 0..B-1 then PARTIAL ones
    (2 x buckets returns)."""
    routed: defaultdict[tuple[int, int], list[bytes]] = defaultdict(list)
    summary = stages.partition_summary(reach, plan, spec)
    for bucket, stage, blob in stages.route(summary, plan, spec, partition):
        routed[(stage, bucket)].append(blob)
    return tuple(routed[(stage, b)] for stage in (stages.FINAL, stages.PARTIAL)
                 for b in range(plan.buckets))


def _decided(phrases, later):
    return (phrases if len(phrases[2]) else None), (later[0], later[2])


_NOTHING = (None, (np.zeros(0, np.uint64), np.zeros(0, np.int64)))


@ray.remote
def reduce_bucket(plan: Plan, spec: Round, n_parts: int, *pieces):
    """Stage 4 reduce of one bucket: (phrases, (deferred keys, occurrences)), then the PARTIAL
    merges sent on, one list per bucket."""
    final = [b for part in pieces[:n_parts] for b in part]
    partial = [b for part in pieces[n_parts:] for b in part]
    if not final and not partial:
        return (*_NOTHING, *([] for _ in range(plan.buckets)))
    phrases, later, sent = stages.reduce_round(final, partial, plan, spec)
    return (*_decided(phrases, later), *_by_bucket(sent, plan.buckets))


@ray.remote
def reduce_forwarded(plan: Plan, spec: Round, *forwarded):
    """Stage 4 reduce of the merged PARTIAL pieces that reach one bucket."""
    final = [b for part in forwarded for b in part]
    if not final:
        return _NOTHING
    phrases, later, _ = stages.reduce_round(final, [], plan, spec)
    return _decided(phrases, later)
