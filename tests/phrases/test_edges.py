"""Edge phrases equal the brute-force reference of their definition (tests/phrases/edge_oracle),
mined alone and with the maximal and whole-line phrases, matched and covered at their edge only,
also when every hash collides and with numba's JIT off; they survive a phrase file."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import TokenCorpus
from corpus_miner.corpus.tokenizer import tokenize
from corpus_miner.coverage.coverage import Coverage, phrases_from_rows
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.phrases.edges import edge_matches, mine_edge_phrases
from corpus_miner.phrases.miner import BloomSpan
from corpus_miner.phrases.result import (
    EDGE_SIDES,
    PhraseTable,
    read_phrases,
    write_phrases,
)
from corpus_miner.sources import documents
from tests.helpers import run_python
from tests.phrases.edge_oracle import brute_force_edge_cover, brute_force_edges

SEPARATORS = [". ", ". ", "! ", ": ", "? ", ".) ", ", ", " ", "\u3002", ".", "\n", "\n", "\n\n",
              ".\n", ".\n\n"]


@st.composite
def glued_texts(draw):
    """Documents of word runs over a small alphabet joined by separators (sentence breaks,
    non-breaks, line and paragraph breaks): planted runs (some reused inside longer ones) and
    random runs."""
    words = st.sampled_from("ab cd ef gh ij".split()[:draw(st.integers(2, 5))])
    run = st.lists(words, min_size=1, max_size=6).map(" ".join)
    pool = draw(st.lists(run, min_size=1, max_size=4))
    chunk = st.one_of(st.sampled_from(pool), st.sampled_from(pool), st.sampled_from(pool), run)
    parts = st.lists(st.tuples(chunk, st.sampled_from(SEPARATORS)), min_size=1, max_size=8)
    texts = draw(st.lists(parts.map(lambda ps: "".join(c + s for c, s in ps)), min_size=3,
                          max_size=10))
    sigma = draw(st.integers(2, 3))
    min_edge_length = draw(st.integers(1, 3))
    min_length = draw(st.integers(2, 8))
    return texts, sigma, min_edge_length, min_length


def corpus_of(texts) -> TokenCorpus:
    return documents(list(texts)).token_corpus(sentences=True)


def edge_keys(table: PhraseTable) -> dict:
    """(side, token strings) -> (df, occurrences) of the edge phrases of a table."""
    sides = table.edge_sides
    return {(EDGE_SIDES[sides[i]], tuple(table.vocab[int(t)] for t in table.phrase_ids(i))):
            (int(table.df[i]), int(table.occurrences[i]))
            for i in np.flatnonzero(sides != 0)}


@settings(max_examples=150, deadline=None)
@given(glued_texts(), st.sampled_from([None, 0x0, 0x3]))
def test_edges_equal_brute_force(case, hash_mask):
    texts, sigma, min_edge_length, min_length = case
    corpus = corpus_of(texts)
    options = {} if hash_mask is None else {"hash_mask": np.uint64(hash_mask)}
    table = mine_edge_phrases(corpus.tokens, corpus.doc_offsets, corpus.line_starts,
                              corpus.paragraph_starts, corpus.sentence_starts, sigma,
                              min_edge_length, min_length, corpus.vocab, **options)
    assert edge_keys(table) == brute_force_edges(texts, sigma, min_edge_length, min_length)
    assert (table.edge_sides != 0).all() and len(edge_keys(table)) == len(table)
    assert np.array_equal(table.canonical_order(), np.arange(len(table)))


@settings(max_examples=60, deadline=None)
@given(glued_texts(), st.sampled_from(["bloomspan", "fhk"]), st.sampled_from([None, 1, 2]))
def test_miner_adds_the_edges_to_its_other_phrases(case, algorithm, min_line_length):
    texts, sigma, min_edge_length, min_length = case
    corpus = corpus_of(texts)
    options = dict(sigma=sigma, min_length=min_length, algorithm=algorithm,
                   min_line_length=min_line_length)
    miner = BloomSpan(min_edge_length=min_edge_length, **options).fit(corpus)
    plain = BloomSpan(**options).fit(corpus).phrases_
    table = miner.phrases_
    edges = table.edge_sides != 0
    assert edge_keys(table) == brute_force_edges(texts, sigma, min_edge_length, min_length)
    assert table.take(np.flatnonzero(~edges)).key_set() == plain.key_set()
    assert np.array_equal(table.whole_line_mask[~edges], plain.whole_line_mask)
    assert np.array_equal(table.canonical_order(), np.arange(len(table)))
    assert miner.stats_["edge_phrases"] == int(edges.sum())
    # coverage: the other phrases' tokens, and on every line side the longest edge phrase
    covered = Coverage.from_miner(miner, corpus).covered.astype(bool)
    before = Coverage.from_phrases(corpus, plain, min_length, sigma).covered.astype(bool)
    expected = before.copy()
    for d, marks in enumerate(brute_force_edge_cover(texts, set(edge_keys(table)))):
        expected[[int(corpus.doc_offsets[d]) + k for k in marks]] = True
    assert covered.tolist() == expected.tolist()


@settings(max_examples=80, deadline=None)
@given(glued_texts(), st.sampled_from([None, 0x1]), st.data())
def test_edge_matches_find_the_pieces_at_their_side_only(case, hash_mask, data):
    texts, *_ = case
    corpus = corpus_of(texts)
    runs = sorted({tuple(tokenize(text)[a:b]) for text in texts
                   for a in range(len(tokenize(text))) for b in range(a + 1, a + 4)})
    wanted = data.draw(st.lists(st.tuples(st.sampled_from(["start", "end"]),
                                          st.sampled_from(runs)), unique=True, max_size=6)
                       if runs else st.just([]))
    index = {w: i for i, w in enumerate(corpus.vocab)}
    table = PhraseTable.from_lists([[index[t] for t in piece] for _, piece in wanted],
                                   [0] * len(wanted), [0] * len(wanted), corpus.vocab,
                                   edge=[EDGE_SIDES.index(side) for side, _ in wanted])
    options = {} if hash_mask is None else {"hash_mask": np.uint64(hash_mask)}
    phrase, doc, start = edge_matches(corpus.tokens, corpus.doc_offsets, corpus.line_starts,
                                      corpus.paragraph_starts, corpus.sentence_starts, table,
                                      **options)
    assert np.all(np.diff(start) >= 0)
    found = sorted(zip(phrase.tolist(), doc.tolist(), start.tolist()))
    expected = []
    from tests.phrases.edge_oracle import edge_lines, pieces

    for d, text in enumerate(texts):
        tokens, lines, breaks = edge_lines(text)
        first_token = int(corpus.doc_offsets[d])
        for side, first, end in lines:
            for k, piece in pieces(side, first, end, tokens, breaks, 1, end - first):
                if piece in wanted:
                    at = first if side == "start" else end - k
                    expected.append((wanted.index(piece), d, first_token + at))
    assert found == sorted(expected)


def test_an_example_of_glued_snippets():
    follow = "Follow us on social media for more updates."
    texts = [f"Read more: content {w} number {i}. {follow}\n\nOther {w} {i}."
             for i, w in enumerate("alpha beta gamma delta".split())]
    texts.append(f"{follow} Then content.")  # at a start: a start piece, in one document
    texts.append(f"Inside a sentence {follow.lower()[:-1]} goes on.")  # no break: no piece
    miner = BloomSpan(sigma=3, min_length=10, min_edge_length=2).fit(texts)
    rows = {(row["phrase"], row["edge"]): (row["df"], row["occurrences"])
            for row in miner.phrases_.rows()}
    assert rows == {("follow us on social media for more updates", "end"): (4, 4),
                    ("read more", "start"): (4, 4)}
    annotated = miner.clean(texts, mode="annotate").column("junk_spans").to_pylist()
    assert [texts[0][a:b] for a, b in annotated[0]] == ["Read more", follow[:-1]]
    assert annotated[4] == [] and annotated[5] == []


def test_phrase_files_keep_the_edge(tmp_path):
    texts = [f"Body {i} here. Share this page now\n\nNew {i}. Share this page now"
             for i in range(3)]
    miner = BloomSpan(sigma=3, min_length=10, min_edge_length=3).fit(texts)
    corpus = corpus_of(texts)
    mined = Coverage.from_miner(miner, corpus)
    for name in ("p.jsonl", "p.tsv", "p.parquet"):
        write_phrases(miner.phrases_, tmp_path / name)
        rows = read_phrases(tmp_path / name)
        assert [r["edge"] for r in rows] == ["end"]
        table, unmatched = phrases_from_rows(rows, corpus.vocab, tokenize)
        assert not unmatched and table.edge_sides.tolist() == [2]
        listed = Coverage.from_phrase_list(corpus, table)
        assert listed.covered.tolist() == mined.covered.tolist()
        assert (int(listed.phrases.df[0]), int(listed.phrases.occurrences[0])) == (3, 6)
    with pytest.raises(InputError, match="edge 'middle'"):
        phrases_from_rows([{"phrase": "share this", "edge": "middle"}], corpus.vocab, tokenize)


def test_parameters_and_corpora_without_sentence_starts_are_refused():
    texts = ["a b. c d", "a b. c d"]
    plain = documents(texts).token_corpus()
    with pytest.raises(InputError, match="no sentence starts"):
        BloomSpan(sigma=2, min_length=3, min_edge_length=2).fit(plain)
    with pytest.raises(ParameterError, match="min_edge_length"):
        BloomSpan(sigma=2, min_length=3, min_edge_length=0).fit(texts)
    assert BloomSpan(sigma=2, min_length=5, min_edge_length=2).fit(texts).phrases_.edge_sides \
        .tolist() == [1, 2]


def test_kernels_without_jit():
    code = """
        import numpy as np
        from corpus_miner.phrases.edges import mine_edge_phrases
        from tests.phrases.test_edges import corpus_of, edge_keys
        from tests.phrases.edge_oracle import brute_force_edges
        texts = ["ab cd. ef gh\\n\\nij. ab cd", "ab cd. ef\\nx. ab cd", "ab cd: y z. ab cd"]
        corpus = corpus_of(texts)
        for mask in (0xFFFFFFFFFFFFFFFF, 0x1):
            table = mine_edge_phrases(corpus.tokens, corpus.doc_offsets, corpus.line_starts,
                                      corpus.paragraph_starts, corpus.sentence_starts, 2, 1, 10,
                                      corpus.vocab, hash_mask=np.uint64(mask))
            assert edge_keys(table) == brute_force_edges(texts, 2, 1, 10), edge_keys(table)
            assert len(table)
        print("ok")
    """
    assert run_python(code, jit=False).strip() == "ok"
