"""Position -> document lookups against a binary search."""

from __future__ import annotations

import numpy as np

from corpus_miner.phrases.doc_index import doc_at, doc_block_shift, doc_block_table


def test_doc_block_table_lookup():
    rng = np.random.default_rng(2)
    for _ in range(50):
        lengths = rng.integers(0, 12, size=int(rng.integers(1, 30)))
        lengths[rng.integers(0, len(lengths))] += 1  # at least one token
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        n = int(offsets[-1])
        for shift in (0, 1, 3, doc_block_shift(n, len(lengths)), 10):
            table = doc_block_table(offsets, shift)
            for pos in range(n):
                expected = int(np.searchsorted(offsets, pos, side="right") - 1)
                assert doc_at(offsets, table, shift, pos) == expected


def test_doc_of_with_empty_documents():
    offsets = np.array([0, 0, 3, 3, 3, 7, 8], dtype=np.int64)
    for pos in range(8):
        expected = max(d for d in range(6) if offsets[d] <= pos < offsets[d + 1])
        for shift in (0, 2):
            assert doc_at(offsets, doc_block_table(offsets, shift), shift, pos) == expected
