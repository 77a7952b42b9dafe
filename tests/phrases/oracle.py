"""Brute-force reference for maximal contiguous frequent phrases (MCFP).

Obviously correct and hopelessly slow (every substring of every document is a dict key), so it
is only for small test corpora. Every fast miner in corpus_miner.phrases is checked against it.

Definition: a phrase is a contiguous token sequence inside one document; df = number of documents
containing it at least once; occurrences = number of (doc, start) positions where it occurs
(overlapping occurrences counted). Answer: every phrase with df >= sigma and length >= min_length
that cannot be extended by one token on the left or on the right while keeping df >= sigma.
(One-token extensions suffice: any longer frequent extension contains a frequent one-token one,
because df never grows when a phrase is extended.)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence


def substring_support(docs: Sequence[Sequence[int]]) -> tuple[dict, dict]:
    """Map every substring (as a tuple) to its set of documents and to its occurrence count."""
    doc_sets: dict[tuple[int, ...], set[int]] = defaultdict(set)
    occurrences: dict[tuple[int, ...], int] = defaultdict(int)
    for doc_index, doc in enumerate(docs):
        doc = tuple(int(t) for t in doc)
        for start in range(len(doc)):
            for end in range(start + 1, len(doc) + 1):
                phrase = doc[start:end]
                doc_sets[phrase].add(doc_index)
                occurrences[phrase] += 1
    return doc_sets, occurrences


def brute_force_mcfp(docs: Sequence[Sequence[int]], sigma: int,
                     min_length: int) -> set[tuple[tuple[int, ...], int, int]]:
    """Every maximal frequent phrase as (token ids, df, occurrences)."""
    doc_sets, occurrences = substring_support(docs)
    frequent = {phrase for phrase, found_in in doc_sets.items() if len(found_in) >= sigma}
    tokens = {t for doc in docs for t in doc}
    answer = set()
    for phrase in frequent:
        if len(phrase) < min_length:
            continue
        extendable = any((t,) + phrase in frequent or phrase + (t,) in frequent for t in tokens)
        if not extendable:
            answer.add((phrase, len(doc_sets[phrase]), occurrences[phrase]))
    return answer


def brute_force_whole_lines(docs_lines: Sequence[Sequence[Sequence[int]]], sigma: int,
                            min_line_length: int,
                            min_length: int) -> set[tuple[tuple[int, ...], int, int]]:
    """Every whole-line phrase as (token ids, df, occurrences): documents given as lists of
    lines (each a non-empty list of token ids). A line Q with min_line_length <= |Q| <
    min_length qualifies when >= sigma documents have a line equal to Q; df counts them,
    occurrences counts the equal lines in all documents."""
    doc_sets: dict[tuple[int, ...], set[int]] = defaultdict(set)
    occurrences: dict[tuple[int, ...], int] = defaultdict(int)
    for doc_index, lines in enumerate(docs_lines):
        for line in lines:
            line = tuple(int(t) for t in line)
            if min_line_length <= len(line) < min_length:
                doc_sets[line].add(doc_index)
                occurrences[line] += 1
    return {(line, len(found), occurrences[line]) for line, found in doc_sets.items()
            if len(found) >= sigma}
