"""Position -> document lookups in O(1): a table of the document at every 2^shift-th position.

Corpus layout everywhere in phrases/: `tokens` uint32 (all documents concatenated), `doc_offsets`
int64 (n_docs + 1; document d is tokens[doc_offsets[d]:doc_offsets[d + 1]], empty documents
allowed).
"""

from __future__ import annotations

import numpy as np
from numba import njit


def doc_block_shift(n_tokens: int, n_docs: int) -> int:
    """Block size (as a shift) of the position -> document table: about one mean document per
    block, so a lookup scans about one document boundary; the table costs 8 bytes per document."""
    mean = max(n_tokens // max(n_docs, 1), 1)
    return max(mean.bit_length() - 1, 0)


@njit(cache=True)
def doc_block_table(doc_offsets, shift):
    """table[b] = the document holding position b << shift (the last one starting at or before
    it, so empty documents are skipped)."""
    n_tokens = doc_offsets[-1]
    n_blocks = (n_tokens >> shift) + 1
    table = np.empty(n_blocks, dtype=np.int64)
    d = 0
    n_docs = len(doc_offsets) - 1
    for b in range(n_blocks):
        pos = b << shift
        while d + 1 < n_docs and doc_offsets[d + 1] <= pos:
            d += 1
        table[b] = d
    return table


@njit(cache=True, inline="always")
def doc_at(doc_offsets, table, shift, pos):
    """Document holding corpus position `pos` (0 <= pos < n_tokens): O(1) block lookup plus a
    short forward scan, instead of a binary search over all documents."""
    d = table[pos >> shift]
    while doc_offsets[d + 1] <= pos:
        d += 1
    return d
