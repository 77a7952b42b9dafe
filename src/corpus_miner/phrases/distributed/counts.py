"""Stages 1 and 2 of the distributed miner: per-batch counts keyed by 64-bit keys, summed exactly.

Stage 1, bigram df: every pair of adjacent frequent words, counted once per document
(`bigram_doc_counts`); summed over partitions (documents are never split, so the sums are the
exact df), the pairs in >= sigma documents form the frequent-bigram filter.

Stage 2, min_length-gram statistics: at every position of a compacted batch with min_length tokens
left in its run, the gram's fingerprint, its document and its left neighbour
(`gram_statistics`), reduced per fingerprint to (df, occurrences, smallest and largest real left
neighbour, whether some occurrence has none). Fingerprints are 64-bit hashes of the token ids
(optionally cut to fewer bits, which tests use to force collisions). Grams sharing a fingerprint
are merged: df and occurrences add up and the left neighbours mix, so a merged gram only looks
more frequent and less left-unique than each of its members: a gram can become wrongly frequent or
live, never wrongly infrequent or dead. Every later stage separates such grams by their tokens.

A gram is *live* when df >= sigma and its occurrences do not all share one real left neighbour:
if they did, every phrase beginning with it would extend to the left at the same df, so none of
them is an answer (and the gram's group need not be grown).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner._numba.hashing import splitmix64

NO_LEFT = np.uint32(0xFFFFFFFF)
"""Left neighbour of an occurrence at a run start (document start, or after a BREAK)."""

_BASE = np.uint64(0x100000001B3)  # odd multiplier of the polynomial token hash


@njit(cache=True)
def prefix_hashes(tokens):
    """h[i] = polynomial hash of tokens[:i] (mod 2^64): the hash of tokens[s:s + k] is
    h[s + k] - h[s] * BASE^k (window_hash)."""
    h = np.empty(len(tokens) + 1, dtype=np.uint64)
    h[0] = 0
    for i in range(len(tokens)):
        h[i + 1] = h[i] * _BASE + np.uint64(tokens[i]) + np.uint64(1)
    return h


@njit(cache=True)
def base_power(k):
    p = np.uint64(1)
    for _ in range(k):
        p = p * _BASE
    return p


@njit(cache=True, inline="always")
def window_hash(h, start, length, power, mask):
    """Fingerprint of tokens[start:start + length] given prefix_hashes h and power = BASE^length,
    cut to the bits of `mask` (all ones normally)."""
    return splitmix64(h[start + length] - h[start] * np.uint64(power)) & np.uint64(mask)


@njit(cache=True)
def content_hash(tokens, start, length, mask):
    """The fingerprint of window_hash computed from the tokens themselves."""
    h = np.uint64(0)
    for i in range(start, start + length):
        h = h * _BASE + np.uint64(tokens[i]) + np.uint64(1)
    return splitmix64(h) & np.uint64(mask)


def fingerprint_mask(bits: int) -> np.uint64:
    return np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)


# ---------------------------------------------------------------- stage 1: bigram df

@njit(cache=True)
def packed_pairs(tokens, doc_offsets, first_doc, last_doc, id_bits):
    """(a << (id_bits + doc_bits)) | (b << doc_bits) | (d - first_doc) for every pair a, b of
    adjacent non-BREAK tokens of documents first_doc <= d < last_doc: equal bigrams of one
    document become equal integers, so one integer sort brings out each bigram's documents."""
    doc_bits = 64 - 2 * id_bits
    a_shift = np.uint64(id_bits + doc_bits)
    b_shift = np.uint64(doc_bits)
    out = np.empty(max(doc_offsets[last_doc] - doc_offsets[first_doc], 1), dtype=np.uint64)
    k = 0
    for d in range(first_doc, last_doc):
        local = np.uint64(d - first_doc)
        for i in range(doc_offsets[d], doc_offsets[d + 1] - 1):
            a = tokens[i]
            b = tokens[i + 1]
            if a != 0xFFFFFFFF and b != 0xFFFFFFFF:
                out[k] = (np.uint64(a) << a_shift) | (np.uint64(b) << b_shift) | local
                k += 1
    return out[:k]


@njit(cache=True)
def documents_per_pair(sorted_packed, id_bits):
    """(bigram keys a << 32 | b, documents) from sorted packed_pairs output."""
    doc_bits = np.uint64(64 - 2 * id_bits)
    id_mask = (np.uint64(1) << np.uint64(id_bits)) - np.uint64(1)
    n = len(sorted_packed)
    keys = np.empty(n, dtype=np.uint64)
    counts = np.zeros(n, dtype=np.int64)
    m = 0
    previous = np.uint64(0)
    for i in range(n):
        value = sorted_packed[i]
        if i > 0 and value == previous:
            continue  # the same bigram in the same document
        previous = value
        pair = value >> doc_bits
        key = ((pair >> np.uint64(id_bits)) << np.uint64(32)) | (pair & id_mask)
        if m == 0 or keys[m - 1] != key:
            keys[m] = key
            m += 1
        counts[m - 1] += 1
    return keys[:m].copy(), counts[:m].copy()


def bigram_doc_counts(tokens: np.ndarray, doc_offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct bigram keys a << 32 | b, number of documents containing each) over the
    pairs of adjacent non-BREAK tokens of every document. Documents go in chunks small enough
    for (a, b, document) to pack into 64 bits; chunks hold disjoint documents, so their counts
    add up."""
    real = tokens[tokens != 0xFFFFFFFF]
    id_bits = max(1, int(real.max()).bit_length()) if len(real) else 1
    chunk = 1 << (64 - 2 * id_bits)
    n_docs = len(doc_offsets) - 1
    keys, dfs = [], []
    for first in range(0, max(n_docs, 1), chunk):
        packed = packed_pairs(tokens, doc_offsets, first, min(first + chunk, n_docs), id_bits)
        packed.sort()
        k, d = documents_per_pair(packed, id_bits)
        keys.append(k)
        dfs.append(d)
    if len(keys) == 1:
        return keys[0], dfs[0]
    return sum_by_key(np.concatenate(keys), np.concatenate(dfs))


@njit(cache=True)
def run_lengths(sorted_keys):
    """(distinct keys, how often each occurs) of a sorted key array."""
    n = len(sorted_keys)
    keys = np.empty(n, dtype=sorted_keys.dtype)
    counts = np.zeros(n, dtype=np.int64)
    m = 0
    for i in range(n):
        if m == 0 or sorted_keys[i] != keys[m - 1]:
            keys[m] = sorted_keys[i]
            m += 1
        counts[m - 1] += 1
    return keys[:m].copy(), counts[:m].copy()


def sum_by_key(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct keys, summed counts) of concatenated (key, count) lists."""
    if len(keys) == 0:
        return keys.astype(np.uint64), counts.astype(np.int64)
    order = np.argsort(keys)  # sums: the order among equal keys does not matter
    keys, counts = keys[order], counts[order]
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    return keys[starts], np.add.reduceat(counts, starts).astype(np.int64)


@njit(cache=True)
def adjacent_pairs(tokens):
    """(bigram keys a << 32 | b, position i) of every pair of non-BREAK tokens i, i + 1 (the
    caller drops pairs across documents or treats them as it needs)."""
    n = len(tokens)
    keys = np.empty(max(n - 1, 0), dtype=np.uint64)
    where = np.empty(max(n - 1, 0), dtype=np.int64)
    m = 0
    for i in range(n - 1):
        a = tokens[i]
        b = tokens[i + 1]
        if a != 0xFFFFFFFF and b != 0xFFFFFFFF:
            keys[m] = (np.uint64(a) << np.uint64(32)) | np.uint64(b)
            where[m] = i
            m += 1
    return keys[:m].copy(), where[:m].copy()


def pairs_in(tokens: np.ndarray, contains) -> np.ndarray:
    """ok[i]: the pair (tokens[i], tokens[i + 1]) of frequent words passes `contains` (a
    membership test over uint64 bigram keys, e.g. a Bloom filter of the frequent bigrams)."""
    ok = np.zeros(len(tokens), dtype=bool)
    keys, where = adjacent_pairs(tokens)
    if len(keys):
        ok[where] = contains(keys)
    return ok


# ---------------------------------------------------------------- stage 2: gram statistics

GRAM_FIELDS = ("fp", "df", "occurrences", "min_left", "max_left", "has_no_left")


@njit(cache=True)
def run_ends(tokens, doc_offsets):
    """end[p]: the first BREAK at or after p in its document (or the document's end)."""
    end = np.empty(len(tokens), dtype=np.int64)
    for d in range(len(doc_offsets) - 1):
        a = doc_offsets[d]
        stop = doc_offsets[d + 1]
        for p in range(stop - 1, a - 1, -1):
            if tokens[p] == 0xFFFFFFFF:
                stop = p
            end[p] = stop
    return end


@njit(cache=True)
def gram_occurrences(tokens, doc_offsets, length, mask):
    """(fingerprint, document, left neighbour) of every position with `length` non-BREAK tokens
    ahead in its document; left is NO_LEFT at a run start."""
    h = prefix_hashes(tokens)
    power = base_power(length)
    end = run_ends(tokens, doc_offsets)
    n = len(tokens)
    fp = np.empty(n, dtype=np.uint64)
    doc = np.empty(n, dtype=np.int64)
    left = np.empty(n, dtype=np.uint32)
    m = 0
    for d in range(len(doc_offsets) - 1):
        a = doc_offsets[d]
        for p in range(a, doc_offsets[d + 1]):
            if end[p] - p < length:
                continue
            fp[m] = window_hash(h, p, length, power, mask)
            doc[m] = d
            left[m] = tokens[p - 1] if p > a else 0xFFFFFFFF  # BREAK is NO_LEFT too
            m += 1
    return fp[:m].copy(), doc[:m].copy(), left[:m].copy()


def gram_statistics(tokens: np.ndarray, doc_offsets: np.ndarray, length: int,
                    mask: np.uint64) -> dict[str, np.ndarray]:
    """Per fingerprint of the batch's grams: df, occurrences, min/max real left neighbour and
    whether some occurrence has none (GRAM_FIELDS)."""
    fp, doc, left = gram_occurrences(tokens, doc_offsets, length, mask)
    if len(fp) == 0:
        return empty_gram_statistics()
    order = np.lexsort((doc, fp))
    fp, doc, left = fp[order], doc[order], left[order]
    new_fp = np.concatenate(([True], fp[1:] != fp[:-1]))
    new_doc = new_fp | np.concatenate(([True], doc[1:] != doc[:-1]))
    starts = np.flatnonzero(new_fp)
    real = left != NO_LEFT
    lo = np.where(real, left, NO_LEFT).astype(np.int64)
    hi = np.where(real, left, 0).astype(np.int64)
    return {"fp": fp[starts], "df": np.add.reduceat(new_doc.astype(np.int64), starts),
            "occurrences": np.diff(np.append(starts, len(fp))).astype(np.int64),
            "min_left": np.minimum.reduceat(lo, starts),
            "max_left": np.maximum.reduceat(hi, starts),
            "has_no_left": np.maximum.reduceat((~real).astype(np.int64), starts)}


def empty_gram_statistics() -> dict[str, np.ndarray]:
    return {"fp": np.zeros(0, np.uint64), **{name: np.zeros(0, np.int64)
                                              for name in GRAM_FIELDS[1:]}}


def merge_gram_statistics(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Statistics of disjoint sets of documents combined: sums, min, max, or."""
    parts = [p for p in parts if len(p["fp"])]
    if not parts:
        return empty_gram_statistics()
    if len(parts) == 1:
        return parts[0]
    joined = {name: np.concatenate([p[name] for p in parts]) for name in GRAM_FIELDS}
    order = np.argsort(joined["fp"], kind="stable")
    fp = joined["fp"][order]
    starts = np.flatnonzero(np.concatenate(([True], fp[1:] != fp[:-1])))
    out = {"fp": fp[starts]}
    for name, reduce in (("df", np.add), ("occurrences", np.add), ("min_left", np.minimum),
                         ("max_left", np.maximum), ("has_no_left", np.maximum)):
        out[name] = reduce.reduceat(joined[name][order], starts)
    return out


def live_and_frequent(stats: dict[str, np.ndarray], sigma: int) -> tuple[np.ndarray, np.ndarray]:
    """(frequent: df >= sigma, live: frequent and not left-unique) per fingerprint."""
    frequent = stats["df"] >= sigma
    left_unique = (stats["has_no_left"] == 0) & (stats["min_left"] == stats["max_left"])
    return frequent, frequent & ~left_unique
