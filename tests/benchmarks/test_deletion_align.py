"""The deletion-only aligner against hand-made cases and brute force."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deletion_align import AlignmentError, fewest_gaps, removed_spans


def _apply(text: str, spans) -> str:
    out, cursor = [], 0
    for start, end in spans:
        out.append(text[cursor:start])
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def _ink(text: str) -> str:
    return "".join(text.split())


def test_the_first_of_two_similar_lines_is_the_one_deleted():
    text = "Read more.\nRead more about the kernel."
    assert removed_spans(text, "Read more about the kernel.") == [(0, 10)]


def test_deleted_lines_and_whitespace_normalised_by_the_tool():
    text = "Home | About\n\nBody line one.\n  Body   line two.\nShare this"
    cleaned = "Body line one.\nBody line two."
    spans = removed_spans(text, cleaned)
    assert [text[s:e] for s, e in spans] == ["Home | About", "Share this"]


def test_a_cut_inside_a_word_and_a_dropped_citation():
    text = "The value[1] is kept. Advertisement"
    spans = removed_spans(text, "The value is kept.")
    assert [text[s:e] for s, e in spans] == ["[1]", "Advertisement"]


def test_everything_removed_and_nothing_removed():
    assert removed_spans("a b c", "") == [(0, 5)]
    assert removed_spans("a b c", " a  b\nc ") == []


def test_text_that_is_not_a_deletion_fails_loudly():
    with pytest.raises(AlignmentError):
        removed_spans("alpha beta", "alpha gamma")
    with pytest.raises(AlignmentError):
        removed_spans("one two", "two one")


def _brute_fewest(a: str, b: str):
    best = None
    for picks in itertools.combinations(range(len(a)), len(b)):
        if all(a[p] == ch for p, ch in zip(picks, b)):
            gaps = (picks[0] > 0 if picks else len(a) > 0)
            gaps += sum(1 for x, y in zip(picks, picks[1:]) if y > x + 1)
            gaps += bool(picks) and picks[-1] < len(a) - 1
            best = gaps if best is None else min(best, gaps)
    return best


def _gaps(a: str, positions) -> int:
    if not positions:
        return int(len(a) > 0)
    gaps = int(positions[0] > 0) + int(positions[-1] < len(a) - 1)
    return gaps + sum(1 for x, y in zip(positions, positions[1:]) if y > x + 1)


@settings(max_examples=300, deadline=None)
@given(st.text("abc", max_size=9), st.text("abc", max_size=5))
def test_fewest_gaps_is_a_subsequence_with_the_fewest_gaps(a, b):
    positions = fewest_gaps(a, b)
    best = _brute_fewest(a, b)
    if best is None:
        assert positions is None
        return
    assert positions is not None
    assert "".join(a[p] for p in positions) == b
    assert all(x < y for x, y in zip(positions, positions[1:]))
    assert _gaps(a, positions) == best


WORDS = st.sampled_from(["the", "page", "Home", "a", "read", "more.", "x1", "é", "[2]"])
SPACES = st.sampled_from([" ", "\n", "\n\n", "  "])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(WORDS, SPACES), min_size=1, max_size=14), st.data())
def test_any_deletion_is_recovered_as_a_valid_deletion(pieces, data):
    text = "".join(w + s for w, s in pieces)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    deleted = list(zip(cuts[::2], cuts[1::2]))
    cleaned = _apply(text, deleted)
    cleaned = "\n".join(" ".join(line.split()) for line in cleaned.split("\n"))  # a tool's tidy-up
    spans = removed_spans(text, cleaned)
    assert _ink(_apply(text, spans)) == _ink(cleaned)
    assert all(text[s:e].strip() for s, e in spans)
    assert all(e1 < s2 for (_, e1), (s2, _) in zip(spans, spans[1:]))


@settings(max_examples=100, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=8), st.sampled_from(["zz", "q"]))
def test_an_insertion_is_never_aligned(words, extra):
    text = " ".join(words)
    with pytest.raises(AlignmentError):
        removed_spans(text, text + " " + extra)
