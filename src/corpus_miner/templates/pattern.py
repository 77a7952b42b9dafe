"""A template's pattern: anchors (runs of literal tokens and typed slots) with a free slot of 1 to
`max_gap` tokens between consecutive anchors, and optionally a *line-end slot* after the last
anchor: the 1 to `max_gap` tokens from there to the end of its line.

Text form (the `pattern` field of templates.jsonl): the anchors' tokens joined by spaces, `<num>`
and `<month>` for typed slots, ` <*> ` between anchors; for example
`updated on <month> <num> <num> by <*> leave a comment`; a line-end slot is written `<*>$` at the
end (`updated on <month> <num> <num> by <*>$`). `parse_pattern` reads it back with the
corpus tokenizer, so a reviewed file can be applied to another corpus.

Line forms (templates.lines): `^A <rest>` (a line starting with the literal anchor A, the rest
of it made of known lines) and `^A <lines>` (a paragraph whose first line is A, its other lines
known lines); one anchor each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from corpus_miner.errors import InputError
from corpus_miner.templates.masking import CLASS_NAMES

FREE_SLOT = "<*>"
LINE_END_SLOT = "<*>$"
LINE_FORMS = {"rest": "<rest>", "lines": "<lines>"}  # form -> the slot's text


@dataclass(frozen=True)
class Pattern:
    """pieces: the anchors, each a tuple of masked-stream ids (corpus token ids, or
    n_vocab + class for a typed slot); max_gap: the longest free slot between two anchors (and
    the longest line-end slot); line_end: a line-end slot follows the last anchor; form: "" or
    a line form ("rest", "lines": one literal anchor at a line start, module docstring)."""

    pieces: tuple[tuple[int, ...], ...]
    max_gap: int
    line_end: bool = False
    form: str = ""

    def __post_init__(self) -> None:
        if not self.pieces or any(len(p) == 0 for p in self.pieces):
            raise ValueError("a pattern has at least one anchor and no empty anchor")
        if self.form and (self.form not in LINE_FORMS or len(self.pieces) != 1
                          or self.line_end):
            raise ValueError("a line form has one anchor and no line-end slot")

    @property
    def n_anchor_tokens(self) -> int:
        return sum(len(p) for p in self.pieces)

    def literal_tokens(self, n_vocab: int) -> int:
        return sum(1 for p in self.pieces for t in p if t < n_vocab)

    def text(self, vocab: Sequence[str]) -> str:
        """The text form, with `vocab` the masked vocabulary (MaskedVocab)."""
        text = f" {FREE_SLOT} ".join(" ".join(str(vocab[t]) for t in piece)
                                     for piece in self.pieces)
        if self.form:
            return f"^{text} {LINE_FORMS[self.form]}"
        return f"{text} {LINE_END_SLOT}" if self.line_end else text


def parse_pattern(text: str, vocab_index: dict[str, int], n_vocab: int, max_gap: int,
                  tokenize: Callable[[str], list[str]]) -> Pattern | None:
    """The Pattern of a text form in this corpus's ids; None when an anchor holds a token the
    corpus never has (it cannot occur). InputError when the text is no pattern."""
    pieces = []
    form = next((f for f, slot in LINE_FORMS.items() if text.rstrip().endswith(slot)
                 and text.lstrip().startswith("^")), "")
    if form:
        text = text.strip()[1:-len(LINE_FORMS[form])]
        if FREE_SLOT in text or LINE_END_SLOT in text or any(w in CLASS_NAMES
                                                              for w in text.split()):
            raise InputError(f"pattern {text!r}: a line form has one literal anchor")
    line_end = not form and text.rstrip().endswith(LINE_END_SLOT)
    if line_end:
        text = text.rstrip()[:-len(LINE_END_SLOT)]
    for part in text.split(FREE_SLOT):
        piece: list[int] = []
        for word in part.split():
            if word in CLASS_NAMES:
                piece.append(n_vocab + CLASS_NAMES.index(word))
                continue
            for token in tokenize(word):
                if token not in vocab_index:
                    return None
                piece.append(vocab_index[token])
        if not piece:
            raise InputError(f"pattern {text!r}: every {FREE_SLOT} must sit between two anchors "
                             "that hold at least one token each")
        pieces.append(tuple(piece))
    return Pattern(tuple(pieces), max_gap, line_end, form)
