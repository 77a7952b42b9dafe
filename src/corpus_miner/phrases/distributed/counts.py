"""Stages 1 and 2 of the distributed miner: per-batch counts keyed by 64-bit keys, summed exactly.

Stage 1, bigram df: every pair of adjacent words, counted once per document, keyed by a 40-bit
fingerprint of the two words' hashes so that it can be counted in the same pass as the words'
df, before global ids exist (`packed_pair_documents`). Summed over partitions, the fingerprints in
>= sigma documents form the frequent-bigram set. Bigrams sharing a fingerprint add up, so the set
can only hold more than the frequent bigrams, never fewer: it is a filter, like a Bloom filter.

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
from corpus_miner._numba.sorted_runs import merged_order, used

NO_LEFT = np.uint32(0xFFFFFFFF)
"""Left neighbour of an occurrence at a run start (document start, or after a BREAK)."""

_BASE = np.uint64(0x100000001B3)  # odd multiplier of the polynomial token hash


@njit(cache=True, nogil=True)
def prefix_hashes(tokens):
    """h[i] = polynomial hash of tokens[:i] (mod 2^64): the hash of tokens[s:s + k] is
    h[s + k] - h[s] * BASE^k (window_hash)."""
    h = np.empty(len(tokens) + 1, dtype=np.uint64)
    h[0] = 0
    for i in range(len(tokens)):
        h[i + 1] = h[i] * _BASE + np.uint64(tokens[i]) + np.uint64(1)
    return h


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def content_hash(tokens, start, length, mask):
    """The fingerprint of window_hash computed from the tokens themselves."""
    h = np.uint64(0)
    for i in range(start, start + length):
        h = h * _BASE + np.uint64(tokens[i]) + np.uint64(1)
    return splitmix64(h) & np.uint64(mask)


def fingerprint_mask(bits: int) -> np.uint64:
    return np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)


# ---------------------------------------------------------------- stage 1: bigram df

PAIR_DOC_BITS = 24
PAIR_KEY_BITS = 64 - PAIR_DOC_BITS
"""Bigrams are counted as (fingerprint of the pair's two word hashes, document) packed into one
uint64: 40 bits of fingerprint, 24 bits of document number within a flush
(stages.PartitionCounts)."""


@njit(cache=True, inline="always")
def pair_fingerprint(hash_a, hash_b, mask):
    """40-bit fingerprint of the bigram of two words given their word hashes (cut to `mask`)."""
    mixed = splitmix64(hash_a * np.uint64(0x9E3779B97F4A7C15) + hash_b)
    return (mixed >> np.uint64(PAIR_DOC_BITS)) & np.uint64(mask)


@njit(cache=True, nogil=True)
def packed_pair_documents(tokens, doc_offsets, word_hash, doc_base, mask, out, at):
    """Write (pair_fingerprint << PAIR_DOC_BITS) | (doc_base + d) for every pair of adjacent
    tokens of document d into out[at:] (room for len(tokens) - 1 values needed); returns the end
    of what was written. Equal bigrams of one document become equal integers, so one integer
    sort brings out each bigram's documents. doc_base + number of documents must stay below
    2^24."""
    k = at
    for d in range(len(doc_offsets) - 1):
        doc = np.uint64(doc_base + d)
        for i in range(doc_offsets[d], doc_offsets[d + 1] - 1):
            fp = pair_fingerprint(word_hash[tokens[i]], word_hash[tokens[i + 1]], mask)
            out[k] = (fp << np.uint64(PAIR_DOC_BITS)) | doc
            k += 1
    return k


@njit(cache=True, nogil=True)
def documents_per_key(sorted_packed, doc_bits):
    """(keys, documents) from sorted (key << doc_bits) | document integers. The keys are
    counted first, so that the outputs are allocated at their size (a flush holds 3 times more
    integers than keys: fresh memory is costly)."""
    shift = np.uint64(doc_bits)
    n = len(sorted_packed)
    m = 0
    for i in range(n):
        if i == 0 or (sorted_packed[i] >> shift) != (sorted_packed[i - 1] >> shift):
            m += 1
    keys = np.empty(m, dtype=np.uint64)
    counts = np.zeros(m, dtype=np.int64)
    k = -1
    for i in range(n):
        value = sorted_packed[i]
        if i > 0 and value == sorted_packed[i - 1]:
            continue  # the same key in the same document
        key = value >> shift
        if k < 0 or keys[k] != key:
            k += 1
            keys[k] = key
        counts[k] += 1
    return keys, counts


@njit(cache=True, nogil=True)
def frequent_pair_positions(global_tokens, local_tokens, word_hash, mask):
    """(pair fingerprints, positions i) of the pairs i, i + 1 of two frequent words (global ids
    not BREAK); the caller tests the fingerprints against the frequent-bigram set."""
    n = len(global_tokens)
    keys = np.empty(max(n - 1, 0), dtype=np.uint64)
    where = np.empty(max(n - 1, 0), dtype=np.int64)
    m = 0
    for i in range(n - 1):
        if global_tokens[i] != 0xFFFFFFFF and global_tokens[i + 1] != 0xFFFFFFFF:
            keys[m] = pair_fingerprint(word_hash[local_tokens[i]], word_hash[local_tokens[i + 1]],
                                       mask)
            where[m] = i
            m += 1
    return keys[:m].copy(), where[:m].copy()


# ---------------------------------------------------------------- stage 2: gram statistics

GRAM_FIELDS = ("fp", "df", "occurrences", "min_left", "max_left", "has_no_left")


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _reduce_grams(group, n_groups, doc, left):
    """Per group: df (documents ascend with the input), occurrences, min and max real left
    neighbour, whether some occurrence has none."""
    df = np.zeros(n_groups, dtype=np.int64)
    occ = np.zeros(n_groups, dtype=np.int64)
    lo = np.full(n_groups, 0xFFFFFFFF, dtype=np.int64)
    hi = np.zeros(n_groups, dtype=np.int64)
    none = np.zeros(n_groups, dtype=np.int64)
    last_doc = np.full(n_groups, -1, dtype=np.int64)
    for i in range(len(group)):
        g = group[i]
        occ[g] += 1
        if last_doc[g] != doc[i]:
            last_doc[g] = doc[i]
            df[g] += 1
        x = left[i]
        if x == 0xFFFFFFFF:
            none[g] = 1
        else:
            lo[g] = min(lo[g], x)
            hi[g] = max(hi[g], x)
    return df, occ, lo, hi, none


def gram_statistics(tokens: np.ndarray, doc_offsets: np.ndarray, length: int,
                    mask: np.uint64) -> dict[str, np.ndarray]:
    """Per fingerprint of the batch's grams: df, occurrences, min/max real left neighbour and
    whether some occurrence has none (GRAM_FIELDS)."""
    fp, doc, left = gram_occurrences(tokens, doc_offsets, length, mask)
    if len(fp) == 0:
        return empty_gram_statistics()
    order = np.argsort(fp)
    sorted_fp = fp[order]
    new = np.concatenate(([True], sorted_fp[1:] != sorted_fp[:-1]))
    group = np.empty(len(fp), dtype=np.int64)
    group[order] = np.cumsum(new) - 1
    df, occ, lo, hi, none = _reduce_grams(group, int(new.sum()), doc, left)
    return {"fp": sorted_fp[new], "df": df, "occurrences": occ, "min_left": lo, "max_left": hi,
            "has_no_left": none}


def empty_gram_statistics() -> dict[str, np.ndarray]:
    return {"fp": np.zeros(0, np.uint64), **{name: np.zeros(0, np.int64)
                                              for name in GRAM_FIELDS[1:]}}


@njit(cache=True, nogil=True)
def gram_statistics_in_order(keys, columns, order):
    """(fingerprints, columns, m) of the rows visited in `order` (keys ascending), rows of equal
    fingerprints combined: columns[:, i] = (df, occurrences, min_left, max_left, has_no_left)
    by sums, min, max, or. The distinct fingerprints are keys[:m], their rows columns[:, :m]."""
    out_keys = np.empty(len(order), dtype=np.uint64)
    out = np.empty((5, len(order)), dtype=np.int64)
    w = 0
    for i in range(len(order)):
        j = order[i]
        if w > 0 and out_keys[w - 1] == keys[j]:
            out[0, w - 1] += columns[0, j]
            out[1, w - 1] += columns[1, j]
            out[2, w - 1] = min(out[2, w - 1], columns[2, j])
            out[3, w - 1] = max(out[3, w - 1], columns[3, j])
            out[4, w - 1] = max(out[4, w - 1], columns[4, j])
        else:
            out_keys[w] = keys[j]
            for c in range(5):
                out[c, w] = columns[c, j]
            w += 1
    return out_keys, out, w


def merge_gram_statistics(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Statistics of disjoint sets of documents combined: sums, min, max, or; each part is
    sorted by fingerprint (sorted_runs: the parts' runs are merged)."""
    parts = [p for p in parts if len(p["fp"])]
    if not parts:
        return empty_gram_statistics()
    if len(parts) == 1:
        return parts[0]
    fp = np.concatenate([p["fp"] for p in parts])
    columns = np.empty((len(GRAM_FIELDS) - 1, len(fp)), dtype=np.int64)
    for c, name in enumerate(GRAM_FIELDS[1:]):  # in 64 bits, whatever the parts' widths
        np.concatenate([p[name] for p in parts], out=columns[c])
    fp, columns, m = gram_statistics_in_order(fp, columns, merged_order(fp))
    return {"fp": used((fp,), m)[0],
            **{name: used((columns[c],), m)[0] for c, name in enumerate(GRAM_FIELDS[1:])}}


def live_and_frequent(stats: dict[str, np.ndarray], sigma: int) -> tuple[np.ndarray, np.ndarray]:
    """(frequent: df >= sigma, live: frequent and not left-unique) per fingerprint."""
    frequent = stats["df"] >= sigma
    left_unique = (stats["has_no_left"] == 0) & (stats["min_left"] == stats["max_left"])
    return frequent, frequent & ~left_unique
