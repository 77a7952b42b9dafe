"""Coverage with whole-line phrases equals a brute-force reference: a token is covered when it
lies inside a frequent min_length-gram or inside a line equal to a whole-line phrase; each
covered token is attributed to the best-ranked phrase occurring in full over it (a whole-line
phrase only where it is the whole line), else to the best-ranked window owner."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import TokenCorpus
from corpus_miner.coverage.clean import Cleaner
from corpus_miner.coverage.coverage import Coverage, phrases_from_rows
from corpus_miner.errors import InputError
from corpus_miner.phrases.miner import BloomSpan
from tests.phrases.test_lines import corpus_of, lined_corpora


def brute_coverage(docs_lines, sigma, k, table):
    docs = [[t for line in lines for t in line] for lines in docs_lines]
    found_in: dict[tuple, set] = {}
    for d, doc in enumerate(docs):
        for s in range(len(doc) - k + 1):
            found_in.setdefault(tuple(doc[s:s + k]), set()).add(d)
    frequent = {g for g, ds in found_in.items() if len(ds) >= sigma}
    whole = table.whole_line_mask
    phrases = [tuple(int(t) for t in table.phrase_ids(r)) for r in range(len(table))]
    owner_of: dict[tuple, int] = {}
    for rank, phrase in enumerate(phrases):
        if not whole[rank]:
            for s in range(len(phrase) - k + 1):
                owner_of.setdefault(phrase[s:s + k], rank)
    mask, owners = [], []
    for lines, doc in zip(docs_lines, docs):
        bounds, at = [], 0
        for line in lines:
            bounds.append((at, at + len(line)))
            at += len(line)
        m = [0] * len(doc)
        by_window: list = [None] * len(doc)
        by_full: list = [None] * len(doc)
        for s in range(len(doc)):
            g = tuple(doc[s:s + k])
            if len(g) == k and g in frequent:
                for p in range(s, s + k):
                    m[p] = 1
                    by_window[p] = min(owner_of[g], owner_of[g] if by_window[p] is None
                                       else by_window[p])
            for rank, phrase in enumerate(phrases):
                end = s + len(phrase)
                if tuple(doc[s:end]) != phrase or (whole[rank] and (s, end) not in bounds):
                    continue
                for p in range(s, end):
                    m[p] = 1
                    by_full[p] = rank if by_full[p] is None else min(rank, by_full[p])
        mask += m
        owners += [f if f is not None else w for f, w in zip(by_full, by_window)]
    return mask, owners


@settings(max_examples=80, deadline=None)
@given(lined_corpora())
def test_mined_coverage_with_whole_lines_equals_brute_force(case):
    docs, sigma, min_line_length, min_length = case
    corpus = corpus_of(docs)
    miner = BloomSpan(sigma=sigma, min_length=min_length,
                      min_line_length=min_line_length).fit(corpus)
    cov = Coverage.from_miner(miner, corpus)
    mask, owners = brute_coverage(docs, sigma, min_length, cov.phrases)
    assert cov.covered.tolist() == mask
    expected = np.zeros(len(cov.phrases), dtype=np.int64)
    for o in owners:
        if o is not None:
            expected[o] += 1
    assert cov.tokens_by_phrase.tolist() == expected.tolist()
    assert cov.summary()["whole_line_phrases"] == int(miner.phrases_.whole_line_mask.sum())
    assert cov.min_line_length == min_line_length
    # a whole-line phrase occurs only where it is the whole line
    for phrase, start in zip(cov.occurrences.phrase, cov.occurrences.start):
        if cov.phrases.whole_line_mask[phrase]:
            assert start in corpus.line_starts


def test_a_listed_whole_line_phrase_is_applied_only_as_a_whole_line():
    # "1 2" is a whole line in documents 0 and 1, inside a line in document 2
    docs = [[[1, 2], [3, 4, 5]], [[6], [1, 2]], [[7, 1, 2, 8]]]
    corpus = corpus_of(docs)
    vocab = corpus.vocab
    rows = [{"phrase": "w1 w2", "whole_line": True}, {"phrase": "w4 w5"}]
    table, unmatched = phrases_from_rows(rows, vocab, str.split)
    assert not unmatched and table.whole_line_mask.tolist() == [True, False]
    cov = Coverage.from_phrase_list(corpus, table)
    assert cov.covered.tolist() == [1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0]
    by_text = {cov.phrases.text(i): (int(cov.phrases.df[i]), int(cov.phrases.occurrences[i]))
               for i in range(len(cov.phrases))}
    assert by_text == {"w1 w2": (2, 2), "w4 w5": (1, 1)}
    plain, _ = phrases_from_rows([{"phrase": "w1 w2"}], vocab, str.split)
    assert plain.whole_line is None
    assert Coverage.from_phrase_list(corpus, plain).covered.tolist()[9:11] == [1, 1]


def test_whole_line_phrases_need_line_starts():
    corpus = corpus_of([[[1, 2]], [[1, 2]]])
    table, _ = phrases_from_rows([{"phrase": "w1 w2", "whole_line": "true"}], corpus.vocab,
                                 str.split)
    bare = TokenCorpus(corpus.tokens, corpus.doc_offsets, corpus.doc_ids, corpus.vocab)
    with pytest.raises(InputError, match="line starts"):
        Coverage.from_phrase_list(bare, table)


@settings(max_examples=30, deadline=None)
@given(lined_corpora(), st.booleans())
def test_cleaner_masks_what_the_coverage_covers(case, keep_first):
    docs, sigma, min_line_length, min_length = case
    corpus = corpus_of(docs)
    miner = BloomSpan(sigma=sigma, min_length=min_length,
                      min_line_length=min_line_length).fit(corpus)
    cov = Coverage.from_miner(miner, corpus)
    cleaner = Cleaner(keep_first=keep_first).fit(corpus, cov)
    assert cleaner.mask_.sum() <= cov.covered.sum()
    if not keep_first:
        assert cleaner.mask_.tolist() == cov.covered.tolist()
