"""Numba tokenizer kernels: one scan over UTF-8 bytes that lowercases, splits and assigns ids.

A token starts at a run or single character (flags of `unicode_table`); a run token continues
while run characters (marks included) follow, a single token takes only the marks after it.

Pure functions over numpy arrays. The scan is resumable: when an output buffer is full it stops at
a token boundary, reports what to grow in `state[STATUS]`, and the caller calls it again; so no
buffer has to be sized for the worst case up front. Token ids come from an open-addressing hash
table keyed by the lowercased UTF-8 bytes of each token (the bytes themselves when they fit in
8, else a hash of them), in order of first appearance.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Layout of the int64 `state` array shared between the kernel and its Python driver.
DOC, POS, N_TOKENS, N_VOCAB, VOCAB_USED, STATUS, DOC_TOKEN_START, BREAKS, SENTENCES, GAP = \
    range(10)
STATE_SIZE = 10
# token_flags values: where a token stands in the document's lines (str.splitlines() lines)
IN_LINE, LINE_START, PARAGRAPH_START = range(3)
LINE_FLAGS = 3  # the bits of token_flags that hold one of the three above
# token_flags bit, recorded only when state[SENTENCES] is 1: the text between the token and the
# one before it in its document holds a sentence break (tokenizer.sentence_starts defines it)
SENTENCE_BREAK = 4
# state[GAP] while scanning the text between two tokens
_NO_BREAK, _STOP_SEEN, _BREAK_SEEN = range(3)
# Values of state[STATUS].
DONE, NEED_TOKENS, NEED_TABLE, NEED_VOCAB_SLOTS, NEED_VOCAB_BYTES, SPECIAL_DOC = range(6)

_KEY_SEED = np.uint64(0xCBF29CE484222325)
_MIX_PRIME = np.uint64(0xFF51AFD7ED558CCD)  # MurmurHash3's finaliser constant
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio
_NO_LOW_BYTE = np.uint64(0xFFFFFFFFFFFFFF00)
_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_BYTES_3F = np.uint64(0x3F3F3F3F3F3F3F3F)
_BYTES_25 = np.uint64(0x2525252525252525)
_BYTES_80 = np.uint64(0x8080808080808080)
# _TRAILING_ONES[bits]: how many of the lowest bits of a 9-bit mask are set before the first 0
_TRAILING_ONES = np.array([(~b & -~b).bit_length() - 1 for b in range(512)], dtype=np.uint8)
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


@njit(cache=True, inline="always")
def _mix(h, word):
    """One 8-byte word into the running hash of a long token."""
    h = (h ^ word) * _MIX_PRIME
    return h ^ (h >> np.uint64(29))


@njit(cache=True, inline="always")
def _put_byte(byte, vocab_bytes, w, word, shift, h):
    """Append one byte of a token's lowercased UTF-8 to the tentative vocabulary slot and to
    its key: the first 8 bytes are packed into `word` (little-endian); from the ninth on, each
    full word is folded into `h` first (so a token of up to 8 bytes keeps its bytes in `word`)."""
    vocab_bytes[w] = byte
    if shift == 64:
        h = _mix(h, word)
        word = np.uint64(0)
        shift = 0
    word |= np.uint64(byte) << np.uint64(shift)
    return w + 1, word, shift + 8, h


@njit(cache=True, inline="always")
def _put_code_point(cp, vocab_bytes, w, word, shift, h):
    """Append code point `cp` (>= 0x80) as UTF-8, see _put_byte."""
    if cp < 0x800:
        w, word, shift, h = _put_byte(0xC0 | (cp >> 6), vocab_bytes, w, word, shift, h)
    else:
        if cp < 0x10000:
            w, word, shift, h = _put_byte(0xE0 | (cp >> 12), vocab_bytes, w, word, shift, h)
        else:
            w, word, shift, h = _put_byte(0xF0 | (cp >> 18), vocab_bytes, w, word, shift, h)
            w, word, shift, h = _put_byte(0x80 | ((cp >> 12) & 0x3F), vocab_bytes, w, word,
                                          shift, h)
        w, word, shift, h = _put_byte(0x80 | ((cp >> 6) & 0x3F), vocab_bytes, w, word, shift, h)
    return _put_byte(0x80 | (cp & 0x3F), vocab_bytes, w, word, shift, h)


@njit(cache=True, inline="always")
def _token_key(n_bytes, word, h):
    """The key of a token: its bytes themselves (packed, zero-padded) up to 8 bytes, which is
    exact (a token never holds a NUL byte), else a hash of all its bytes."""
    if n_bytes <= 8:
        return word
    return _mix(h, word) & _NO_LOW_BYTE  # a zero first byte: never the key of a short token


@njit(cache=True, inline="always")
def _slot_of(key, shift):
    """Fibonacci hashing: the top bits of key * 2^64/phi (a power-of-two table of 64 - shift
    bits)."""
    return np.int64((key * _GOLDEN) >> np.uint64(shift))


@njit(cache=True)
def table_shift(table):
    """64 - log2(slots) of a table (a power of two of slots)."""
    bits = 0
    while (1 << bits) < table.shape[0]:
        bits += 1
    return 64 - bits


@njit(cache=True, inline="always")
def _lookup(table, mask, shift, key, n_bytes, vocab_key, vocab_offsets, vocab_bytes, bytes_, lo):
    """(slot, id) of the entry with this key whose bytes are bytes_[lo:lo + n_bytes], or (the
    empty slot where it belongs, -1). Open addressing with linear probing over int32 ids (-1:
    empty), so the table is small and stays in cache; keys are compared by id (vocab_key, in
    order of first appearance, so the frequent ones are together). A key of up to 8 bytes is
    the bytes themselves, hence exact; only longer tokens with an equal hash compare bytes."""
    slot = _slot_of(key, shift)
    while True:
        tid = np.int64(table[slot])
        if tid < 0:
            return slot, tid
        if vocab_key[tid] == key:
            if n_bytes <= 8:
                return slot, tid
            start = vocab_offsets[tid]
            if vocab_offsets[tid + 1] - start == n_bytes:
                same = True
                for k in range(n_bytes):
                    if vocab_bytes[start + k] != bytes_[lo + k]:
                        same = False
                        break
                if same:
                    return slot, tid
        slot = (slot + 1) & mask


@njit(cache=True, inline="always")
def _load_word(data, pos):
    """data[pos:pos + 8] as a little-endian uint64."""
    word = np.uint64(0)
    for k in range(8):
        word |= np.uint64(data[pos + k]) << np.uint64(8 * k)
    return word


@njit(cache=True, inline="always")
def _ascii_lower(word):
    """A-Z to a-z in each byte of a word of ASCII bytes (all < 0x80): a byte is upper case when
    adding 0x3F carries into its top bit and adding 0x25 does not; no carry crosses bytes."""
    upper = (word + _BYTES_3F) & ~(word + _BYTES_25) & _BYTES_80
    return word | (upper >> np.uint64(2))


@njit(cache=True, inline="always")
def is_space(cp):
    """Whether code point cp is whitespace (`re`'s \\s, str.isspace())."""
    if cp <= 0x20:
        return cp == 0x20 or 0x09 <= cp <= 0x0D or 0x1C <= cp <= 0x1F
    if cp < 0x1680:
        return cp == 0x85 or cp == 0xA0
    return (cp == 0x1680 or 0x2000 <= cp <= 0x200A or cp == 0x2028 or cp == 0x2029
            or cp == 0x202F or cp == 0x205F or cp == 0x3000)


@njit(cache=True, inline="always")
def gap_state(gap, cp):
    """The state of the text between two tokens after one more character cp of it: a break is
    one of . ! ? : later followed by whitespace, or a CJK full stop, exclamation, question mark
    or colon (tokenizer.SENTENCE_BREAK)."""
    if gap == _BREAK_SEEN:
        return gap
    if cp == 0x3002 or cp == 0xFF01 or cp == 0xFF1F or cp == 0xFF1A:
        return _BREAK_SEEN
    if cp == 0x2E or cp == 0x21 or cp == 0x3F or cp == 0x3A:
        return _STOP_SEEN
    if gap == _STOP_SEEN and is_space(cp):
        return _BREAK_SEEN
    return gap


@njit(cache=True, nogil=True)
def scan_documents(data, offsets, doc_end, cp_info, cp_lower, lowered, state,
                   tokens, token_flags, doc_token_ends, table, vocab_key, vocab_offsets,
                   vocab_bytes):
    """Tokenize documents state[DOC] .. doc_end-1 of one batch; resumable, see module doc.

    data/offsets: UTF-8 bytes of the batch and int64 document boundaries into them.
    lowered: 1 when `data` is already lowercased text (exact slow path), 0 to fold per code point.
    doc_token_ends[d]: total token count after document d (written when d is finished).
    table: int32 ids (see _lookup); vocab_key[id]: the entry's key (see _token_key).
    token_flags[i]: IN_LINE, LINE_START (first token of a line) or PARAGRAPH_START (first token
    of a line after a line without tokens, or of the document); lines are those of
    str.splitlines(): a break is \n, \r, \r\n, \v, \f, \x1c-\x1e, \x85, U+2028 or U+2029.
    state[BREAKS]: line breaks since the last token (kept across a stop inside a document).
    state[SENTENCES] 1: also set the SENTENCE_BREAK bit of token_flags (state[GAP] then keeps
    the text since the last token across a stop); 0: the bit stays clear, at no cost.
    state[POS] is -1 between documents (set it to -1 to start a batch).
    On SPECIAL_DOC the tokens of document state[DOC] are rolled back and state[DOC] points at it.
    """
    table_mask = table.shape[0] - 1
    table_limit = table.shape[0] // 2
    shift_bits = table_shift(table)
    # lowered text is classified by the code points themselves, raw text by their lowercase
    flag_shift = _SELF_SHIFT if lowered else 0
    run_bit = np.uint8(_RUN << flag_shift)
    single_bit = np.uint8(_SINGLE << flag_shift)
    mark_bit = np.uint8(_MARK << flag_shift)
    start_bits = np.uint8(run_bit | single_bit)
    ascii_run = np.zeros(256, dtype=np.uint8)  # 1 for the ASCII run characters, bytes < 0x80
    for b in range(0x80):
        if (cp_info[b] & run_bit) != 0:
            ascii_run[b] = 1
    d = state[DOC]
    pos = state[POS]
    n_tokens = state[N_TOKENS]
    n_vocab = state[N_VOCAB]
    used = state[VOCAB_USED]
    status = DONE
    breaks = state[BREAKS]
    sentences = state[SENTENCES] != 0
    gap = state[GAP]
    while d < doc_end:
        end = offsets[d + 1]
        if pos < 0:  # entering a fresh document
            pos = offsets[d]
            state[DOC_TOKEN_START] = n_tokens
            breaks = PARAGRAPH_START  # the first token starts a line and a paragraph
            gap = _NO_BREAK
        doc_first = state[DOC_TOKEN_START]
        while pos < end:
            cp = np.int64(data[pos])
            length = 1
            if cp >= 0x80:  # ASCII stays inline; the call is paid only for multi-byte
                cp, length = decode_utf8(data, pos, end)
            info = cp_info[cp]
            if lowered == 0 and (info & _SPECIAL) != 0:
                status = SPECIAL_DOC
                break
            if (info & start_bits) == 0:
                # line breaks are never token characters: counted only on this path
                if cp < 0x20:
                    if cp == 0x0A or cp == 0x0B or cp == 0x0C or 0x1C <= cp <= 0x1E:
                        breaks += 1
                    elif cp == 0x0D and not (pos + 1 < end and data[pos + 1] == 0x0A):
                        breaks += 1  # \r\n is one break, counted at its \n
                elif cp == 0x85 or cp == 0x2028 or cp == 0x2029:
                    breaks += 1
                if sentences:
                    gap = gap_state(gap, cp)
                pos += length
                continue
            # a single character takes only the marks after it; a run takes run characters
            cont_bit = mark_bit if (info & single_bit) != 0 else run_bit
            # A token starts here: make sure every buffer can take it, else stop before it.
            if n_tokens >= tokens.shape[0]:
                status = NEED_TOKENS
            elif n_vocab >= table_limit:
                status = NEED_TABLE
            elif n_vocab + 2 > vocab_offsets.shape[0] or n_vocab >= vocab_key.shape[0]:
                status = NEED_VOCAB_SLOTS
            if status != DONE:
                break
            if cp < 0x80 and cont_bit == run_bit and pos + 9 <= end:
                # The common case, an ASCII run of up to 8 bytes, without a branch per byte:
                # which of the next 8 bytes are ASCII run characters, as bits, gives the run's
                # length by a table lookup; its key is the 8 bytes loaded as one word, masked.
                bits = 1
                for k in range(1, 9):
                    bits |= np.int64(ascii_run[data[pos + k]]) << k
                n_bytes = np.int64(_TRAILING_ONES[bits])
                if n_bytes <= 8 and data[pos + n_bytes] < 0x80:
                    word = _load_word(data, pos) & (_ALL_ONES >> np.uint64(64 - 8 * n_bytes))
                    if lowered == 0:
                        word = _ascii_lower(word)
                    slot, tid = _lookup(table, table_mask, shift_bits, word, n_bytes, vocab_key,
                                        vocab_offsets, vocab_bytes, vocab_bytes, used)
                    if tid < 0:  # unseen token: its bytes become a new entry
                        if used + 8 > vocab_bytes.shape[0]:
                            status = NEED_VOCAB_BYTES
                            break
                        for k in range(n_bytes):
                            vocab_bytes[used + k] = (word >> np.uint64(8 * k)) & np.uint64(0xFF)
                        tid = n_vocab
                        table[slot] = tid
                        vocab_key[tid] = word
                        used += n_bytes
                        vocab_offsets[tid + 1] = used
                        n_vocab += 1
                    tokens[n_tokens] = tid
                    token_flags[n_tokens] = _flag(breaks, gap, n_tokens > doc_first)
                    breaks = 0
                    gap = _NO_BREAK
                    n_tokens += 1
                    pos += n_bytes
                    continue
            token_start = pos
            w = used
            word = np.uint64(0)
            shift = 0
            h = _KEY_SEED
            overflow = False
            while True:  # cp/length/info: the character at pos, part of the token
                if w + 4 > vocab_bytes.shape[0]:
                    overflow = True
                    break
                if cp < 0x80:
                    if lowered == 0 and 0x41 <= cp <= 0x5A:
                        cp += 0x20
                    w, word, shift, h = _put_byte(cp, vocab_bytes, w, word, shift, h)
                else:
                    if lowered == 0:
                        cp = cp_lower[cp]
                    if cp < 0x80:
                        w, word, shift, h = _put_byte(cp, vocab_bytes, w, word, shift, h)
                    else:
                        w, word, shift, h = _put_code_point(cp, vocab_bytes, w, word, shift, h)
                pos += length
                if pos >= end:
                    break
                cp = np.int64(data[pos])
                length = 1
                if cp < 0x80:  # ASCII is never SPECIAL
                    if (cp_info[cp] & cont_bit) == 0:
                        break
                    continue
                cp, length = decode_utf8(data, pos, end)
                info = cp_info[cp]
                if lowered == 0 and (info & _SPECIAL) != 0:
                    status = SPECIAL_DOC
                    break
                if (info & cont_bit) == 0:
                    break
            if status == SPECIAL_DOC:
                break
            if overflow:
                pos = token_start
                status = NEED_VOCAB_BYTES
                break
            n_bytes = w - used
            key = _token_key(n_bytes, word, h)
            slot, tid = _lookup(table, table_mask, shift_bits, key, n_bytes, vocab_key,
                                vocab_offsets, vocab_bytes, vocab_bytes, used)
            if tid < 0:  # unseen token: commit its tentative bytes as a new entry
                tid = n_vocab
                table[slot] = tid
                vocab_key[tid] = key
                vocab_offsets[tid + 1] = w
                used = w
                n_vocab += 1
            tokens[n_tokens] = tid
            token_flags[n_tokens] = _flag(breaks, gap, n_tokens > doc_first)
            breaks = 0
            gap = _NO_BREAK
            n_tokens += 1
        if status == SPECIAL_DOC:
            state[DOC] = d
            state[POS] = pos
            state[N_TOKENS] = state[DOC_TOKEN_START]
            state[N_VOCAB] = n_vocab
            state[VOCAB_USED] = used
            state[STATUS] = SPECIAL_DOC
            return
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
    state[BREAKS] = breaks
    state[GAP] = gap


@njit(cache=True, inline="always")
def _flag(breaks, gap, inside):
    """token_flags of a token after `breaks` line breaks and a gap in state `gap`; `inside`:
    it is not its document's first token (text before that one is no break)."""
    line = np.uint8(min(breaks, PARAGRAPH_START))
    if gap == _BREAK_SEEN and inside:
        return line | np.uint8(SENTENCE_BREAK)
    return line


@njit(cache=True, nogil=True)
def rehash(vocab_key, n_vocab, table):
    """Fill `table` (all -1, power-of-two size) with ids 0..n_vocab-1 by their stored keys."""
    mask = table.shape[0] - 1
    shift = table_shift(table)
    for tid in range(n_vocab):
        slot = _slot_of(vocab_key[tid], shift)
        while table[slot] >= 0:
            slot = (slot + 1) & mask
        table[slot] = tid


@njit(cache=True, nogil=True)
def merge_vocab(local_key, local_offsets, local_bytes, state, table, vocab_key, vocab_offsets,
                vocab_bytes, mapping):
    """Add a local vocabulary (entries in their order) to the global one; mapping[i] = the
    global id of local entry i. Entries new to the global vocabulary get the next ids in local
    order, so merging the local vocabularies of consecutive blocks in block order gives ids in
    order of first appearance over all blocks, as one scan would.

    state: [n_vocab, bytes used] of the global vocabulary. The caller makes room first: the
    table stays under half full and every buffer takes all the local entries."""
    mask = table.shape[0] - 1
    shift = table_shift(table)
    n_vocab = state[0]
    used = state[1]
    for i in range(local_offsets.shape[0] - 1):
        key = local_key[i]
        lo = local_offsets[i]
        n_bytes = local_offsets[i + 1] - lo
        slot, tid = _lookup(table, mask, shift, key, n_bytes, vocab_key, vocab_offsets,
                            vocab_bytes, local_bytes, lo)
        if tid < 0:
            tid = n_vocab
            table[slot] = tid
            vocab_key[tid] = key
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
