"""Numba kernels for the coverage mask: which corpus tokens lie inside a repeated phrase.

Two ways to get there, both linear in the corpus:

* mining result (`build_window_table`, `mark_windows`, `attribute_windows`): every
  min_length-window of every maximal phrase goes into an open-addressing hash table (64-bit
  polynomial rolling hash, every hit verified token by token against the stored window, so no
  false positives); one scan of the corpus marks the positions covered by a matching window and
  where each match starts. Full occurrences of the phrases can only start there (a phrase begins
  with one of its windows), so `find_occurrences` looks phrases up at those positions alone; a
  last scan looks the windows up again there and attributes each covered token not yet
  attributed (by a full occurrence) to the best-ranked phrase owning one of the windows that
  cover it (sliding-window minimum). All three run on ranges of documents, on threads.
* a phrase list (`build_prefix_table` + `find_occurrences` + `cover_by_occurrences`): phrases of
  any length >= k are indexed by their first k-gram, each hit is verified in full, and a sweep over
  the occurrences marks covered tokens and attributes each one to the best-ranked occurrence.

Arrays in, arrays out; no Python objects. Ranks are "smaller is better" (canonical Psi order).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner._numba.hashing import splitmix64, window_hash, window_roll, window_top

_EMPTY = -1


@njit(cache=True)
def _same(a, a_start, b, b_start, k):
    for i in range(k):
        if a[a_start + i] != b[b_start + i]:
            return False
    return True


@njit(cache=True)
def _table_capacity(n_keys):
    cap = 16
    while cap < 2 * n_keys:
        cap *= 2
    return cap


@njit(cache=True)
def _lookup(slots, slot_hash, key_pos, key_tokens, h, tokens, start, k):
    """Key id whose k tokens equal tokens[start:start+k], or -1."""
    mask = np.uint64(len(slots) - 1)
    i = np.int64(splitmix64(h) & mask)
    while slots[i] != _EMPTY:
        key = slots[i]
        if slot_hash[i] == h and _same(key_tokens, key_pos[key], tokens, start, k):
            return key
        i = (i + 1) & (len(slots) - 1)
    return -1


@njit(cache=True)
def _insert(slots, slot_hash, key_pos, key_tokens, h, start, k, new_key):
    """Insert the k tokens at key_tokens[start:] under id new_key unless present; return the id."""
    mask = np.uint64(len(slots) - 1)
    i = np.int64(splitmix64(h) & mask)
    while slots[i] != _EMPTY:
        key = slots[i]
        if slot_hash[i] == h and _same(key_tokens, key_pos[key], key_tokens, start, k):
            return key
        i = (i + 1) & (len(slots) - 1)
    slots[i] = new_key
    slot_hash[i] = h
    key_pos[new_key] = start
    return new_key


@njit(cache=True)
def build_window_table(phrase_tokens, phrase_offsets, k, phrase_rank):
    """Hash table of the distinct k-windows of all phrases.

    Returns (slots, slot_hash, window_pos, window_owner, window_filter): window w is
    phrase_tokens[window_pos[w]:window_pos[w]+k]; window_owner[w] is the smallest rank of the
    phrases containing it; window_filter holds 32 to 64 bits per window, one set for each
    (_may_hold): most corpus positions, whose window is none of these, are told so by one bit
    that stays in cache instead of a probe of the table (mark_windows at 113M web tokens: 2.0
    -> 1.3 CPU s).
    """
    n_phrases = len(phrase_offsets) - 1
    n_windows = np.int64(0)  # not the literal 0: one signature for the kernels it is passed to
    for i in range(n_phrases):
        n_windows += max(0, phrase_offsets[i + 1] - phrase_offsets[i] - k + 1)
    cap = _table_capacity(n_windows)
    slots = np.full(cap, _EMPTY, dtype=np.int64)
    slot_hash = np.zeros(cap, dtype=np.uint64)
    window_pos = np.empty(n_windows, dtype=np.int64)
    window_owner = np.empty(n_windows, dtype=np.int64)
    top = window_top(k)
    n_unique = np.int64(0)
    for i in range(n_phrases):
        a = phrase_offsets[i]
        b = phrase_offsets[i + 1]
        if b - a < k:
            continue
        h = window_hash(phrase_tokens, a, k)
        for s in range(a, b - k + 1):
            if s > a:
                h = window_roll(h, phrase_tokens[s - 1], phrase_tokens[s + k - 1], top)
            w = _insert(slots, slot_hash, window_pos, phrase_tokens, h, s, k, n_unique)
            if w == n_unique:
                window_owner[w] = phrase_rank[i]
                n_unique += 1
            elif phrase_rank[i] < window_owner[w]:
                window_owner[w] = phrase_rank[i]
    window_filter = np.zeros(max(1, _table_capacity(16 * n_unique) // 64), dtype=np.uint64)
    shift = _filter_shift(window_filter)
    for i in range(len(slots)):
        if slots[i] != _EMPTY:
            x = splitmix64(slot_hash[i]) >> shift
            window_filter[x >> np.uint64(6)] |= np.uint64(1) << (x & np.uint64(63))
    return (slots, slot_hash, window_pos[:n_unique].copy(), window_owner[:n_unique].copy(),
            window_filter)


@njit(cache=True)
def _filter_shift(window_filter):
    """The filter's bit of hash h is the top bits of splitmix64(h) (the table's slot takes the
    low bits): 64 - log2(bits in the filter)."""
    bits = np.uint64(64)
    n = len(window_filter)
    while n > 1:
        n >>= 1
        bits -= np.uint64(1)
    return bits - np.uint64(6)


@njit(cache=True, inline="always")
def _may_hold(window_filter, shift, h):
    """False when no stored window has hash h (True: look it up)."""
    x = splitmix64(h) >> shift
    return (window_filter[x >> np.uint64(6)] >> (x & np.uint64(63))) & np.uint64(1) != 0


# mark_windows sets, in the covered mask, WINDOW_START where a stored window starts (besides 1:
# covered); find_occurrences tries phrases only there, attribute_windows clears it
WINDOW_START = np.uint8(2)


@njit(cache=True, nogil=True)
def mark_windows(tokens, doc_offsets, k, slots, slot_hash, window_pos, window_filter,
                 phrase_tokens, covered):
    """Mark in covered (uint8 per corpus token, zero in these documents) every token inside an
    occurrence of a stored window with 1, and each window's start also with WINDOW_START.
    doc_offsets may be a slice of the corpus's: ranges of documents can be marked on threads."""
    if len(window_pos) == 0:
        return
    top = window_top(k)
    shift = _filter_shift(window_filter)
    for d in range(len(doc_offsets) - 1):
        a = doc_offsets[d]
        b = doc_offsets[d + 1]
        if b - a < k:
            continue
        reach = a  # tokens before it are marked
        h = np.uint64(0)
        for p in range(a, b - k + 1):
            if p == a:
                h = window_hash(tokens, a, k)
            else:
                h = window_roll(h, tokens[p - 1], tokens[p + k - 1], top)
            if _may_hold(window_filter, shift, h) and _lookup(
                    slots, slot_hash, window_pos, phrase_tokens, h, tokens, p, k) >= 0:
                covered[p] |= WINDOW_START
                for q in range(max(p, reach), p + k):
                    covered[q] |= 1
                reach = p + k


@njit(cache=True, nogil=True)
def attribute_windows(tokens, doc_offsets, k, slots, slot_hash, window_pos, window_owner,
                      phrase_tokens, n_owners, attributed, covered):
    """Attribute every covered token to the smallest owner rank among the windows covering it,
    unless attributed[p] says it already was; covered is mark_windows's, whose WINDOW_START
    marks are cleared here (so only these documents' tokens are looked up again, at the window
    starts). Returns tokens_by_owner int64[n_owners]."""
    tokens_by_owner = np.zeros(n_owners, dtype=np.int64)
    if len(window_pos) == 0:
        return tokens_by_owner
    # monotone deque of (window start, owner) with increasing owners: ring buffer of k + 1 slots
    dq_start = np.empty(k + 1, dtype=np.int64)
    dq_owner = np.empty(k + 1, dtype=np.int64)
    cap = k + 1
    for d in range(len(doc_offsets) - 1):
        a = doc_offsets[d]
        b = doc_offsets[d + 1]
        if b - a < k:
            continue
        head = 0
        size = 0
        for p in range(a, b):
            if covered[p] & WINDOW_START:  # a stored window starts here: hash it again
                covered[p] = 1
                h = window_hash(tokens, p, k)
                w = _lookup(slots, slot_hash, window_pos, phrase_tokens, h, tokens, p, k)
                owner = window_owner[w]
                while size > 0 and dq_owner[(head + size - 1) % cap] >= owner:
                    size -= 1
                tail = (head + size) % cap
                dq_start[tail] = p
                dq_owner[tail] = owner
                size += 1
            while size > 0 and dq_start[head] <= p - k:
                head = (head + 1) % cap
                size -= 1
            if size > 0 and not attributed[p]:
                tokens_by_owner[dq_owner[head]] += 1
    return tokens_by_owner


@njit(cache=True)
def cover_by_windows(tokens, doc_offsets, k, slots, slot_hash, window_pos, window_owner,
                     window_filter, phrase_tokens, n_owners, attributed):
    """mark_windows, then attribute_windows, over all documents at once.

    Returns (covered uint8[n_tokens], tokens_by_owner int64[n_owners]).
    """
    covered = np.zeros(len(tokens), dtype=np.uint8)
    mark_windows(tokens, doc_offsets, k, slots, slot_hash, window_pos, window_filter,
                 phrase_tokens, covered)
    tokens_by_owner = attribute_windows(tokens, doc_offsets, k, slots, slot_hash, window_pos,
                                        window_owner, phrase_tokens, n_owners, attributed,
                                        covered)
    return covered, tokens_by_owner


@njit(cache=True)
def build_prefix_table(phrase_tokens, phrase_offsets, k):
    """Index phrases (each of length >= k) by their first k tokens.

    Returns (slots, slot_hash, prefix_pos, phrase_prefix): phrase i starts with prefix
    phrase_prefix[i]; prefix p is phrase_tokens[prefix_pos[p]:prefix_pos[p]+k].
    """
    n_phrases = len(phrase_offsets) - 1
    cap = _table_capacity(n_phrases)
    slots = np.full(cap, _EMPTY, dtype=np.int64)
    slot_hash = np.zeros(cap, dtype=np.uint64)
    prefix_pos = np.empty(n_phrases, dtype=np.int64)
    phrase_prefix = np.empty(n_phrases, dtype=np.int64)
    n_unique = np.int64(0)
    for i in range(n_phrases):
        a = phrase_offsets[i]
        h = window_hash(phrase_tokens, a, k)
        g = _insert(slots, slot_hash, prefix_pos, phrase_tokens, h, a, k, n_unique)
        if g == n_unique:
            n_unique += 1
        phrase_prefix[i] = g
    return slots, slot_hash, prefix_pos[:n_unique].copy(), phrase_prefix


@njit(cache=True)
def _scan_prefixes(tokens, doc_offsets, k, slots, slot_hash, prefix_pos, group_offsets,
                   group_phrases, phrase_tokens, phrase_offsets, window_starts, out_phrase,
                   out_doc, out_start, fill):
    n = 0
    top = window_top(k)
    only_window_starts = len(window_starts) > 0
    for d in range(len(doc_offsets) - 1):
        a = doc_offsets[d]
        b = doc_offsets[d + 1]
        h = np.uint64(0)
        for p in range(a, b - k + 1):
            if only_window_starts:  # few positions: hash each one, roll none
                if not window_starts[p] & WINDOW_START:
                    continue
                h = window_hash(tokens, p, k)
            elif p == a:
                h = window_hash(tokens, a, k)
            else:
                h = window_roll(h, tokens[p - 1], tokens[p + k - 1], top)
            g = _lookup(slots, slot_hash, prefix_pos, phrase_tokens, h, tokens, p, k)
            if g < 0:
                continue
            for j in range(group_offsets[g], group_offsets[g + 1]):
                i = group_phrases[j]
                length = phrase_offsets[i + 1] - phrase_offsets[i]
                if p + length <= b and _same(phrase_tokens, phrase_offsets[i], tokens, p, length):
                    if fill:
                        out_phrase[n] = i
                        out_doc[n] = d
                        out_start[n] = p
                    n += 1
    return n


@njit(cache=True, nogil=True)
def find_occurrences(tokens, doc_offsets, k, slots, slot_hash, prefix_pos, group_offsets,
                     group_phrases, phrase_tokens, phrase_offsets, window_starts):
    """Every (phrase, document, global start) where a phrase occurs in full, in corpus order
    (documents numbered from 0 in `doc_offsets`, which may be a slice of a corpus's offsets).
    window_starts: empty, or mark_windows's mask for windows of length <= every phrase's: a
    phrase can then only start where a window does, and only there are phrases looked up.
    Releases the GIL: ranges of documents can be scanned on threads."""
    empty = np.empty(0, dtype=np.int64)
    n = _scan_prefixes(tokens, doc_offsets, k, slots, slot_hash, prefix_pos, group_offsets,
                       group_phrases, phrase_tokens, phrase_offsets, window_starts, empty, empty,
                       empty, np.bool_(False))  # not literals: one signature for both calls
    out_phrase = np.empty(n, dtype=np.int64)
    out_doc = np.empty(n, dtype=np.int64)
    out_start = np.empty(n, dtype=np.int64)
    _scan_prefixes(tokens, doc_offsets, k, slots, slot_hash, prefix_pos, group_offsets,
                   group_phrases, phrase_tokens, phrase_offsets, window_starts, out_phrase,
                   out_doc, out_start, np.bool_(True))
    return out_phrase, out_doc, out_start


@njit(cache=True)
def _heap_less(rank, end, a, b):
    return rank[a] < rank[b] or (rank[a] == rank[b] and end[a] < end[b])


@njit(cache=True)
def cover_by_occurrences(n_tokens, occ_start, occ_length, occ_rank, n_owners):
    """Mark tokens inside any occurrence (intervals sorted by start); attribute each covered token
    to the smallest rank among the occurrences covering it (sweep with a lazy min-heap).

    Returns (covered uint8[n_tokens], tokens_by_owner int64[n_owners]).
    """
    covered = np.zeros(n_tokens, dtype=np.uint8)
    tokens_by_owner = np.zeros(n_owners, dtype=np.int64)
    n = len(occ_start)
    heap = np.empty(n, dtype=np.int64)  # occurrence indices, heap-ordered by (rank, end)
    end = occ_start + occ_length
    size = 0
    i = 0
    p = 0
    while i < n or size > 0:
        if size == 0 and occ_start[i] > p:
            p = occ_start[i]
        while i < n and occ_start[i] <= p:
            # push i: sift up
            c = size
            heap[c] = i
            size += 1
            while c > 0:
                parent = (c - 1) // 2
                if _heap_less(occ_rank, end, heap[c], heap[parent]):
                    heap[c], heap[parent] = heap[parent], heap[c]
                    c = parent
                else:
                    break
            i += 1
        while size > 0 and end[heap[0]] <= p:
            # pop the expired top: move the last entry up and sift down
            size -= 1
            heap[0] = heap[size]
            c = 0
            while True:
                left = 2 * c + 1
                if left >= size:
                    break
                best = left
                if left + 1 < size and _heap_less(occ_rank, end, heap[left + 1], heap[left]):
                    best = left + 1
                if _heap_less(occ_rank, end, heap[best], heap[c]):
                    heap[c], heap[best] = heap[best], heap[c]
                    c = best
                else:
                    break
        if size == 0:
            continue
        covered[p] = 1
        tokens_by_owner[occ_rank[heap[0]]] += 1
        p += 1
    return covered, tokens_by_owner


@njit(cache=True)
def mark_intervals(n_tokens, occ_start, occ_length):
    """uint8 mask of the union of [start, start + length) intervals sorted by start."""
    mask = np.zeros(n_tokens, dtype=np.uint8)
    reached = 0
    for j in range(len(occ_start)):
        s = occ_start[j]
        e = s + occ_length[j]
        for p in range(max(s, reached), e):
            mask[p] = 1
        if e > reached:
            reached = e
    return mask


@njit(cache=True)
def count_per_document(mask, doc_offsets):
    """Number of set mask positions in each document."""
    n_docs = len(doc_offsets) - 1
    counts = np.zeros(n_docs, dtype=np.int64)
    for d in range(n_docs):
        c = 0
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            c += mask[p]
        counts[d] = c
    return counts


@njit(cache=True)
def covered_runs(mask, a, b):
    """Maximal runs [start, end) of set positions in mask[a:b], as positions relative to a."""
    n = 0
    p = a
    while p < b:
        if mask[p]:
            n += 1
            while p < b and mask[p]:
                p += 1
        else:
            p += 1
    runs = np.empty((n, 2), dtype=np.int64)
    j = 0
    p = a
    while p < b:
        if mask[p]:
            runs[j, 0] = p - a
            while p < b and mask[p]:
                p += 1
            runs[j, 1] = p - a
            j += 1
        else:
            p += 1
    return runs
