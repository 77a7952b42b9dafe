"""Occurrences of patterns in a corpus: the verifying pass.

How an occurrence binds (leftmost-shortest): it starts at a full occurrence of the first anchor
(in the masked stream, where a typed slot matches any token of its class); each next anchor is
bound at its first full occurrence that starts 1 to max_gap tokens after the end of the previous
one, in the same document; when there is none, that start has no occurrence. A line-end slot
binds the tokens from the last anchor's end to the end of its line (the next line start, or the
document's end) when there are 1 to max_gap of them; otherwise that start has no occurrence.
With line boundaries, an occurrence lies inside one line: a start whose binding reaches past
its line (a line start inside the span) has none. Boilerplate with slots is a line of its own
or part of one; a binding that runs on into the next line joins a byline to the title above
it, which is content.
Every start that binds all anchors is an occurrence (occurrences of one pattern may overlap,
as phrase occurrences do). df is the number of documents with an occurrence.

Anchors are found all at once with the exact phrase matcher (coverage.PhraseTables over the
masked stream); binding is a binary search per anchor and occurrence (np.searchsorted), so the
pass costs one scan of the corpus plus O(occurrences x anchors x log).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from corpus_miner.coverage.coverage import PhraseTables
from corpus_miner.phrases.result import PhraseTable
from corpus_miner.templates.pattern import Pattern


@dataclass(frozen=True)
class TemplateOccurrences:
    """Occurrences of patterns, sorted by (template, start).

    template: int64 pattern index; doc: int64 document; start, end: int64 global token span
    [start, end) from the first anchor's first token to the last anchor's last token (or the
    end of a line-end slot);
    anchor_starts: int64 (n, max anchors) global start of each anchor (-1 beyond the pattern's
    anchors)."""

    template: np.ndarray
    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    anchor_starts: np.ndarray

    def __len__(self) -> int:
        return len(self.template)

    def of(self, t: int) -> slice:
        """The rows of template t."""
        lo, hi = np.searchsorted(self.template, [t, t + 1])
        return slice(int(lo), int(hi))


def anchor_occurrences(patterns: Sequence[Pattern], masked: np.ndarray,
                       doc_offsets: np.ndarray, vocab) -> tuple[dict, list[np.ndarray]]:
    """(anchor -> index, sorted global starts of each distinct anchor) in the masked stream."""
    index: dict[tuple[int, ...], int] = {}
    for pattern in patterns:
        for piece in pattern.pieces:
            index.setdefault(piece, len(index))
    if not index:
        return index, []
    anchors = list(index)
    table = PhraseTable.from_lists(anchors, [0] * len(anchors), [0] * len(anchors), vocab)
    occ = PhraseTables(table).occurrences(masked, doc_offsets)
    order = np.lexsort((occ.start, occ.phrase))
    phrase, start = occ.phrase[order], occ.start[order]
    bounds = np.searchsorted(phrase, np.arange(len(anchors) + 1))
    return index, [start[bounds[i]:bounds[i + 1]] for i in range(len(anchors))]


def line_end_after(end: np.ndarray, doc_end: np.ndarray,
                   line_starts: np.ndarray | None) -> np.ndarray:
    """Per span end (global token index), the end of the line holding its last token."""
    if line_starts is None or len(line_starts) == 0:
        return doc_end
    i = np.searchsorted(line_starts, end, side="left")
    nxt = line_starts[np.minimum(i, len(line_starts) - 1)]
    return np.where(i < len(line_starts), np.minimum(nxt, doc_end), doc_end)


def _inside_one_line(begin: np.ndarray, end: np.ndarray, line_starts: np.ndarray) -> np.ndarray:
    """True where no line start lies in (begin, end): the span [begin, end) is inside a line."""
    after = np.searchsorted(line_starts, begin, side="right")
    nxt = line_starts[np.minimum(after, len(line_starts) - 1)]
    return (after >= len(line_starts)) | (nxt >= end)


def bind(patterns: Sequence[Pattern], masked: np.ndarray, doc_offsets: np.ndarray,
         vocab, line_starts: np.ndarray | None = None, lines=None) -> TemplateOccurrences:
    """Every occurrence of every pattern (module docstring). line_starts: the corpus's line
    starts (global, ascending): occurrences stay inside one line, and patterns with a line-end
    slot need them (without them a document is one line). lines: the corpus's
    templates.lines.LineIndex, for the line forms (without it they have no occurrences)."""
    from corpus_miner.templates import lines as line_forms

    index, starts = anchor_occurrences([p for p in patterns if not p.form], masked,
                                       doc_offsets, vocab)
    width = max((len(p.pieces) for p in patterns), default=1)
    parts = []
    for t, pattern in enumerate(patterns):
        if pattern.form:
            begin, end = (line_forms.occurrences(lines, pattern.form, pattern.pieces[0])
                          if lines is not None else (np.empty(0, np.int64),) * 2)
            at = np.full((len(begin), width), -1, dtype=np.int64)
            at[:, 0] = begin
            parts.append((np.full(len(begin), t, dtype=np.int64),
                          np.searchsorted(doc_offsets, begin, side="right") - 1, begin, end, at))
            continue
        first = pattern.pieces[0]
        begin = starts[index[first]]
        doc = np.searchsorted(doc_offsets, begin, side="right") - 1
        doc_end = doc_offsets[doc + 1]
        end = begin + len(first)
        at = np.full((len(begin), width), -1, dtype=np.int64)
        at[:, 0] = begin
        alive = np.ones(len(begin), dtype=bool)
        for k, piece in enumerate(pattern.pieces[1:], start=1):
            found = starts[index[piece]]
            i = np.searchsorted(found, end + 1)
            inside = i < len(found)
            nxt = np.where(inside, found[np.minimum(i, max(len(found) - 1, 0))] if len(found)
                           else 0, 0)
            alive &= inside & (nxt <= end + pattern.max_gap) & (nxt + len(piece) <= doc_end)
            at[:, k] = np.where(alive, nxt, -1)
            end = np.where(alive, nxt + len(piece), end)
        if pattern.line_end:
            stop = line_end_after(end, doc_end, line_starts)
            alive &= (stop > end) & (stop - end <= pattern.max_gap)
            end = stop
        if line_starts is not None and len(line_starts):
            alive &= _inside_one_line(begin, end, line_starts)
        keep = np.flatnonzero(alive)
        parts.append((np.full(len(keep), t, dtype=np.int64), doc[keep], begin[keep], end[keep],
                      at[keep]))
    if not parts:
        empty = np.empty(0, dtype=np.int64)
        return TemplateOccurrences(empty, empty, empty, empty, np.empty((0, width), np.int64))
    return TemplateOccurrences(*(np.concatenate([p[i] for p in parts]) for i in range(5)))
