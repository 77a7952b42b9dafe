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
  and `kernels.mark_filter_survivors`): no answer phrase has an occurrence starting at a dead
  position. The search therefore runs on alive occurrences only, and a seed or node whose alive
  occurrences cover fewer than sigma documents has no answer below it (grow_seeds explains why
  the tests stay exact on the alive subset).
* Left pruning: a node whose (alive) occurrences all have the same left token a (none at a
  document start) is dropped with its subtree. Sound: an answer D below it has all its
  occurrences among them, so aD has the same occurrence set and df >= sigma: D would not be
  left-maximal. Hence no prefix of M is ever pruned.

A node is emitted iff it has no frequent right child (right-maximal, decided exactly by the
grouping) and no left word whose occurrences cover sigma documents (left-maximal, decided exactly
by grouping the occurrences by left word, `left_maximal`). The two checks are the definition
itself, so the output is exactly the answer. Each phrase is one DFS node of one seed (its first
bigram), so nothing is emitted twice.

The article's inverted index ("token -> found phrases", probed with the candidate's rarest
token to reject sub-phrases of earlier finds, and to evict earlier finds absorbed by later ones)
is deliberately not built: it only approximates this left-maximality test, needs the eviction
step because Psi order does not guarantee super-phrases come first, and its cost grows with the
size of the answer, which is exactly where the article saw BloomSpan slow down (50k books, sigma
10). The exact test costs O(k) in the candidate's own k occurrences, whatever has been found.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner.phrases.kernels import bit_get, bit_set, doc_at

NO_TOKEN = np.uint64(0xFFFFFFFF)  # no left word (document start); token ids are < 2^32 - 1

# Indices of the counters returned by grow_seeds.
SEEDS_LEFT_PRUNED = 0
SEEDS_MASK_SKIPPED = 1
NODES_VISITED = 2
NODES_LEFT_PRUNED = 3
CANDIDATES_WITH_DEAD_OCCURRENCE = 4
LEFT_CHECKS = 5
OCCURRENCES_SCANNED = 6
TOKENS_COMPARED = 7  # token comparisons of the fast path (the common right extension)
SEEDS_OVER_BUDGET = 8  # seeds handed back for the suffix-array path (seed_suffix_array.py)
N_COUNTERS = 9


@njit(cache=True, inline="always")
def _left_token(tokens, doc_offsets, pos, doc):
    if pos > doc_offsets[doc]:
        return np.uint64(tokens[pos - 1])
    return NO_TOKEN


@njit(cache=True)
def left_uniform(tokens, doc_offsets, wpos, wdoc, lo, hi):
    """True when every occurrence in [lo, hi) has the same (real) left token."""
    first = _left_token(tokens, doc_offsets, wpos[lo], wdoc[lo])
    if first == NO_TOKEN:
        return False
    for i in range(lo + 1, hi):
        if _left_token(tokens, doc_offsets, wpos[i], wdoc[i]) != first:
            return False
    return True


@njit(cache=True)
def distinct_documents(wdoc, lo, hi):
    """Distinct documents in wdoc[lo:hi] (ascending)."""
    count = 0
    doc = -1
    for i in range(lo, hi):
        if wdoc[i] != doc:
            count += 1
            doc = wdoc[i]
    return count


@njit(cache=True)
def left_maximal(tokens, doc_offsets, wpos, wdoc, lo, hi, sigma, word_rank, count, last_doc,
                 touched):
    """Exact left-maximality: no left token whose occurrences cover >= sigma documents.

    One pass with per-word counters (indexed by the rank of frequent words; a word below sigma
    documents cannot extend anything): occurrences are in position order, so documents ascend
    and "new document for this word" is last_doc[r] != doc. The counters are reset on exit."""
    n_touched = 0
    maximal = True
    for i in range(lo, hi):
        if wpos[i] == doc_offsets[wdoc[i]]:
            continue
        r = word_rank[tokens[wpos[i] - 1]]
        if r < 0:
            continue
        if last_doc[r] == -2:  # untouched
            touched[n_touched] = r
            n_touched += 1
            last_doc[r] = -1
        if last_doc[r] != wdoc[i]:
            last_doc[r] = wdoc[i]
            count[r] += 1
            if count[r] >= sigma:
                maximal = False
                break
    for j in range(n_touched):
        count[touched[j]] = 0
        last_doc[touched[j]] = -2
    return maximal


@njit(cache=True)
def mark_found(wpos, lo, hi, length, frequent_bigram, dead, covered):
    """Record the occurrences of a phrase F just found: coverage bits for [p, p + L), and dead bits.

    Dead bits (the sound version of the article's coverage-mask skip). `frequent_bigram` marks a
    superset of the starts of frequent bigrams (the filter survivors). Let [q, e) be an occurrence
    of a found frequent phrase F such that no marked bigram starts at e - 1 (so the bigram across
    F's right end is infrequent, or e is the end of the document). Mark every p with q < p < e - 1
    dead. Claim: no maximal phrase has an occurrence starting at a dead p.
    Proof: every bigram starting in [p, e - 2] lies inside F's occurrence, so it is frequent, while
    the one at e - 1 is not. A frequent phrase starting at p has only frequent bigrams, so it ends
    at or before e and is the substring F[p - q : p - q + len] with p - q >= 1. Prepending
    F[p - q - 1] gives a phrase contained in F, so df >= df(F) >= sigma: not left-maximal.
    (kernels.mark_filter_survivors adds the positions where too few frequent bigrams follow.)
    Consequence used by the growth: a node (or seed) whose alive occurrences cover fewer than sigma
    documents has no answer phrase below it, because a descendant's occurrences are a subset of
    the node's and an answer phrase has all of its >= sigma documents among alive occurrences.
    (The article's rule "skip a seed whose occurrences are all covered" is not sound: a maximal
    phrase may start inside found phrases and run past their right ends, e.g. found "a b c" and
    "x b c" cover every "b c", yet "b c d" can be maximal when "a b c d" and "x b c d" are each in
    fewer than sigma documents.)

    Occurrences come in ascending order, so each bit is set at most once per call.
    """
    covered_until = -1
    dead_until = -1
    for i in range(lo, hi):
        p = wpos[i]
        e = p + length
        for x in range(max(p, covered_until), e):
            bit_set(covered, x)
        covered_until = max(covered_until, e)
        if not bit_get(frequent_bigram, e - 1):
            for x in range(max(p + 1, dead_until), e - 1):
                bit_set(dead, x)
            dead_until = max(dead_until, e - 1)


@njit(cache=True)
def has_dead_occurrence(tokens, doc_offsets, doc_table, doc_shift, dead_pos, n_dead, start,
                        length):
    """True when one of the seed's dead occurrences dead_pos[:n_dead] continues into the phrase
    tokens[start:start + length] (within its own document)."""
    n = len(tokens)
    for i in range(n_dead):
        p = dead_pos[i]
        if p + length > n:
            continue
        j = 2  # every occurrence of the seed already matches the first two tokens
        while j < length and tokens[p + j] == tokens[start + j]:
            j += 1
        if j == length and p + length <= doc_offsets[doc_at(doc_offsets, doc_table, doc_shift,
                                                            p) + 1]:
            return True
    return False


@njit(cache=True)
def grow_seeds(tokens, doc_offsets, doc_table, doc_shift, occurrences, seed_lo, seed_hi, seed_ids,
               sigma, min_length, word_rank, n_ranks, frequent_bigram, dead, covered,
               budget_per_occurrence, budget_floor):
    """Grow the seeds `seed_ids` (in that order; occurrences[seed_lo[s]:seed_hi[s]] ascending).

    The search runs on the seed's alive occurrences only (dead ones, as of loading the seed, are
    set aside in dead_pos). Exact, because an answer phrase has no dead occurrence:
    * an answer M's occurrences are all alive, so each prefix of M keeps >= df(M) alive
      documents (pushed), its alive occurrences are not left-uniform (else M would not be
      left-maximal), and the fast path cannot run past M (else M would be right-extendable);
    * at M itself the alive occurrences are all of them, so the right/left maximality tests,
      df and occurrence count computed on them are exact;
    * a candidate that passes the tests on its alive occurrences is emitted only when none of the
      set-aside dead occurrences continues into it (has_dead_occurrence): then, again, its alive
      occurrences are all of them and the tests were exact. (Occurrences at short-run dead
      positions were never packed: a candidate is frequent and >= min_length long, so it has
      none there; see kernels.pack_survivors.)
    word_rank[t] = dense rank of word t if it occurs in >= sigma documents, else -1: only such
    words can extend a frequent phrase, so per-word counters need n_ranks entries, not the vocab.
    Budget: a seed whose nodes scan more than budget_floor + budget_per_occurrence x (its alive
    occurrences) occurrences in total is abandoned, its phrases found so far withdrawn (the dead and
    covered bits they set stay: they are true answers), and its id returned in `over_budget`.
    Only self-overlapping occurrences get there: a run of m repeats of a short pattern loses one
    occurrence per level, so the search scans ~m^2/2 occurrences; the suffix-array path grows
    such a seed in O(m log m).
    Returns (start, length, df, occurrences) of every maximal phrase found (start = position of its
    first occurrence), the over-budget seed ids and the counters indexed by SEEDS_LEFT_PRUNED ...
    SEEDS_OVER_BUDGET."""
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    kmax = 1
    for s in seed_ids:
        kmax = max(kmax, seed_hi[s] - seed_lo[s])
    wpos = np.empty(kmax, dtype=np.int64)
    wdoc = np.empty(kmax, dtype=np.int64)
    dead_pos = np.empty(kmax, dtype=np.int64)
    tpos = np.empty(kmax, dtype=np.int64)
    tdoc = np.empty(kmax, dtype=np.int64)
    next_rank = np.empty(kmax, dtype=np.int64)
    stack_lo = np.empty(kmax + 1, dtype=np.int64)
    stack_hi = np.empty(kmax + 1, dtype=np.int64)
    stack_len = np.empty(kmax + 1, dtype=np.int64)
    # per-word counters for grouping occurrences by next/left word; all-zero (last_doc -2)
    # between uses, reset through the `touched` list so a node costs O(its occurrences)
    docs_of_word = np.zeros(n_ranks + 1, dtype=np.int64)
    size_of_word = np.zeros(n_ranks + 1, dtype=np.int64)
    cursor = np.zeros(n_ranks + 1, dtype=np.int64)
    last_doc = np.full(n_ranks + 1, -2, dtype=np.int64)
    touched = np.empty(n_ranks + 1, dtype=np.int64)
    out_start = np.empty(64, dtype=np.int64)
    out_len = np.empty(64, dtype=np.int64)
    out_df = np.empty(64, dtype=np.int64)
    out_occ = np.empty(64, dtype=np.int64)
    n_out = 0
    over_budget = np.empty(len(seed_ids), dtype=np.int64)
    n_over = 0

    for s in seed_ids:
        n = 0
        n_dead = 0
        doc = 0
        doc_end = -1
        for i in range(seed_lo[s], seed_hi[s]):
            p = np.int64(occurrences[i])
            if bit_get(dead, p):
                dead_pos[n_dead] = p
                n_dead += 1
            else:
                if p >= doc_end:  # positions ascend: look the document up only when it changes
                    doc = doc_at(doc_offsets, doc_table, doc_shift, p)
                    doc_end = doc_offsets[doc + 1]
                wpos[n] = p
                wdoc[n] = doc
                n += 1
        if n == 0 or distinct_documents(wdoc, 0, n) < sigma:
            counters[SEEDS_MASK_SKIPPED] += 1
            continue
        if left_uniform(tokens, doc_offsets, wpos, wdoc, 0, n):
            counters[SEEDS_LEFT_PRUNED] += 1
            continue
        stack_lo[0] = 0
        stack_hi[0] = n
        stack_len[0] = 2
        depth = 1
        n_out_before = n_out
        budget_left = budget_floor + budget_per_occurrence * n
        while depth > 0:
            depth -= 1
            lo = stack_lo[depth]
            hi = stack_hi[depth]
            length = stack_len[depth]
            counters[NODES_VISITED] += 1
            counters[OCCURRENCES_SCANNED] += hi - lo
            budget_left -= hi - lo
            if budget_left < 0:
                n_out = n_out_before
                over_budget[n_over] = s
                n_over += 1
                counters[SEEDS_OVER_BUDGET] += 1
                break
            if length > 2 and left_uniform(tokens, doc_offsets, wpos, wdoc, lo, hi):
                counters[NODES_LEFT_PRUNED] += 1
                continue
            # Fast path of long templates: while all occurrences continue with the same token, the
            # one child has the same occurrences (same df, same left tokens): just lengthen. The
            # common extension is found occurrence by occurrence (sequential reads of the text).
            # No occurrence can extend past its document's end: bound the extension by that first,
            # else a periodic run ("a a a ...", occurrences up to the run's end) compares the whole
            # run at every occurrence of every node (cubic; 8,000 repeated tokens took 80 s).
            p0 = wpos[lo]
            extension = doc_offsets[wdoc[lo] + 1] - p0 - length
            for i in range(lo + 1, hi):
                extension = min(extension, doc_offsets[wdoc[i] + 1] - wpos[i] - length)
            for i in range(lo + 1, hi):
                if extension == 0:
                    break
                p = wpos[i]
                j = 0
                while j < extension and tokens[p + length + j] == tokens[p0 + length + j]:
                    j += 1
                counters[TOKENS_COMPARED] += j + (j < extension)
                extension = j
            length += extension
            # Group by next word, counting occurrences and distinct documents per word (positions
            # ascend, so documents do: a new document is last_doc != doc). A plain gather of the
            # next words comes first: its cache misses overlap, and the scatter reuses it.
            for i in range(lo, hi):
                p = wpos[i]
                r = -1
                if p + length < doc_offsets[wdoc[i] + 1]:
                    r = word_rank[tokens[p + length]]
                next_rank[i - lo] = r
            n_touched = 0
            for i in range(lo, hi):
                r = next_rank[i - lo]
                if r < 0:
                    continue
                if last_doc[r] == -2:
                    touched[n_touched] = r
                    n_touched += 1
                    last_doc[r] = -1
                size_of_word[r] += 1
                if last_doc[r] != wdoc[i]:
                    last_doc[r] = wdoc[i]
                    docs_of_word[r] += 1
            child_total = 0
            for j in range(n_touched):
                r = touched[j]
                cursor[r] = -1
                if docs_of_word[r] >= sigma:
                    cursor[r] = child_total
                    child_total += size_of_word[r]
            if child_total > 0:
                # stable scatter: frequent children first (each keeps position order), rest after
                rest = child_total
                for i in range(lo, hi):
                    r = next_rank[i - lo]
                    if r >= 0 and cursor[r] >= 0:
                        to = cursor[r]
                        cursor[r] += 1
                    else:
                        to = rest
                        rest += 1
                    tpos[to] = wpos[i]
                    tdoc[to] = wdoc[i]
                for j in range(hi - lo):
                    wpos[lo + j] = tpos[j]
                    wdoc[lo + j] = tdoc[j]
                for j in range(n_touched):
                    r = touched[j]
                    if cursor[r] >= 0:
                        stack_lo[depth] = lo + cursor[r] - size_of_word[r]
                        stack_hi[depth] = lo + cursor[r]
                        stack_len[depth] = length + 1
                        depth += 1
            for j in range(n_touched):
                r = touched[j]
                docs_of_word[r] = 0
                size_of_word[r] = 0
                last_doc[r] = -2
            if child_total > 0 or length < min_length:
                continue
            counters[LEFT_CHECKS] += 1
            if not left_maximal(tokens, doc_offsets, wpos, wdoc, lo, hi, sigma, word_rank,
                                docs_of_word, last_doc, touched):
                continue
            if n_dead and has_dead_occurrence(tokens, doc_offsets, doc_table, doc_shift, dead_pos,
                                              n_dead, wpos[lo], length):
                counters[CANDIDATES_WITH_DEAD_OCCURRENCE] += 1
                continue
            if n_out == len(out_start):
                out_start = _grow(out_start)
                out_len = _grow(out_len)
                out_df = _grow(out_df)
                out_occ = _grow(out_occ)
            out_start[n_out] = wpos[lo]
            out_len[n_out] = length
            out_df[n_out] = distinct_documents(wdoc, lo, hi)
            out_occ[n_out] = hi - lo
            n_out += 1
            mark_found(wpos, lo, hi, length, frequent_bigram, dead, covered)
    return (out_start[:n_out].copy(), out_len[:n_out].copy(), out_df[:n_out].copy(),
            out_occ[:n_out].copy(), over_budget[:n_over].copy(), counters)


@njit(cache=True)
def _grow(values):
    bigger = np.empty(2 * len(values), dtype=values.dtype)
    bigger[:len(values)] = values
    return bigger
