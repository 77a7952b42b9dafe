"""Plain-Python references the fast paths are checked against (obviously correct, slow)."""

from __future__ import annotations

import unicodedata


def reference_tokens(text: str) -> list[str]:
    """The definition, character by character: str.lower(), then runs of L*/M*/N* characters."""
    tokens, current = [], []
    for ch in text.lower():
        if unicodedata.category(ch)[0] in "LMN":
            current.append(ch)
        elif current:
            tokens.append("".join(current))
            current = []
    if current:
        tokens.append("".join(current))
    return tokens


def reference_ids(docs: list[str]) -> tuple[list[list[int]], list[str]]:
    """Token ids in order of first appearance, with a dict."""
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in reference_tokens(doc)] for doc in docs]
    return ids, list(vocab)


def lowered_pieces(text: str) -> list[str]:
    """What each character of `text` becomes in text.lower() (final sigma decided in context)."""
    lowered = text.lower()
    pieces, at = [], 0
    for ch in text:
        size = len(ch.lower())  # context never changes the length: Σ -> σ or ς
        pieces.append(lowered[at:at + size])
        at += size
    assert at == len(lowered)
    return pieces
