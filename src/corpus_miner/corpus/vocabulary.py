"""Vocabulary: the global token vocabulary, built by merging the local vocabularies of blocks.

Blocks of documents are tokenized independently (each with its own small hash table, which
stays in cache), then merged here one after the other in input order: a local entry seen before
gets its global id, a new one the next id. Local ids are in order of first appearance within the
block, so global ids come out in order of first appearance over the whole input, exactly as one
scan over everything would give them, whatever the number of threads that made the blocks.
"""

from __future__ import annotations

import numpy as np

from corpus_miner.corpus import kernels
from corpus_miner.corpus.tokenizer import new_table, resized
from corpus_miner.io.strings import StringList


class Vocabulary:
    """Token strings (lowercased UTF-8) with ids in order of first appearance."""

    def __init__(self, initial: int = 1 << 14):
        self._state = np.zeros(2, dtype=np.int64)  # [entries, bytes used]
        self._table = new_table(2 * initial)
        self._key = np.zeros(initial, dtype=np.uint64)
        self._offsets = np.zeros(initial + 1, dtype=np.int64)
        self._bytes = np.zeros(16 * initial, dtype=np.uint8)

    def __len__(self) -> int:
        return int(self._state[0])

    def merge(self, keys: np.ndarray, local: StringList) -> np.ndarray:
        """Global ids (uint32) of the entries of a local vocabulary whose entries have these
        table keys (TokenIdAssigner.vocab_keys); new entries are appended in local order."""
        n_local = len(local)
        needed = len(self) + n_local
        slots = len(self._table)
        if needed > slots // 2:
            while needed > slots // 2:
                slots *= 2
            table = new_table(slots)
            kernels.rehash(self._key, len(self), table)
            self._table = table
        if needed > len(self._key):
            size = max(needed, 2 * len(self._key))
            self._key = resized(self._key, size)
            self._offsets = resized(self._offsets, size + 1)
        needed_bytes = int(self._state[1]) + len(local.data)
        if needed_bytes > len(self._bytes):
            self._bytes = resized(self._bytes, max(needed_bytes, 2 * len(self._bytes)))
        mapping = np.empty(n_local, dtype=np.uint32)
        kernels.merge_vocab(np.ascontiguousarray(keys, dtype=np.uint64), local.offsets,
                            local.data, self._state, self._table, self._key, self._offsets,
                            self._bytes, mapping)
        return mapping

    def strings(self) -> StringList:
        """The vocabulary as a StringList (a copy), index = id."""
        n = len(self)
        offsets = self._offsets[:n + 1].copy()
        return StringList(offsets, self._bytes[:offsets[-1]].copy())
