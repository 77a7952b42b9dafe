"""Suffix array and LCP kernels over a concatenated corpus with one unique terminator per document.

Layout of the text (int32 symbols, length N = n_tokens + n_docs):
    doc 0 tokens, terminator 0, doc 1 tokens, terminator 1, ...
Terminator of document d is the symbol d; token symbols start at n_docs. Because every terminator
is unique, no two distinct suffixes share a prefix that reaches past a document end: the longest
common prefix of two suffixes never crosses a document boundary, which is what makes LCP intervals
equal to phrases inside one document. Terminators also sort before every token, so the first n_docs
entries of the suffix array are the terminator suffixes (in document order).

Construction is prefix doubling (Manber-Myers) with counting sorts in numba: each round sorts
suffixes by their first 2k symbols in O(N), using ranks that equal the number of suffixes with a
strictly smaller k-prefix (so a rank is also its bucket's start and the bucket sort needs no
counting pass). Rounds = ceil(log2(longest repeat)) + 1, so a corpus without very long repeats
finishes in a handful of linear passes. Memory: five int32 arrays of N during construction.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner.errors import ParameterError

MAX_TEXT_LENGTH = 2**31 - 2  # int32 positions and ranks


def build_text(tokens: np.ndarray, doc_offsets: np.ndarray) -> tuple[np.ndarray, int]:
    """The int32 text with terminators, and its alphabet size (symbols are 0..alphabet-1).

    Token ids may be any uint32; ids are compressed to dense ranks first when they are sparse, so
    the alphabet never exceeds N and the initial counting sort stays linear.
    """
    tokens = np.asarray(tokens)
    doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
    n_docs = len(doc_offsets) - 1
    n_tokens = len(tokens)
    total = n_tokens + n_docs
    if total > MAX_TEXT_LENGTH:
        raise ParameterError(f"corpus has {n_tokens} tokens in {n_docs} documents; the suffix-array "
                             f"miner handles at most {MAX_TEXT_LENGTH} tokens plus documents; "
                             "use algorithm='bloomspan' or split the corpus")
    if n_tokens and int(tokens.max()) >= n_tokens + 1:
        _, dense = np.unique(tokens, return_inverse=True)
        dense = dense.astype(np.int64, copy=False)
        alphabet = n_docs + (int(dense.max()) + 1 if n_tokens else 0)
    else:
        dense = tokens
        alphabet = n_docs + (int(tokens.max()) + 1 if n_tokens else 0)
    text = np.empty(total, dtype=np.int32)
    _fill_text(dense, doc_offsets, text)
    return text, alphabet


@njit(cache=True)
def _fill_text(dense_tokens, doc_offsets, text):
    n_docs = len(doc_offsets) - 1
    for d in range(n_docs):
        start = doc_offsets[d]
        end = doc_offsets[d + 1]
        base = start + d  # every earlier document added one terminator
        for i in range(start, end):
            text[base + i - start] = n_docs + dense_tokens[i]
        text[base + end - start] = d


@njit(cache=True)
def suffix_array(text, alphabet):
    """Suffix array (int32) of `text`, whose symbols are in 0..alphabet-1 and whose last symbol is
    unique (guaranteed by the per-document terminators; the empty text gives an empty array)."""
    n = len(text)
    sa = np.empty(n, dtype=np.int32)
    if n == 0:
        return sa
    rank = np.empty(n, dtype=np.int32)
    _sort_by_first_symbol(text, alphabet, sa, rank)
    by_second = np.empty(n, dtype=np.int32)
    bucket_next = np.empty(n, dtype=np.int32)
    new_rank = np.empty(n, dtype=np.int32)
    k = 1
    while True:
        if _all_distinct(sa, rank):
            break
        # Order by the second half (rank of i+k): suffixes shorter than k+1 come first (their
        # second half is empty); their own k-prefixes are already unique, so their order is free.
        p = 0
        for i in range(n - k, n):
            by_second[p] = i
            p += 1
        for j in range(n):
            s = sa[j]
            if s >= k:
                by_second[p] = s - k
                p += 1
        # Stable bucket sort by the first half: a rank is its bucket's start.
        for r in range(n):
            bucket_next[r] = r
        for j in range(n):
            s = by_second[j]
            r = rank[s]
            sa[bucket_next[r]] = s
            bucket_next[r] += 1
        # New ranks: equal (first, second) pairs share the rank of the first in their run.
        new_rank[sa[0]] = 0
        for j in range(1, n):
            a = sa[j - 1]
            b = sa[j]
            second_a = rank[a + k] if a + k < n else -1
            second_b = rank[b + k] if b + k < n else -1
            if rank[a] == rank[b] and second_a == second_b:
                new_rank[b] = new_rank[a]
            else:
                new_rank[b] = j
        rank, new_rank = new_rank, rank
        k *= 2
    return sa


@njit(cache=True)
def _sort_by_first_symbol(text, alphabet, sa, rank):
    """Round 0: counting sort by the first symbol; rank = start of the symbol's bucket."""
    counts = np.zeros(alphabet + 1, dtype=np.int64)
    for i in range(len(text)):
        counts[text[i] + 1] += 1
    for c in range(alphabet):
        counts[c + 1] += counts[c]
    for i in range(len(text)):
        rank[i] = counts[text[i]]
    for i in range(len(text)):
        s = text[i]
        sa[counts[s]] = i
        counts[s] += 1


@njit(cache=True)
def _all_distinct(sa, rank):
    for j in range(len(sa)):
        if rank[sa[j]] != j:
            return False
    return True


@njit(cache=True)
def inverse_suffix_array(sa):
    inverse = np.empty(len(sa), dtype=np.int32)
    for j in range(len(sa)):
        inverse[sa[j]] = j
    return inverse


@njit(cache=True)
def lcp_array(text, sa, inverse):
    """Kasai et al.: lcp[j] = longest common prefix of suffixes sa[j-1] and sa[j]; lcp[0] = 0."""
    n = len(text)
    lcp = np.zeros(n, dtype=np.int32)
    h = 0
    for i in range(n):
        j = inverse[i]
        if j == 0:
            h = 0
            continue
        other = sa[j - 1]
        while i + h < n and other + h < n and text[i + h] == text[other + h]:
            h += 1
        lcp[j] = h
        if h > 0:
            h -= 1
    return lcp
