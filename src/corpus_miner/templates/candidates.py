"""Candidate patterns; none is trusted: every one is verified by matching.bind.

1. Typed seeds: the maximal frequent phrases of the masked stream (BloomSpan at sigma and
   typed_min_length) that hold a typed token, and their trims: up to MAX_CONTEXT literal tokens
   kept on each side of the typed run, so that "patel on <month> <num> <num>" (one frequent
   author) also gives the general "on <month> <num> <num>" that maximality hides.
2. Extension across a free slot: for a verified pattern, the token found 1 to max_gap tokens
   after its occurrences (the first such position: leftmost-shortest), or before them, becomes a
   new anchor when it is in >= sigma documents, in >= min_confidence of the occurrences, and
   min_lift times more often than its corpus frequency predicts (1 - (1 - p)^max_gap); the new
   anchor then grows token by token while one next token follows in >= max_top_share of them.
3. Merges: seeds that differ only in a run of literal tokens give the two-anchor pattern with a
   free slot there (slot_merges: each site's company after "c <num>").
4. Line-end slots: a verified pattern whose last anchor ends 1 to max_gap tokens before the end
   of its line in at least min_confidence of its occurrences (and >= sigma documents) also gets
   the variant with a line-end slot ("updated on <month> <num> <num> by <*>$": the author).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from corpus_miner.templates.matching import TemplateOccurrences
from corpus_miner.templates.params import TemplateParams
from corpus_miner.templates.pattern import Pattern

MAX_CONTEXT = 4  # literal tokens kept beside a typed run in the trims
MAX_GROWTH = 12  # tokens an anchor found across a slot grows by
EXTENSIONS_PER_SIDE = 1  # new anchors tried per pattern and side
MERGE_CONTEXT = 2  # tokens of each anchor of a merge (fewer at a seed's ends)


def typed_seeds(masked: np.ndarray, doc_offsets: np.ndarray, vocab, params: TemplateParams,
                progress=None) -> tuple[list[Pattern], dict]:
    """Patterns of one anchor from the masked stream's frequent phrases (module docstring)."""
    from corpus_miner.phrases.miner import BloomSpan

    corpus = SimpleNamespace(tokens=masked, doc_offsets=doc_offsets, vocab=vocab)
    miner = BloomSpan(sigma=params.sigma, min_length=params.typed_min_length,
                      progress=progress).fit(corpus)
    table, n_vocab = miner.phrases_, vocab.n_vocab
    seen: dict[tuple[int, ...], None] = {}
    for i in range(len(table)):
        ids = table.phrase_ids(i).tolist()
        typed = [k for k, t in enumerate(ids) if t >= n_vocab]
        if not typed:
            continue
        a, b = typed[0], typed[-1]
        seen.setdefault(tuple(ids), None)
        for lo in range(max(0, a - MAX_CONTEXT), a + 1):
            for hi in range(b + 1, min(len(ids), b + 1 + MAX_CONTEXT) + 1):
                if hi - lo >= params.typed_min_length:
                    seen.setdefault(tuple(ids[lo:hi]), None)
    stats = {"masked_phrases": len(table),
             "masked_seconds": miner.stats_.get("seconds_total", 0.0)}
    return [Pattern((piece,), params.max_gap) for piece in sorted(seen)], stats


def slot_merges(seeds: list[Pattern], n_vocab: int, max_gap: int) -> list[Pattern]:
    """Two-anchor patterns from seeds that differ only in a run of literal tokens after a typed
    run: seeds holding "c <num> rapid pixel ltd all rights reserved" and "c <num> red river
    group all rights reserved" (each site's company) give "c <num> <*> all rights" and
    "c <num> <*> rights reserved".
    The anchors are local: the MERGE_CONTEXT tokens ending with the typed token, and the
    MERGE_CONTEXT tokens after the middle (1 to max_gap literal tokens). A pair is kept when at
    least two seeds give it different middles; none is trusted (the verifying pass counts)."""
    middles: dict[tuple, set] = {}
    for seed in seeds:
        ids = seed.pieces[0]
        for a in range(1, len(ids) - 1):
            if ids[a - 1] < n_vocab or ids[a] >= n_vocab:
                continue  # the middle starts right after a typed token
            for g in range(1, min(max_gap, len(ids) - 1 - a) + 1):
                if ids[a + g - 1] >= n_vocab:
                    break
                pair = (ids[max(0, a - MERGE_CONTEXT):a], ids[a + g:a + g + MERGE_CONTEXT])
                found = middles.setdefault(pair, set())
                if len(found) < 2:
                    found.add(ids[a:a + g])
    return [Pattern(pair, max_gap) for pair, found in sorted(middles.items()) if len(found) >= 2]


def _distinct_pairs(key: np.ndarray, other: np.ndarray) -> np.ndarray:
    """key of each distinct (key, other) pair, ascending."""
    order = np.lexsort((other, key))
    k, o = key[order], other[order]
    new = np.ones(len(k), dtype=bool)
    new[1:] = (k[1:] != k[:-1]) | (o[1:] != o[:-1])
    return k[new]


def prune_trims(patterns: list[Pattern], n_occ: np.ndarray) -> np.ndarray:
    """bool per seed: kept unless a seed one token longer that contains it has as many
    occurrences (the shorter one generalises nothing then)."""
    keep = np.ones(len(patterns), dtype=bool)
    by_piece = {p.pieces[0]: i for i, p in enumerate(patterns)}
    for j, p in enumerate(patterns):
        piece = p.pieces[0]
        for shorter in (piece[:-1], piece[1:]):
            i = by_piece.get(shorter)
            if i is not None and n_occ[i] <= n_occ[j]:
                keep[i] = False
    return keep


def line_end_slots(patterns: list[Pattern], occ: TemplateOccurrences, doc_offsets: np.ndarray,
                   line_starts: np.ndarray, params: TemplateParams,
                   allowed: np.ndarray) -> list[Pattern]:
    """The line-end variants worth verifying (module docstring, 3)."""
    from corpus_miner.templates.matching import line_end_after

    stop = line_end_after(occ.end, doc_offsets[occ.doc + 1], line_starts)
    fits = (stop > occ.end) & (stop - occ.end <= params.max_gap)
    n = np.bincount(occ.template, minlength=len(patterns))
    hits = np.bincount(occ.template[fits], minlength=len(patterns))
    pairs = np.unique(occ.template[fits] * np.int64(len(doc_offsets)) + occ.doc[fits])
    docs = np.bincount(pairs // len(doc_offsets), minlength=len(patterns))
    good = allowed & (docs >= params.sigma) & (hits >= params.min_confidence * np.maximum(n, 1))
    return [Pattern(patterns[t].pieces, params.max_gap, True) for t in np.flatnonzero(good)
            if not patterns[t].line_end]


def _first_in_row(window: np.ndarray) -> np.ndarray:
    """True where a row's value appears for the first time in that row."""
    first = np.ones(window.shape, dtype=bool)
    for j in range(1, window.shape[1]):
        first[:, j] = np.all(window[:, :j] != window[:, j:j + 1], axis=1)
    return first


def extensions(patterns: list[Pattern], occ: TemplateOccurrences, masked: np.ndarray,
               doc_offsets: np.ndarray, token_share: np.ndarray, params: TemplateParams,
               allowed: np.ndarray) -> list[Pattern]:
    """New patterns, each a pattern of `patterns` (where `allowed`) with one more anchor across a
    free slot on its right or left (module docstring)."""
    g, n_tokens = params.max_gap, len(masked)
    base = 1.0 - (1.0 - token_share) ** g
    out: dict[Pattern, None] = {}
    rows_all = np.flatnonzero(allowed[occ.template])
    if len(rows_all) == 0:
        return []
    doc = occ.doc[rows_all]
    lo_doc, hi_doc = doc_offsets[doc], doc_offsets[doc + 1]
    for side in ("right", "left"):
        steps = np.arange(1, g + 1)
        if side == "right":
            pos = occ.end[rows_all][:, None] + steps[None, :]
            ok = pos < hi_doc[:, None]
        else:
            pos = occ.start[rows_all][:, None] - 1 - steps[None, :]
            ok = pos >= lo_doc[:, None]
        window = np.where(ok, masked[np.clip(pos, 0, n_tokens - 1)], np.uint32(0xFFFFFFFF))
        first = _first_in_row(window) & ok
        r, j = np.nonzero(first)
        t = occ.template[rows_all][r]
        tok = window[r, j].astype(np.int64)
        d = doc[r]
        key = t * (1 << 32) + tok
        by_key = np.argsort(key, kind="stable")
        sorted_key = key[by_key]
        pairs, pair_rows = np.unique(key, return_counts=True)
        docs_key = _distinct_pairs(key, d)
        pair_docs = np.searchsorted(docs_key, pairs, side="right") - np.searchsorted(
            docs_key, pairs, side="left")
        n_occ = np.bincount(occ.template, minlength=len(patterns))
        pt, ptok = pairs >> 32, pairs & 0xFFFFFFFF
        # ties in df go to the anchor nearest the pattern (then grown into "written by")
        distance = np.bincount(np.searchsorted(pairs, key), weights=j + 1.0,
                               minlength=len(pairs)) / pair_rows
        rate = pair_rows / n_occ[pt]
        good = ((pair_docs >= params.sigma) & (rate >= params.min_confidence)
                & (rate >= params.min_lift * base[ptok]))
        for p in np.unique(pt[good]):
            mine = np.flatnonzero(good & (pt == p))
            best = mine[np.lexsort((ptok[mine], distance[mine], -pair_docs[mine]))][
                :EXTENSIONS_PER_SIDE]
            for b in best:
                lo_b, hi_b = np.searchsorted(sorted_key, [pairs[b], pairs[b] + 1])
                sel = by_key[lo_b:hi_b]
                rows = rows_all[r[sel]]
                limit = occ.end[rows] + 1 if side == "right" else occ.start[rows] - 2
                anchor = _grow(masked, pos[r[sel], j[sel]], hi_doc[r[sel]], lo_doc[r[sel]], side,
                               int(ptok[b]), params.max_top_share, limit)
                pattern = patterns[int(p)]
                pieces = ((*pattern.pieces, anchor) if side == "right"
                          else (anchor, *pattern.pieces))
                out.setdefault(Pattern(pieces, g), None)
    return list(out)


def _grow(masked, at: np.ndarray, hi: np.ndarray, lo: np.ndarray, side: str, token: int,
          share: float, limit: np.ndarray) -> tuple[int, ...]:
    """The anchor holding `token` at positions `at` (after the pattern: side "right", or
    before it), grown token by token while one token follows in at least `share` of them:
    first towards the pattern (keeping a slot of at least one token: `limit` is the nearest
    position it may take), then away from it."""
    inward = _extend(masked, at, -1 if side == "right" else 1, share,
                     lambda nxt: nxt >= limit if side == "right" else nxt <= limit)
    outward = _extend(masked, at, 1 if side == "right" else -1, share,
                      lambda nxt: (nxt < hi) & (nxt >= lo))
    if side == "right":
        return (*reversed(inward), token, *outward)
    return (*reversed(outward), token, *inward)


def _extend(masked, at: np.ndarray, direction: int, share: float, allowed) -> list[int]:
    out: list[int] = []
    for step in range(1, MAX_GROWTH + 1):
        nxt = at + direction * step
        ok = allowed(nxt)
        if ok.sum() < share * len(at):
            break
        values, counts = np.unique(masked[nxt[ok]], return_counts=True)
        top = int(np.argmax(counts))
        if counts[top] < share * len(at):
            break
        out.append(int(values[top]))
    return out
