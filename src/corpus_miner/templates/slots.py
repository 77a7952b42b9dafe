"""Slot statistics of a template from its occurrences: where each slot's filler lies, its length
histogram, distinct fillers, the top fillers and a type.

Slots of a pattern, left to right: each maximal run of typed tokens inside an anchor (its filler
is the run's corpus tokens, a fixed length), each free slot between two anchors (its filler
is every token between them, 1 to max_gap tokens), and the line-end slot (the tokens after the
last anchor to the end of its line), and a line form's slot (the tokens after its anchor to the
end of its line or paragraph).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from corpus_miner.templates.masking import MONTHS
from corpus_miner.templates.matching import TemplateOccurrences
from corpus_miner.templates.pattern import Pattern

TOP_FILLERS = 5
SLOT_TYPES = ("number", "year", "date", "name-like", "mixed")


@dataclass(frozen=True)
class SlotLayout:
    """kind "typed" (offset, length inside anchor `anchor`), "free" (after anchor `anchor`),
    "line_end" (after the last anchor, to the occurrence's end) or a line form's slot, "rest" or
    "lines" (after the anchor, to the occurrence's end)."""

    kind: str
    anchor: int
    offset: int = 0
    length: int = 0


def slot_layout(pattern: Pattern, n_vocab: int) -> list[SlotLayout]:
    """The slots of a pattern, left to right (module docstring)."""
    out = []
    for a, piece in enumerate(pattern.pieces):
        if a:
            out.append(SlotLayout("free", a - 1))
        i = 0
        while i < len(piece):
            if piece[i] >= n_vocab:
                j = i
                while j < len(piece) and piece[j] >= n_vocab:
                    j += 1
                out.append(SlotLayout("typed", a, i, j - i))
                i = j
            else:
                i += 1
    if pattern.line_end:
        out.append(SlotLayout("line_end", len(pattern.pieces) - 1))
    if pattern.form:
        out.append(SlotLayout(pattern.form, 0))
    return out


def slot_spans(pattern: Pattern, layout: SlotLayout, occ: TemplateOccurrences,
               rows: slice) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) global token spans of one slot's filler in occurrences `rows`."""
    at = occ.anchor_starts[rows]
    if layout.kind == "typed":
        start = at[:, layout.anchor] + layout.offset
        return start, start + layout.length
    start = at[:, layout.anchor] + len(pattern.pieces[layout.anchor])
    if layout.kind in ("line_end", "rest", "lines"):
        return start, occ.end[rows]
    return start, at[:, layout.anchor + 1]


def filler_counts(tokens: np.ndarray, start: np.ndarray, end: np.ndarray) -> Counter:
    """Counter of fillers (tuples of token ids) over the spans."""
    return Counter(tuple(tokens[s:e].tolist()) for s, e in zip(start.tolist(), end.tolist()))


def slot_type(fillers: Counter, vocab) -> str:
    """number (every filler one or more decimal numbers), year (one number 1900-2099), date (a
    month name with numbers), name-like (one to three words of letters, no digits), mixed."""
    kinds = set()
    for filler in fillers:
        words = [str(vocab[t]) for t in filler]
        if all(w.isdecimal() for w in words):
            kinds.add("year" if len(words) == 1 and len(words[0]) == 4
                      and 1900 <= int(words[0]) <= 2099 else "number")
        elif any(w in MONTHS for w in words) and any(w.isdecimal() for w in words) and all(
                w.isdecimal() or w in MONTHS for w in words):
            kinds.add("date")
        elif len(words) <= 3 and all(w.isalpha() for w in words):
            kinds.add("name-like")
        else:
            kinds.add("mixed")
        if len(kinds) > 1 and kinds != {"year", "number"}:
            return "mixed"
    if kinds == {"year", "number"}:
        return "number"
    return kinds.pop() if kinds else "mixed"


def slot_summary(fillers: Counter, vocab, decode) -> dict:
    """The JSON of one slot: len_hist, distinct, top [[filler text, count]], type."""
    lengths: Counter = Counter()
    for filler, count in fillers.items():
        lengths[len(filler)] += count
    top = sorted(fillers.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_FILLERS]
    return {"len_hist": {str(k): v for k, v in sorted(lengths.items())},
            "distinct": len(fillers),
            "top": [[decode(filler), count] for filler, count in top],
            "type": slot_type(fillers, vocab)}


def varies(fillers: Counter, max_top_share: float) -> bool:
    """A slot is a slot, not a constant: two or more fillers, the commonest in at most
    max_top_share of the occurrences."""
    total = sum(fillers.values())
    return len(fillers) >= 2 and max(fillers.values()) <= max_top_share * total
