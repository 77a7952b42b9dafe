"""Whole-line phrases equal the brute-force reference of their definition (tests/phrases/oracle),
alone and merged with the maximal phrases of BloomSpan, also when every hash collides and with
numba's JIT off."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import TokenCorpus
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.phrases.lines import line_ends, mine_whole_lines, whole_line_matches
from corpus_miner.phrases.miner import BloomSpan
from tests.helpers import run_python
from tests.phrases.oracle import brute_force_mcfp, brute_force_whole_lines


def corpus_of(docs_lines) -> TokenCorpus:
    """A TokenCorpus (ids as tokens, vocabulary "w0", "w1", ...) with its line starts."""
    tokens, doc_offsets, line_starts = [], [0], []
    for lines in docs_lines:
        for line in lines:
            line_starts.append(len(tokens))
            tokens += line
        doc_offsets.append(len(tokens))
    vocab = [f"w{i}" for i in range(max(tokens, default=0) + 1)]
    starts = np.array(line_starts, dtype=np.int64)
    return TokenCorpus(np.array(tokens, dtype=np.uint32), np.array(doc_offsets, dtype=np.int64),
                       [str(i) for i in range(len(docs_lines))], vocab, None, starts, starts[:0])


@st.composite
def lined_corpora(draw):
    """Documents made of lines: planted short lines (some reused as parts of longer lines, so
    a sequence is a whole line in some documents and inside a line in others), random lines
    and planted long blocks over a small alphabet."""
    words = draw(st.integers(2, 6))
    line = st.lists(st.integers(0, words - 1), min_size=1, max_size=6)
    pool = draw(st.lists(line, min_size=1, max_size=5))
    choice = st.one_of(st.sampled_from(pool), line,
                       st.tuples(st.sampled_from(pool), st.sampled_from(pool)).map(
                           lambda pair: pair[0] + pair[1]))
    docs = draw(st.lists(st.lists(choice, max_size=7), min_size=1, max_size=9))
    sigma = draw(st.integers(2, 4))
    min_line_length = draw(st.integers(1, 4))
    min_length = draw(st.integers(2, 8))
    return docs, sigma, min_line_length, min_length


def key_set(table):
    return table.key_set()


@settings(max_examples=150, deadline=None)
@given(lined_corpora(), st.sampled_from([None, 0x0, 0x3]))
def test_whole_lines_equal_brute_force(case, hash_mask):
    docs, sigma, min_line_length, min_length = case
    corpus = corpus_of(docs)
    options = {} if hash_mask is None else {"hash_mask": np.uint64(hash_mask)}
    table = mine_whole_lines(corpus.tokens, corpus.doc_offsets, corpus.line_starts, sigma,
                             min_line_length, min_length, corpus.vocab, **options)
    assert key_set(table) == brute_force_whole_lines(docs, sigma, min_line_length, min_length)
    assert table.whole_line_mask.all()
    assert np.array_equal(table.canonical_order(), np.arange(len(table)))


@settings(max_examples=60, deadline=None)
@given(lined_corpora(), st.sampled_from(["bloomspan", "fhk"]))
def test_miner_answer_is_the_maximal_phrases_and_the_whole_lines(case, algorithm):
    docs, sigma, min_line_length, min_length = case
    corpus = corpus_of(docs)
    flat = [[t for line in lines for t in line] for lines in docs]
    miner = BloomSpan(sigma=sigma, min_length=min_length, algorithm=algorithm,
                      min_line_length=min_line_length).fit(corpus)
    table = miner.phrases_
    ordinary = brute_force_mcfp(flat, sigma, min_length)
    lines = brute_force_whole_lines(docs, sigma, min_line_length, min_length)
    flags = table.whole_line_mask
    assert key_set(table.take(np.flatnonzero(~flags))) == ordinary
    assert key_set(table.take(np.flatnonzero(flags))) == lines
    assert np.array_equal(table.canonical_order(), np.arange(len(table)))
    assert miner.stats_["whole_line_phrases"] == len(lines)
    plain = BloomSpan(sigma=sigma, min_length=min_length, algorithm=algorithm).fit(corpus)
    assert plain.phrases_.whole_line is None and key_set(plain.phrases_) == ordinary


@settings(max_examples=80, deadline=None)
@given(lined_corpora(), st.sampled_from([None, 0x1]))
def test_whole_line_matches_find_exactly_the_equal_lines(case, hash_mask):
    docs, sigma, min_line_length, min_length = case
    corpus = corpus_of(docs)
    wanted = sorted({tuple(line) for lines in docs for line in lines})[::2]
    from corpus_miner.phrases.result import PhraseTable

    table = PhraseTable.from_lists([list(w) for w in wanted], [0] * len(wanted),
                                   [0] * len(wanted), corpus.vocab)
    options = {} if hash_mask is None else {"hash_mask": np.uint64(hash_mask)}
    phrase, doc, start = whole_line_matches(corpus.tokens, corpus.doc_offsets,
                                            corpus.line_starts, table, **options)
    expected, position = [], 0
    for d, lines in enumerate(docs):
        for line in lines:
            if tuple(line) in wanted:
                expected.append((wanted.index(tuple(line)), d, position))
            position += len(line)
    assert list(zip(phrase.tolist(), doc.tolist(), start.tolist())) == expected


def test_line_ends_stop_at_the_next_line_or_the_document_end():
    starts = np.array([0, 2, 5, 7], dtype=np.int64)
    offsets = np.array([0, 5, 5, 9], dtype=np.int64)
    assert line_ends(starts, offsets).tolist() == [2, 5, 7, 9]


def test_an_example_with_a_short_boilerplate_line():
    share, posted = [1, 2, 3], [4, 5]
    docs = [[share, [6 + i, 7, 8, 9]] + ([posted] if i % 2 else [[9, 4, 5, 8]])
            for i in range(4)]
    corpus = corpus_of(docs)
    table = BloomSpan(sigma=2, min_length=10, min_line_length=2).fit(corpus).phrases_
    rows = {tuple(table.phrase_ids(i).tolist()): (int(table.df[i]), int(table.occurrences[i]))
            for i in range(len(table))}
    # "4 5" is a whole line in 2 documents (inside a line in the other 2: not counted there);
    # "6+i 7 8 9" differs in every document
    assert rows == {(1, 2, 3): (4, 4), (4, 5): (2, 2), (9, 4, 5, 8): (2, 2)}


def test_parameters_and_corpora_without_lines_are_refused():
    corpus = corpus_of([[[1, 2]], [[1, 2]]])
    bare = TokenCorpus(corpus.tokens, corpus.doc_offsets, corpus.doc_ids, corpus.vocab)
    with pytest.raises(InputError, match="no line starts"):
        BloomSpan(sigma=2, min_length=3, min_line_length=2).fit(bare)
    with pytest.raises(ParameterError, match="min_line_length"):
        BloomSpan(sigma=2, min_length=3, min_line_length=0).fit(corpus)


def test_kernels_without_jit():
    code = """
        import numpy as np
        from corpus_miner.phrases.lines import mine_whole_lines
        from tests.phrases.test_lines import corpus_of
        from tests.phrases.oracle import brute_force_whole_lines
        docs = [[[1, 2], [3, 4, 5], [1, 2, 6]], [[1, 2], [3, 4, 5]], [[3, 4, 5], [1, 2]],
                [[2, 1], [6]]]
        corpus = corpus_of(docs)
        for mask in (0xFFFFFFFFFFFFFFFF, 0x1):
            table = mine_whole_lines(corpus.tokens, corpus.doc_offsets, corpus.line_starts, 2, 1,
                                     10, corpus.vocab, hash_mask=np.uint64(mask))
            assert table.key_set() == brute_force_whole_lines(docs, 2, 1, 10), table.key_set()
        print("ok")
    """
    assert run_python(code, jit=False).strip() == "ok"
