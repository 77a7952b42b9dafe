"""Plain-Python references the fast paths are checked against (obviously correct, slow)."""

from __future__ import annotations

import regex

# The token rule written directly in the `regex` module's syntax (README "Tokens"): a single
# character (a letter or non-decimal number of a script written without spaces, or a Common letter
# used only with Han/kana) with the marks after it, or a run of the other letters, marks, numbers.
SINGLE = (r"[[\p{L}\p{N}--\p{Nd}]&&[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Thai}"
          r"\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}"
          r"[\p{sc=Common}&&[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]]]]")
TOKEN = regex.compile(SINGLE + r"\p{M}*|[[\p{L}\p{M}\p{N}]--" + SINGLE + "]+", regex.V1)


def reference_tokens(text: str) -> list[str]:
    """The definition: str.lower(), then the token rule as one `regex` pattern."""
    return TOKEN.findall(text.lower())


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
