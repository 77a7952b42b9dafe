"""Numba kernels that cut the handled token runs out of a whole batch of texts in one call.

The batch is an Arrow string array as bytes: UTF-8 `data` and int64 row `offsets`. Each row to
clean is a document whose tokens are found again in its bytes (the tokenizer's rule, as in
`token_spans`) and whose runs come from the handled-token mask; the other rows are copied as they
are. `cut_rows` writes the cleaned texts (mode remove or mask) into one output buffer with row
offsets; `run_spans` gives each row's runs as character offsets (mode annotate).

Byte for byte what the per-document functions of `clean.py` (`remove_runs`, `mask_runs`,
`run_char_spans`) give on the decoded strings, which stay the reference the tests compare
against: whitespace is `str.isspace`, terminal punctuation `\\p{Terminal_Punctuation}`, both from
the table of `cut_char_table`. The texts are valid UTF-8 (the readers replace invalid bytes).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

# bits of the cut table (per code point)
SPACE = np.uint8(1)
TERMINAL = np.uint8(2)
# the tokenizer's flags of a code point's lowercase (corpus.unicode_table.LOWER_*)
_RUN = np.uint8(1)
_SINGLE = np.uint8(2)
_MARK = np.uint8(4)
_NL = 0x0A
_CR = 0x0D
REMOVE, MASK = 0, 1
# returned in status[0]: the row whose text has another number of tokens than the corpus had
NO_ERROR = -1
_CUT_TABLE_FORMAT = 1


@functools.lru_cache(maxsize=1)
def cut_char_table() -> np.ndarray:
    """uint8 per code point: SPACE where `str.isspace` (what the stdlib `re` calls \\s in a str
    pattern), TERMINAL where the character has the Unicode property Terminal_Punctuation (as the
    `regex` module, which `remove_runs` uses, knows it). Built once per Unicode/Python/regex
    version and cached on disk like the tokenizer's tables (building it takes ~30 ms, a twentieth
    of a one-line `clean`)."""
    from corpus_miner.corpus.unicode_table import cached_tables

    (table,) = cached_tables(f"cutchars-v{_CUT_TABLE_FORMAT}", (("flags", np.uint8),),
                             lambda: (_build_cut_char_table(),))
    return table


def _build_cut_char_table() -> np.ndarray:
    import re

    import regex

    from corpus_miner.corpus.unicode_table import N_CODE_POINTS

    code_points = np.arange(N_CODE_POINTS, dtype=np.uint32)
    code_points = code_points[(code_points < 0xD800) | (code_points >= 0xE000)]
    text = code_points.tobytes().decode("utf-32-le")  # every character once, in order
    table = np.zeros(N_CODE_POINTS, dtype=np.uint8)
    for pattern, flag in ((re.compile(r"\s+"), SPACE),
                          (regex.compile(r"\p{Terminal_Punctuation}+"), TERMINAL)):
        for match in pattern.finditer(text):
            table[code_points[match.start():match.end()]] |= flag
    return table


@njit(cache=True)
def _decode_multibyte(data, pos):
    """(code point, byte length) of the valid UTF-8 sequence of 2 to 4 bytes at data[pos]."""
    b0 = np.int64(data[pos])
    if b0 < 0xE0:
        return ((b0 & 0x1F) << 6) | (np.int64(data[pos + 1]) & 0x3F), np.int64(2)
    if b0 < 0xF0:
        return (((b0 & 0x0F) << 12) | ((np.int64(data[pos + 1]) & 0x3F) << 6)
                | (np.int64(data[pos + 2]) & 0x3F)), np.int64(3)
    return (((b0 & 0x07) << 18) | ((np.int64(data[pos + 1]) & 0x3F) << 12)
            | ((np.int64(data[pos + 2]) & 0x3F) << 6) | (np.int64(data[pos + 3]) & 0x3F),
            np.int64(4))


@njit(cache=True, inline="always")
def _flags_at(data, pos, table):
    """(table flags of the character at data[pos], its byte length). The texts are valid UTF-8,
    so this decoder does not check (corpus.kernels.decode_utf8, which does, costs ~40 ns a
    character even on ASCII: the whole cut ran 20x slower with it)."""
    b0 = data[pos]
    if b0 < 0x80:
        return table[b0], np.int64(1)
    cp, n = _decode_multibyte(data, pos)
    return table[cp], n


@njit(cache=True, inline="always")
def _char_before(data, pos, lo):
    """Byte position of the character that ends at `pos` (UTF-8: skip continuation bytes)."""
    pos -= 1
    while pos > lo and (data[pos] & 0xC0) == 0x80:
        pos -= 1
    return pos


@njit(cache=True, inline="always")
def _is_space(data, pos, cut_table):
    return (_flags_at(data, pos, cut_table)[0] & SPACE) != 0


@njit(cache=True)
def _lstrip(data, lo, hi, cut_table):
    while lo < hi:
        flags, n = _flags_at(data, lo, cut_table)
        if not flags & SPACE:
            break
        lo += n
    return lo


@njit(cache=True)
def _rstrip(data, lo, hi, cut_table):
    while hi > lo:
        before = _char_before(data, hi, lo)
        if not _is_space(data, before, cut_table):
            break
        hi = before
    return hi


@njit(cache=True)
def token_spans_into(data, lo, hi, cp_info, byte_start, byte_end, char_start, char_end):
    """Tokens of the text data[lo:hi] (the rule of corpus.kernels.token_char_spans over its
    decoded characters): their byte offsets (absolute) and character offsets (from lo) go into
    the four arrays. Returns the number of tokens, or -1 if there are more than the arrays hold."""
    count = 0
    chars = 0
    i = lo
    while i < hi:
        info, n = _flags_at(data, i, cp_info)
        if (info & (_RUN | _SINGLE)) != 0:
            if count == len(byte_start):
                return -1
            cont_bit = _MARK if (info & _SINGLE) != 0 else _RUN
            byte_start[count] = i
            char_start[count] = chars
            i += n
            chars += 1
            while i < hi:
                info, n = _flags_at(data, i, cp_info)
                if (info & cont_bit) == 0:
                    break
                i += n
                chars += 1
            byte_end[count] = i
            char_end[count] = chars
            count += 1
        else:
            i += n
            chars += 1
    return count


@njit(cache=True)
def _needs_separator(data, left_lo, left_hi, right_lo, right_hi, cp_info):
    """corpus.tokenizer.needs_separator(left, right) for left = data[left_lo:left_hi] and
    right = data[right_lo:right_hi]."""
    if left_lo == left_hi or right_lo == right_hi:
        return False
    first = _flags_at(data, right_lo, cp_info)[0]
    if not first & _RUN:
        return False
    end = _char_before(data, left_hi, left_lo)
    if not _flags_at(data, end, cp_info)[0] & (_RUN | _SINGLE):
        return False
    if first & _MARK:
        return True
    while True:  # marks belong to the token before them
        flags = _flags_at(data, end, cp_info)[0]
        if not flags & _MARK:
            return not flags & _SINGLE
        if end == left_lo:
            return True
        end = _char_before(data, end, left_lo)


@njit(cache=True)
def _copy(data, lo, hi, out, w):
    """data[lo:hi] to out[w:]; returns the new end w (element by element: _numba/arrays.py)."""
    for i in range(lo, hi):
        out[w] = data[i]
        w += 1
    return w


@njit(cache=True)
def _join(data, left_lo, left_hi, left_space_hi, right_lo, right_space_lo, right_hi, out, w,
          cp_info):
    """Write what replaces a cut between the kept text data[left_lo:left_hi], followed by the
    whitespace up to left_space_hi, and the kept text data[right_lo:right_hi], preceded by the
    whitespace from right_space_lo (clean._joiner)."""
    left_lines = 0
    for p in range(left_hi, left_space_hi):
        left_lines += data[p] == _NL
    right_lines = 0
    for p in range(right_space_lo, right_lo):
        right_lines += data[p] == _NL
    lines = max(left_lines, right_lines)
    if lines == 0:
        if left_space_hi > left_hi or right_lo > right_space_lo or _needs_separator(
                data, left_lo, left_hi, right_lo, right_hi, cp_info):
            out[w] = 0x20
            w += 1
        return w
    crlf = False  # "\r\n" anywhere in the two whitespace runs put together
    previous = -1
    for p in range(left_hi, left_space_hi):
        crlf |= previous == _CR and data[p] == _NL
        previous = data[p]
    for p in range(right_space_lo, right_lo):
        crlf |= previous == _CR and data[p] == _NL
        previous = data[p]
    for _ in range(min(lines, 2)):
        if crlf:
            out[w] = _CR
            w += 1
        out[w] = _NL
        w += 1
    return w


@njit(cache=True, inline="always")
def _next_run(mask, token_lo, n_tokens, a):
    """(first, end) of the first run of masked tokens at or after token a of the document whose
    tokens start at mask[token_lo]; first == n_tokens when there is none."""
    while a < n_tokens and not mask[token_lo + a]:
        a += 1
    b = a
    while b < n_tokens and mask[token_lo + b]:
        b += 1
    return a, b


@njit(cache=True)
def _remove(data, lo, hi, mask, token_lo, n_tokens, byte_start, byte_end, out, w, cp_info,
            cut_table):
    """Write data[lo:hi] without its runs of masked tokens (clean.remove_runs); returns w."""
    have = False  # a kept piece with text is pending: [last_lo, last_hi)
    last_lo = lo  # not the literal 0: one signature for the kernels it is passed to
    last_hi = lo
    cursor = lo
    a = np.int64(0)
    index = 0
    while True:
        a, b = _next_run(mask, token_lo, n_tokens, a)  # or the end of the text
        final = a == n_tokens
        if not final:
            s = byte_start[a]
            e = byte_end[b - 1]
            before = byte_end[a - 1] if a > 0 else lo
            after = byte_start[b] if b < n_tokens else hi
            j = s  # punctuation glued to the run, back to whitespace or the text start
            while j > before:
                k = _char_before(data, j, before)
                if _is_space(data, k, cut_table):
                    break
                j = k
            if j == lo or _is_space(data, _char_before(data, j, lo), cut_table):
                s = j
            j = e  # and forward: taken if it reaches whitespace or the end, or is terminal
            terminal = True
            while j < after:
                flags, n = _flags_at(data, j, cut_table)
                if flags & SPACE:
                    break
                terminal &= (flags & TERMINAL) != 0
                j += n
            if j == hi or _is_space(data, j, cut_table) or (terminal and j > e):
                e = j
            piece_lo, piece_hi = cursor, s
            cursor = e
            a = b
        else:
            piece_lo, piece_hi = cursor, hi
        # the kept piece [piece_lo, piece_hi)
        if not have:
            kept = piece_lo if index == 0 else _lstrip(data, piece_lo, piece_hi, cut_table)
            if _lstrip(data, kept, piece_hi, cut_table) < piece_hi:
                have = True
                last_lo, last_hi = kept, piece_hi
        else:
            right = _lstrip(data, piece_lo, piece_hi, cut_table)
            if right == piece_hi:  # end of text: drop the whitespace at the cut
                last_hi = _rstrip(data, last_lo, last_hi, cut_table)
            else:
                left = _rstrip(data, last_lo, last_hi, cut_table)
                w = _copy(data, last_lo, left, out, w)
                w = _join(data, last_lo, left, last_hi, right, piece_lo, piece_hi, out, w,
                          cp_info)
                last_lo, last_hi = right, piece_hi
        index += 1
        if final:
            break
    if have:
        w = _copy(data, last_lo, last_hi, out, w)
    return w


@njit(cache=True)
def _mask(data, lo, hi, mask, token_lo, n_tokens, byte_start, byte_end, mask_bytes, out, w):
    """Write data[lo:hi] with each run of masked tokens replaced by mask_bytes (clean.mask_runs)."""
    cursor = lo
    a, b = _next_run(mask, token_lo, n_tokens, np.int64(0))
    while a < n_tokens:
        w = _copy(data, cursor, byte_start[a], out, w)
        w = _copy(mask_bytes, np.int64(0), np.int64(len(mask_bytes)), out, w)
        cursor = byte_end[b - 1]
        a, b = _next_run(mask, token_lo, n_tokens, b)
    return _copy(data, cursor, hi, out, w)


@njit(cache=True, nogil=True)
def cut_rows(data, offsets, todo, token_offsets, mask, mode, mask_bytes, out_size, max_tokens,
             cp_info, cut_table):
    """Texts of the rows with their masked token runs removed (mode REMOVE) or replaced by
    mask_bytes (MASK), rows where todo is 0 copied as they are.

    data, offsets: UTF-8 bytes and int64 offsets of the rows; token_offsets: int64, the corpus
    token range of each row (mask positions); out_size: enough bytes for the output; max_tokens:
    the most tokens of a row to clean. Returns (bytes, int64 row offsets, status): status is
    NO_ERROR, or the first row whose text has another number of tokens than its token range
    (the output is then incomplete)."""
    n_rows = len(offsets) - 1
    out = np.empty(out_size, dtype=np.uint8)
    out_offsets = np.zeros(n_rows + 1, dtype=np.int64)
    byte_start = np.empty(max_tokens + 1, dtype=np.int64)  # + 1: one more token is an error
    byte_end = np.empty(max_tokens + 1, dtype=np.int64)
    char_start = np.empty(max_tokens + 1, dtype=np.int64)
    char_end = np.empty(max_tokens + 1, dtype=np.int64)
    w = np.int64(0)
    for r in range(n_rows):
        out_offsets[r] = w
        lo = offsets[r]
        hi = offsets[r + 1]
        if not todo[r]:
            w = _copy(data, lo, hi, out, w)
            continue
        token_lo = token_offsets[r]
        n_tokens = token_offsets[r + 1] - token_lo
        found = token_spans_into(data, lo, hi, cp_info, byte_start, byte_end, char_start,
                                 char_end)
        if found != n_tokens:
            return out[:w], out_offsets, r
        if mode == REMOVE:
            w = _remove(data, lo, hi, mask, token_lo, n_tokens, byte_start, byte_end, out, w,
                        cp_info, cut_table)
        else:
            w = _mask(data, lo, hi, mask, token_lo, n_tokens, byte_start, byte_end, mask_bytes,
                      out, w)
    out_offsets[n_rows] = w
    return out[:w], out_offsets, NO_ERROR


@njit(cache=True, nogil=True)
def run_spans(data, offsets, todo, token_offsets, mask, max_spans, max_tokens, cp_info):
    """[start, end) character offsets of each run of masked tokens of the rows where todo is 1
    (clean.run_char_spans), as (int64 row offsets into spans, int64 spans[:, 2], status); the
    arguments and status as in cut_rows, max_spans: at least the number of runs."""
    n_rows = len(offsets) - 1
    span_offsets = np.zeros(n_rows + 1, dtype=np.int64)
    spans = np.empty((max_spans, 2), dtype=np.int64)
    byte_start = np.empty(max_tokens + 1, dtype=np.int64)
    byte_end = np.empty(max_tokens + 1, dtype=np.int64)
    char_start = np.empty(max_tokens + 1, dtype=np.int64)
    char_end = np.empty(max_tokens + 1, dtype=np.int64)
    m = 0
    for r in range(n_rows):
        span_offsets[r] = m
        if not todo[r]:
            continue
        token_lo = token_offsets[r]
        n_tokens = token_offsets[r + 1] - token_lo
        found = token_spans_into(data, offsets[r], offsets[r + 1], cp_info, byte_start,
                                 byte_end, char_start, char_end)
        if found != n_tokens:
            return span_offsets, spans[:m], r
        a, b = _next_run(mask, token_lo, n_tokens, np.int64(0))
        while a < n_tokens:
            spans[m, 0] = char_start[a]
            spans[m, 1] = char_end[b - 1]
            m += 1
            a, b = _next_run(mask, token_lo, n_tokens, b)
    span_offsets[n_rows] = m
    return span_offsets, spans[:m], NO_ERROR
