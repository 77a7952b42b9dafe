"""Exact band table for mode="minhash_lsh": band key -> first document (ordinal) that had it.

Classic MinHash LSH keeps every distinct band key; here it lives in a numba open-addressing hash
map (uint64 keys, int64 document ordinals, linear probing, load <= 1/2). Unlike the Bloom filter it
can name the earlier document a duplicate matched and build duplicate clusters, at the price of 16
bytes per distinct key instead of ~log2(1/key_fp) * 1.44 bits.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner._numba.hashing import splitmix64

_NO_DOC = -1


@njit(cache=True)
def _slot(table_keys, table_docs, key):
    """Slot holding key, or the empty slot where it would go."""
    mask = np.uint64(len(table_keys) - 1)
    i = splitmix64(key) & mask
    while table_docs[i] != _NO_DOC and table_keys[i] != key:
        i = (i + np.uint64(1)) & mask
    return i


@njit(cache=True)
def table_query_then_insert_kernel(table_keys, table_docs, band_keys, first_ordinal, insert_only):
    """In row order: earliest earlier document sharing a key (-1 if none), then insert the keys.

    Returns (duplicate_of per row, number of new keys). Keys already present keep their first
    document. With insert_only the lookups still happen but callers ignore duplicate_of.
    """
    n_docs, bands = band_keys.shape
    duplicate_of = np.full(n_docs, _NO_DOC, np.int64)
    added = 0
    for d in range(n_docs):
        ordinal = first_ordinal + d
        for b in range(bands):
            i = _slot(table_keys, table_docs, band_keys[d, b])
            doc = table_docs[i]
            if doc == _NO_DOC:
                table_keys[i] = band_keys[d, b]
                table_docs[i] = ordinal
                added += 1
            elif doc != ordinal and not insert_only:
                if duplicate_of[d] == _NO_DOC or doc < duplicate_of[d]:
                    duplicate_of[d] = doc
    return duplicate_of, added


@njit(cache=True)
def table_lookup_kernel(table_keys, table_docs, band_keys):
    """First document of each (row, band) key, -1 when absent (read-only)."""
    out = np.full(band_keys.shape, _NO_DOC, np.int64)
    for d in range(band_keys.shape[0]):
        for b in range(band_keys.shape[1]):
            out[d, b] = table_docs[_slot(table_keys, table_docs, band_keys[d, b])]
    return out


@njit(cache=True)
def _rebuild(keys, docs, capacity):
    table_keys = np.zeros(capacity, np.uint64)
    table_docs = np.full(capacity, _NO_DOC, np.int64)
    for j in range(len(keys)):
        if docs[j] != _NO_DOC:
            i = _slot(table_keys, table_docs, keys[j])
            table_keys[i] = keys[j]
            table_docs[i] = docs[j]
    return table_keys, table_docs


@njit(cache=True)
def _find(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@njit(cache=True)
def components_kernel(first_docs, first_ordinal, n_total):
    """Cluster label (smallest member ordinal) per document, linking each row to its keys' first
    docs."""
    parent = np.arange(n_total, dtype=np.int64)
    for d in range(first_docs.shape[0]):
        for b in range(first_docs.shape[1]):
            other = first_docs[d, b]
            if other == _NO_DOC:
                continue
            ra, rb = _find(parent, first_ordinal + d), _find(parent, other)
            if ra != rb:  # the smaller ordinal becomes the root, so labels are the earliest member
                if ra < rb:
                    parent[rb] = ra
                else:
                    parent[ra] = rb
    labels = np.empty(n_total, np.int64)
    for x in range(n_total):
        labels[x] = _find(parent, x)
    return labels


class BandTable:
    """Distinct band keys with the ordinal of the first document that produced each."""

    def __init__(self, capacity_hint: int = 1024):
        capacity = 1 << max(4, int(2 * max(capacity_hint, 1) - 1).bit_length())
        self._keys = np.zeros(capacity, np.uint64)
        self._docs = np.full(capacity, _NO_DOC, np.int64)
        self.num_keys = 0

    def _reserve(self, extra: int) -> None:
        needed = 2 * (self.num_keys + extra)
        if needed <= len(self._keys):
            return
        capacity = 1 << (needed - 1).bit_length()
        self._keys, self._docs = _rebuild(self._keys, self._docs, capacity)

    def query_then_insert(self, band_keys: np.ndarray, first_ordinal: int,
                          insert_only: bool = False) -> np.ndarray:
        band_keys = np.ascontiguousarray(band_keys, dtype=np.uint64)
        self._reserve(band_keys.size)
        duplicate_of, added = table_query_then_insert_kernel(self._keys, self._docs, band_keys,
                                                             int(first_ordinal), insert_only)
        self.num_keys += int(added)
        return duplicate_of

    def lookup(self, band_keys: np.ndarray) -> np.ndarray:
        return table_lookup_kernel(self._keys, self._docs,
                                   np.ascontiguousarray(band_keys, np.uint64))

    def items(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, first document ordinals), sorted by key: the canonical content of the table."""
        used = self._docs != _NO_DOC
        keys, docs = self._keys[used], self._docs[used]
        order = np.argsort(keys, kind="stable")
        return keys[order], docs[order]

    def document_range(self) -> tuple[int, int] | None:
        """(smallest, largest) first-document ordinal in the table; None when it is empty."""
        docs = self._docs[self._docs != _NO_DOC]
        return (int(docs.min()), int(docs.max())) if len(docs) else None

    def copy(self) -> BandTable:
        table = BandTable(1)
        table._keys, table._docs = self._keys.copy(), self._docs.copy()
        table.num_keys = self.num_keys
        return table

    @classmethod
    def from_items(cls, keys: np.ndarray, docs: np.ndarray) -> BandTable:
        table = cls(len(keys))
        table._keys, table._docs = _rebuild(keys.astype(np.uint64), docs.astype(np.int64),
                                            len(table._keys))
        table.num_keys = len(keys)
        return table
