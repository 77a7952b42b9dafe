"""An in-process engine for the distributed miner: partitions are lists of text arrays.

It runs the map and reduce steps of stages.py exactly as a cluster engine does (a partition at a
time, keyed blobs routed to buckets, only blobs and broadcasts between steps), with the key sets
held whole where a cluster may broadcast Bloom filters built on its executors. It is the
reference the Spark engine is tested against and the shortest description of the data flow for
another engine.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa

from corpus_miner._numba.block_filter import BlockFilter
from corpus_miner._numba.keyset import KeySet
from corpus_miner.phrases.distributed import stages
from corpus_miner.phrases.distributed.encode import (
    WordIndex,
    tokenize_batch,
)
from corpus_miner.phrases.distributed.stages import Plan, Round
from corpus_miner.phrases.distributed.windows import unpack_arrays
from corpus_miner.phrases.result import PhraseTable


def mine_partitions(partitions: Sequence[Sequence[pa.Array]], plan: Plan,
                    make_filter: Callable[[np.ndarray], stages.Contains] = BlockFilter
                    ) -> tuple[PhraseTable, dict]:
    """Every maximal frequent phrase of the texts (partitions of batches of documents), exact;
    make_filter builds the membership test shipped for a set of keys (by default the split-block
    filter Spark's workers query; tests pass all-positive, exact or k-hash Bloom ones). Returns
    the PhraseTable (canonical order) and counts per stage."""
    stats: dict = {}

    def shuffle(mapped):  # [(bucket, blob)] per partition -> blobs per bucket
        buckets = defaultdict(list)
        for part in mapped:
            for bucket, blob in part:
                buckets[bucket].append(blob)
        return buckets

    # stages 0 and 1, map: tokenize (stored batches go through their blob form, as between the
    # passes of a cluster engine) and count words and bigram fingerprints per partition
    stored, word_parts, pair_parts = [], [], []
    for part in partitions:
        partition_counts = stages.PartitionCounts(plan.mask)
        blobs = []
        for texts in part:
            for piece in stages.text_slices(texts):
                local = tokenize_batch(piece)
                blobs.append(stages.local_to_blob(local))
                partition_counts.add(local)
        stored.append(blobs)
        word_parts.append(list(stages.keyed_word_blobs(*partition_counts.words(), plan.buckets)))
        pair_parts.append(stages.keyed_pair_blobs(partition_counts.pairs(), plan))
    vocab = stages.vocabulary((stages.frequent_words(b, plan.sigma)
                               for b in shuffle(word_parts).values()), plan.sigma)
    frequent = np.concatenate([stages.frequent_keys(b, plan.sigma)
                               for b in shuffle(pair_parts).values()] + [np.zeros(0, np.uint64)])
    stats.update(frequent_words=len(vocab), frequent_bigrams=len(frequent))
    # stage 2, map: global ids, runs of frequent bigrams only, gram statistics
    index, in_f2 = WordIndex(vocab), make_filter(frequent)
    table = [[stages.encode_batch(stages.local_from_blob(raw), index, in_f2, plan)
              for raw in part] for part in stored]
    stats["tokens_after_bigram_filter"] = sum(len(b.tokens) for part in table for b in part)
    grams = shuffle([blob for chunk in stages.partition_gram_chunks(part, plan)
                     for blob in stages.keyed_gram_blobs(chunk, plan)] for part in table)
    classes = [stages.classify_grams(b, plan) for b in grams.values()]
    frequent_fp = np.concatenate([c["frequent"] for c in classes] + [np.zeros(0, np.uint64)])
    live_fp = np.concatenate([c["live"] for c in classes] + [np.zeros(0, np.uint64)])
    occurrences = np.concatenate([c["occurrences"] for c in classes] + [np.zeros(0, np.int64)])
    stats.update(frequent_grams=len(frequent_fp), live_grams=len(live_fp))
    in_fl = make_filter(frequent_fp)
    reach = [[stages.mark_reach(batch, in_fl, plan) for batch in part] for part in table]
    stats["tokens_in_frequent_gram_chains"] = sum(len(b.tokens) for part in reach for b in part)
    group_keys, salts = frequent_fp, plan.salts(occurrences, len(partitions))
    found: list[tuple] = []
    deferred = None
    round_index = 0
    while True:
        lo, hi = plan.depths(round_index)
        spec = Round(round_index, lo, hi, make_filter(live_fp) if deferred is None else None,
                     None if deferred is None else KeySet(deferred), *_salted(group_keys, salts))
        routed: defaultdict[int, tuple[list, list]] = defaultdict(lambda: ([], []))
        for part_index, part in enumerate(reach):
            summary = stages.partition_summary(part, plan, spec)
            for bucket, stage, blob in stages.route(summary, plan, spec, part_index):
                routed[bucket][stage].append(blob)
        _count_shipped(stats, round_index, [final + partial for final, partial in
                                            routed.values()])
        forwarded = defaultdict(list)
        next_keys, next_occ = [], []
        for final, partial in routed.values():
            phrases, later, sent = stages.reduce_round(final, partial, plan, spec)
            found.append(phrases)
            next_keys.append(later[0])
            next_occ.append(later[2])
            for bucket, blob in sent:
                forwarded[bucket].append(blob)
        _count_shipped(stats, round_index, list(forwarded.values()))
        for blobs in forwarded.values():
            phrases, later, _ = stages.reduce_round(blobs, [], plan, spec)
            found.append(phrases)
            next_keys.append(later[0])
            next_occ.append(later[2])
        keys = np.concatenate(next_keys + [np.zeros(0, np.uint64)])
        stats[f"round_{round_index}_deferred"] = len(keys)
        if len(keys) == 0:
            break
        order = np.argsort(keys, kind="stable")
        deferred, salts = keys[order], plan.salts(np.concatenate(next_occ)[order],
                                                  len(partitions))
        group_keys = deferred  # the next round's groups are keyed by the deferred keys
        round_index += 1
    stats["rounds"] = round_index + 1
    table_out = _phrase_table(found, vocab).sorted()
    stats["phrases"] = len(table_out)
    return table_out, stats


def _count_shipped(stats: dict, round_index: int, buckets: list[list[bytes]]) -> None:
    """Add to round_index's counts: window tokens shipped (pools) and the most one bucket
    received, and what copying every distinct window would have shipped instead."""
    shipped, copied = 0, 0
    for blobs in buckets:
        arrays = [unpack_arrays(blob) for blob in blobs]
        received = sum(len(a["tokens"]) for a in arrays)
        shipped += received
        copied += sum(int(a["lengths"].sum()) for a in arrays)
        key = f"round_{round_index}_largest_bucket_tokens"
        stats[key] = max(stats.get(key, 0), received)
    for name, value in (("shipped_tokens", shipped), ("window_tokens", copied)):
        key = f"round_{round_index}_{name}"
        stats[key] = stats.get(key, 0) + value


def _salted(keys: np.ndarray, salts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    chosen = salts > 1
    order = np.argsort(keys[chosen], kind="stable")
    return keys[chosen][order], salts[chosen][order]


def _phrase_table(found: list[tuple], vocab) -> PhraseTable:
    found = [f for f in found if len(f[2])]
    if not found:
        return PhraseTable.empty(vocab)
    tokens = np.concatenate([f[0] for f in found]).astype(np.uint32)
    lengths = np.concatenate([np.diff(f[1]) for f in found])
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return PhraseTable(tokens, offsets, np.concatenate([f[2] for f in found]),
                       np.concatenate([f[3] for f in found]), vocab)
