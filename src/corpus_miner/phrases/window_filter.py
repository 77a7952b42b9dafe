"""Which corpus positions can start an answer: BloomSpan's filter steps, on min_length-windows.

An answer (a maximal phrase M with df >= sigma and |M| >= L = min_length) starts, at each of its
occurrences p, with the L-window tokens[p:p + L], a substring of M, so that window occurs in
>= sigma documents too. The filter keeps the positions whose L-window may do so (`window_ok`, one
bit per position); no answer has an occurrence anywhere else, so later stages never look at the
other positions. Filtering whole L-windows rather than bigrams is what keeps this selective on
large corpora: at a billion tokens of web text three quarters of all bigrams occur in 20
documents, while 10-token windows repeat almost only inside templates.

Two steps, each a pass over the corpus on all cores (nogil kernels over parts of it, one thread
each: threads.in_parts):
1. `frequent_words`: exact document frequency of every word. A window holding a word of fewer
   than sigma documents is itself in fewer, so such windows are never counted (no collisions).
2. A saturating uint8 counting filter over the other windows' hashes, filled in one pass and
   queried in a second. Counters only err upward (collisions add; saturation is compared with
   min(sigma, 255)), so every window with df >= sigma passes.

Random increments into a filter far larger than the CPU caches cost a cache and TLB miss each.
So the counters are split into buckets of REGION_CELLS cells (well inside a core's L2 cache), each
window's cells lie in one bucket chosen by its hash's top bits, and each chunk of positions is
first hashed and grouped by bucket (a radix partition), then each bucket's counters are updated
by one thread. The counters end up the same as with direct increments, whatever the thread count
(saturating +1 steps commute), and no two threads ever write the same counter. The query pass
then only needs one bit per counter (full or not): an eighth of the memory, read at random
straight from the cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
from numba import njit

from corpus_miner._numba.bitmask import bit_get, bitmask_new
from corpus_miner._numba.hashing import WINDOW_BASE, splitmix64, window_roll, window_top
from corpus_miner.phrases.doc_index import doc_at
from corpus_miner.phrases.threads import in_parts

# Positions hashed and partitioned per round of the fill pass, at most: WINDOWS_PER_BUCKET per
# bucket up to 2^10 buckets (a 1B-token corpus at sigma 20); two uint64 buffers, 256 MiB.
CHUNK_POSITIONS = 1 << 24
MIN_CHUNK_POSITIONS = 1 << 16
WINDOWS_PER_BUCKET = 1 << 14  # per round, so that a bucket's counters are reused while cached
RANGES_PER_CHUNK = 16  # fixed split of a chunk among threads
REGION_CELLS = 1 << 18  # counters per bucket: 256 KiB, updated inside the L2 cache
MAX_BUCKET_BITS = 16
QUERY_RANGES = 256  # position ranges of the query pass (whole bytes of the mask each)
QUERY_BLOCK = 1 << 12  # window hashes computed at a time by one thread of the query pass
_LOW32 = np.uint64(0xFFFFFFFF)


# ---------------------------------------------------------------- step 1: exact word df

@njit(cache=True)
def doc_blocks(doc_offsets, n_blocks):
    """Document bounds of n_blocks blocks of about equal numbers of tokens (block b is documents
    bounds[b] to bounds[b + 1] - 1)."""
    n_docs = len(doc_offsets) - 1
    n_tokens = doc_offsets[n_docs]
    bounds = np.zeros(n_blocks + 1, dtype=np.int64)
    d = 0
    for b in range(1, n_blocks):
        while d < n_docs and doc_offsets[d] < n_tokens * b // n_blocks:
            d += 1
        bounds[b] = d
    bounds[n_blocks] = n_docs
    return bounds


def frequent_words(tokens, doc_offsets, vocab_size, sigma, n_blocks):
    """ok[t] = token t occurs in >= sigma documents.

    Documents are split into n_blocks blocks of about equal tokens, counted in parallel (a word's
    documents in different blocks are different documents, so block counts add). Each block counts
    documents saturating at cap = min(sigma, 65535) in uint16 next to an int32 last-seen document:
    6 bytes per vocabulary word and block, which matters when the vocabulary is as large as the
    corpus (the article's Synthetic 1). Above 65535 the test is df >= 65535, which only lets more
    words through (filters may err upward; the exact seed step decides)."""
    cap = min(sigma, 65535)
    bounds = doc_blocks(doc_offsets, n_blocks)
    counts = np.zeros((n_blocks, vocab_size), dtype=np.uint16)
    in_parts(lambda b0, b1: _count_block_words(tokens, doc_offsets, bounds, cap, counts, b0, b1),
             n_blocks, n_blocks)
    ok = np.empty(vocab_size, dtype=np.bool_)
    in_parts(lambda t0, t1: _enough_documents(counts, cap, ok, t0, t1), vocab_size, n_blocks)
    return ok


@njit(cache=True, nogil=True)
def _count_block_words(tokens, doc_offsets, bounds, cap, counts, b0, b1):
    """counts[b, t] = documents of block b holding word t (saturating at cap), b0 <= b < b1."""
    for b in range(b0, b1):
        last_doc = np.full(counts.shape[1], -1, dtype=np.int32)
        count = counts[b]
        for d in range(bounds[b], bounds[b + 1]):
            for i in range(doc_offsets[d], doc_offsets[d + 1]):
                t = tokens[i]
                if last_doc[t] != d:
                    last_doc[t] = d
                    if count[t] < cap:
                        count[t] += 1


@njit(cache=True, nogil=True)
def _enough_documents(counts, cap, ok, t0, t1):
    """ok[t] = the blocks' counts of word t add up to cap, t0 <= t < t1."""
    for t in range(t0, t1):
        total = 0
        for b in range(counts.shape[0]):
            total += counts[b, t]
        ok[t] = total >= cap


@njit(cache=True)
def word_ranks(word_ok):
    """Dense rank (int32) of each frequent word in id order, -1 for the others."""
    rank = np.empty(len(word_ok), dtype=np.int32)
    r = 0
    for t in range(len(word_ok)):
        if word_ok[t]:
            rank[t] = r
            r += 1
        else:
            rank[t] = -1
    return rank


def count_windows(doc_offsets: np.ndarray, length: int) -> int:
    """Number of length-windows lying inside one document."""
    return int(np.maximum(np.diff(doc_offsets) - (length - 1), 0).sum())


def count_frequent_windows(tokens, doc_offsets, word_ok, length, n_blocks) -> int:
    """Number of length-windows inside one document holding only frequent words: the windows the
    counting filter counts (its size is chosen from this)."""
    bounds = doc_blocks(doc_offsets, n_blocks)
    totals = np.zeros(n_blocks, dtype=np.int64)
    in_parts(lambda b0, b1: _block_windows(tokens, doc_offsets, bounds, word_ok, length, totals,
                                           b0, b1), n_blocks, n_blocks)
    return int(totals.sum())


@njit(cache=True, nogil=True)
def _block_windows(tokens, doc_offsets, bounds, word_ok, length, totals, b0, b1):
    """totals[b] = windows of frequent words in block b, b0 <= b < b1."""
    for b in range(b0, b1):
        total = 0
        for d in range(bounds[b], bounds[b + 1]):
            run = 0
            for i in range(doc_offsets[d], doc_offsets[d + 1]):
                if word_ok[tokens[i]]:
                    run += 1
                    if run >= length:
                        total += 1
                else:
                    run = 0
        totals[b] = total


@dataclass(frozen=True)
class WordFilter:
    """Step 1's result: which words occur in >= sigma documents, and how many windows hold only
    such words (the windows the counting filter counts; its size is chosen from this)."""
    word_ok: np.ndarray
    counted_windows: int


def word_filter(tokens: np.ndarray, doc_offsets: np.ndarray, vocab_size: int, sigma: int,
                length: int, threads: int) -> WordFilter:
    word_ok = frequent_words(tokens, doc_offsets, vocab_size, sigma, threads)
    counted = count_frequent_windows(tokens, doc_offsets, word_ok, length, threads)
    return WordFilter(word_ok, counted)


# ---------------------------------------------------------------- step 2: window hashes

@njit(cache=True)
def hash_windows(tokens, doc_offsets, doc_table, doc_shift, word_ok, length, start, end, out):
    """out[p - start] = the mixed hash (never 0) of the window tokens[p:p + length] for
    start <= p < end, or 0 when the window leaves p's document or holds an infrequent word.
    The polynomial hash is rolled over runs of frequent words: O(1) per position."""
    n = len(tokens)
    if start >= end:
        return
    top = window_top(length)
    d = doc_at(doc_offsets, doc_table, doc_shift, start)
    doc_end = doc_offsets[d + 1]
    q = start  # next token to take into the window
    run = 0  # frequent words in a row ending at q - 1, inside q - 1's document
    h = np.uint64(0)
    for p in range(start, end):
        stop = min(p + length, n)
        while q < stop:
            if q >= doc_end:
                while doc_offsets[d + 1] <= q:
                    d += 1
                doc_end = doc_offsets[d + 1]
                run = 0
                h = np.uint64(0)
            t = tokens[q]
            if word_ok[t]:
                if run >= length:
                    h = window_roll(h, tokens[q - length], t, top)
                else:
                    h = h * WINDOW_BASE + np.uint64(t) + np.uint64(1)
                run += 1
            else:
                run = 0
                h = np.uint64(0)
            q += 1
        if run >= length and q == p + length:
            out[p - start] = splitmix64(h) | np.uint64(1)
        else:
            out[p - start] = 0


@njit(cache=True, inline="always")
def _bucket(h, bucket_bits):
    return np.int64((h >> np.uint64(32)) >> np.uint64(32 - bucket_bits))


@njit(cache=True, inline="always")
def _cell(h, j, region):
    """Cell of hash function j inside its bucket's region (double hashing on the low 32 bits,
    mapped onto [0, region) by a multiply-shift)."""
    g = ((h & _LOW32) + np.uint64(j) * ((h >> np.uint64(32)) | np.uint64(1))) & _LOW32
    return np.int64((g * np.uint64(region)) >> np.uint64(32))


def partition_chunk(tokens, doc_offsets, doc_table, doc_shift, word_ok, length, c0, c1,
                    bucket_bits, hashes, grouped, threads):
    """Hash the windows of positions [c0, c1) and group them by bucket. Returns bucket_start:
    grouped[bucket_start[b]:bucket_start[b + 1]] are the hashes of bucket b. Windows that are
    not counted (hash 0) are left out. The chunk is cut into RANGES_PER_CHUNK fixed ranges, so
    the grouping is the same whatever the number of threads."""
    hist = np.zeros((RANGES_PER_CHUNK, 1 << bucket_bits), dtype=np.int64)
    in_parts(lambda r0, r1: _hash_ranges(tokens, doc_offsets, doc_table, doc_shift, word_ok,
                                         length, c0, c1, bucket_bits, hashes, hist, r0, r1),
             RANGES_PER_CHUNK, threads)
    cursor, bucket_start = _bucket_cursors(hist)
    in_parts(lambda r0, r1: _group_ranges(hashes, c1 - c0, bucket_bits, cursor, grouped, r0, r1),
             RANGES_PER_CHUNK, threads)
    return bucket_start


@njit(cache=True, nogil=True)
def _hash_ranges(tokens, doc_offsets, doc_table, doc_shift, word_ok, length, c0, c1, bucket_bits,
                 hashes, hist, r0, r1):
    """Ranges r0 <= r < r1 of the chunk: window hashes into `hashes`, per bucket counts into
    hist[r]."""
    n = c1 - c0
    for r in range(r0, r1):
        lo = r * n // RANGES_PER_CHUNK
        hi = (r + 1) * n // RANGES_PER_CHUNK
        hash_windows(tokens, doc_offsets, doc_table, doc_shift, word_ok, length, c0 + lo, c0 + hi,
                     hashes[lo:hi])
        for i in range(lo, hi):
            if hashes[i] != 0:
                hist[r, _bucket(hashes[i], bucket_bits)] += 1


@njit(cache=True)
def _bucket_cursors(hist):
    """(cursor, bucket_start): where range r's first hash of bucket b goes (buckets in order,
    ranges in order inside a bucket), and where each bucket starts."""
    n_buckets = hist.shape[1]
    cursor = np.empty((RANGES_PER_CHUNK, n_buckets), dtype=np.int64)
    bucket_start = np.empty(n_buckets + 1, dtype=np.int64)
    total = 0
    for b in range(n_buckets):
        bucket_start[b] = total
        for r in range(RANGES_PER_CHUNK):
            cursor[r, b] = total
            total += hist[r, b]
    bucket_start[n_buckets] = total
    return cursor, bucket_start


@njit(cache=True, nogil=True)
def _group_ranges(hashes, n, bucket_bits, cursor, grouped, r0, r1):
    """Ranges r0 <= r < r1 of the chunk: their hashes into their buckets' places in grouped."""
    for r in range(r0, r1):
        lo = r * n // RANGES_PER_CHUNK
        hi = (r + 1) * n // RANGES_PER_CHUNK
        for i in range(lo, hi):
            h = hashes[i]
            if h != 0:
                b = _bucket(h, bucket_bits)
                grouped[cursor[r, b]] = h
                cursor[r, b] += 1


@njit(cache=True, nogil=True)
def fill_buckets(grouped, bucket_start, counters, region, num_hashes, b0, b1):
    """Add every grouped window of buckets b0 <= b < b1 to its counters (saturating at 255)."""
    for b in range(b0, b1):
        base = b * region
        for i in range(bucket_start[b], bucket_start[b + 1]):
            h = grouped[i]
            for j in range(num_hashes):
                c = base + _cell(h, j, region)
                counters[c] += counters[c] < 255  # saturating, without a branch


@njit(cache=True, nogil=True)
def full_cells(counters, threshold, mask, byte0, byte1):
    """Bit c of mask set when counters[c] >= threshold, for the cells of bytes byte0 <= byte <
    byte1: what the query pass needs of the filter, in an eighth of its memory (so its random
    reads mostly hit the cache)."""
    n = len(counters)
    for byte in range(byte0, byte1):
        value = 0
        for b in range(min(8, n - (byte << 3))):
            if counters[(byte << 3) + b] >= threshold:
                value |= 1 << b
        mask[byte] = value


@njit(cache=True, nogil=True)
def query_windows(tokens, doc_offsets, doc_table, doc_shift, word_ok, length, full, region,
                  bucket_bits, num_hashes, window_ok, set_bits, r0, r1):
    """Position ranges r0 <= r < r1 of QUERY_RANGES (whole bytes of window_ok each): set bit p of
    window_ok when the window at p is counted by the filter and all its cells are full, and
    set_bits[r] = how many were set."""
    n = len(tokens)
    n_bytes = (n + 7) >> 3
    hashes = np.empty(QUERY_BLOCK, dtype=np.uint64)
    for r in range(r0, r1):
        first = (r * n_bytes // QUERY_RANGES) << 3
        last = min(((r + 1) * n_bytes // QUERY_RANGES) << 3, n)
        count = 0
        for c0 in range(first, last, QUERY_BLOCK):
            c1 = min(c0 + QUERY_BLOCK, last)
            hash_windows(tokens, doc_offsets, doc_table, doc_shift, word_ok, length, c0, c1,
                         hashes)
            byte = 0
            for i in range(c1 - c0):  # branch-free: the lookups' cache misses overlap
                h = hashes[i]
                base = _bucket(h, bucket_bits) * region
                ok = np.int64(h != 0)
                for j in range(num_hashes):
                    ok &= bit_get(full, base + _cell(h, j, region))
                byte |= ok << ((c0 + i) & 7)
                count += ok
                if (c0 + i) & 7 == 7 or i == c1 - c0 - 1:
                    window_ok[(c0 + i) >> 3] = byte
                    byte = 0
        set_bits[r] = count


def filter_layout(n_cells: int) -> tuple[int, int]:
    """(bucket_bits, cells per bucket) for a filter of about n_cells counters."""
    bucket_bits = 0
    while (REGION_CELLS << bucket_bits) < n_cells and bucket_bits < MAX_BUCKET_BITS:
        bucket_bits += 1
    return bucket_bits, -(-n_cells // (1 << bucket_bits))


def fill_filter(tokens: np.ndarray, doc_offsets: np.ndarray, doc_table: np.ndarray,
                doc_shift: int, word_ok: np.ndarray, length: int, n_cells: int,
                num_hashes: int, threads: int = 1) -> tuple[np.ndarray, int]:
    """(counters, bucket_bits): the counting filter (about n_cells uint8 counters, num_hashes per
    window) of every window tokens[p:p + length] that lies in one document and holds only
    frequent words."""
    n = len(tokens)
    bucket_bits, region = filter_layout(n_cells)
    counters = np.zeros(region << bucket_bits, dtype=np.uint8)
    buffers = _chunk_buffers(n, bucket_bits)
    for c0 in range(0, n, len(buffers[0])):
        starts = partition_chunk(tokens, doc_offsets, doc_table, doc_shift, word_ok, length, c0,
                                 min(c0 + len(buffers[0]), n), bucket_bits, *buffers, threads)
        in_parts(partial(fill_buckets, buffers[1], starts, counters, region, num_hashes),
                 1 << bucket_bits, threads)
    return counters, bucket_bits


def query_filter(tokens: np.ndarray, doc_offsets: np.ndarray, doc_table: np.ndarray,
                 doc_shift: int, word_ok: np.ndarray, length: int, counters: np.ndarray,
                 bucket_bits: int, num_hashes: int, sigma: int,
                 threads: int = 1) -> tuple[np.ndarray, int]:
    """(window_ok, its number of set bits): bit p set when the window at p is counted by the
    filter and every counter of it is >= min(sigma, 255)."""
    full = np.zeros((len(counters) >> 3) + 1, dtype=np.uint8)
    in_parts(lambda y0, y1: full_cells(counters, min(sigma, 255), full, y0, y1),
             (len(counters) + 7) >> 3, threads)
    window_ok = bitmask_new(len(tokens))
    set_bits = np.zeros(QUERY_RANGES, dtype=np.int64)
    region = len(counters) >> bucket_bits
    in_parts(lambda r0, r1: query_windows(tokens, doc_offsets, doc_table, doc_shift, word_ok,
                                          length, full, region, bucket_bits, num_hashes,
                                          window_ok, set_bits, r0, r1), QUERY_RANGES, threads)
    return window_ok, int(set_bits.sum())


def _chunk_buffers(n_tokens: int, bucket_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(hashes, grouped hashes) for chunks of up to CHUNK_POSITIONS positions, fewer when there
    are few buckets: a chunk only needs to fill each bucket's counters with many windows."""
    wanted = max(MIN_CHUNK_POSITIONS, WINDOWS_PER_BUCKET << bucket_bits)
    chunk = max(8, min(CHUNK_POSITIONS, wanted, (n_tokens + 7) & ~7))
    return np.empty(chunk, dtype=np.uint64), np.empty(chunk, dtype=np.uint64)
