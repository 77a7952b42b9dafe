"""Verified occurrences -> the templates reported: validity, canonical order, absorption.

Valid: df >= sigma, at least min_anchor_tokens literal anchor tokens, every slot varies
(slots.varies; checked here on 64-bit filler hashes: a collision can only merge two fillers, so
it may make a slot look constant, never a constant look varied), and with line boundaries, at
least min_line_share of the occurrences are a whole line (start a line and end it).
Canonical order: tokens covered (the union of the occurrence spans) descending, then anchor
tokens descending, then pattern text.
Absorption: in that order, a pattern whose occurrences overlap (in at least max_top_share of
them) the spans of templates already kept is absorbed by the one it overlaps most: it is listed
in that template's `subsumes`, and its occurrences are cleaned on that template's account. So a
template is reported once, with the specialisations ("by priya patel", one frequent filler)
and generalisations found for it inside.
"""

from __future__ import annotations

import numpy as np

from corpus_miner.templates.matching import TemplateOccurrences
from corpus_miner.templates.pattern import Pattern
from corpus_miner.templates.slots import slot_layout, slot_spans

_MIX = np.uint64(0x9E3779B97F4A7C15)


def span_hash(tokens: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """uint64 hash of each span's tokens (and its length)."""
    length = end - start
    h = length.astype(np.uint64) * _MIX
    longest = int(length.max(initial=0))
    for k in range(longest):
        inside = k < length
        tok = tokens[np.where(inside, start + k, 0)].astype(np.uint64)
        with np.errstate(over="ignore"):
            mixed = (tok + np.uint64(k + 1)) * _MIX
            mixed ^= mixed >> np.uint64(29)
            mixed *= np.uint64(0xBF58476D1CE4E5B9)
            h = np.where(inside, (h ^ mixed) * np.uint64(0x94D049BB133111EB), h)
    return h


def line_share(occ: TemplateOccurrences, n_patterns: int, line_starts: np.ndarray,
               doc_offsets: np.ndarray) -> np.ndarray:
    """Per pattern, the share of its occurrences that are a whole line: they start a line and
    end it."""
    from corpus_miner.templates.matching import line_end_after

    if len(occ) == 0:
        return np.zeros(n_patterns)
    i = np.searchsorted(line_starts, occ.start)
    starts = (i < len(line_starts)) & (line_starts[np.minimum(i, len(line_starts) - 1)]
                                       == occ.start)
    starts |= occ.start == doc_offsets[occ.doc]
    ends = line_end_after(occ.end, doc_offsets[occ.doc + 1], line_starts) == occ.end
    n = np.bincount(occ.template, minlength=n_patterns)
    hits = np.bincount(occ.template[starts & ends], minlength=n_patterns)
    return hits / np.maximum(n, 1)


def support(occ: TemplateOccurrences, n_patterns: int) -> tuple[np.ndarray, np.ndarray]:
    """(df, occurrences) per pattern."""
    n = np.bincount(occ.template, minlength=n_patterns)
    pairs = np.unique(np.stack([occ.template, occ.doc]), axis=1)
    df = np.bincount(pairs[0], minlength=n_patterns) if pairs.size else np.zeros(n_patterns,
                                                                                  np.int64)
    return df.astype(np.int64), n.astype(np.int64)


def count_share(occ: TemplateOccurrences, n_patterns: int) -> np.ndarray:
    """Per pattern, the share of the documents holding it in which it occurs its commonest
    number of times (0 for a pattern without occurrences)."""
    out = np.zeros(n_patterns)
    if len(occ) == 0:
        return out
    pairs, per_doc = np.unique(np.stack([occ.template, occ.doc]), axis=1, return_counts=True)
    # rows (pattern, count) -> documents with that count; the commonest count's per pattern
    keys, docs = np.unique(np.stack([pairs[0], per_doc]), axis=1, return_counts=True)
    top = np.zeros(n_patterns, dtype=np.int64)
    np.maximum.at(top, keys[0], docs)
    df = np.bincount(pairs[0], minlength=n_patterns)
    held = df > 0
    out[held] = top[held] / df[held]
    return out


def tokens_covered(occ: TemplateOccurrences, n_patterns: int, n_tokens: int) -> np.ndarray:
    """Per pattern, the tokens in the union of its occurrence spans (rows sorted by template,
    start)."""
    if len(occ) == 0:
        return np.zeros(n_patterns, dtype=np.int64)
    shift = occ.template * (n_tokens + 1)
    start, end = occ.start + shift, occ.end + shift
    before = np.concatenate(([np.int64(-1)], np.maximum.accumulate(end)[:-1]))
    new = np.maximum(0, end - np.maximum(start, before))
    return np.bincount(occ.template, weights=new, minlength=n_patterns).astype(np.int64)


def slots_vary(patterns: list[Pattern], occ: TemplateOccurrences, tokens: np.ndarray,
               n_vocab: int, max_top_share: float) -> np.ndarray:
    """bool per pattern: every slot has >= 2 fillers, the commonest in <= max_top_share."""
    ok = np.ones(len(patterns), dtype=bool)
    for t, pattern in enumerate(patterns):
        rows = occ.of(t)
        n = rows.stop - rows.start
        if n == 0:
            ok[t] = False
            continue
        for layout in slot_layout(pattern, n_vocab):
            start, end = slot_spans(pattern, layout, occ, rows)
            _, counts = np.unique(span_hash(tokens, start, end), return_counts=True)
            if len(counts) < 2 or counts.max() > max_top_share * n:
                ok[t] = False
                break
    return ok


def absorb(order: np.ndarray, occ: TemplateOccurrences, n_tokens: int, share: float,
           max_roots: int) -> tuple[np.ndarray, np.ndarray]:
    """(root per pattern: itself, the template absorbing it, or -1 when not kept; label: int32
    per token, the root whose span holds it, -1 elsewhere). Patterns not in `order` get -1."""
    n_patterns = int(occ.template.max(initial=-1)) + 1 if len(occ) else 0
    root = np.full(max(n_patterns, int(order.max(initial=-1)) + 1), -1, dtype=np.int64)
    label = np.full(n_tokens + 1, -1, dtype=np.int32)
    n_roots = 0
    for t in order.tolist():
        rows = occ.of(t)
        start, end = occ.start[rows], occ.end[rows]
        if len(start) == 0:
            continue
        bounds = np.empty(2 * len(start), dtype=np.int64)
        bounds[0::2], bounds[1::2] = start, end
        seen = np.maximum.reduceat(label, bounds)[0::2]
        held = seen >= 0
        if held.mean() >= share and held.any():
            values, counts = np.unique(seen[held], return_counts=True)
            owner = int(values[np.argmax(counts)])
        elif n_roots < max_roots:
            owner = t
            n_roots += 1
        else:
            continue
        root[t] = owner
        index = _span_indices(start, end)
        free = label[index] < 0
        label[index[free]] = owner
    return root, label[:n_tokens]


def _span_indices(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Every token index inside the spans (each once), ascending."""
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    begin = np.concatenate(([True], s[1:] > reach[:-1]))
    group = np.cumsum(begin) - 1
    lo = s[begin]
    hi = np.zeros(int(group[-1]) + 1, dtype=np.int64)
    np.maximum.at(hi, group, e)
    lengths = hi - lo
    offsets = np.repeat(lo - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return offsets + np.arange(int(lengths.sum()), dtype=np.int64)
