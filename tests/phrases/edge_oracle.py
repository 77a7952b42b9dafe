"""Brute force of the edge-phrase definition (phrases/edges.py, the probe
benchmarks/probe_edge_phrases.py) over texts, in plain Python from the tokenizer's own
definitions (tokenize, line_starts, sentence_starts)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from corpus_miner.corpus.tokenizer import line_starts, sentence_starts, tokenize

START, END = "start", "end"


def edge_lines(text: str) -> tuple[list[str], list[tuple[str, int, int]], set[int]]:
    """(tokens, [(side, line start, line end)], tokens that follow a sentence break) of one
    text: side "start" for the first line of each paragraph, "end" for the last one (a line
    that is both is listed twice)."""
    tokens = tokenize(text)
    lines, paragraphs = line_starts(text)
    opening = set(paragraphs)
    found = []
    for i, first in enumerate(lines):
        end = lines[i + 1] if i + 1 < len(lines) else len(tokens)
        if first in opening:
            found.append((START, first, end))
        if i + 1 == len(lines) or lines[i + 1] in opening:
            found.append((END, first, end))
    return tokens, found, set(sentence_starts(text))


def pieces(side: str, first: int, end: int, tokens: list[str], breaks: set[int],
           shortest: int, longest: int):
    """(k, (side, piece tokens)) for every edge piece of k tokens of one line side."""
    for k in range(shortest, min(end - first - 1, longest) + 1):
        if side == START and first + k in breaks:
            yield k, (START, tuple(tokens[first:first + k]))
        if side == END and end - k in breaks:
            yield k, (END, tuple(tokens[end - k:end]))


def brute_force_edges(texts: Sequence[str], sigma: int, min_edge_length: int,
                      min_length: int) -> dict[tuple[str, tuple[str, ...]], tuple[int, int]]:
    """Every edge phrase: (side, tokens) -> (df, occurrences)."""
    documents: dict = defaultdict(set)
    lines: dict = defaultdict(int)
    for d, text in enumerate(texts):
        tokens, found, breaks = edge_lines(text)
        for side, first, end in found:
            for _, piece in pieces(side, first, end, tokens, breaks, min_edge_length,
                                   min_length - 1):
                documents[piece].add(d)
                lines[piece] += 1
    return {piece: (len(ds), lines[piece]) for piece, ds in documents.items()
            if len(ds) >= sigma}


def brute_force_edge_cover(texts: Sequence[str], phrases) -> list[set[int]]:
    """Per text, the token indices covered by the edge phrases `phrases` ((side, tokens)
    keys): on every line side, the longest of them that is an edge piece there."""
    covered = []
    for text in texts:
        tokens, found, breaks = edge_lines(text)
        marks: set[int] = set()
        for side, first, end in found:
            longest = max((k for k, piece in pieces(side, first, end, tokens, breaks, 1,
                                                    end - first) if piece in phrases),
                          default=0)
            marks |= set(range(first, first + longest) if side == START
                         else range(end - longest, end))
        covered.append(marks)
    return covered
