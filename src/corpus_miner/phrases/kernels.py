"""Numba kernels of BloomSpan (steps 1-4 of the article): arrays in, arrays out, no Python objects.

Corpus layout everywhere: `tokens` uint32 (all documents concatenated), `doc_offsets` int64
(n_docs + 1; document d is tokens[doc_offsets[d]:doc_offsets[d + 1]], empty documents allowed).
A bigram is two adjacent tokens of one document; it never spans a document boundary.

Bit masks are uint8 arrays holding one bit per corpus position (`bitmask_new`, `bit_get`,
`bit_set`): at 1/8 byte per token they keep the per-position state of the miner far below the
8 bytes per token memory budget.

The growth phase (steps 5-7) lives in `growth_kernels.py`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_LOW32 = np.uint64(0xFFFFFFFF)


# ---------------------------------------------------------------- bit masks

def bitmask_new(n_bits: int) -> np.ndarray:
    return np.zeros((n_bits >> 3) + 1, dtype=np.uint8)


@njit(cache=True, inline="always")
def bit_get(mask, i):
    return (mask[i >> 3] >> (i & 7)) & 1


@njit(cache=True, inline="always")
def bit_set(mask, i):
    mask[i >> 3] |= np.uint8(1 << (i & 7))


@njit(cache=True)
def bitmask_count(mask, n_bits):
    total = 0
    for i in range(n_bits):
        total += bit_get(mask, i)
    return total


# ---------------------------------------------------------------- step 1: exact word df

@njit(cache=True)
def frequent_words(tokens, doc_offsets, vocab_size, sigma):
    """ok[t] = token t occurs in >= sigma documents (one pass, last-seen-document trick); above
    65535 the test is df >= 65535, which only lets more words through (the filters may err
    upward, never downward: the exact seed step decides).

    Counts saturate at sigma in uint16 next to an int32 last-seen document: 6 bytes per
    vocabulary word, which matters when the vocabulary is as large as the corpus (the article's
    Synthetic 1 has a new word at every position)."""
    cap = min(sigma, 65535)
    count = np.zeros(vocab_size, dtype=np.uint16)
    last_doc = np.full(vocab_size, -1, dtype=np.int32)
    for d in range(len(doc_offsets) - 1):
        for i in range(doc_offsets[d], doc_offsets[d + 1]):
            t = tokens[i]
            if last_doc[t] != d:
                last_doc[t] = d
                if count[t] < cap:
                    count[t] += 1
    return count >= cap


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


@njit(cache=True)
def count_bigrams(tokens, doc_offsets, word_ok):
    """(all bigrams, bigrams whose two words both pass the word-df filter)."""
    total = 0
    passing = 0
    for d in range(len(doc_offsets) - 1):
        start = doc_offsets[d]
        end = doc_offsets[d + 1]
        if end - start < 2:
            continue
        total += end - start - 1
        for i in range(start, end - 1):
            if word_ok[tokens[i]] and word_ok[tokens[i + 1]]:
                passing += 1
    return total, passing


# ---------------------------------------------------------------- step 2: counting filter

@njit(cache=True, inline="always")
def bigram_hash(a, b):
    """FNV-1a over the two 32-bit token ids (as in the article), then the murmur3 64-bit
    finalizer: FNV alone leaves the high bits poorly mixed and `cell_index` uses them."""
    h = _FNV_OFFSET
    h = (h ^ np.uint64(a)) * _FNV_PRIME
    h = (h ^ np.uint64(b)) * _FNV_PRIME
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


@njit(cache=True, inline="always")
def cell_index(h, j, n_cells):
    """Cell of hash function j (double hashing h1 + j*h2), mapped onto [0, n_cells) by a
    multiply-shift instead of a modulo (n_cells need not be a power of two)."""
    h1 = h >> np.uint64(32)
    h2 = (h & _LOW32) | np.uint64(1)
    g = (h1 + np.uint64(j) * h2) & _LOW32
    return np.int64((g * np.uint64(n_cells)) >> np.uint64(32))


@njit(cache=True)
def fill_counting_filter(tokens, doc_offsets, word_ok, counters, num_hashes):
    """Add every word-filtered bigram to the saturating uint8 counting filter (one linear pass).
    Bigrams failing the word filter cannot be frequent, so they stay out and cause no collisions."""
    n_cells = len(counters)
    for d in range(len(doc_offsets) - 1):
        for i in range(doc_offsets[d], doc_offsets[d + 1] - 1):
            a = tokens[i]
            b = tokens[i + 1]
            if word_ok[a] and word_ok[b]:
                h = bigram_hash(a, b)
                for j in range(num_hashes):
                    c = cell_index(h, j, n_cells)
                    if counters[c] < 255:
                        counters[c] += 1


@njit(cache=True)
def mark_filter_survivors(tokens, doc_offsets, word_ok, counters, num_hashes, threshold, survivors,
                          min_length, dead):
    """Step 3: set bit i of `survivors` when the bigram starting at i passes both filters (both
    words frequent, every counter >= threshold). The counters only err upward (collisions add,
    saturation is compared against threshold = min(sigma, 255)), so every bigram with
    df >= sigma survives.

    The same pass marks dead the positions where no frequent phrase of length >= min_length (so
    no phrase of the answer) has an occurrence: such a phrase has only frequent (hence
    surviving) bigrams, so from each occurrence at least min_length - 1 surviving bigrams begin; in a run of R survivors
    starting at s, the positions after s + R - (min_length - 1) have shorter runs.
    Returns (survivors marked, positions marked dead)."""
    n_cells = len(counters)
    kept = 0
    marked = 0
    need = min_length - 1
    for d in range(len(doc_offsets) - 1):
        run_start = -1
        for i in range(doc_offsets[d], doc_offsets[d + 1]):
            ok = False
            if i + 1 < doc_offsets[d + 1]:
                a = tokens[i]
                b = tokens[i + 1]
                if word_ok[a] and word_ok[b]:
                    h = bigram_hash(a, b)
                    ok = True
                    for j in range(num_hashes):
                        if counters[cell_index(h, j, n_cells)] < threshold:
                            ok = False
                            break
            if ok:
                bit_set(survivors, i)
                kept += 1
                if run_start < 0:
                    run_start = i
            elif run_start >= 0:  # the run [run_start, i) ends: its last need - 1 starts are dead
                for p in range(max(run_start, i - need + 1), i):
                    bit_set(dead, p)
                    marked += 1
                run_start = -1
    return kept, marked


# ---------------------------------------------------------------- step 4: packed occurrences

@njit(cache=True)
def pack_survivors(tokens, survivors, dead, n_packed, word_rank, rank_bits, pos_bits):
    """One uint64 per surviving occurrence that is not dead: (rank(a), rank(b), position) packed
    so that a plain integer sort groups equal bigrams and keeps their positions ascending. Ranks
    are dense ids of the frequent words, which is what makes the three fields fit into 64 bits.

    Dead positions here are the short-run ones (mark_filter_survivors): no frequent phrase of
    length >= min_length has an occurrence there (its bigrams are all frequent, so a long enough
    run of survivors starts at each of its occurrences), so neither the growth nor its final
    checks, which only look at such phrases, ever need them."""
    out = np.empty(n_packed, dtype=np.uint64)
    k = 0
    n = len(tokens)
    shift_a = np.uint64(rank_bits + pos_bits)
    shift_b = np.uint64(pos_bits)
    for byte in range(len(survivors)):
        if survivors[byte] & ~dead[byte] == 0:  # usually: skip eight positions at once
            continue
        for i in range(byte << 3, min((byte << 3) + 8, n)):
            if bit_get(survivors, i) and not bit_get(dead, i):
                out[k] = ((np.uint64(word_rank[tokens[i]]) << shift_a)
                          | (np.uint64(word_rank[tokens[i + 1]]) << shift_b) | np.uint64(i))
                k += 1
    return out


_NO_BIGRAM = np.uint64(0xFFFFFFFFFFFFFFFF)  # empty slot: ids are < 2^32 - 1, so no bigram is this


@njit(cache=True)
def pack_survivors_by_bigram_id(tokens, survivors, dead, n_packed, pos_bits):
    """Like pack_survivors, with a dense id per distinct surviving bigram instead of the two
    word ranks: (id << pos_bits) | position. For corpora with more frequent words than the
    rank layout fits (2 x bits(ranks) + bits(tokens) > 64), this still fits whenever
    bits(distinct bigrams) + bits(tokens) <= 64 (always, up to 2^32 tokens), at 8 bytes per
    occurrence plus a hash table of the distinct bigrams (16 bytes per slot, at most half full).
    Ids are given in first-seen order; the seeds' Psi order does not depend on them.
    Returns (packed keys, number of ids), or an empty array when the ids outgrow 64 - pos_bits."""
    out = np.empty(n_packed, dtype=np.uint64)
    max_ids = np.int64(1) << np.int64(min(64 - pos_bits, 62))
    slots = 1 << 16
    table = np.full(slots, _NO_BIGRAM, dtype=np.uint64)
    table_ids = np.empty(slots, dtype=np.int64)
    n_ids = 0
    k = 0
    n = len(tokens)
    shift = np.uint64(pos_bits)
    for byte in range(len(survivors)):
        if survivors[byte] & ~dead[byte] == 0:
            continue
        for i in range(byte << 3, min((byte << 3) + 8, n)):
            if not bit_get(survivors, i) or bit_get(dead, i):
                continue
            key = (np.uint64(tokens[i]) << np.uint64(32)) | np.uint64(tokens[i + 1])
            mask = np.uint64(slots - 1)
            j = np.int64(bigram_hash(tokens[i], tokens[i + 1]) & mask)
            while table[j] != key and table[j] != _NO_BIGRAM:
                j = (j + 1) & (slots - 1)
            if table[j] == _NO_BIGRAM:
                if n_ids == max_ids:
                    return out[:0], n_ids
                table[j] = key
                table_ids[j] = n_ids
                n_ids += 1
                if 2 * n_ids > slots:  # keep the table at most half full
                    table, table_ids = _rehash(table, table_ids, 2 * slots)
                    slots *= 2
                    mask = np.uint64(slots - 1)
                    j = np.int64(bigram_hash(tokens[i], tokens[i + 1]) & mask)
                    while table[j] != key:
                        j = (j + 1) & (slots - 1)
            out[k] = (np.uint64(table_ids[j]) << shift) | np.uint64(i)
            k += 1
    return out, n_ids


@njit(cache=True)
def _rehash(table, table_ids, slots):
    bigger = np.full(slots, _NO_BIGRAM, dtype=np.uint64)
    bigger_ids = np.empty(slots, dtype=np.int64)
    for old in range(len(table)):
        key = table[old]
        if key == _NO_BIGRAM:
            continue
        j = np.int64(bigram_hash(key >> np.uint64(32), key & _LOW32) & np.uint64(slots - 1))
        while bigger[j] != _NO_BIGRAM:
            j = (j + 1) & (slots - 1)
        bigger[j] = key
        bigger_ids[j] = table_ids[old]
    return bigger, bigger_ids


@njit(cache=True)
def survivor_positions(survivors, dead, n_packed, n_tokens):
    """Ascending surviving, not dead positions (fallback path when packing does not fit)."""
    out = np.empty(n_packed, dtype=np.int64)
    k = 0
    for byte in range(len(survivors)):
        if survivors[byte] & ~dead[byte] == 0:
            continue
        for i in range(byte << 3, min((byte << 3) + 8, n_tokens)):
            if bit_get(survivors, i) and not bit_get(dead, i):
                out[k] = i
                k += 1
    return out


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


@njit(cache=True)
def exact_seeds(keys, positions, pos_bits, doc_offsets, doc_table, doc_shift, sigma):
    """Runs of equal bigrams in the sorted occurrence list: keep those whose occurrences cover
    >= sigma documents (exact count over the packed occurrences, which include every occurrence
    that can start a phrase of the answer); every false positive of the filters is dropped here.
    Returns (lo, hi, df) per seed.

    Packed mode (pos_bits > 0): keys[i] = bigram << pos_bits | position, `positions` unused.
    Wide mode (pos_bits == 0): keys[i] = bigram, positions[i] = its position."""
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
        doc_end = -1
        for i in range(lo, hi):
            pos = np.int64(keys[i] & pos_mask) if pos_bits > 0 else positions[i]
            if pos >= doc_end:  # positions ascend: a new document starts here
                doc = doc_at(doc_offsets, doc_table, doc_shift, pos)
                doc_end = doc_offsets[doc + 1]
                df += 1
        if df >= sigma:
            if n_seeds == len(seed_lo):
                seed_lo = _grow(seed_lo)
                seed_hi = _grow(seed_hi)
                seed_df = _grow(seed_df)
            seed_lo[n_seeds] = lo
            seed_hi[n_seeds] = hi
            seed_df[n_seeds] = df
            n_seeds += 1
        lo = hi
    return seed_lo[:n_seeds].copy(), seed_hi[:n_seeds].copy(), seed_df[:n_seeds].copy()


@njit(cache=True)
def unpack_positions_inplace(packed, pos_bits):
    """Drop the bigram bits: afterwards packed[i] is the position (the array is reused as the
    occurrence list of the growth phase, so no second C-sized array is allocated)."""
    mask = (np.uint64(1) << np.uint64(pos_bits)) - np.uint64(1)
    for i in range(len(packed)):
        packed[i] &= mask


@njit(cache=True)
def _grow(values):
    bigger = np.empty(2 * len(values), dtype=values.dtype)
    bigger[:len(values)] = values
    return bigger
