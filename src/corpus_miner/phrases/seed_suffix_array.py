"""Grow one seed by suffix array: the exact path for seeds whose depth-first growth is quadratic.

A document repeating a short pattern m times (tables of zeros, "ha ha ha", padding) gives its
seed ~m self-overlapping occurrences that the depth-first growth drops one per level, so it scans
~m^2/2 occurrences. grow_seeds hands such seeds back when they exceed a budget, and this module
finds their phrases with FHK's suffix array, in O(m log m), on a small sub-corpus.

Why the sub-corpus gives exactly the seed's answers. Let P be a phrase whose first bigram is the
seed. Every occurrence of P, of a right extension Pa and of a left extension aP lies in a window
[q - 1, end of q's document) of an occurrence q of the seed. The sub-corpus has one document per
document holding a seed occurrence: its window from just before the first occurrence (not before
the document's start) to the document's end. So P, Pa and aP have the same occurrences, documents
and document starts there as in the corpus: P is maximal frequent in the sub-corpus iff it is in the
corpus. (Positions that are not window_ok start no frequent phrase of length >= min_length, so
the absence of such occurrences of the seed changes nothing.)
"""

from __future__ import annotations

import numpy as np

from corpus_miner.phrases.exact import maximal_intervals
from corpus_miner.phrases.growth_kernels import mark_found
from corpus_miner.phrases.suffix_array import MAX_TEXT_LENGTH


def grow_seed_by_suffix_array(tokens: np.ndarray, doc_offsets: np.ndarray,
                              seed_positions: np.ndarray, sigma: int, min_length: int,
                              window_ok: np.ndarray, dead: np.ndarray, covered: np.ndarray
                              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """(start, length, df, occurrences) of the maximal phrases beginning with the seed (its
    occurrences `seed_positions`, ascending), like grow_seeds; marks their dead/covered bits
    (growth_kernels.mark_found; window_ok is the window filter's mask).
    None when the sub-corpus is beyond the suffix array's size limit (2^31 tokens plus
    documents): the caller then grows the seed depth-first after all."""
    positions = np.asarray(seed_positions, dtype=np.int64)
    docs = np.searchsorted(doc_offsets, positions, side="right") - 1
    first = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
    found: list[list[int]] = [[], [], [], []]
    if len(first) >= sigma:
        window_start = np.maximum(positions[first] - 1, doc_offsets[docs[first]])
        window_len = doc_offsets[docs[first] + 1] - window_start
        if int(window_len.sum()) + len(first) > MAX_TEXT_LENGTH:
            return None
        sub_offsets = np.zeros(len(first) + 1, dtype=np.int64)
        np.cumsum(window_len, out=sub_offsets[1:])
        # to_corpus[i]: corpus position of the sub-corpus token i
        to_corpus = np.repeat(window_start - sub_offsets[:-1], window_len) \
            + np.arange(sub_offsets[-1], dtype=np.int64)
        sub_tokens = tokens[to_corpus]
        intervals = maximal_intervals(sub_tokens, sub_offsets, sigma, min_length)
        starts = intervals.token_positions(intervals.lb)
        seed = tokens[positions[0]], tokens[positions[0] + 1]
        ours = (sub_tokens[starts] == seed[0]) & (sub_tokens[starts + 1] == seed[1])
        for i in np.flatnonzero(ours):
            rows = np.arange(intervals.lb[i], intervals.rb[i] + 1)
            occurrences = np.sort(to_corpus[intervals.token_positions(rows)])
            length = int(intervals.length[i])
            mark_found(occurrences, 0, len(occurrences), length, min_length, window_ok, dead,
                       covered)
            for column, value in zip(found, (occurrences[0], length, intervals.df[i],
                                             len(occurrences))):
                column.append(value)
    starts, lengths, dfs, counts = (np.array(column, dtype=np.int64) for column in found)
    return starts, lengths, dfs, counts
