"""Stage 3 of the distributed miner: the occurrences of live seeds, with their right windows, summed
into mergeable group summaries.

Rounds. Round r decides the phrases of depth (length) in [lo_r, hi_r) with lo_0 = min_length,
hi_r = min_length + cap * 2^r and lo_r = hi_{r-1}. Round 0 ships every occurrence of a live
min_length-gram g (fingerprint in the live filter); its group key is g's fingerprint. A frequent
node of depth hi_r may continue beyond its windows: it is *deferred*, and round r + 1 ships every
position whose first hi_r tokens hash to a deferred key, with windows of hi_{r+1} tokens, grouped
by that hash. Every position with the same content is shipped alike (the tests depend on the
tokens only), so a group always holds every occurrence of the phrases it decides.

Windows end where no frequent phrase can reach: at the end of the chain of consecutive positions
whose min_length-gram is in the frequent-gram filter (a frequent phrase has only frequent grams),
or at hi_r. A window shorter than hi_r has thus seen the end of every frequent extension.

Window pools. A summary holds each distinct window as a view (start, length) into a pool of
tokens that holds the union of the windows' spans once, in text order (compact_pool): the
windows of neighbouring positions of a passage overlap in all but a token, so copying each one
would cost occurrences x window length (a 2,000-token passage that 3 documents share, deferred
round after round, is millions of copied tokens); a pool costs at most the tokens it was cut
from. Pools merge by concatenation (and compact again to the windows kept).

Summaries. Documents never cross partitions, so everything a group needs is a sum over documents:
per distinct window (content): documents and occurrences; per pair of windows a < b of the same
class (equal first lo_r tokens) that are consecutive among one document's windows: the number of
such documents (the distinct-document correction of Hui's LCA trick: df of a range of sorted
windows = documents of its windows - consecutive pairs inside it); the same per real left
neighbour x for the left-maximality test. Summaries of disjoint documents merge by adding, so
partitions, salts and reducers combine them in any grouping with the same result.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, fields

import numpy as np
from numba import njit

from corpus_miner.phrases.distributed.counts import (
    NO_LEFT,
    base_power,
    prefix_hashes,
    run_ends,
    window_hash,
)
from corpus_miner.phrases.distributed.window_pool import compact_pool
from corpus_miner.phrases.distributed.window_sort import (
    adjacent_lcp,
    ranks_from_lcp,
    sort_windows,
)


@dataclass(frozen=True)
class Occurrences:
    """Shipped occurrences of one batch: group key, document, left neighbour, window."""

    gkey: np.ndarray
    doc: np.ndarray
    left: np.ndarray
    start: np.ndarray
    length: np.ndarray


@njit(cache=True)
def gram_positions(tokens, doc_offsets, length, mask):
    """(fingerprint, position, document) of every position with `length` non-BREAK tokens ahead."""
    h = prefix_hashes(tokens)
    power = base_power(length)
    end = run_ends(tokens, doc_offsets)
    n = len(tokens)
    fp = np.empty(n, dtype=np.uint64)
    pos = np.empty(n, dtype=np.int64)
    doc = np.empty(n, dtype=np.int64)
    m = 0
    for d in range(len(doc_offsets) - 1):
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            if end[p] - p >= length:
                fp[m] = window_hash(h, p, length, power, mask)
                pos[m] = p
                doc[m] = d
                m += 1
    return fp[:m].copy(), pos[:m].copy(), doc[:m].copy()


@njit(cache=True)
def chain_reach(n_tokens, positions, gram_ok, length):
    """reach[p]: how far the chain of consecutive positions p, p + 1, ... whose gram (`length`
    tokens) passes gram_ok extends, i.e. last such position + length - p; 0 where the gram at p
    fails. `positions` ascending, gram_ok aligned with it."""
    reach = np.zeros(n_tokens + 1, dtype=np.int64)
    for i in range(len(positions) - 1, -1, -1):
        if gram_ok[i]:
            p = positions[i]
            reach[p] = reach[p + 1] + 1 if reach[p + 1] > 0 else length
    return reach[:n_tokens]


@njit(cache=True)
def compact_covered(tokens, doc_offsets, reach):
    """Keep only the tokens covered by some [p, p + reach[p]), per document, with one BREAK
    (reach 0) between covered regions that were not adjacent. Offsets inside a region, hence
    windows and left neighbours, are unchanged."""
    n = len(tokens)
    out = np.empty(n + n // 2 + 1, dtype=np.uint32)
    out_reach = np.zeros(n + n // 2 + 1, dtype=np.int64)
    offsets = np.zeros(len(doc_offsets), dtype=np.int64)
    m = 0
    for d in range(len(doc_offsets) - 1):
        a = doc_offsets[d]
        b = doc_offsets[d + 1]
        doc_start = m
        covered_until = a
        last = -2  # last position copied
        for p in range(a, b):
            if reach[p] > 0:
                covered_until = max(covered_until, p + reach[p])
            if p < covered_until:
                if last != p - 1 and m > doc_start:
                    out[m] = 0xFFFFFFFF
                    m += 1
                out[m] = tokens[p]
                out_reach[m] = reach[p]
                m += 1
                last = p
        offsets[d + 1] = m
    return out[:m].copy(), out_reach[:m].copy(), offsets


@dataclass(frozen=True)
class ReachBatch:
    """Compacted tokens with reach[p] > 0 where the frequent-gram chain starting at p ends at
    p + reach[p] (windows.chain_reach); every other position has reach 0."""

    tokens: np.ndarray
    doc_offsets: np.ndarray
    reach: np.ndarray


def mark_reach(tokens: np.ndarray, doc_offsets: np.ndarray, min_length: int, frequent_gram,
               mask: np.uint64) -> ReachBatch:
    """The batch reduced to what the rounds read: the chains of frequent grams (membership test
    `frequent_gram` over fingerprints) and the tokens they cover."""
    fp, positions, _ = gram_positions(tokens, doc_offsets, min_length, mask)
    gram_ok = frequent_gram(fp) if len(fp) else np.zeros(0, bool)
    reach = chain_reach(len(tokens), positions, gram_ok, min_length)
    kept, kept_reach, offsets = compact_covered(tokens, doc_offsets, reach)
    return ReachBatch(kept, offsets, kept_reach)


@njit(cache=True)
def _candidates(doc_offsets, reach, least):
    """(position, document) of every position with reach >= least."""
    n = len(reach)
    pos = np.empty(n, dtype=np.int64)
    doc = np.empty(n, dtype=np.int64)
    m = 0
    for d in range(len(doc_offsets) - 1):
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            if reach[p] >= least:
                pos[m] = p
                doc[m] = d
                m += 1
    return pos[:m].copy(), doc[:m].copy()


@njit(cache=True)
def _windows_of(tokens, doc_offsets, reach, positions, docs, hi):
    n = len(positions)
    left = np.empty(n, dtype=np.uint32)
    length = np.empty(n, dtype=np.int64)
    for j in range(n):
        p = positions[j]
        # a left neighbour x matters only if x + (gram at p minus its last token), the gram at
        # p - 1, can be frequent: otherwise no left extension of a phrase at p is frequent
        if p > doc_offsets[docs[j]] and reach[p - 1] > 0:
            left[j] = tokens[p - 1]
        else:
            left[j] = 0xFFFFFFFF
        length[j] = min(reach[p], hi)
    return left, length


def scan_occurrences(batch: ReachBatch, min_length: int, lo: int, hi: int, mask: np.uint64, *,
                     live_gram=None, deferred=None) -> Occurrences:
    """Occurrences to ship from one batch in the round deciding depths [lo, hi).

    Round 0 (live_gram given): positions whose gram is live (membership test over fingerprints),
    keyed by its fingerprint. Later rounds (deferred given): positions whose first `lo` tokens
    hash (window_hash, `mask`) to a deferred key (membership test), keyed by that hash.
    """
    least = min_length if deferred is None else lo
    positions, docs = _candidates(batch.doc_offsets, batch.reach, least)
    keys = window_hashes(batch.tokens, positions, least, mask)
    chosen = (live_gram if deferred is None else deferred)(keys) if len(keys) else \
        np.zeros(0, bool)
    positions, docs, keys = positions[chosen], docs[chosen], keys[chosen]
    left, length = _windows_of(batch.tokens, batch.doc_offsets, batch.reach, positions, docs, hi)
    return Occurrences(keys, docs, left, positions, length)


@njit(cache=True)
def _window_hashes(h, starts, length, mask):
    power = base_power(length)
    out = np.empty(len(starts), dtype=np.uint64)
    for i in range(len(starts)):
        out[i] = window_hash(h, starts[i], length, power, mask)
    return out


def window_hashes(tokens: np.ndarray, starts: np.ndarray, length: int,
                  mask: np.uint64) -> np.ndarray:
    """window_hash of tokens[s:s + length] for every s in starts."""
    return _window_hashes(prefix_hashes(tokens), starts, length, mask)


# ---------------------------------------------------------------- summaries

@dataclass(frozen=True)
class Summary:
    """Sums over a set of documents for the groups of one round; windows sorted by content.

    tokens, starts, lengths: the distinct windows as views into a token pool (window w is
        tokens[starts[w]:starts[w] + lengths[w]]; see compact_pool)
    gkey: group key of each window; ndocs / nocc: documents / occurrences having it
    pair_a, pair_b, pair_n: consecutive windows a < b (same class) in pair_n documents
    left_x, left_w, left_n, left_o: left_n documents have an occurrence of window left_w after x,
        left_o occurrences in all
    lpair_x, lpair_a, lpair_b, lpair_n: pairs of the windows preceded by x, per document
    """

    tokens: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    gkey: np.ndarray
    ndocs: np.ndarray
    nocc: np.ndarray
    pair_a: np.ndarray
    pair_b: np.ndarray
    pair_n: np.ndarray
    left_x: np.ndarray
    left_w: np.ndarray
    left_n: np.ndarray
    left_o: np.ndarray
    lpair_x: np.ndarray
    lpair_a: np.ndarray
    lpair_b: np.ndarray
    lpair_n: np.ndarray

    @property
    def n_windows(self) -> int:
        return len(self.gkey)

    @classmethod
    def empty(cls) -> Summary:
        i64 = np.zeros(0, np.int64)
        return cls(np.zeros(0, np.uint32), i64, i64, np.zeros(0, np.uint64), i64, i64, i64, i64,
                   i64, np.zeros(0, np.uint32), i64, i64, i64, np.zeros(0, np.uint32), i64, i64,
                   i64)

    def to_bytes(self) -> bytes:
        return pack_arrays({f.name: getattr(self, f.name) for f in fields(self)})

    @classmethod
    def from_bytes(cls, raw: bytes) -> Summary:
        return cls(**unpack_arrays(raw))


def pack_arrays(arrays: dict[str, np.ndarray]) -> bytes:
    """Named 1-D arrays as one blob: a count, then per array its name, dtype and length, then
    the raw data (8-byte aligned)."""
    header = [struct.pack("<I", len(arrays))]
    body = []
    for name, array in arrays.items():
        array = np.ascontiguousarray(array)
        encoded = name.encode()
        dtype = array.dtype.str.encode()
        header.append(struct.pack("<B", len(encoded)) + encoded + struct.pack("<B", len(dtype))
                      + dtype + struct.pack("<Q", len(array)))
        raw = array.tobytes()
        body.append(raw + b"\0" * (-len(raw) % 8))
    head = b"".join(header)
    return struct.pack("<I", len(head)) + head + b"\0" * (-(len(head) + 4) % 8) + b"".join(body)


def unpack_arrays(raw: bytes) -> dict[str, np.ndarray]:
    """The arrays of a pack_arrays blob (read-only views into it)."""
    (head_len,) = struct.unpack_from("<I", raw, 0)
    at = 4
    (count,) = struct.unpack_from("<I", raw, at)
    at += 4
    specs = []
    for _ in range(count):
        name_len = raw[at]
        name = raw[at + 1:at + 1 + name_len].decode()
        at += 1 + name_len
        dtype_len = raw[at]
        dtype = np.dtype(raw[at + 1:at + 1 + dtype_len].decode())
        at += 1 + dtype_len
        (length,) = struct.unpack_from("<Q", raw, at)
        at += 8
        specs.append((name, dtype, length))
    data_at = 4 + head_len
    data_at += -data_at % 8
    out = {}
    for name, dtype, length in specs:
        nbytes = length * dtype.itemsize
        out[name] = np.frombuffer(raw, dtype=dtype, count=length, offset=data_at)
        data_at += nbytes + (-nbytes % 8)
    return out


def _group_sum(keys: list[np.ndarray], values: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """Rows with equal keys (all arrays equal) summed (values: one value per row, or a row of
    values per row); keys sorted lexicographically."""
    if len(values) == 0:
        return [k[:0] for k in keys], values.astype(np.int64)
    order = np.lexsort(keys[::-1])
    keys = [k[order] for k in keys]
    change = np.zeros(len(values), dtype=bool)
    change[0] = True
    for k in keys:
        change[1:] |= k[1:] != k[:-1]
    starts = np.flatnonzero(change)
    return [k[starts] for k in keys], np.add.reduceat(values[order].astype(np.int64), starts)


def _consecutive_pairs(group: list[np.ndarray], window: np.ndarray, window_class: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows sorted by (group..., window) and distinct: (row index of a, window a, window b) for
    consecutive rows with equal group keys and the same class."""
    if len(window) < 2:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    same = window_class[window[1:]] == window_class[window[:-1]]
    for g in group:
        same &= g[1:] == g[:-1]
    at = np.flatnonzero(same)
    return at, window[at], window[at + 1]


def _distinct_windows(tokens: np.ndarray, starts: np.ndarray, lengths: np.ndarray):
    """Windows tokens[starts:starts + lengths] sorted by content: (lcp of neighbours in sorted
    order, rank of each window among the distinct contents, which sorted positions start a new
    content, one window per distinct content in sorted order)."""
    order = sort_windows(tokens, starts, lengths)
    lcp = adjacent_lcp(tokens, starts, lengths, order)
    rank = ranks_from_lcp(lengths, order, lcp)
    ranks_sorted = rank[order]
    first = np.concatenate(([True], ranks_sorted[1:] != ranks_sorted[:-1]))
    return lcp, rank, first, order[first]


def build_summary(tokens: np.ndarray, occ: Occurrences, lo: int) -> Summary:
    """The summary of one batch's occurrences (its documents are distinct from other batches')."""
    if len(occ.doc) == 0:
        return Summary.empty()
    starts = np.ascontiguousarray(occ.start, dtype=np.int64)
    lengths = np.ascontiguousarray(occ.length, dtype=np.int64)
    lcp, rank, first, reps = _distinct_windows(tokens, starts, lengths)
    window_class = np.cumsum(lcp[first] < lo) - 1
    return _summary_from(tokens, reps, starts, lengths, occ.gkey[reps], rank, occ.doc, occ.left,
                         window_class)


def _pooled(tokens, starts, lengths) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pool, starts in it, lengths) of the windows tokens[starts:starts + lengths]."""
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    pool, pool_starts = compact_pool(tokens, np.ascontiguousarray(starts, dtype=np.int64), lengths)
    return pool, pool_starts, lengths


def _summary_from(tokens, reps, starts, lengths, gkey, rank, doc, left, window_class) -> Summary:
    n_windows = len(reps)
    pool, pool_starts, win_len = _pooled(tokens, starts[reps], lengths[reps])
    nocc = np.bincount(rank, minlength=n_windows).astype(np.int64)
    (win, d), _ = _group_sum([rank, doc], np.ones(len(rank), np.int64))  # distinct (window, doc)
    ndocs = np.bincount(win, minlength=n_windows).astype(np.int64)
    by_doc = np.lexsort((win, d))
    _, a, b = _consecutive_pairs([d[by_doc]], win[by_doc], window_class)
    (pair_a, pair_b), pair_n = _group_sum([a, b], np.ones(len(a), np.int64))
    real = left != NO_LEFT
    (x, w, dd), occ_xwd = _group_sum([left[real], rank[real], doc[real]],
                                     np.ones(int(real.sum()), np.int64))
    (left_x, left_w), left_counts = _group_sum([x, w], np.stack([np.ones(len(x), np.int64),
                                                                  occ_xwd], axis=1))
    left_n, left_o = np.ascontiguousarray(left_counts.T)
    by_doc = np.lexsort((w, x, dd))
    at, a, b = _consecutive_pairs([dd[by_doc], x[by_doc]], w[by_doc], window_class)
    (lpair_x, lpair_a, lpair_b), lpair_n = _group_sum([x[by_doc][at], a, b],
                                                      np.ones(len(a), np.int64))
    return Summary(pool, pool_starts, win_len, np.asarray(gkey, np.uint64), ndocs, nocc, pair_a,
                   pair_b, pair_n, left_x.astype(np.uint32), left_w, left_n, left_o,
                   lpair_x.astype(np.uint32), lpair_a, lpair_b, lpair_n)


def merge_summaries(parts: list[Summary]) -> Summary:
    """One summary of several summaries over disjoint sets of documents."""
    parts = [p for p in parts if p.n_windows]
    if not parts:
        return Summary.empty()
    if len(parts) == 1:
        return parts[0]
    tokens = np.concatenate([p.tokens for p in parts])
    base = np.cumsum([0] + [len(p.tokens) for p in parts[:-1]])
    starts = np.concatenate([p.starts + b for p, b in zip(parts, base, strict=True)])
    lengths = np.concatenate([p.lengths for p in parts])
    _, rank, _, reps = _distinct_windows(tokens, starts, lengths)
    n_windows = len(reps)
    pool, pool_starts, win_len = _pooled(tokens, starts[reps], lengths[reps])
    shift = np.cumsum([0] + [p.n_windows for p in parts[:-1]])

    def cat(name: str, remap: bool = False) -> np.ndarray:
        arrays = [getattr(p, name) + (s if remap else 0)
                  for p, s in zip(parts, shift, strict=True)]
        joined = np.concatenate(arrays)
        return rank[joined] if remap else joined

    gkey = np.concatenate([p.gkey for p in parts])[reps]
    ndocs = np.bincount(rank, weights=cat("ndocs"), minlength=n_windows).astype(np.int64)
    nocc = np.bincount(rank, weights=cat("nocc"), minlength=n_windows).astype(np.int64)
    (pair_a, pair_b), pair_n = _group_sum([cat("pair_a", True), cat("pair_b", True)],
                                          cat("pair_n"))
    (left_x, left_w), left_counts = _group_sum([cat("left_x"), cat("left_w", True)],
                                               np.stack([cat("left_n"), cat("left_o")], axis=1))
    left_n, left_o = np.ascontiguousarray(left_counts.T)
    (lpair_x, lpair_a, lpair_b), lpair_n = _group_sum(
        [cat("lpair_x"), cat("lpair_a", True), cat("lpair_b", True)], cat("lpair_n"))
    return Summary(pool, pool_starts, win_len, gkey, ndocs, nocc, pair_a, pair_b, pair_n,
                   left_x.astype(np.uint32), left_w, left_n, left_o, lpair_x.astype(np.uint32),
                   lpair_a,
                   lpair_b, lpair_n)


def subset(summary: Summary, keep: np.ndarray) -> Summary:
    """The windows where `keep` (bool per window) holds, with their pairs and left records (a
    pair's windows share a class, hence a group key: filter by group key only)."""
    if keep.all():
        return summary
    new_index = np.cumsum(keep) - 1
    pool, pool_starts, lengths = _pooled(summary.tokens, summary.starts[keep],
                                         summary.lengths[keep])
    pairs = keep[summary.pair_a]
    lefts = keep[summary.left_w]
    lpairs = keep[summary.lpair_a]
    return Summary(pool, pool_starts, lengths, summary.gkey[keep], summary.ndocs[keep],
                   summary.nocc[keep], new_index[summary.pair_a[pairs]],
                   new_index[summary.pair_b[pairs]], summary.pair_n[pairs],
                   summary.left_x[lefts], new_index[summary.left_w[lefts]],
                   summary.left_n[lefts], summary.left_o[lefts], summary.lpair_x[lpairs],
                   new_index[summary.lpair_a[lpairs]], new_index[summary.lpair_b[lpairs]],
                   summary.lpair_n[lpairs])
