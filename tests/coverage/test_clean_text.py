"""Text surgery of the cleaner: spans are token offsets, removal never splits tokens or characters,
joins cleanly, and leaves exactly the unhandled tokens."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import token_spans, tokenize
from corpus_miner.coverage.clean import mask_runs, remove_runs, run_char_spans

WORDS = ["Hello", "WORLD", "straße", "École", "中文", "naïve", "e\u0301t\u0301e", "İstanbul",
         "x2", "42", "ÆØÅ", "Ωμέγα", "ok", "我们使用", "コーヒー", "か\u3099", "\u0301x", "สวัสดี"]
GLUE = ["", "", "", ".", ",", "!", "(", ")", "©", "—", "🙂", "'s", ":", "。", "、", "「", "」"]
SEPARATORS = [" ", " ", " ", "\n", "\n\n", ""]  # "": scripts written without spaces


@st.composite
def texts_with_runs(draw):
    n = draw(st.integers(1, 14))
    parts = []
    for i in range(n):
        word = draw(st.sampled_from(WORDS))
        before, after = draw(st.sampled_from(GLUE)), draw(st.sampled_from(GLUE))
        parts.append(before + word + after)
        if i < n - 1:
            parts.append(draw(st.sampled_from(SEPARATORS)))
    text = "".join(parts)
    n_tokens = len(tokenize(text))
    mask = draw(st.lists(st.booleans(), min_size=n_tokens, max_size=n_tokens))
    runs, i = [], 0
    while i < n_tokens:
        if mask[i]:
            j = i
            while j < n_tokens and mask[j]:
                j += 1
            runs.append([i, j])
            i = j
        else:
            i += 1
    return text, np.array(runs, dtype=np.int64).reshape(-1, 2), mask


@settings(max_examples=300, deadline=None)
@given(texts_with_runs())
def test_remove_leaves_exactly_the_unhandled_tokens(case):
    text, runs, mask = case
    starts, ends = token_spans(text)
    cleaned = remove_runs(text, starts, ends, runs)
    tokens = tokenize(text)
    assert tokenize(cleaned) == [t for t, m in zip(tokens, mask) if not m]
    # separators in the input are "", " ", "\n", "\n\n": the cuts introduce no longer runs and
    # no whitespace at either end
    assert not re.search(r"  |\n\n\n| \n|\n ", cleaned)
    assert cleaned == cleaned.strip() or cleaned == text
    if not any(mask):
        assert cleaned == text


@settings(max_examples=200, deadline=None)
@given(texts_with_runs())
def test_spans_are_the_character_offsets_of_the_covered_tokens(case):
    text, runs, mask = case
    starts, ends = token_spans(text)
    spans = run_char_spans(starts, ends, runs)
    covered_chars = set()
    for s, e in spans:
        covered_chars.update(range(s, e))
    for k, m in enumerate(mask):
        token_chars = set(range(int(starts[k]), int(ends[k])))
        assert token_chars <= covered_chars if m else not token_chars & covered_chars
    for s, e in spans:  # a span starts and ends on a covered token
        assert tokenize(text[s:e]) and text[s:e].lower().startswith(
            tokenize(text[s:e])[0][:1])
    masked = mask_runs(text, starts, ends, runs, "<J>")
    expected = []
    for k, token in enumerate(tokenize(text)):
        if not mask[k]:
            expected.append(token)
        elif k == 0 or not mask[k - 1]:
            expected.append("j")
    assert tokenize(masked) == expected


def test_examples_read_naturally():
    text = ("Great product. © 2024 ACME Inc. All rights reserved.\n\nSecond paragraph stays."
            "\nRead also: Ten tips!\nThe end")
    starts, ends = token_spans(text)
    tokens = tokenize(text)
    covered = {"2024", "acme", "inc", "all", "rights", "reserved", "read", "also"}
    mask = [t in covered for t in tokens]
    runs = np.array([[i, i + 1] for i, m in enumerate(mask) if m], dtype=np.int64)
    # merge adjacent single-token runs into maximal runs
    merged = []
    for a, b in runs:
        if merged and merged[-1][1] == a:
            merged[-1][1] = b
        else:
            merged.append([a, b])
    runs = np.array(merged, dtype=np.int64)
    assert remove_runs(text, starts, ends, runs) == (
        "Great product. ©\n\nSecond paragraph stays.\nTen tips!\nThe end")
    assert mask_runs(text, starts, ends, runs, "[x]") == (
        "Great product. © [x].\n\nSecond paragraph stays.\n[x]: Ten tips!\nThe end")
    whole = np.array([[0, len(tokens)]], dtype=np.int64)
    assert remove_runs(text, starts, ends, whole) == ""
    # glued on both sides by punctuation only: tokens must not fuse; the closing comma goes
    text = "alpha.JUNK,beta"
    starts, ends = token_spans(text)
    assert remove_runs(text, starts, ends, np.array([[1, 2]])) == "alpha.beta"
    assert remove_runs("alpha.JUNK-beta", *token_spans("alpha.JUNK-beta"),
                       np.array([[1, 2]])) == "alpha.-beta"


def _remove_tokens(text, first, end):
    return remove_runs(text, *token_spans(text), np.array([[first, end]], dtype=np.int64))


def test_cjk_cuts_keep_characters_whole_and_add_no_spaces():
    # 我们使用cookie。这是广告。欢迎 -> the sentence 这是广告 and its 。 go, nothing is inserted
    text = "我们使用cookie。这是广告。欢迎"
    assert tokenize(text)[5:9] == ["这", "是", "广", "告"]
    assert _remove_tokens(text, 5, 9) == "我们使用cookie。欢迎"
    assert _remove_tokens(text, 0, 4) == "cookie。这是广告。欢迎"
    assert _remove_tokens("前文广告后文", 2, 4) == "前文后文"
    assert _remove_tokens("前文「广告」后文", 2, 4) == "前文「」后文"  # an opening bracket stays
    assert _remove_tokens("abc中def", 1, 2) == "abc def"         # two runs would fuse: a space
    assert _remove_tokens("中x\u0301中", 1, 2) == "中中"
    assert _remove_tokens("コーヒーです", 0, 4) == "です"
    # a combining mark stays on its character: the cut takes the character with its marks
    assert _remove_tokens("か\u3099き", 0, 1) == "き"
    assert _remove_tokens("か\u3099き", 1, 2) == "か\u3099"
