"""Exact seeds: every bigram whose window_ok positions cover >= sigma documents, with those
positions (BloomSpan step 4), in Psi order (step 5).

An answer's occurrences all start at window_ok positions (window_filter.py) and begin with the
answer's first bigram, so counting each bigram's documents over those positions only is exact for
every bigram that can start an answer; bigrams below sigma there (all false positives of the
filter among them) start none.

Each window_ok position p becomes one uint64 key holding the bigram (the dense ranks of its two
frequent words) and p, so that a plain integer sort groups equal bigrams with ascending positions.
Keys are radix-partitioned into 2^bucket_bits buckets by the low bits of the bigram field, which
the key then leaves out: this makes (bigram, position) fit 64 bits up to 2 x bits(frequent words)
+ bits(tokens) = 64 + MAX_BUCKET_BITS (33M frequent words at a billion tokens), and lets buckets
be sorted and counted on all cores. Beyond that, `unpacked_seeds` sorts (bigram, position) pairs
(about 5x the memory). The order of seeds across buckets does not matter: `psi_order` sorts them.

After counting, a seed's keys are rewritten in place as (document << pos_bits) | position, the
occurrence list the growth reads (no second array of this size, no document lookups there).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner._numba.arrays import grow
from corpus_miner._numba.bitmask import bit_get
from corpus_miner.errors import InputError
from corpus_miner.phrases.doc_index import doc_at
from corpus_miner.phrases.threads import in_parts, ordered_map

MAX_BUCKET_BITS = 16
KEYS_PER_BUCKET = 1 << 21  # about 16 MiB of keys: sorted inside the caches, many tasks
RANGES = 64  # fixed split of the positions for the parallel packing passes


def bits_for(n: int) -> int:
    """Bits needed for the values 0 .. n - 1 (at least 1)."""
    return max(1, int(n - 1).bit_length())


@njit(cache=True, inline="always")
def _range_bytes(n_bytes, r):
    return r * n_bytes // RANGES, (r + 1) * n_bytes // RANGES


@njit(cache=True, nogil=True)
def count_keys(tokens, window_ok, word_rank, bucket_bits, hist, r0, r1):
    """hist[r, b]: window_ok positions of the r-th of RANGES position ranges that fall into bucket
    b, for r0 <= r < r1. Ranges are whole bytes of the mask, so they never share a position."""
    n = len(tokens)
    n_bytes = (n + 7) >> 3
    low = (np.int64(1) << bucket_bits) - 1
    for r in range(r0, r1):
        lo, hi = _range_bytes(n_bytes, r)
        for byte in range(lo, hi):
            if window_ok[byte] == 0:
                continue
            for p in range(byte << 3, min((byte << 3) + 8, n)):
                if bit_get(window_ok, p):
                    hist[r, np.int64(word_rank[tokens[p + 1]]) & low] += 1


@njit(cache=True, nogil=True)
def scatter_keys(tokens, window_ok, word_rank, rank_bits, pos_bits, bucket_bits, cursor, keys,
                 r0, r1):
    """Write the key of every window_ok position p of ranges r0 <= r < r1 into its bucket:
    ((bigram >> bucket_bits) << pos_bits) | p, where bigram = rank(a) << rank_bits | rank(b).
    cursor[r, b] is where range r's first key of bucket b goes (ranges in order, so positions
    ascend inside a bucket)."""
    n = len(tokens)
    n_bytes = (n + 7) >> 3
    low = (np.int64(1) << bucket_bits) - 1
    for r in range(r0, r1):
        lo, hi = _range_bytes(n_bytes, r)
        for byte in range(lo, hi):
            if window_ok[byte] == 0:
                continue
            for p in range(byte << 3, min((byte << 3) + 8, n)):
                if bit_get(window_ok, p):
                    a = np.int64(word_rank[tokens[p]])
                    b = np.int64(word_rank[tokens[p + 1]])
                    bigram = (a << rank_bits) | b
                    bucket = b & low
                    keys[cursor[r, bucket]] = (np.uint64(bigram >> bucket_bits)
                                               << np.uint64(pos_bits)) | np.uint64(p)
                    cursor[r, bucket] += 1


@njit(cache=True, nogil=True)
def exact_seeds(keys, pos_bits, doc_offsets, doc_table, doc_shift, sigma):
    """Runs of equal bigrams in sorted keys (bigram << pos_bits | position): those covering >=
    sigma documents are seeds. Returns (lo, hi, df) per seed; each seed's keys are rewritten as
    (document << pos_bits) | position. Keys of other runs are left as they are (never read)."""
    n = len(keys)
    pos_mask = (np.uint64(1) << np.uint64(pos_bits)) - np.uint64(1)
    shift = np.uint64(pos_bits)
    seed_lo = np.empty(16, dtype=np.int64)
    seed_hi = np.empty(16, dtype=np.int64)
    seed_df = np.empty(16, dtype=np.int64)
    n_seeds = 0
    lo = 0
    while lo < n:
        bigram = keys[lo] >> shift
        hi = lo + 1
        while hi < n and (keys[hi] >> shift) == bigram:
            hi += 1
        if hi - lo < sigma:  # fewer occurrences than sigma: no lookups needed
            lo = hi
            continue
        df = 0
        doc = -1
        doc_end = -1
        for i in range(lo, hi):
            pos = np.int64(keys[i] & pos_mask)
            if pos >= doc_end:  # positions ascend: a new document starts here
                doc = doc_at(doc_offsets, doc_table, doc_shift, pos)
                doc_end = doc_offsets[doc + 1]
                df += 1
            keys[i] = (np.uint64(doc) << shift) | np.uint64(pos)
        if df >= sigma:
            if n_seeds == len(seed_lo):
                seed_lo = grow(seed_lo)
                seed_hi = grow(seed_hi)
                seed_df = grow(seed_df)
            seed_lo[n_seeds] = lo
            seed_hi[n_seeds] = hi
            seed_df[n_seeds] = df
            n_seeds += 1
        lo = hi
    return seed_lo[:n_seeds].copy(), seed_hi[:n_seeds].copy(), seed_df[:n_seeds].copy()


def seed_bucket_bits(rank_bits: int, pos_bits: int, n_keys: int) -> int | None:
    """Bucket bits for packed keys: enough for (bigram, position) to fit 64 bits and for buckets
    of about KEYS_PER_BUCKET keys; None when more than MAX_BUCKET_BITS would be needed."""
    needed = max(0, 2 * rank_bits + pos_bits - 64)
    if needed > min(MAX_BUCKET_BITS, rank_bits):  # buckets are low bits of the second rank
        return None
    wanted = (max(n_keys - 1, 0) // KEYS_PER_BUCKET).bit_length()
    return max(needed, min(wanted, MAX_BUCKET_BITS, rank_bits))


def check_occurrence_bits(n_docs: int, pos_bits: int) -> None:
    if bits_for(max(n_docs, 1)) + pos_bits > 64:
        raise InputError(f"{n_docs} documents of up to 2^{pos_bits} tokens: a (document, position) "
                         "pair does not fit 64 bits; split the corpus")


def packed_seeds(tokens, window_ok, word_rank, rank_bits, pos_bits, bucket_bits, doc_offsets,
                 doc_table, doc_shift, sigma, threads):
    """(occurrences, seed lo, seed hi, seed df) from packed keys sorted bucket by bucket on
    `threads` threads; occurrences[lo:hi] of a seed are (document << pos_bits) | position,
    ascending."""
    hist = np.zeros((RANGES, 1 << bucket_bits), dtype=np.int64)
    in_parts(lambda r0, r1: count_keys(tokens, window_ok, word_rank, bucket_bits, hist, r0, r1),
             RANGES, threads)
    per_bucket = hist.sum(axis=0)
    bucket_start = np.zeros(len(per_bucket) + 1, dtype=np.int64)
    np.cumsum(per_bucket, out=bucket_start[1:])
    # cursor[r, b]: start of bucket b plus the keys of earlier ranges in it
    cursor = bucket_start[:-1][None, :] + np.cumsum(hist, axis=0) - hist
    keys = np.empty(int(bucket_start[-1]), dtype=np.uint64)
    cursor = np.ascontiguousarray(cursor)
    in_parts(lambda r0, r1: scatter_keys(tokens, window_ok, word_rank, rank_bits, pos_bits,
                                         bucket_bits, cursor, keys, r0, r1), RANGES, threads)

    def sort_and_count(b):
        part = keys[bucket_start[b]:bucket_start[b + 1]]
        part.sort()  # numpy's SIMD sort; keys are distinct (positions), so stability is moot
        lo, hi, df = exact_seeds(part, pos_bits, doc_offsets, doc_table, doc_shift, sigma)
        return lo + bucket_start[b], hi + bucket_start[b], df

    with ordered_map(threads) as map_:
        found = map_(sort_and_count, range(len(per_bucket)))
    return (keys, *(np.concatenate([f[i] for f in found]) if found else np.empty(0, np.int64)
                    for i in range(3)))


@njit(cache=True)
def window_ok_positions(window_ok, n_tokens, count):
    """Ascending window_ok positions."""
    out = np.empty(count, dtype=np.int64)
    k = 0
    for byte in range((n_tokens + 7) >> 3):
        if window_ok[byte] == 0:
            continue
        for p in range(byte << 3, min((byte << 3) + 8, n_tokens)):
            if bit_get(window_ok, p):
                out[k] = p
                k += 1
    return out


def unpacked_seeds(tokens, window_ok, n_window_ok, pos_bits, doc_offsets, doc_table, doc_shift,
                   sigma):
    """The same as packed_seeds by a stable argsort of (bigram, position) pairs, for vocabularies
    too large for packed keys: bigrams are then renumbered densely (run ids, < 2^pos_bits) so that
    (run id, position) keys feed exact_seeds like packed ones."""
    positions = window_ok_positions(window_ok, len(tokens), n_window_ok)
    bigram = (tokens[positions].astype(np.uint64) << np.uint64(32)) \
        | tokens[positions + 1].astype(np.uint64)
    order = np.argsort(bigram, kind="stable")  # positions stay ascending inside a bigram
    bigram, positions = bigram[order], positions[order]
    del order
    run_id = np.zeros(len(bigram), dtype=np.uint64)
    np.cumsum(bigram[1:] != bigram[:-1], dtype=np.uint64, out=run_id[1:])
    del bigram
    if len(run_id) and bits_for(int(run_id[-1]) + 1) + pos_bits > 64:
        raise InputError("too many distinct bigrams for 64-bit keys beyond 2^32 tokens; split "
                         "the corpus")
    keys = (run_id << np.uint64(pos_bits)) | positions.astype(np.uint64)
    del run_id, positions
    return (keys, *exact_seeds(keys, pos_bits, doc_offsets, doc_table, doc_shift, sigma))


def psi_order(tokens: np.ndarray, occurrences: np.ndarray, seed_lo: np.ndarray,
              seed_df: np.ndarray, pos_mask: int) -> np.ndarray:
    """Seeds by Psi = 2 x df descending (all seeds have length 2), ties by their token ids: a
    total order (seeds are distinct bigrams), whatever order they were found in."""
    first = (occurrences[seed_lo] & np.uint64(pos_mask)).astype(np.int64)
    return np.lexsort((tokens[first + 1], tokens[first], -seed_df)).astype(np.int64)
