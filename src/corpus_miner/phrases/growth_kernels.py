"""Numba kernels of the BloomSpan growth phase (steps 6-7 of the article).

Each seed (a frequent bigram with its occurrences, ascending positions) grows to the right by a
depth-first search that works directly on the token array: a node is a range [lo, hi) of a work
buffer of occurrences (start position, document) plus the phrase length L; its children are the
groups of occurrences with equal next word tokens[pos + L], made by a stable scatter (per-word
counters, no sorting), so every node's range stays sorted by position and counting distinct
documents is one scan. No projected databases, no copies of the text.

Why every answer is found exactly once, and nothing else is
-----------------------------------------------------------
Let M be an answer: a maximal frequent phrase (df >= sigma, no frequent one-token extension) of
length >= min_length >= 2. Its prefixes are frequent (df never grows under extension), so the DFS
of the seed M[0:2] walks the prefix chain M[0:2], M[0:3], ..., M unless a shortcut cuts it:

* Dead positions (the sound form of the article's coverage-mask skip; proofs in `mark_found`
  and window_filter.py): no answer phrase has an occurrence starting at a dead position. The
  search therefore runs on alive occurrences only, and a seed or node whose alive occurrences
  cover fewer than sigma documents has no answer below it (`grow_seeds` explains why the tests
  stay exact on the alive subset).
* Left pruning: a node whose (alive) occurrences all have the same left token a (none at a
  document start) is dropped with its subtree. Sound: an answer D below it has all its
  occurrences among them, so aD has the same occurrence set and df >= sigma: D would not be
  left-maximal. Hence no prefix of M is ever pruned.

A node is emitted iff it has no frequent right child (right-maximal, decided exactly by the
grouping) and no left word whose occurrences cover sigma documents (left-maximal, decided exactly
by the same grouping over left words). The two checks are the definition itself, so the output is
exactly the answer. Each phrase is one DFS node of one seed (its first bigram), so nothing is
emitted twice.

The article's inverted index ("token -> found phrases", probed with the candidate's rarest
token to reject sub-phrases of earlier finds, and to evict earlier finds absorbed by later ones)
is deliberately not built: it only approximates this left-maximality test, needs the eviction
step because Psi order does not guarantee super-phrases come first, and its cost grows with the
size of the answer, which is exactly where the article saw BloomSpan slow down (50k books, sigma
10). The exact test costs O(k) in the candidate's own k occurrences, whatever has been found.

Kernels take their inputs as two named tuples: `Growth` (read-only, shared by all threads) and a
`Workspace` per thread, so any number of threads can grow different seeds at once.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from corpus_miner._numba.arrays import grow
from corpus_miner._numba.bitmask import bit_get, bit_set

NO_TOKEN = np.int64(-1)  # left word at a document start

# Indices of the counters returned by grow_seeds.
SEEDS_LEFT_PRUNED = 0
SEEDS_MASK_SKIPPED = 1
NODES_VISITED = 2
NODES_LEFT_PRUNED = 3
CANDIDATES_WITH_DEAD_OCCURRENCE = 4
LEFT_CHECKS = 5
OCCURRENCES_SCANNED = 6
TOKENS_COMPARED = 7  # token comparisons of the common right extension
SEEDS_OVER_BUDGET = 8  # seeds handed back for the suffix-array path (seed_suffix_array.py)
N_COUNTERS = 9


class Growth(NamedTuple):
    """What every thread reads: the corpus, the seeds and the masks (dead is only written
    between batches of seeds, see growth.py)."""
    tokens: np.ndarray  # uint32
    doc_offsets: np.ndarray  # int64
    occurrences: np.ndarray  # uint64 (document << pos_bits) | position; a seed's run ascends
    seed_lo: np.ndarray
    seed_hi: np.ndarray
    word_rank: np.ndarray  # int32: dense rank of words in >= sigma documents, else -1
    dead: np.ndarray  # bit mask: positions where no answer starts
    pos_bits: int
    sigma: int
    min_length: int
    budget_per_occurrence: int
    budget_floor: int


class Workspace(NamedTuple):
    """One thread's buffers: per occurrence of the largest seed, and per frequent word."""
    pos: np.ndarray  # alive occurrences of the seed being grown, regrouped by the DFS
    doc: np.ndarray
    dead_pos: np.ndarray  # its dead occurrences, set aside
    dead_doc: np.ndarray
    tmp_pos: np.ndarray  # scatter targets
    tmp_doc: np.ndarray
    word: np.ndarray  # next (or left) word rank of each occurrence of the current node
    stack_lo: np.ndarray
    stack_hi: np.ndarray
    stack_len: np.ndarray
    # per word rank, all zero (last_doc -2) between uses; reset through the `touched` list so a
    # node costs O(its occurrences), not O(vocabulary)
    docs_of_word: np.ndarray
    size_of_word: np.ndarray
    cursor: np.ndarray
    last_doc: np.ndarray
    touched: np.ndarray


def new_workspace(max_occurrences: int, n_ranks: int) -> Workspace:
    k = max(max_occurrences, 1)
    per_occurrence = [np.empty(k, dtype=np.int64) for _ in range(7)]
    stack = [np.empty(k + 1, dtype=np.int64) for _ in range(3)]
    per_word = [np.zeros(n_ranks + 1, dtype=np.int64) for _ in range(3)]
    return Workspace(*per_occurrence, *stack, *per_word,  # type: ignore[call-arg]
                     np.full(n_ranks + 1, -2, dtype=np.int64), np.empty(n_ranks + 1, np.int64))


# ---------------------------------------------------------------- occurrences of a node
# The helpers that only grow_seeds calls are inlined into it (inline="always", at numba's IR
# level): each would otherwise be typed, optimised and linked as a function of its own, taking
# tuples of up to 15 arrays. benchmarks/bench_compile_ab.py, core install, load 4-7: the first
# run's compile of `phrases` 0.1-0.6 CPU s shorter in each of 3 pairs (of 8.0-9.0 s), growth at
# 10M tokens (sigma 3) the same within noise (pairs differ both ways by up to 0.03 of 0.25-0.29 s).

@njit(cache=True, inline="always")
def load_seed(g, ws, s):
    """Split seed s's occurrences into alive (ws.pos/doc) and dead (ws.dead_pos/doc) ones.
    Returns (alive, dead)."""
    pos_mask = (np.uint64(1) << np.uint64(g.pos_bits)) - np.uint64(1)
    n = 0
    n_dead = 0
    for i in range(g.seed_lo[s], g.seed_hi[s]):
        value = g.occurrences[i]
        p = np.int64(value & pos_mask)
        d = np.int64(value >> np.uint64(g.pos_bits))
        if bit_get(g.dead, p):
            ws.dead_pos[n_dead] = p
            ws.dead_doc[n_dead] = d
            n_dead += 1
        else:
            ws.pos[n] = p
            ws.doc[n] = d
            n += 1
    return n, n_dead


@njit(cache=True, inline="always")
def left_token(tokens, doc_offsets, pos, doc):
    if pos > doc_offsets[doc]:
        return np.int64(tokens[pos - 1])
    return NO_TOKEN


@njit(cache=True, inline="always")
def left_uniform(tokens, doc_offsets, wpos, wdoc, lo, hi):
    """True when every occurrence in [lo, hi) has the same (real) left token."""
    first = left_token(tokens, doc_offsets, wpos[lo], wdoc[lo])
    if first == NO_TOKEN:
        return False
    for i in range(lo + 1, hi):
        if left_token(tokens, doc_offsets, wpos[i], wdoc[i]) != first:
            return False
    return True


@njit(cache=True, inline="always")
def distinct_documents(wdoc, lo, hi):
    """Distinct documents in wdoc[lo:hi] (ascending)."""
    count = 0
    doc = -1
    for i in range(lo, hi):
        if wdoc[i] != doc:
            count += 1
            doc = wdoc[i]
    return count


@njit(cache=True, inline="always")
def common_extension(tokens, doc_offsets, wpos, wdoc, lo, hi, length):
    """(tokens every occurrence continues with alike, tokens compared). While all occurrences go
    on with the same token, the only child has the same occurrences (same df, same left tokens):
    long templates are lengthened here at once, occurrence by occurrence (sequential reads).
    Bounded by the nearest document end first, so a periodic run ("a a a ...", occurrences up
    to the run's end) is not compared to its end at every occurrence of every node (cubic)."""
    p0 = wpos[lo]
    extension = doc_offsets[wdoc[lo] + 1] - p0 - length
    for i in range(lo + 1, hi):
        extension = min(extension, doc_offsets[wdoc[i] + 1] - wpos[i] - length)
    compared = 0
    for i in range(lo + 1, hi):
        if extension == 0:
            break
        p = wpos[i]
        j = 0
        while j < extension and tokens[p + length + j] == tokens[p0 + length + j]:
            j += 1
        compared += j + (j < extension)
        extension = j
    return extension, compared


@njit(cache=True, inline="always")
def next_words(g, ws, lo, hi, length):
    """ws.word[i - lo] = rank of the word after occurrence i's first `length` tokens (-1 at the
    document end or for a word in fewer than sigma documents, which extends nothing frequent).
    A plain gather first: its cache misses overlap, and the grouping reuses it."""
    for i in range(lo, hi):
        p = ws.pos[i] + length
        r = -1
        if p < g.doc_offsets[ws.doc[i] + 1]:
            r = g.word_rank[g.tokens[p]]
        ws.word[i - lo] = r


@njit(cache=True, inline="always")
def left_words(g, ws, lo, hi):
    """ws.word[i - lo] = rank of the word before occurrence i (-1 at a document start)."""
    for i in range(lo, hi):
        r = -1
        if ws.pos[i] > g.doc_offsets[ws.doc[i]]:
            r = g.word_rank[g.tokens[ws.pos[i] - 1]]
        ws.word[i - lo] = r


@njit(cache=True, inline="always")
def count_by_word(ws, lo, hi):
    """Occurrences and distinct documents per word of ws.word (positions ascend, so documents do:
    a new document for word r is last_doc[r] != doc). Returns how many words were touched
    (listed in ws.touched); reset_counts clears them."""
    n_touched = 0
    for i in range(lo, hi):
        r = ws.word[i - lo]
        if r < 0:
            continue
        if ws.last_doc[r] == -2:
            ws.touched[n_touched] = r
            n_touched += 1
            ws.last_doc[r] = -1
        ws.size_of_word[r] += 1
        if ws.last_doc[r] != ws.doc[i]:
            ws.last_doc[r] = ws.doc[i]
            ws.docs_of_word[r] += 1
    return n_touched


@njit(cache=True, inline="always")
def reset_counts(ws, n_touched):
    for j in range(n_touched):
        r = ws.touched[j]
        ws.docs_of_word[r] = 0
        ws.size_of_word[r] = 0
        ws.last_doc[r] = -2


@njit(cache=True, inline="always")
def max_word_documents(ws, n_touched):
    best = 0
    for j in range(n_touched):
        best = max(best, ws.docs_of_word[ws.touched[j]])
    return best


@njit(cache=True, inline="always")
def push_frequent_children(ws, lo, hi, length, sigma, n_touched, depth):
    """Regroup [lo, hi) by next word with a stable scatter (frequent children first, each in
    position order; the rest after) and push the children whose documents reach sigma. Returns
    the new stack depth (unchanged when there is no frequent child: [lo, hi) stays as it was)."""
    child_total = 0
    for j in range(n_touched):
        r = ws.touched[j]
        ws.cursor[r] = -1
        if ws.docs_of_word[r] >= sigma:
            ws.cursor[r] = child_total
            child_total += ws.size_of_word[r]
    if child_total == 0:
        return depth
    rest = child_total
    for i in range(lo, hi):
        r = ws.word[i - lo]
        if r >= 0 and ws.cursor[r] >= 0:
            to = ws.cursor[r]
            ws.cursor[r] += 1
        else:
            to = rest
            rest += 1
        ws.tmp_pos[to] = ws.pos[i]
        ws.tmp_doc[to] = ws.doc[i]
    for j in range(hi - lo):
        ws.pos[lo + j] = ws.tmp_pos[j]
        ws.doc[lo + j] = ws.tmp_doc[j]
    for j in range(n_touched):
        r = ws.touched[j]
        if ws.cursor[r] >= 0:  # cursor now points past the child's range
            ws.stack_lo[depth] = lo + ws.cursor[r] - ws.size_of_word[r]
            ws.stack_hi[depth] = lo + ws.cursor[r]
            ws.stack_len[depth] = length + 1
            depth += 1
    return depth


# ---------------------------------------------------------------- found phrases

@njit(cache=True)
def mark_found(positions, lo, hi, length, min_length, window_ok, dead, covered):
    """Record the occurrences positions[lo:hi] (ascending) of a maximal phrase F just found:
    coverage bits for [p, p + length), and dead bits.

    Dead bits (the sound version of the article's coverage-mask skip). `window_ok` marks a
    superset of the positions where a min_length-window with df >= sigma starts (window_filter).
    Let [p, e) be an occurrence of F and b = e - min_length + 1 (so p < b): when the window at b,
    which runs one token past F's occurrence, is not window_ok, every x with p < x <= b is dead.
    Claim: no maximal phrase G of length >= min_length has an occurrence starting at such an x.
    Proof: if G ends at or before e, it is the substring of F at offset x - p >= 1; prepending
    the token before it in F gives a phrase contained in F, so df >= df(F) >= sigma: G is not
    left-maximal. Otherwise G covers [x, e + 1) and with it the window [b, e + 1), which is then
    frequent, hence window_ok: a contradiction. (The window at b also fails when e is the end of
    the document, where no G can run past e.)
    Consequence used by the growth: a node (or seed) whose alive occurrences cover fewer than sigma
    documents has no answer phrase below it, because a descendant's occurrences are a subset of
    the node's and an answer phrase has all of its >= sigma documents among alive occurrences.
    (The article's rule "skip a seed whose occurrences are all covered" is not sound: a maximal
    phrase may start inside found phrases and run past their right ends, e.g. found "a b c" and
    "x b c" cover every "b c", yet "b c d" can be maximal when "a b c d" and "x b c d" are each in
    fewer than sigma documents.)
    """
    covered_until = -1
    dead_until = -1
    for i in range(lo, hi):
        p = positions[i]
        e = p + length
        for x in range(max(p, covered_until), e):
            bit_set(covered, x)
        covered_until = max(covered_until, e)
        border = e - min_length + 1
        if not bit_get(window_ok, border):
            for x in range(max(p + 1, dead_until), border + 1):
                bit_set(dead, x)
            dead_until = max(dead_until, border + 1)


@njit(cache=True)
def mark_all_found(positions, lengths, occurrences, min_length, window_ok, dead, covered):
    """mark_found for a list of phrases: phrase i has lengths[i] tokens and occurrences[i]
    occurrences, listed one phrase after the other in `positions`."""
    start = np.int64(0)  # not the literal 0: mark_found keeps one signature
    for i in range(len(lengths)):
        mark_found(positions, start, start + occurrences[i], lengths[i], min_length, window_ok,
                   dead, covered)
        start += occurrences[i]


@njit(cache=True, inline="always")
def has_dead_occurrence(tokens, doc_offsets, dead_pos, dead_doc, n_dead, start, length):
    """True when one of the seed's dead occurrences (dead_pos/dead_doc[:n_dead]) continues into
    the phrase tokens[start:start + length] inside its own document."""
    for i in range(n_dead):
        p = dead_pos[i]
        if p + length > doc_offsets[dead_doc[i] + 1]:
            continue
        j = 2  # every occurrence of the seed already matches the first two tokens
        while j < length and tokens[p + j] == tokens[start + j]:
            j += 1
        if j == length:
            return True
    return False


@njit(cache=True, inline="always")
def _append(values, n, value):
    if n == len(values):
        values = grow(values)
    values[n] = value
    return values


# ---------------------------------------------------------------- the search

@njit(cache=True, nogil=True)
def grow_seeds(g, ws, seed_ids):
    """Grow the seeds `seed_ids` in that order.

    The search runs on the seed's alive occurrences only (dead ones, as of loading the seed, are
    set aside). Exact, because an answer phrase has no dead occurrence:
    * an answer M's occurrences are all alive, so each prefix of M keeps >= df(M) alive
      documents (pushed), its alive occurrences are not left-uniform (else M would not be
      left-maximal), and the common extension cannot run past M (else M would be extendable);
    * at M itself the alive occurrences are all of them, so the right/left maximality tests,
      df and occurrence count computed on them are exact;
    * a candidate that passes the tests on its alive occurrences is emitted only when none of the
      set-aside dead occurrences continues into it (has_dead_occurrence): then, again, its alive
      occurrences are all of them and the tests were exact. (Positions that are not window_ok
      were never packed: a candidate is frequent and >= min_length long, so it has none there.)
    Budget: a seed whose nodes scan more than budget_floor + budget_per_occurrence x (its alive
    occurrences) occurrences in total is abandoned, its phrases found so far withdrawn, and its
    id returned in `over_budget`. Only self-overlapping occurrences get there: a run of m repeats
    of a short pattern loses one occurrence per level, so the search scans ~m^2/2 occurrences;
    the suffix-array path grows such a seed in O(m log m).
    Nothing shared is written: found phrases are returned with their occurrences (`marks`, one
    phrase after the other) for mark_all_found.
    Returns (start, length, df, occurrences, marks, over_budget, counters): start = position of
    a phrase's first occurrence; counters indexed by SEEDS_LEFT_PRUNED ... SEEDS_OVER_BUDGET."""
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    out_start = np.empty(16, dtype=np.int64)
    out_len = np.empty(16, dtype=np.int64)
    out_df = np.empty(16, dtype=np.int64)
    out_occ = np.empty(16, dtype=np.int64)
    marks = np.empty(16, dtype=np.int64)
    over_budget = np.empty(len(seed_ids), dtype=np.int64)
    n_out = 0
    n_marks = 0
    n_over = 0
    for s in seed_ids:
        n, n_dead = load_seed(g, ws, s)
        first = np.int64(0)  # not the literal 0: one signature for the kernels called here
        if n == 0 or distinct_documents(ws.doc, first, n) < g.sigma:
            counters[SEEDS_MASK_SKIPPED] += 1
            continue
        if left_uniform(g.tokens, g.doc_offsets, ws.pos, ws.doc, first, n):
            counters[SEEDS_LEFT_PRUNED] += 1
            continue
        ws.stack_lo[0] = 0
        ws.stack_hi[0] = n
        ws.stack_len[0] = 2
        depth = 1
        n_out_before = n_out
        n_marks_before = n_marks
        budget_left = g.budget_floor + g.budget_per_occurrence * n
        while depth > 0:
            depth -= 1
            lo = ws.stack_lo[depth]
            hi = ws.stack_hi[depth]
            length = ws.stack_len[depth]
            counters[NODES_VISITED] += 1
            counters[OCCURRENCES_SCANNED] += hi - lo
            budget_left -= hi - lo
            if budget_left < 0:
                n_out = n_out_before
                n_marks = n_marks_before
                over_budget[n_over] = s
                n_over += 1
                counters[SEEDS_OVER_BUDGET] += 1
                break
            if length > 2 and left_uniform(g.tokens, g.doc_offsets, ws.pos, ws.doc, lo, hi):
                counters[NODES_LEFT_PRUNED] += 1
                continue
            extension, compared = common_extension(g.tokens, g.doc_offsets, ws.pos, ws.doc, lo,
                                                   hi, length)
            length += extension
            counters[TOKENS_COMPARED] += compared
            next_words(g, ws, lo, hi, length)
            n_touched = count_by_word(ws, lo, hi)
            deeper = push_frequent_children(ws, lo, hi, length, g.sigma, n_touched, depth)
            reset_counts(ws, n_touched)
            if deeper > depth or length < g.min_length:
                depth = deeper
                continue
            counters[LEFT_CHECKS] += 1
            left_words(g, ws, lo, hi)
            n_touched = count_by_word(ws, lo, hi)
            left_extendable = max_word_documents(ws, n_touched) >= g.sigma
            reset_counts(ws, n_touched)
            if left_extendable:
                continue
            if n_dead and has_dead_occurrence(g.tokens, g.doc_offsets, ws.dead_pos, ws.dead_doc,
                                              n_dead, ws.pos[lo], length):
                counters[CANDIDATES_WITH_DEAD_OCCURRENCE] += 1
                continue
            out_start = _append(out_start, n_out, ws.pos[lo])
            out_len = _append(out_len, n_out, length)
            out_df = _append(out_df, n_out, distinct_documents(ws.doc, lo, hi))
            out_occ = _append(out_occ, n_out, hi - lo)
            n_out += 1
            for i in range(lo, hi):
                marks = _append(marks, n_marks, ws.pos[i])
                n_marks += 1
    return (out_start[:n_out].copy(), out_len[:n_out].copy(), out_df[:n_out].copy(),
            out_occ[:n_out].copy(), marks[:n_marks].copy(), over_budget[:n_over].copy(),
            counters)
