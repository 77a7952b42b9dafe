"""Hash tables of words given as UTF-8 bytes and offsets (no Python string per word).

`WordCounter` sums document counts of words over batch vocabularies; `WordIndex` gives words
their ids in a fixed vocabulary. Both are queried once per word of every batch's vocabulary,
in tables of a few MB to tens of MB that miss the CPU caches, so a slot holds what decides most
queries by itself: 16 bytes, (24 bits of the word's hash, its length up to 255, its id + 1) and
its first 8 bytes. A word of at most 8 bytes is matched in the slot alone; a longer one is
compared with the stored bytes when its slot matches. Without that, every query read the slot,
then the word's hash, offsets and bytes: four dependent memory reads. Queries go by blocks of 64:
their home slots are read first with no branch on what is read, so that the CPU fetches them
together, then probed. One partition of big1b (5.6M vocabulary words, 351k distinct) was counted
in 0.76 s before, 0.40 s so.

Slots are placed by `word_hashes`, the hash that also fingerprints bigrams (counts.py), which the
callers have at hand: queries come with their hashes, computed once per batch.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner._numba.arrays import grow
from corpus_miner._numba.hashing import splitmix64
from corpus_miner.io.strings import StringList

_ID_BITS = np.uint64(0xFFFFFFFF)
_SHORT = 8  # bytes of a word held in its slot


@njit(cache=True, inline="always")
def _word_hash(data, lo, hi):
    """64-bit hash of the UTF-8 bytes data[lo:hi] (FNV-1a, high bits folded in)."""
    h = np.uint64(0xCBF29CE484222325)
    for i in range(lo, hi):
        h = (h ^ np.uint64(data[i])) * np.uint64(0x100000001B3)
    return h ^ (h >> np.uint64(29))


@njit(cache=True, nogil=True)
def _word_hashes(offsets, data):
    out = np.empty(len(offsets) - 1, dtype=np.uint64)
    for w in range(len(offsets) - 1):
        out[w] = splitmix64(_word_hash(data, offsets[w], offsets[w + 1]))
    return out


def word_hashes(words: StringList) -> np.ndarray:
    """A 64-bit hash of each word's UTF-8 bytes: the same for a word in every batch, so bigrams
    can be fingerprinted before global ids exist (counts.pair_fingerprint)."""
    return _word_hashes(_offsets_of(words), _data_of(words))


def _offsets_of(words: StringList) -> np.ndarray:
    return np.ascontiguousarray(words.offsets, dtype=np.int64)


def _data_of(words: StringList) -> np.ndarray:
    return np.ascontiguousarray(words.data, dtype=np.uint8)


@njit(cache=True, inline="always")
def _slot_key(h, data, lo, hi):
    """(tag, head) of a word: tag = 24 bits of its hash and its length (255 for longer) in the
    high 32 bits of a slot's first word, head = its first 8 bytes, zero-padded."""
    n = min(hi - lo, 255)
    tag = ((h >> np.uint64(40)) << np.uint64(40)) | (np.uint64(n) << np.uint64(32))
    head = np.uint64(0)
    for k in range(min(hi - lo, _SHORT)):
        head |= np.uint64(data[lo + k]) << np.uint64(8 * k)
    return tag, head


@njit(cache=True, inline="always")
def _same_bytes(a_data, a_lo, a_hi, b_data, b_lo, b_hi):
    if a_hi - a_lo != b_hi - b_lo:
        return False
    for k in range(a_hi - a_lo):
        if a_data[a_lo + k] != b_data[b_lo + k]:
            return False
    return True


@njit(cache=True, inline="always")
def _find(slots, offsets, data, query_data, lo, hi, h):
    """The slot of the word query_data[lo:hi] (hash h), or the empty slot where it belongs."""
    tag, head = _slot_key(h, query_data, lo, hi)
    size = len(slots)
    slot = np.int64(h & np.uint64(size - 1))
    while slots[slot, 0] != 0:
        if (slots[slot, 0] & ~_ID_BITS) == tag and slots[slot, 1] == head:
            if hi - lo <= _SHORT:
                return slot
            w = np.int64(slots[slot, 0] & _ID_BITS) - 1
            if _same_bytes(data, offsets[w], offsets[w + 1], query_data, lo, hi):
                return slot
        slot = (slot + 1) & (size - 1)
    return slot


@njit(cache=True, inline="always")
def _table_size(n_words):
    size = 16
    while size < 2 * n_words:  # at most half full
        size *= 2
    return size


_BLOCK = 64  # queries whose home slots are read ahead at a time


@njit(cache=True, inline="always")
def _touch(slots, hashes, first, last):
    """Read the home slot of queries first..last - 1 with no branch on what is read, so that
    the CPU fetches them all at once (the probes that follow would wait for each in turn)."""
    mask = np.uint64(len(slots) - 1)
    seen = np.uint64(0)
    for q in range(first, last):
        seen ^= slots[np.int64(hashes[q] & mask), 0]
    return seen


@njit(cache=True, nogil=True)
def build_word_table(offsets, data):
    """The slots (size, 2) of the words of a vocabulary, id = position (the first of equal
    words)."""
    n = len(offsets) - 1
    slots = np.zeros((_table_size(n), 2), dtype=np.uint64)
    for w in range(n):
        lo, hi = offsets[w], offsets[w + 1]
        h = splitmix64(_word_hash(data, lo, hi))
        slot = _find(slots, offsets, data, data, lo, hi, h)
        if slots[slot, 0] != 0:
            continue
        tag, head = _slot_key(h, data, lo, hi)
        slots[slot, 0] = tag | np.uint64(w + 1)
        slots[slot, 1] = head
    return slots


@njit(cache=True, nogil=True)
def lookup_words(slots, offsets, data, query_offsets, query_data, query_hashes):
    """uint32 id in the table's vocabulary of every query word, 0xFFFFFFFF where it is absent."""
    n = len(query_offsets) - 1
    out = np.full(n, 0xFFFFFFFF, dtype=np.uint32)
    sink = np.zeros(1, dtype=np.uint64)  # keeps the reads ahead from being optimised away
    for first in range(0, n, _BLOCK):
        last = min(first + _BLOCK, n)
        sink[0] ^= _touch(slots, query_hashes, first, last)
        for q in range(first, last):
            slot = _find(slots, offsets, data, query_data, query_offsets[q],
                         query_offsets[q + 1], query_hashes[q])
            if slots[slot, 0] != 0:
                out[q] = np.uint32((slots[slot, 0] & _ID_BITS) - np.uint64(1))
    return out


@njit(cache=True, nogil=True)
def _count_words(slots, hashes, word_offsets, word_data, counts, n_words, offsets, data, df,
                 query_hashes):
    """Add df[q] to the count of each query word q, inserting words not seen before; every
    array grows (and slots rehash) as needed. Returns the arrays and the word count."""
    n = len(offsets) - 1
    sink = np.zeros(1, dtype=np.uint64)  # keeps the reads ahead from being optimised away
    for first in range(0, n, _BLOCK):
        last = min(first + _BLOCK, n)
        sink[0] ^= _touch(slots, query_hashes, first, last)
        for q in range(first, last):
            lo, hi = offsets[q], offsets[q + 1]
            h = query_hashes[q]
            slot = _find(slots, word_offsets, word_data, data, lo, hi, h)
            if slots[slot, 0] != 0:
                counts[np.int64(slots[slot, 0] & _ID_BITS) - 1] += df[q]
                continue
            w = n_words
            if w + 1 >= len(counts):
                counts = grow(counts)
                hashes = grow(hashes)
                word_offsets = grow(word_offsets)
            start = word_offsets[w]
            while start + hi - lo > len(word_data):
                word_data = grow(word_data)
            for k in range(hi - lo):
                word_data[start + k] = data[lo + k]
            word_offsets[w + 1] = start + hi - lo
            hashes[w] = h
            counts[w] = df[q]
            tag, head = _slot_key(h, data, lo, hi)
            slots[slot, 0] = tag | np.uint64(w + 1)
            slots[slot, 1] = head
            n_words += 1
            if 2 * n_words > len(slots):
                slots = _rehashed(slots, hashes, n_words, 2 * len(slots))
    return slots, hashes, word_offsets, word_data, counts, n_words


@njit(cache=True, nogil=True)
def _rehashed(slots, hashes, n_words, size):
    """The filled slots moved to a table of `size` (the words are distinct: no comparison)."""
    bigger = np.zeros((size, 2), dtype=np.uint64)
    for s in range(len(slots)):
        if slots[s, 0] != 0:
            w = np.int64(slots[s, 0] & _ID_BITS) - 1
            at = np.int64(hashes[w] & np.uint64(size - 1))
            while bigger[at, 0] != 0:
                at = (at + 1) & (size - 1)
            bigger[at, 0] = slots[s, 0]
            bigger[at, 1] = slots[s, 1]
    return bigger


class WordCounter:
    """Document counts of words over several batches, fed whole batch vocabularies at once."""

    def __init__(self) -> None:
        self._slots = np.zeros((1 << 16, 2), dtype=np.uint64)
        self._hashes = np.zeros(1 << 15, dtype=np.uint64)
        self._offsets = np.zeros(1 << 15, dtype=np.int64)
        self._data = np.zeros(1 << 18, dtype=np.uint8)
        self._counts = np.zeros(1 << 15, dtype=np.int64)
        self._n = 0

    def add(self, words: StringList, df: np.ndarray, hashes: np.ndarray | None = None) -> None:
        """Add each word's df; hashes: word_hashes(words), when the caller has them."""
        if hashes is None:
            hashes = word_hashes(words)
        (self._slots, self._hashes, self._offsets, self._data, self._counts,
         self._n) = _count_words(self._slots, self._hashes, self._offsets, self._data,
                                 self._counts, self._n, _offsets_of(words), _data_of(words),
                                 np.ascontiguousarray(df, dtype=np.int64), hashes)

    def result(self) -> tuple[StringList, np.ndarray]:
        """(the distinct words, their counts)."""
        n = self._n
        return (StringList(self._offsets[:n + 1].copy(), self._data[:self._offsets[n]].copy()),
                self._counts[:n].copy())


class WordIndex:
    """Global ids of words: their positions in the frequent vocabulary (a StringList)."""

    def __init__(self, vocab: StringList) -> None:
        self.vocab = vocab
        self._offsets, self._data = _offsets_of(vocab), _data_of(vocab)
        self._slots = build_word_table(self._offsets, self._data)

    def ids(self, words: StringList, hashes: np.ndarray | None = None) -> np.ndarray:
        """uint32 global id of each word, BREAK (0xFFFFFFFF) for words not in the vocabulary;
        hashes: word_hashes(words), when the caller has them."""
        if hashes is None:
            hashes = word_hashes(words)
        return lookup_words(self._slots, self._offsets, self._data, _offsets_of(words),
                            _data_of(words), hashes)
