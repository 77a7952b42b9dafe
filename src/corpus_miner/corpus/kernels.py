"""Numba tokenizer kernels: one scan over UTF-8 bytes that lowercases, splits and assigns ids.

A token starts at a run or single character (flags of `unicode_table`); a run token continues
while run characters (marks included) follow, a single token takes only the marks after it.

Pure functions over numpy arrays. The scan is resumable: when an output buffer is full it stops at
a token boundary, reports what to grow in `state[STATUS]`, and the caller calls it again; so no
buffer has to be sized for the worst case up front. Token ids come from an open-addressing hash
table over the lowercased UTF-8 bytes of each token (FNV-1a), in order of first appearance.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Layout of the int64 `state` array shared between the kernel and its Python driver.
DOC, POS, N_TOKENS, N_VOCAB, VOCAB_USED, STATUS, DOC_TOKEN_START = range(7)
STATE_SIZE = 7
# Values of state[STATUS].
DONE, NEED_TOKENS, NEED_TABLE, NEED_VOCAB_SLOTS, NEED_VOCAB_BYTES, SPECIAL_DOC = range(6)

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
# Flags of unicode_table (kept literal here so the kernels need no Python-level import).
_RUN = np.uint8(1)
_SINGLE = np.uint8(2)
_MARK = np.uint8(4)
_SELF_SHIFT = 3
_SPECIAL = np.uint8(64)
_REPLACEMENT = 0xFFFD  # U+FFFD is a symbol (So): invalid bytes separate tokens


@njit(cache=True)
def decode_utf8(data, pos, end):
    """(code point, byte length) at data[pos]; malformed sequences give (U+FFFD, 1)."""
    b0 = np.int64(data[pos])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xC2:
        return _REPLACEMENT, 1
    if b0 < 0xE0:
        if pos + 1 < end and (data[pos + 1] & 0xC0) == 0x80:
            return ((b0 & 0x1F) << 6) | (np.int64(data[pos + 1]) & 0x3F), 2
        return _REPLACEMENT, 1
    if b0 < 0xF0:
        if pos + 2 < end and (data[pos + 1] & 0xC0) == 0x80 and (data[pos + 2] & 0xC0) == 0x80:
            cp = ((b0 & 0x0F) << 12) | ((np.int64(data[pos + 1]) & 0x3F) << 6) | (
                np.int64(data[pos + 2]) & 0x3F)
            if cp >= 0x800 and not (0xD800 <= cp < 0xE000):
                return cp, 3
        return _REPLACEMENT, 1
    if b0 < 0xF5:
        if (pos + 3 < end and (data[pos + 1] & 0xC0) == 0x80 and (data[pos + 2] & 0xC0) == 0x80
                and (data[pos + 3] & 0xC0) == 0x80):
            cp = ((b0 & 0x07) << 18) | ((np.int64(data[pos + 1]) & 0x3F) << 12) | (
                (np.int64(data[pos + 2]) & 0x3F) << 6) | (np.int64(data[pos + 3]) & 0x3F)
            if 0x10000 <= cp < 0x110000:
                return cp, 4
    return _REPLACEMENT, 1


@njit(cache=True)
def _slot_of(h, mask):
    return np.int64((h ^ (h >> np.uint64(29))) & np.uint64(mask))


@njit(cache=True, inline="always")
def _lookup(table, mask, h, vocab_hash, vocab_offsets, vocab_bytes, key, key_lo, n_bytes):
    """(slot, id) of the entry whose bytes are key[key_lo:key_lo + n_bytes] (hash h), or (the
    empty slot where it belongs, -1): open addressing with linear probing, hashes compared
    first, bytes only on equal hashes."""
    slot = _slot_of(h, mask)
    while True:
        tid = table[slot]
        if tid < 0:
            return slot, tid
        if vocab_hash[tid] == h:
            lo = vocab_offsets[tid]
            if vocab_offsets[tid + 1] - lo == n_bytes:
                same = True
                for k in range(n_bytes):
                    if vocab_bytes[lo + k] != key[key_lo + k]:
                        same = False
                        break
                if same:
                    return slot, tid
        slot = (slot + 1) & mask


@njit(cache=True, nogil=True)
def scan_documents(data, offsets, doc_end, cp_info, cp_lower, lowered, state,
                   tokens, doc_token_ends, table, vocab_hash, vocab_offsets, vocab_bytes):
    """Tokenize documents state[DOC] .. doc_end-1 of one batch; resumable, see module doc.

    data/offsets: UTF-8 bytes of the batch and int64 document boundaries into them.
    lowered: 1 when `data` is already lowercased text (exact slow path), 0 to fold per code point.
    doc_token_ends[d]: total token count after document d (written when d is finished).
    state[POS] is -1 between documents (set it to -1 to start a batch).
    On SPECIAL_DOC the tokens of document state[DOC] are rolled back and state[DOC] points at it.
    """
    table_mask = table.shape[0] - 1
    table_limit = table.shape[0] // 2
    # lowered text is classified by the code points themselves, raw text by their lowercase
    shift = _SELF_SHIFT if lowered else 0
    run_bit = np.uint8(_RUN << shift)
    single_bit = np.uint8(_SINGLE << shift)
    mark_bit = np.uint8(_MARK << shift)
    start_bits = np.uint8(run_bit | single_bit)
    d = state[DOC]
    pos = state[POS]
    n_tokens = state[N_TOKENS]
    n_vocab = state[N_VOCAB]
    used = state[VOCAB_USED]
    status = DONE
    while d < doc_end:
        end = offsets[d + 1]
        if pos < 0:  # entering a fresh document
            pos = offsets[d]
            state[DOC_TOKEN_START] = n_tokens
        while pos < end:
            cp = np.int64(data[pos])
            length = 1
            if cp >= 0x80:  # ASCII stays inline; the call is paid only for multi-byte
                cp, length = decode_utf8(data, pos, end)
            info = cp_info[cp]
            if lowered == 0 and (info & _SPECIAL) != 0:
                state[DOC] = d
                state[POS] = pos
                state[N_TOKENS] = state[DOC_TOKEN_START]
                state[N_VOCAB] = n_vocab
                state[VOCAB_USED] = used
                state[STATUS] = SPECIAL_DOC
                return
            if (info & start_bits) == 0:
                pos += length
                continue
            # a single character takes only the marks after it; a run takes run characters
            cont_bit = mark_bit if (info & single_bit) != 0 else run_bit
            # A token starts here: make sure every buffer can take it, else stop before it.
            if n_tokens >= tokens.shape[0]:
                status = NEED_TOKENS
            elif n_vocab >= table_limit:
                status = NEED_TABLE
            elif n_vocab + 2 > vocab_offsets.shape[0] or n_vocab >= vocab_hash.shape[0]:
                status = NEED_VOCAB_SLOTS
            if status != DONE:
                break
            token_start = pos
            w = used
            h = _FNV_OFFSET
            overflow = False
            special = False
            while pos < end:
                cp = np.int64(data[pos])
                length = 1
                if cp >= 0x80:  # ASCII stays inline; the call is paid only for multi-byte
                    cp, length = decode_utf8(data, pos, end)
                info = cp_info[cp]
                if lowered == 0 and (info & _SPECIAL) != 0:
                    special = True
                    break
                if pos != token_start and (info & cont_bit) == 0:
                    break
                if lowered == 0:
                    if cp < 0x80:
                        if 0x41 <= cp <= 0x5A:
                            cp += 0x20
                    else:
                        cp = cp_lower[cp]
                if w + 4 > vocab_bytes.shape[0]:
                    overflow = True
                    break
                # Encode the lowercased code point as UTF-8 into the tentative vocab slot.
                if cp < 0x80:
                    vocab_bytes[w] = cp
                    w += 1
                elif cp < 0x800:
                    vocab_bytes[w] = 0xC0 | (cp >> 6)
                    vocab_bytes[w + 1] = 0x80 | (cp & 0x3F)
                    w += 2
                elif cp < 0x10000:
                    vocab_bytes[w] = 0xE0 | (cp >> 12)
                    vocab_bytes[w + 1] = 0x80 | ((cp >> 6) & 0x3F)
                    vocab_bytes[w + 2] = 0x80 | (cp & 0x3F)
                    w += 3
                else:
                    vocab_bytes[w] = 0xF0 | (cp >> 18)
                    vocab_bytes[w + 1] = 0x80 | ((cp >> 12) & 0x3F)
                    vocab_bytes[w + 2] = 0x80 | ((cp >> 6) & 0x3F)
                    vocab_bytes[w + 3] = 0x80 | (cp & 0x3F)
                    w += 4
                h = (h ^ np.uint64(cp)) * _FNV_PRIME
                pos += length
            if special:
                state[DOC] = d
                state[POS] = pos
                state[N_TOKENS] = state[DOC_TOKEN_START]
                state[N_VOCAB] = n_vocab
                state[VOCAB_USED] = used
                state[STATUS] = SPECIAL_DOC
                return
            if overflow:
                pos = token_start
                status = NEED_VOCAB_BYTES
                break
            n_bytes = w - used
            slot, tid = _lookup(table, table_mask, h, vocab_hash, vocab_offsets, vocab_bytes,
                                vocab_bytes, used, n_bytes)
            if tid < 0:  # unseen token: commit its tentative bytes as a new entry
                tid = n_vocab
                table[slot] = tid
                vocab_hash[tid] = h
                vocab_offsets[tid + 1] = w
                used = w
                n_vocab += 1
            tokens[n_tokens] = tid
            n_tokens += 1
        if status != DONE:  # a buffer is full: stop before the token at `pos`
            break
        doc_token_ends[d] = n_tokens
        d += 1
        pos = -1
    state[DOC] = d
    state[POS] = pos
    state[N_TOKENS] = n_tokens
    state[N_VOCAB] = n_vocab
    state[VOCAB_USED] = used
    state[STATUS] = status


@njit(cache=True, nogil=True)
def rehash(vocab_hash, n_vocab, table):
    """Fill `table` (all -1, power-of-two size) with ids 0..n_vocab-1 by their stored hashes."""
    mask = table.shape[0] - 1
    for tid in range(n_vocab):
        slot = _slot_of(vocab_hash[tid], mask)
        while table[slot] >= 0:
            slot = (slot + 1) & mask
        table[slot] = tid


@njit(cache=True, nogil=True)
def merge_vocab(local_hash, local_offsets, local_bytes, state, table, vocab_hash, vocab_offsets,
                vocab_bytes, mapping):
    """Add a local vocabulary (entries in their order) to the global one; mapping[i] = the
    global id of local entry i. Entries new to the global vocabulary get the next ids in local
    order, so merging the local vocabularies of consecutive blocks in block order gives ids in
    order of first appearance over all blocks, as one scan would.

    state: [n_vocab, bytes used] of the global vocabulary. The caller makes room first: the
    table stays under half full and every buffer takes all the local entries."""
    mask = table.shape[0] - 1
    n_vocab = state[0]
    used = state[1]
    for i in range(local_offsets.shape[0] - 1):
        h = local_hash[i]
        lo = local_offsets[i]
        n_bytes = local_offsets[i + 1] - lo
        slot, tid = _lookup(table, mask, h, vocab_hash, vocab_offsets, vocab_bytes, local_bytes,
                            lo, n_bytes)
        if tid < 0:
            tid = n_vocab
            table[slot] = tid
            vocab_hash[tid] = h
            for b in range(n_bytes):  # no array slice assignment: _numba/arrays.py
                vocab_bytes[used + b] = local_bytes[lo + b]
            used += n_bytes
            vocab_offsets[tid + 1] = used
            n_vocab += 1
        mapping[i] = tid
    state[0] = n_vocab
    state[1] = used


@njit(cache=True, nogil=True)
def remap_ids(local_ids, mapping, out):
    """out[i] = mapping[local_ids[i]]: local token ids to global ones."""
    for i in range(local_ids.shape[0]):
        out[i] = mapping[local_ids[i]]


@njit(cache=True)
def token_char_spans(code_points, cp_info):
    """(starts, ends) of the tokens of the lowercase of `code_points`, as character offsets."""
    n = code_points.shape[0]
    starts = np.empty(n, dtype=np.int64)
    ends = np.empty(n, dtype=np.int64)
    count = 0
    i = 0
    while i < n:
        cp = code_points[i]
        info = cp_info[cp] if cp < 0x110000 else np.uint8(0)
        if (info & (_RUN | _SINGLE)) != 0:
            cont_bit = _MARK if (info & _SINGLE) != 0 else _RUN
            starts[count] = i
            i += 1
            while i < n:
                cp = code_points[i]
                if cp >= 0x110000 or (cp_info[cp] & cont_bit) == 0:
                    break
                i += 1
            ends[count] = i
            count += 1
        else:
            i += 1
    return starts[:count].copy(), ends[:count].copy()
