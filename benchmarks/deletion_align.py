"""What a tool removed, from its cleaned text: the deletion-only alignment of output to input.

A cleaning tool that only writes cleaned text is scored by finding which characters of the
original it deleted: the cleaned text must be the original with pieces deleted, modulo
whitespace (tools strip lines, collapse spaces, rejoin the rest with "\\n" or ""), so the
comparison is over the non-whitespace characters only. When the cleaned text is not such a
deletion (the tool rewrote, added or reordered text) `AlignmentError` says where.

Among the many deletions that give the same output ("a b a" -> "a" could have deleted either
end), the alignment prefers the fewest separate deleted pieces, which is how tools delete
(whole lines, sentences, paragraphs, phrase occurrences): line-level matching blocks first
(difflib's longest matching blocks over whole lines, whitespace collapsed), then word-level
blocks inside the stretches where lines differ (a tool cut inside a line), then, where words
differ (a cut inside a word), the character-level alignment with the fewest gaps (dynamic
programming, `fewest_gaps`); a stretch too big for it falls back to the leftmost embedding.
When the blocks lead to a dead end, every character is aligned at once.
"""
from __future__ import annotations

import difflib
import re

WORD = re.compile(r"\S+")
DP_CELLS = 4_000_000  # beyond this a stretch is aligned leftmost instead of with fewest gaps


class AlignmentError(ValueError):
    """The cleaned text is not the original with pieces deleted (modulo whitespace)."""


def fewest_gaps(a: str, b: str) -> list[int] | None:
    """Positions in `a` of the characters of `b` (b as a subsequence of a) with the fewest
    maximal runs of skipped characters of `a` (leading and trailing runs count), leftmost
    among equals; None when b is not a subsequence of a."""
    n, m = len(a), len(b)
    if m == 0:
        return []
    if n * m > DP_CELLS:
        return leftmost(a, b)
    inf = n + m + 2
    # best[j][i]: fewest gaps for b[:j] ending with b[j-1] matched at a[i-1]
    prev = [0] + [inf] * n  # j = 0: nothing matched; "ended" before position i: gap if i > 0
    back: list[list[int]] = []
    for j in range(1, m + 1):
        cur = [inf] * (n + 1)
        choice = [-1] * (n + 1)
        best_before, best_at = inf, -1  # min over k < i-1 of prev[k] + gap(k, i-1)
        for i in range(1, n + 1):
            k = i - 2  # candidates k <= i-2 become available: a gap a[k:i-1] of length > 0
            if k >= 0 and prev[k] + 1 < best_before:
                best_before, best_at = prev[k] + 1, k
            if a[i - 1] != b[j - 1]:
                continue
            if j == 1:
                cost_here, from_here = (0 if i == 1 else 1), 0
                cur[i], choice[i] = cost_here, from_here
                continue
            if prev[i - 1] < inf and prev[i - 1] <= best_before:
                cur[i], choice[i] = prev[i - 1], i - 1
            elif best_before < inf:
                cur[i], choice[i] = best_before, best_at
        back.append(choice)
        prev = cur
    best, end = inf, -1
    for i in range(1, n + 1):
        total = prev[i] + (1 if i < n else 0)
        if total < best:
            best, end = total, i
    if end < 0:
        return None
    positions = [0] * m
    i = end
    for j in range(m, 0, -1):
        positions[j - 1] = i - 1
        i = back[j - 1][i]
    return positions


def leftmost(a: str, b: str) -> list[int] | None:
    """Positions in `a` of the characters of `b` matched as early as possible, or None."""
    positions, i = [], 0
    for ch in b:
        i = a.find(ch, i)
        if i < 0:
            return None
        positions.append(i)
        i += 1
    return positions


def _merge(spans: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Spans in order, joined when only whitespace separates them."""
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and not text[merged[-1][1]:start].strip():
            merged[-1][1] = end
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def removed_spans(original: str, cleaned: str) -> list[tuple[int, int]]:
    """[start, end) spans of `original` that were deleted to give `cleaned` (whitespace aside);
    AlignmentError when there is no such deletion."""
    words = [(m.start(), m.end()) for m in WORD.finditer(original)]
    b_words = WORD.findall(cleaned)
    try:
        kept = _align_lines(original, words, cleaned, b_words)
    except AlignmentError:  # the matching blocks led astray: align every character at once
        kept = _align_stretch(original, words, b_words, whole=True)
    removed, cursor = [], 0
    for start, end in kept:
        if start > cursor:
            removed.append((cursor, start))
        cursor = end
    if cursor < len(original):
        removed.append((cursor, len(original)))
    spans = []
    for start, end in removed:  # without the whitespace at either edge
        piece = original[start:end]
        if piece.strip():
            spans.append((start + len(piece) - len(piece.lstrip()),
                          end - (len(piece) - len(piece.rstrip()))))
    return _merge(spans, original)


def _line_keys(words: list[str], line_of: list[int]) -> tuple[list[str], list[int]]:
    """Whole lines as keys (their words joined by one space) and each line's first word."""
    keys, firsts = [], []
    for index, word in enumerate(words):
        if index == 0 or line_of[index] != line_of[index - 1]:
            keys.append(word)
            firsts.append(index)
        else:
            keys[-1] += " " + word
    return keys, firsts


def _align_lines(original: str, words: list[tuple[int, int]], cleaned: str,
                 b_words: list[str]) -> list[tuple[int, int]]:
    """Kept ranges: whole lines first (the unit most tools delete, and cheap to match on long
    pages), then words, then characters inside the stretches where lines differ."""
    a_words = [original[s:e] for s, e in words]
    a_line = _line_numbers(original, words)
    b_line = _line_numbers(cleaned, [(m.start(), m.end()) for m in WORD.finditer(cleaned)])
    a_keys, a_first = _line_keys(a_words, a_line)
    b_keys, b_first = _line_keys(b_words, b_line)
    a_first.append(len(a_words))
    b_first.append(len(b_words))
    kept: list[tuple[int, int]] = []
    lines = difflib.SequenceMatcher(None, a_keys, b_keys, autojunk=False)
    for tag, i1, i2, j1, j2 in lines.get_opcodes():
        wa, wb = (a_first[i1], a_first[i2]), (b_first[j1], b_first[j2])
        if tag == "equal":
            kept.extend(words[wa[0]:wa[1]])
        elif tag != "delete":
            kept.extend(_align_words(original, words[wa[0]:wa[1]], a_words[wa[0]:wa[1]],
                                     b_words[wb[0]:wb[1]]))
    return kept


def _line_numbers(text: str, spans: list[tuple[int, int]]) -> list[int]:
    line, cursor, out = 0, 0, []
    for start, _ in spans:
        line += text.count("\n", cursor, start)
        cursor = start
        out.append(line)
    return out


def _align_words(original: str, words: list[tuple[int, int]], a_words: list[str],
                 b_words: list[str]) -> list[tuple[int, int]]:
    kept: list[tuple[int, int]] = []
    matcher = difflib.SequenceMatcher(None, a_words, b_words, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            kept.extend(words[i1:i2])
        elif tag in ("replace", "insert"):
            kept.extend(_align_stretch(original, words[i1:i2], b_words[j1:j2]))
    return kept


def _align_stretch(original: str, words: list[tuple[int, int]], b_words: list[str],
                   whole: bool = False) -> list[tuple[int, int]]:
    """Kept character ranges of `original` inside `words` that spell `b_words` (no spaces)."""
    a_chars = "".join(original[s:e] for s, e in words)
    b_chars = "".join(b_words)
    positions = fewest_gaps(a_chars, b_chars)
    if positions is None:
        where = words[0][0] if words else len(original)
        raise AlignmentError(
            f"{'the cleaned text' if whole else 'a stretch'} is not a deletion of the original "
            f"(near character {where}: {b_chars[:60]!r} is not in {a_chars[:60]!r})")
    offsets = [s + k for s, e in words for k in range(e - s)]  # original offset per char
    kept: list[tuple[int, int]] = []
    for p in positions:
        at = offsets[p]
        if kept and kept[-1][1] == at:
            kept[-1] = (kept[-1][0], at + 1)
        else:
            kept.append((at, at + 1))
    return kept
