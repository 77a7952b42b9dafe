"""BloomSpan (the article's Part 4) as a list of named stages; the kernels live in their modules.

1. word_df: exact document frequency of every word (window_filter.frequent_words);
2. counting_filter: a saturating uint8 counting filter over the min_length-windows of frequent
   words, partitioned so that its updates stay in the CPU cache (window_filter);
3. candidates: the windows passing it mark the positions where an answer may start (window_ok);
4. exact_seeds: the bigrams at those positions, packed with the position into uint64 keys,
   sorted bucket by bucket, df counted exactly -> seeds (seeds.py);
5. psi_order: seeds by Psi = length x df (descending), then by token ids;
6-7. growth: depth-first right growth on the token array, on alive occurrences, with
   left-neighbour pruning, exact maximality, and the dead-position mask (the sound form of the
   article's coverage mask) extended by every phrase found (growth.py, growth_kernels.py);
8. output: the PhraseTable in canonical order.
Every stage runs on all cores (numba.get_num_threads() Python threads running nogil kernels; one
below PARALLEL_MIN_TOKENS tokens); the answer and every count in the stats are the same for any
number of threads.

Memory on top of the corpus: three bit masks (3/8 byte per token), the filter while stages 2-3 run
(see default_filter_bytes), 8 bytes per window_ok position (the keys, sorted in place and reused
as the occurrence lists), 6 bytes per vocabulary word and thread while counting word df, and
work buffers per thread sized by the largest seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from corpus_miner._numba.bitmask import bitmask_count, bitmask_new
from corpus_miner.errors import ParameterError
from corpus_miner.memory import PeakRss
from corpus_miner.phrases import growth_kernels as gk
from corpus_miner.phrases import seeds as sd
from corpus_miner.phrases import window_filter as wf
from corpus_miner.phrases.doc_index import doc_block_shift, doc_block_table
from corpus_miner.phrases.growth import grow_all
from corpus_miner.phrases.inputs import validate_corpus_arrays
from corpus_miner.phrases.params import MAX_FILTER_BYTES, PhraseParams
from corpus_miner.phrases.result import PhraseTable
from corpus_miner.phrases.stage_timer import StageTimer
from corpus_miner.phrases.threads import mining_threads

KEY_LAYOUTS = ("auto", "packed", "unpacked")
# A seed whose depth-first growth scans more than FLOOR + PER_OCCURRENCE x its occurrences is
# grown by suffix array instead (periodic runs; see seed_suffix_array.py). Ordinary seeds scan
# their occurrences once per branching level, far below this.
GROWTH_BUDGET_PER_OCCURRENCE = 64
GROWTH_BUDGET_FLOOR = 1 << 22
MIN_DEFAULT_FILTER_BYTES = 4096
MAX_DEFAULT_FILTER_BYTES = 1 << 30


def default_filter_bytes(counted_windows: int, sigma: int) -> int:
    """Counting filter size when none is given: about 4 / min(sigma, 255) counters per counted
    window, between 1/4 and 4 of them, at least 4 KiB, at most 1 GiB.

    Nearly every window of text that is not a template is unique, so a counter holds about
    lambda = counted windows / cells of them, and lets a rare window through when lambda's
    Poisson tail reaches the threshold: lambda = min(sigma, 255) / 4 keeps that below 1e-5 at
    sigma 20 and near 4% at sigma 3 (where lambda is 3/4). The counters of the frequent windows
    themselves catch a further share of about (their distinct windows) / cells. Any size gives
    the exact answer."""
    per_window = min(4.0, max(0.25, 4.0 / min(sigma, 255)))
    size = int(counted_windows * per_window)
    return max(MIN_DEFAULT_FILTER_BYTES, min(size, MAX_DEFAULT_FILTER_BYTES, MAX_FILTER_BYTES))


@dataclass
class BloomSpanStats:
    """Counts of one run (the --stats JSON, with seconds and peak RSS added by `as_dict`)."""
    tokens: int
    documents: int
    sigma: int
    min_length: int
    num_hashes: int
    threads: int
    algorithm: str = "bloomspan"
    bigrams: int = 0  # bigrams inside documents
    windows: int = 0  # min_length-windows inside documents
    frequent_words: int = 0
    candidates_after_word_filter: int = 0  # windows of frequent words only (counted)
    share_after_word_filter: float = 0.0  # of all windows
    filter_bytes: int = 0
    candidates_after_counting_filter: int = 0  # window_ok positions
    share_after_counting_filter: float = 0.0  # of all windows
    key_layout: str = ""
    occurrences_packed: int = 0
    seeds: int = 0
    seed_occurrences: int = 0
    seeds_grown_by_suffix_array: int = 0
    seeds_left_pruned: int = 0
    seeds_skipped_by_mask: int = 0
    nodes_visited: int = 0
    nodes_left_pruned: int = 0
    candidates_with_dead_occurrence: int = 0
    left_maximality_checks: int = 0
    occurrences_scanned_in_growth: int = 0
    tokens_compared_in_growth: int = 0
    covered_tokens: int = 0
    phrases: int = 0
    note: str | None = None

    def as_dict(self, timer: StageTimer, rss: PeakRss) -> dict:
        out = {k: v for k, v in asdict(self).items() if v is not None}
        out.update(timer.totals())
        out.update(rss.report())
        return out


@dataclass
class _Corpus:
    tokens: np.ndarray
    doc_offsets: np.ndarray
    doc_table: np.ndarray
    doc_shift: int


def mine_bloomspan(tokens: np.ndarray, doc_offsets: np.ndarray, sigma: int, min_length: int,
                   vocab: Sequence[str], *, filter_bytes: int | None = None,
                   num_hashes: int = 1, progress: Callable[[str], None] | None = None,
                   key_layout: str = "auto",
                   word_filter: wf.WordFilter | None = None) -> tuple[PhraseTable, dict]:
    """Every maximal contiguous frequent phrase (exact), the BloomSpan way.

    tokens: uint32 token ids of all documents concatenated; doc_offsets: int64, n_docs + 1.
    progress, if given, is called with the name of each stage as it starts (and "growth i/n"
    between batches of seeds). key_layout picks how occurrences are sorted into seeds: "packed"
    (bigram and position in one uint64, radix-partitioned), "unpacked" (a stable sort of
    (bigram, position) pairs, about 5x the memory: when there are too many frequent words for
    "packed") or "auto" (the first that fits; the other is for tests). word_filter: step 1's
    result when the caller has it already (phrases.auto computes it to choose the algorithm).
    Returns the PhraseTable in canonical order (PhraseTable.sorted) and a stats dict (counts,
    shares, seconds per stage, peak RSS).
    """
    if key_layout not in KEY_LAYOUTS:
        raise ParameterError(f"key_layout must be one of {KEY_LAYOUTS}, got {key_layout!r}")
    params = PhraseParams(sigma=sigma, min_length=min_length, filter_bytes=filter_bytes,
                          num_hashes=num_hashes)
    sigma, min_length = params.sigma, params.min_length
    tokens, doc_offsets, vocab_size = validate_corpus_arrays(tokens, doc_offsets, vocab)
    n_tokens, n_docs = len(tokens), len(doc_offsets) - 1
    threads = mining_threads(n_tokens)
    timer, rss = StageTimer(progress), PeakRss()
    stats = BloomSpanStats(tokens=n_tokens, documents=n_docs, sigma=sigma, min_length=min_length,
                           num_hashes=params.num_hashes, threads=threads)

    def finish(table: PhraseTable) -> tuple[PhraseTable, dict]:
        stats.phrases = len(table)
        return table, stats.as_dict(timer, rss)

    longest = int(np.diff(doc_offsets).max()) if n_docs else 0
    if sigma > n_docs or n_tokens == 0 or min_length > longest:
        stats.note = (f"sigma={sigma} exceeds the {n_docs} documents: no phrase can be frequent"
                      if sigma > n_docs else "empty corpus" if n_tokens == 0 else
                      f"min_length={min_length} exceeds the longest document ({longest} tokens)")
        return finish(PhraseTable.empty(vocab))
    shift = doc_block_shift(n_tokens, n_docs)
    corpus = _Corpus(tokens, doc_offsets, doc_block_table(doc_offsets, shift), shift)

    timer.start("word_df")
    if word_filter is None:
        word_filter = wf.word_filter(tokens, doc_offsets, vocab_size, sigma, min_length,
                                     threads)
    word_ok, counted = word_filter.word_ok, word_filter.counted_windows
    _word_stats(stats, corpus, word_ok, counted)

    timer.start("counting_filter")
    n_cells = filter_bytes if filter_bytes is not None else default_filter_bytes(counted,
                                                                                 sigma)
    stats.filter_bytes = n_cells
    counters, bucket_bits = wf.fill_filter(tokens, doc_offsets, corpus.doc_table, shift,
                                           word_ok, min_length, n_cells, params.num_hashes,
                                           threads)

    timer.start("candidates")
    window_ok, n_window_ok = wf.query_filter(tokens, doc_offsets, corpus.doc_table, shift,
                                             word_ok, min_length, counters, bucket_bits,
                                             params.num_hashes, sigma, threads)
    del counters
    stats.candidates_after_counting_filter = n_window_ok
    stats.share_after_counting_filter = n_window_ok / max(stats.windows, 1)

    timer.start("exact_seeds")
    word_rank = wf.word_ranks(word_ok)
    pos_bits = sd.bits_for(n_tokens)
    occurrences, seed_lo, seed_hi, seed_df = _exact_seeds(
        corpus, window_ok, n_window_ok, word_rank, stats, pos_bits, key_layout, sigma,
        threads)

    timer.start("psi_order")
    order = sd.psi_order(tokens, occurrences, seed_lo, seed_df, (1 << pos_bits) - 1)

    timer.start("growth")
    dead = bitmask_new(n_tokens)  # positions where no phrase of the answer starts
    covered = bitmask_new(n_tokens)
    growth = gk.Growth(tokens, doc_offsets, occurrences, seed_lo, seed_hi, word_rank, dead,
                       pos_bits, sigma, min_length, GROWTH_BUDGET_PER_OCCURRENCE,
                       GROWTH_BUDGET_FLOOR)
    grown = grow_all(growth, order, stats.frequent_words, window_ok, covered, threads,
                     progress)
    del occurrences, dead, growth
    _growth_stats(stats, grown, bitmask_count(covered, n_tokens))


    timer.start("output")
    return finish(_phrase_table(tokens, vocab, *grown.arrays()))


def _word_stats(stats: BloomSpanStats, corpus: _Corpus, word_ok: np.ndarray,
                counted: int) -> None:
    lengths = np.diff(corpus.doc_offsets)
    stats.frequent_words = int(word_ok.sum())
    stats.bigrams = int(np.maximum(lengths - 1, 0).sum())
    stats.windows = wf.count_windows(corpus.doc_offsets, stats.min_length)
    stats.candidates_after_word_filter = counted
    stats.share_after_word_filter = counted / max(stats.windows, 1)


def _exact_seeds(corpus: _Corpus, window_ok, n_window_ok, word_rank, stats: BloomSpanStats,
                 pos_bits: int, key_layout: str, sigma: int, threads: int):
    sd.check_occurrence_bits(stats.documents, pos_bits)
    rank_bits = sd.bits_for(stats.frequent_words)
    bucket_bits = sd.seed_bucket_bits(rank_bits, pos_bits, n_window_ok)
    layout = key_layout
    if layout == "auto":
        layout = "packed" if bucket_bits is not None else "unpacked"
    if layout == "packed" and bucket_bits is None:
        raise ParameterError(f"key_layout='packed': {stats.frequent_words} frequent words and "
                             f"{stats.tokens} tokens do not fit packed keys; use 'auto'")
    stats.key_layout = layout
    if layout == "packed":
        found = sd.packed_seeds(corpus.tokens, window_ok, word_rank, rank_bits, pos_bits,
                                bucket_bits, corpus.doc_offsets, corpus.doc_table,
                                corpus.doc_shift, sigma, threads)
    else:
        found = sd.unpacked_seeds(corpus.tokens, window_ok, n_window_ok, pos_bits,
                                  corpus.doc_offsets, corpus.doc_table, corpus.doc_shift, sigma)
    occurrences, seed_lo, seed_hi, seed_df = found
    stats.occurrences_packed = n_window_ok
    stats.seeds = len(seed_lo)
    stats.seed_occurrences = int((seed_hi - seed_lo).sum())
    return found


def _growth_stats(stats: BloomSpanStats, grown, covered_tokens: int) -> None:
    c = grown.counters
    stats.seeds_grown_by_suffix_array = grown.by_suffix_array
    stats.seeds_left_pruned = int(c[gk.SEEDS_LEFT_PRUNED])
    stats.seeds_skipped_by_mask = int(c[gk.SEEDS_MASK_SKIPPED])
    stats.nodes_visited = int(c[gk.NODES_VISITED])
    stats.nodes_left_pruned = int(c[gk.NODES_LEFT_PRUNED])
    stats.candidates_with_dead_occurrence = int(c[gk.CANDIDATES_WITH_DEAD_OCCURRENCE])
    stats.left_maximality_checks = int(c[gk.LEFT_CHECKS])
    stats.occurrences_scanned_in_growth = int(c[gk.OCCURRENCES_SCANNED])
    stats.tokens_compared_in_growth = int(c[gk.TOKENS_COMPARED])
    stats.covered_tokens = int(covered_tokens)


def _phrase_table(tokens, vocab, start, length, df, occurrences) -> PhraseTable:
    offsets = np.zeros(len(start) + 1, dtype=np.int64)
    np.cumsum(length, out=offsets[1:])
    within = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1], length)
    flat = tokens[np.repeat(start, length) + within]
    return PhraseTable(flat, offsets, df, occurrences, vocab).sorted()
