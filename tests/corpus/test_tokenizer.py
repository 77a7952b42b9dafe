"""The compiled tokenizer equals the plain-Python definition, spans map back to the text."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import TokenIdAssigner, join_tokens, token_spans, tokenize
from corpus_miner.corpus.tokenizer import needs_separator
from tests.corpus.reference import SINGLE, lowered_pieces, reference_ids, reference_tokens
from tests.helpers import run_python

# Characters that stress the rules: case pairs, İ (two-char lowercase), Σ (final sigma), combining
# marks, digits of several scripts, emoji with modifiers, punctuation and spaces; and the scripts
# written without spaces: Han (BMP, compatibility, extension planes), kana (full and halfwidth),
# the Common/Han/kana marks ー ｰ ﾞ 々 ゝ ヽ 〆 〇, the combining voiced mark, Thai/Lao/Khmer/Myanmar
# letters with their vowel marks and digits, Hangul (written with spaces: runs), ʼ (U+02BC,
# Common with a Thai extension: a run letter).
TRICKY = list("aZé ΣσςΑΒΓΟΔ İıI i\u0307\u0301\u0308\u20dd ß ǅǄﬁ 中文字 ١٢٣ ½ Ⅻ ⅻ 😀👍🏽 "
              "'’.-,!?;:/\\\"()[] \t\n\r\u00a0\u2028 _ $ ^ Ꙋᲀ ÅÆØ Ꭰꭰ 𐐀𐐨 "
              "我们使用cookie 豈廓 𠀀𪚲 かなカナｶﾅ ーｰﾞﾟ 々ゝゞヽ〆〇 \u3099 、。「」 "
              "กิ่๒๕ ສະ໑ ក្ខ១ မြ၁ 한국어 ʼ ①㈠")
# Lone surrogates cannot be stored in Arrow (valid UTF-8 only); see test_lone_surrogate.
texts = st.text(alphabet=st.one_of(st.sampled_from(TRICKY),
                                   st.characters(exclude_categories=("Cs",))), max_size=40)


def assign(docs, **capacity):
    assigner = TokenIdAssigner(**capacity)
    assigner.add_texts(pa.array(docs, pa.string()))
    tokens, doc_offsets, vocab = assigner.finish()
    return [tokens[doc_offsets[i]:doc_offsets[i + 1]].tolist() for i in range(len(docs))], vocab


@settings(max_examples=300, deadline=None)
@given(texts)
def test_tokenize_equals_reference(text):
    assert tokenize(text) == reference_tokens(text)


@settings(max_examples=150, deadline=None)
@given(st.lists(texts, max_size=6), st.integers(1, 3))
def test_bulk_ids_equal_reference_with_tiny_buffers(docs, n_batches):
    """Tiny initial buffers force every growth path (table, vocab slots, bytes, tokens)."""
    expected_ids, expected_vocab = reference_ids(docs)
    assigner = TokenIdAssigner(initial_vocab=1, initial_tokens=1)
    for part in np.array_split(np.arange(len(docs)), n_batches):
        assigner.add_texts(pa.array([docs[i] for i in part], pa.string()))
    tokens, doc_offsets, vocab = assigner.finish()
    assert vocab.to_list() == expected_vocab
    assert tokens.dtype == np.uint32 and doc_offsets.dtype == np.int64
    got = [tokens[doc_offsets[i]:doc_offsets[i + 1]].tolist() for i in range(len(docs))]
    assert got == expected_ids


# Mostly ASCII words of 0-12 letters and digits in mixed case (the scan's word-at-a-time path
# takes runs of up to 8 bytes), glued by separators next to the case ranges (@ [ ` {), and by
# characters that continue a run (é, a combining mark) or take the exact path (İ, Σ).
ascii_words = st.text(alphabet="aAzZmM09@[`{", max_size=12)
glue = st.sampled_from(["", " ", " ", ", ", "\n", "é", "É", "ß", "中", "\u0301", "İ", "Σ", "’"])
ascii_texts = st.lists(st.tuples(ascii_words, glue), max_size=30).map(
    lambda pieces: "".join(word + sep for word, sep in pieces))


@settings(max_examples=200, deadline=None)
@given(st.lists(ascii_texts, max_size=5), st.booleans())
def test_ascii_runs_equal_reference(docs, tiny):
    capacity = {"initial_vocab": 1, "initial_tokens": 1} if tiny else {}
    ids, vocab = assign(docs, **capacity)
    expected_ids, expected_vocab = reference_ids(docs)
    assert vocab.to_list() == expected_vocab and ids == expected_ids


def test_special_characters_take_the_exact_path():
    docs = ["ΟΔΟΣ ΑΣ'Β", "İstanbul İ", "plain text", "ΣΑΣ σας Σ"]
    got, vocab = assign(docs)
    assert [[vocab[t] for t in doc] for doc in got] == [reference_tokens(d) for d in docs]
    # final sigma at a word end, plain sigma when a cased letter follows after an apostrophe
    assert [vocab[t] for t in got[0]] == ["\u03bf\u03b4\u03bf\u03c2", "\u03b1\u03c3", "\u03b2"]
    assert "i̇stanbul" in vocab.to_list()  # 'İ'.lower() is two code points


@pytest.mark.parametrize("text,expected", [
    ("我们使用cookie来改善您的体验。", ["我", "们", "使", "用", "cookie", "来", "改", "善", "您",
                                   "的", "体", "验"]),
    ("2024年3月", ["2024", "年", "3", "月"]),                 # digits of any script form runs
    ("コーヒー", ["コ", "ー", "ヒ", "ー"]),                  # ー (Common, used with kana): single
    ("ｺｰﾋｰ ｶﾞ", ["ｺ", "ｰ", "ﾋ", "ｰ", "ｶ", "ﾞ"]),                # halfwidth: no folding to fullwidth
    ("時々 いすゞ", ["時", "々", "い", "す", "ゞ"]),               # iteration marks are single
    ("か\u3099", ["か\u3099"]),                                  # a combining mark stays attached
    ("\u3099か", ["\u3099", "か"]),                              # a mark with nothing before: a run
    ("a\u0301中\u0301b", ["a\u0301", "中\u0301", "b"]),
    ("豈 𠀀𪚲", ["豈", "𠀀", "𪚲"]),                       # compatibility and extension planes
    ("สวัสดี ๒๕๖๗", ["ส", "วั", "ส", "ดี", "๒๕๖๗"]),             # Thai vowel marks attach, digits run
    ("ភាសាខ្មែរ", ["ភា", "សា", "ខ្", "មែ", "រ"]),
    ("한국어 텍스트", ["한국어", "텍스트"]),                  # Hangul is written with spaces
    ("donʼt", ["donʼt"]),                                           # U+02BC is not a kana letter
    ("①㈠", ["①", "㈠"]),
])
def test_scripts_without_spaces(text, expected):
    assert tokenize(text) == reference_tokens(text) == expected
    got, vocab = assign([text])
    assert [vocab[t] for t in got[0]] == expected
    starts, ends = token_spans(text)
    assert [text[s:e].lower() for s, e in zip(starts, ends)] == expected


@settings(max_examples=300, deadline=None)
@given(texts)
def test_joined_tokens_tokenize_to_the_same_tokens(text):
    tokens = tokenize(text)
    joined = join_tokens(tokens)
    assert tokenize(joined) == tokens
    # no space between two single characters, one elsewhere
    singles = [regex.match(SINGLE, t, regex.V1) is not None for t in tokens]
    assert joined.count(" ") == sum(not (a and b) for a, b in zip(singles, singles[1:]))


@settings(max_examples=300, deadline=None)
@given(texts.filter(lambda t: "Σ" not in t), texts.filter(lambda t: "Σ" not in t))
def test_needs_separator_says_whether_concatenation_joins_tokens(left, right):
    """(Σ excluded: its lowercase depends on the text after it, a case apart from joining.)"""
    apart = tokenize(left) + tokenize(right)
    if needs_separator(left, right):
        assert tokenize(left + right) != apart and tokenize(left + " " + right) == apart
    else:
        assert tokenize(left + right) == apart


def test_cjk_tokens_are_joined_without_spaces():
    tokens = ["我", "们", "使", "用", "cookie", "来", "体", "验"]
    assert join_tokens(tokens) == "我们使用 cookie 来体验"
    assert join_tokens(["the", "cat", "中", "\u0301x"]) == "the cat 中 \u0301x"
    assert join_tokens(["コ", "ー", "ヒ", "ー", "2024", "年"]) == "コーヒー 2024 年"


def test_ids_follow_first_appearance_and_repeat():
    got, vocab = assign(["B a b", "", "A c"])
    assert got == [[0, 1, 0], [], [1, 2]]
    assert vocab.to_list() == ["b", "a", "c"]


def test_sliced_and_large_string_arrays():
    docs = ["x y", "Hello World", "hello again", "z"]
    arr = pa.array(docs, pa.large_string()).slice(1, 2)
    assigner = TokenIdAssigner()
    assigner.add_texts(arr)
    tokens, offsets, vocab = assigner.finish()
    assert [vocab[t] for t in tokens] == ["hello", "world", "hello", "again"]
    assert offsets.tolist() == [0, 2, 4]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([b"\xff", b"\xe4\xb8", b"\xce\xa3", b"\xc4\xb0", b"A", b" ",
                                 b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82\xac"]),
                max_size=12).map(b"".join) | st.binary(max_size=40))
def test_invalid_utf8_bytes_separate_tokens_like_replacement(raw):
    arr = pa.StringArray.from_buffers(1, pa.py_buffer(np.array([0, len(raw)], np.int32)),
                                      pa.py_buffer(raw))
    assigner = TokenIdAssigner()
    assigner.add_texts(arr)
    tokens, _, vocab = assigner.finish()
    assert [vocab[t] for t in tokens] == reference_tokens(raw.decode("utf-8", "replace"))


@settings(max_examples=300, deadline=None)
@given(texts)
def test_spans_cover_exactly_the_characters_of_each_token(text):
    starts, ends = token_spans(text)
    assert starts.dtype == np.int64 and ends.dtype == np.int64
    pieces = lowered_pieces(text)
    tokens = reference_tokens(text)
    assert len(starts) == len(tokens)
    for start, end, token in zip(starts.tolist(), ends.tolist(), tokens):
        assert "".join(pieces[start:end]) == token
        if "Σ" not in text[start:end]:  # final sigma depends on context outside the span
            assert tokenize(text[start:end]) == [token]
    # separators between spans produce no token characters
    covered = np.zeros(len(text), bool)
    for start, end in zip(starts.tolist(), ends.tolist()):
        covered[start:end] = True
    assert reference_tokens("".join(p for p, c in zip(pieces, covered) if not c)) == []


def test_spans_of_length_changing_lowercase():
    text = "Aİb, ΟΔΟΣ!"
    starts, ends = token_spans(text)
    assert [text[s:e] for s, e in zip(starts, ends)] == ["Aİb", "ΟΔΟΣ"]
    assert tokenize(text) == ["ai̇b", "οδος"]


def test_lone_surrogate_is_a_separator_in_spans():
    text = "ab\ud800Cd"
    assert tokenize(text) == reference_tokens(text) == ["ab", "cd"]
    assert [list(a) for a in token_spans(text)] == [[0, 3], [2, 5]]


def test_kernels_without_jit():
    """The same kernels interpreted by Python (NUMBA_DISABLE_JIT=1) give the same answer."""
    code = """
        import pyarrow as pa
        from corpus_miner.corpus import TokenIdAssigner, token_spans
        from tests.corpus.reference import reference_ids
        docs = ["Héllo wörld, HELLO!", "ΟΔΟΣ 42 中文 İx", "", "a\\u0301b c",
                "Plain ASCII Words, UPPER lower 12345 and a longer_token1234 here",
                "我们使用cookie。", "コーヒー々ゝ ｶﾞ か\\u3099", "สวัสดี ๒๕๖๗ 𠀀"]
        assigner = TokenIdAssigner(initial_vocab=1, initial_tokens=1)
        assigner.add_texts(pa.array(docs))
        tokens, offsets, vocab = assigner.finish()
        ids, ref_vocab = reference_ids(docs)
        assert vocab.to_list() == ref_vocab, vocab.to_list()
        assert [tokens[offsets[i]:offsets[i + 1]].tolist() for i in range(len(docs))] == ids
        assert [list(a) for a in token_spans("ab, C")] == [[0, 4], [2, 5]]
        assert [list(a) for a in token_spans("中文x\\u0301,")] == [[0, 1, 2], [1, 2, 4]]
        print("ok")
    """
    assert run_python(code, jit=False).strip() == "ok"


def test_capacity_arguments_are_checked():
    with pytest.raises(ValueError):
        TokenIdAssigner(initial_vocab=0)
