"""The growth phase on all cores, with an answer (and statistics) independent of the thread count.

Seeds are taken in Psi order in batches of SEEDS_PER_BATCH. Inside a batch, slices of
SEEDS_PER_SLICE seeds are grown by `threads` threads at once (growth_kernels.grow_seeds releases
the GIL), all reading the dead mask as it was when the batch began; the phrases they find are
marked (mark_all_found: coverage and dead bits) only after the batch, in slice order. So what each
seed sees depends on the batch boundaries alone, never on which thread ran it or when: the same
seeds are skipped or pruned, the same counters come out, whatever the number of threads. (Dead
bits only ever save work; any sound subset of them gives the same answer, see growth_kernels.)

Seeds over their growth budget are grown after their batch, one by one in Psi order, by suffix
array (seed_suffix_array.py) or, when their sub-corpus is too big for one, depth-first without a
budget.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from corpus_miner.phrases import growth_kernels as gk
from corpus_miner.phrases.seed_suffix_array import grow_seed_by_suffix_array
from corpus_miner.phrases.threads import ordered_map

SEEDS_PER_BATCH = 1 << 13
SEEDS_PER_SLICE = 1 << 8
UNLIMITED = np.iinfo(np.int64).max // 4


@dataclass
class Grown:
    """Phrases found by the growth (start = position of the first occurrence) and its counters."""
    start: list = field(default_factory=list)
    length: list = field(default_factory=list)
    df: list = field(default_factory=list)
    occurrences: list = field(default_factory=list)
    counters: np.ndarray = field(default_factory=lambda: np.zeros(gk.N_COUNTERS, np.int64))
    by_suffix_array: int = 0

    def add(self, start, length, df, occurrences) -> None:
        for column, values in zip((self.start, self.length, self.df, self.occurrences),
                                  (start, length, df, occurrences)):
            column.append(np.asarray(values, dtype=np.int64))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        start, length, df, occurrences = (np.concatenate(c) if c else np.empty(0, np.int64)
                                          for c in (self.start, self.length, self.df,
                                                    self.occurrences))
        return start, length, df, occurrences


def grow_all(g: gk.Growth, order: np.ndarray, n_ranks: int, window_ok: np.ndarray,
             covered: np.ndarray, threads: int,
             progress: Callable[[str], None] | None = None) -> Grown:
    """Grow every seed of `order`; dead and covered bits are set as phrases are found."""
    largest = int((g.seed_hi - g.seed_lo).max()) if len(g.seed_lo) else 1
    local = threading.local()
    grown = Grown()

    def grow_slice(seed_ids):
        if not hasattr(local, "workspace"):
            local.workspace = gk.new_workspace(largest, n_ranks)
        return gk.grow_seeds(g, local.workspace, seed_ids)

    def mark(length, occurrences, marks):
        gk.mark_all_found(marks, length, occurrences, g.min_length, window_ok, g.dead, covered)

    with ordered_map(threads) as map_:
        for batch_start in range(0, len(order), SEEDS_PER_BATCH):
            if progress is not None and batch_start:
                progress(f"growth {batch_start}/{len(order)}")
            batch = order[batch_start:batch_start + SEEDS_PER_BATCH]
            slices = [batch[i:i + SEEDS_PER_SLICE] for i in range(0, len(batch), SEEDS_PER_SLICE)]
            over_budget = []
            results = map_(grow_slice, slices)  # all of the batch before marking
            for start, length, df, occurrences, marks, over, counters in results:
                grown.add(start, length, df, occurrences)
                mark(length, occurrences, marks)
                over_budget.extend(over.tolist())
                grown.counters += counters
            for seed in over_budget:
                _grow_over_budget(g, seed, n_ranks, window_ok, covered, grown, mark)
    return grown


def _grow_over_budget(g, seed, n_ranks, window_ok, covered, grown, mark) -> None:
    pos_mask = np.uint64((1 << g.pos_bits) - 1)
    positions = (g.occurrences[g.seed_lo[seed]:g.seed_hi[seed]] & pos_mask).astype(np.int64)
    found = grow_seed_by_suffix_array(g.tokens, g.doc_offsets, positions, g.sigma, g.min_length,
                                      window_ok, g.dead, covered)
    if found is not None:
        grown.by_suffix_array += 1
        grown.add(*found)
        return
    unlimited = g._replace(budget_per_occurrence=0, budget_floor=UNLIMITED)
    largest = int(g.seed_hi[seed] - g.seed_lo[seed])
    start, length, df, occurrences, marks, _, counters = gk.grow_seeds(
        unlimited, gk.new_workspace(largest, n_ranks), np.array([seed], np.int64))
    grown.add(start, length, df, occurrences)
    mark(length, occurrences, marks)
    grown.counters += counters
