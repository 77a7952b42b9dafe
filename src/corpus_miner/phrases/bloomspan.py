"""BloomSpan (article 000, Part 4): the seven steps, each a numba kernel, glued here.

1. exact document frequency of every word (`kernels.frequent_words`);
2. one linear pass of a saturating uint8 counting filter over the bigrams of frequent words;
3. a second pass marking, one bit per position, the bigrams that pass both filters; positions
   whose run of such bigrams is shorter than min_length - 1 are marked dead: no phrase of length
   >= min_length (in particular no answer) has an occurrence there;
4. the other occurrences packed as (bigram, position) into one uint64 each, sorted, df counted
   exactly over them, bigrams below sigma (every false positive among them) dropped -> seeds;
5. seeds ordered by Psi = length x df (descending), then by token ids;
6. depth-first right growth on the token array, on alive occurrences, with left-neighbour pruning;
7. exact maximality (left-extension check per candidate) and the dead-position mask, the sound
   form of the article's coverage mask, extended by every phrase found.
The proofs that the shortcuts never change the answer are in growth_kernels.py.

Memory on top of the corpus: 8 bytes per packed occurrence (the keys, sorted in place and reused
as the occurrence lists), the filter (1/4 byte per candidate bigram by default),
three bit masks (3/8 byte per token), 6 bytes per vocabulary word while counting word df, and
work buffers sized by the largest seed. Packed keys of word ranks need 2 x bits(frequent words) +
bits(tokens) <= 64 (up to 65k frequent words at 2^32 tokens); beyond that each distinct surviving
bigram gets a dense id (a hash table of 16 bytes per slot, at most half full) and the keys stay
8 bytes; only when even those ids do not fit does an unpacked sort (about 5x the memory) take over.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

from corpus_miner.errors import ParameterError
from corpus_miner.memory import PeakRss
from corpus_miner.phrases import growth_kernels as gk
from corpus_miner.phrases import kernels as k
from corpus_miner.phrases.inputs import validate_corpus_arrays
from corpus_miner.phrases.params import MAX_FILTER_BYTES, PhraseParams
from corpus_miner.phrases.result import PhraseTable
from corpus_miner.phrases.seed_suffix_array import grow_seed_by_suffix_array

KEY_LAYOUTS = ("auto", "ranks", "bigram_ids", "pairs")
SEEDS_PER_CALL = 1 << 14  # growth runs in chunks so that progress can be reported between them
# A seed whose depth-first growth scans more than FLOOR + PER_OCCURRENCE x its occurrences is
# grown by suffix array instead (periodic runs; see seed_suffix_array.py). Ordinary seeds scan
# their occurrences once per branching level, far below this.
GROWTH_BUDGET_PER_OCCURRENCE = 64
GROWTH_BUDGET_FLOOR = 1 << 22
FILTER_BYTES_PER_CANDIDATE = 0.25
MIN_DEFAULT_FILTER_BYTES = 4096


def default_filter_bytes(candidate_bigrams: int) -> int:
    """Counting filter size when none is given: a quarter byte per bigram occurrence that survived
    the word-df filter (only those enter the filter), at least 4 KiB, at most the article's 512 MiB.

    Why not the article's min(8 bytes x tokens, 512 MiB): measured on openjdk-17-doc, perl-doc
    and bible-kjv at sigma 20 (benchmarks/results/bloomspan_filter.csv), growing the filter from
    0.25 to 1 byte per candidate removes only 1-3% more false-positive occurrences (most of them
    are bigrams repeated >= sigma times inside fewer than sigma documents, which no occurrence
    counter can reject), while a filter that spills out of the CPU cache makes both passes up to 2x
    slower and costs memory. Any size gives the exact answer."""
    size = int(candidate_bigrams * FILTER_BYTES_PER_CANDIDATE)
    return max(MIN_DEFAULT_FILTER_BYTES, min(size, 512 << 20, MAX_FILTER_BYTES))


def _bits(n: int) -> int:
    return max(1, int(n - 1).bit_length()) if n > 1 else 1


def mine_bloomspan(tokens: np.ndarray, doc_offsets: np.ndarray, sigma: int, min_length: int,
                   vocab: Sequence[str], *, filter_bytes: int | None = None,
                   num_hashes: int = 1, progress: Callable[[str], None] | None = None,
                   key_layout: str = "auto") -> tuple[PhraseTable, dict]:
    """Every maximal contiguous frequent phrase (exact), the BloomSpan way.

    tokens: uint32 token ids of all documents concatenated; doc_offsets: int64, n_docs + 1.
    progress, if given, is called with the name of each stage as it starts (and "growth i/n"
    between chunks of seeds). key_layout picks how occurrences are sorted into seeds: "ranks"
    (word ranks and position in one uint64), "bigram_ids" (a dense id per distinct bigram and the
    position: when there are too many frequent words for "ranks"), "pairs" (an unpacked stable
    sort, about 5x the memory: when neither fits) or "auto" (the first that fits; the others are
    for tests). Returns the PhraseTable in canonical order (PhraseTable.sorted) and a stats dict
    (counts, shares, seconds per stage, peak RSS).
    """
    if key_layout not in KEY_LAYOUTS:
        raise ParameterError(f"key_layout must be one of {KEY_LAYOUTS}, got {key_layout!r}")
    params = PhraseParams(sigma=sigma, min_length=min_length, filter_bytes=filter_bytes,
                          num_hashes=num_hashes)
    sigma, min_length = params.sigma, params.min_length
    tokens, doc_offsets, vocab_size = validate_corpus_arrays(tokens, doc_offsets, vocab)
    n_tokens, n_docs = len(tokens), len(doc_offsets) - 1
    rss = PeakRss()
    stats: dict = {"algorithm": "bloomspan", "tokens": n_tokens, "documents": n_docs,
                   "sigma": sigma, "min_length": min_length, "num_hashes": params.num_hashes,
                   "seconds": {}}
    seconds = stats["seconds"]
    started = time.perf_counter()
    cpu_started = time.process_time()
    cpu_seconds = stats["cpu_seconds"] = {}  # less sensitive than wall time to a busy machine
    clock = [started, None, cpu_started]

    def stage(name: str) -> None:
        now, cpu_now = time.perf_counter(), time.process_time()
        if clock[1] is not None:
            seconds[clock[1]] = seconds.get(clock[1], 0.0) + now - clock[0]
            cpu_seconds[clock[1]] = cpu_seconds.get(clock[1], 0.0) + cpu_now - clock[2]
        clock[0], clock[1], clock[2] = now, name, cpu_now
        if progress is not None and name != "done":
            progress(name)

    def finish(table: PhraseTable) -> tuple[PhraseTable, dict]:
        stage("done")
        stats["phrases"] = len(table)
        stats["seconds_total"] = time.perf_counter() - started
        stats["cpu_seconds_total"] = time.process_time() - cpu_started
        stats.update(rss.report())
        return table, stats

    if sigma > n_docs or n_tokens == 0:
        stats["note"] = (f"sigma={sigma} exceeds the {n_docs} documents: no phrase can be frequent"
                         if sigma > n_docs else "empty corpus")
        return finish(PhraseTable.empty(vocab))

    stage("word_df")
    word_ok = k.frequent_words(tokens, doc_offsets, vocab_size, sigma)
    total_bigrams, word_candidates = k.count_bigrams(tokens, doc_offsets, word_ok)
    stats["frequent_words"] = int(word_ok.sum())
    stats["bigrams"] = int(total_bigrams)
    stats["candidates_after_word_filter"] = int(word_candidates)
    stats["share_after_word_filter"] = word_candidates / max(total_bigrams, 1)

    stage("counting_filter")
    n_cells = filter_bytes if filter_bytes is not None else default_filter_bytes(word_candidates)
    stats["filter_bytes"] = int(n_cells)
    counters = np.zeros(n_cells, dtype=np.uint8)
    k.fill_counting_filter(tokens, doc_offsets, word_ok, counters, params.num_hashes)

    stage("candidates")
    survivors = k.bitmask_new(n_tokens)
    dead = k.bitmask_new(n_tokens)  # positions where no phrase of the answer can start
    n_survivors, n_short = k.mark_filter_survivors(tokens, doc_offsets, word_ok, counters,
                                                   params.num_hashes, min(sigma, 255), survivors,
                                                   min_length, dead)
    del counters
    stats["positions_dead_by_short_runs"] = int(n_short)
    stats["candidates_after_counting_filter"] = int(n_survivors)
    stats["share_after_counting_filter"] = n_survivors / max(total_bigrams, 1)

    stage("exact_seeds")
    word_rank = k.word_ranks(word_ok)
    doc_shift = k.doc_block_shift(n_tokens, n_docs)
    doc_table = k.doc_block_table(doc_offsets, doc_shift)
    rank_bits, pos_bits = _bits(int(word_ok.sum())), _bits(n_tokens)
    n_packed = n_survivors - n_short  # short-run positions start no phrase of length >= L
    layout = key_layout
    if layout == "auto":
        layout = "ranks" if 2 * rank_bits + pos_bits <= 64 else "bigram_ids"
    occurrences = None
    if layout == "ranks":
        occurrences = k.pack_survivors(tokens, survivors, dead, n_packed, word_rank, rank_bits,
                                       pos_bits)
    elif layout == "bigram_ids":
        occurrences, n_ids = k.pack_survivors_by_bigram_id(tokens, survivors, dead, n_packed,
                                                           pos_bits)
        stats["distinct_bigrams_packed"] = int(n_ids)
        if len(occurrences) != n_packed:  # more distinct bigrams than 64 - pos_bits bits hold
            occurrences, layout = None, "pairs"
    stats["key_layout"] = layout
    if occurrences is not None:
        occurrences.sort()  # numpy's SIMD sort: bigram then position, one uint64 each
        seed_lo, seed_hi, seed_df = k.exact_seeds(occurrences, np.empty(0, np.int64), pos_bits,
                                                  doc_offsets, doc_table, doc_shift, sigma)
        k.unpack_positions_inplace(occurrences, pos_bits)
    else:
        occurrences = k.survivor_positions(survivors, dead, n_packed, n_tokens)
        bigram = (tokens[occurrences].astype(np.uint64) << np.uint64(32)) \
            | tokens[occurrences + 1].astype(np.uint64)
        order = np.argsort(bigram, kind="stable")  # positions stay ascending inside a bigram
        bigram, occurrences = bigram[order], occurrences[order]
        del order
        seed_lo, seed_hi, seed_df = k.exact_seeds(bigram, occurrences, 0, doc_offsets, doc_table,
                                                  doc_shift, sigma)
        del bigram
    stats["occurrences_packed"] = int(n_packed)
    stats["seeds"] = int(len(seed_lo))
    stats["seed_occurrences"] = int((seed_hi - seed_lo).sum())

    stage("psi_order")
    first = np.asarray(occurrences[seed_lo], dtype=np.int64)
    # all seeds have length 2, so Psi = 2 x df; ties by token ids (deterministic)
    order = np.lexsort((tokens[first + 1], tokens[first], -seed_df)).astype(np.int64)

    stage("growth")
    covered = k.bitmask_new(n_tokens)
    found: list[tuple[np.ndarray, ...]] = []
    counters_total = np.zeros(gk.N_COUNTERS, dtype=np.int64)
    over_budget = []
    for chunk_start in range(0, len(order), SEEDS_PER_CALL):
        if progress is not None and chunk_start:
            progress(f"growth {chunk_start}/{len(order)}")
        chunk = order[chunk_start:chunk_start + SEEDS_PER_CALL]
        *result, chunk_over, chunk_counters = gk.grow_seeds(
            tokens, doc_offsets, doc_table, doc_shift, occurrences, seed_lo, seed_hi, chunk,
            sigma, min_length, word_rank, stats["frequent_words"], survivors, dead, covered,
            GROWTH_BUDGET_PER_OCCURRENCE, GROWTH_BUDGET_FLOOR)
        found.append(tuple(result))
        over_budget.extend(chunk_over.tolist())
        counters_total += chunk_counters
    unlimited = np.iinfo(np.int64).max // 4
    by_suffix_array = 0
    for seed in over_budget:
        grown = grow_seed_by_suffix_array(tokens, doc_offsets,
                                          occurrences[seed_lo[seed]:seed_hi[seed]], sigma,
                                          min_length, survivors, dead, covered)
        if grown is None:  # too big for a suffix array: depth-first after all, however long
            *grown, _, seed_counters = gk.grow_seeds(
                tokens, doc_offsets, doc_table, doc_shift, occurrences, seed_lo, seed_hi,
                np.array([seed], np.int64), sigma, min_length, word_rank,
                stats["frequent_words"], survivors, dead, covered, 0, unlimited)
            counters_total += seed_counters
        else:
            by_suffix_array += 1
        found.append(tuple(grown))
    del occurrences, dead
    stats["seeds_grown_by_suffix_array"] = by_suffix_array
    stats["seeds_left_pruned"] = int(counters_total[gk.SEEDS_LEFT_PRUNED])
    stats["seeds_skipped_by_mask"] = int(counters_total[gk.SEEDS_MASK_SKIPPED])
    stats["nodes_visited"] = int(counters_total[gk.NODES_VISITED])
    stats["nodes_left_pruned"] = int(counters_total[gk.NODES_LEFT_PRUNED])
    stats["candidates_with_dead_occurrence"] = int(
        counters_total[gk.CANDIDATES_WITH_DEAD_OCCURRENCE])
    stats["left_maximality_checks"] = int(counters_total[gk.LEFT_CHECKS])
    stats["occurrences_scanned_in_growth"] = int(counters_total[gk.OCCURRENCES_SCANNED])
    stats["tokens_compared_in_growth"] = int(counters_total[gk.TOKENS_COMPARED])
    stats["covered_tokens"] = int(k.bitmask_count(covered, n_tokens))

    stage("output")
    start, length, df, occ = (np.concatenate([f[i] for f in found]) if found
                              else np.empty(0, np.int64) for i in range(4))
    offsets = np.zeros(len(start) + 1, dtype=np.int64)
    np.cumsum(length, out=offsets[1:])
    within = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1], length)
    flat = tokens[np.repeat(start, length) + within]
    table = PhraseTable(flat, offsets, df, occ, vocab).sorted()
    return finish(table)

