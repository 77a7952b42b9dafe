"""PhraseCleaner (a batch at a time, phrase vocabulary only) against the whole-corpus path of
`corpus-miner clean --phrases`: load_corpus, Coverage.from_phrase_list, Cleaner.fit, transform."""

from __future__ import annotations

import json
import pickle
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.cli import main
from corpus_miner.corpus import load_corpus, tokenize
from corpus_miner.coverage.clean import Cleaner
from corpus_miner.coverage.coverage import Coverage, phrases_from_texts
from corpus_miner.coverage.phrase_cleaner import PhraseCleaner
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.io import read_documents

WORDS = ["Cookie", "policy", "accept", "all", "Straße", "中文", "广告", "naïve", "x2", "42",
         "home", "news", "Share", "this", "post", "İstanbul"]
GLUE = ["", "", "", ".", ",", "!", "(", ")", "©", "。", "|"]
SEPARATORS = [" ", " ", " ", "\n", "\n\n", "", "\r\n", "\t", "\u3000"]


@st.composite
def texts(draw):
    parts = []
    for _ in range(draw(st.integers(0, 14))):
        parts.append(draw(st.sampled_from(GLUE)) + draw(st.sampled_from(WORDS))
                     + draw(st.sampled_from(GLUE)))
        parts.append(draw(st.sampled_from(SEPARATORS)))
    return "".join(parts)


@st.composite
def cases(draw):
    docs = draw(st.lists(texts(), min_size=1, max_size=10))
    phrase = st.lists(st.sampled_from(WORDS + ["unseen"]), min_size=1, max_size=4).map(" ".join)
    phrases = draw(st.lists(phrase, min_size=0, max_size=8))
    allow = draw(st.lists(phrase, max_size=2))
    mode = draw(st.sampled_from(["remove", "mask", "annotate"]))
    drop_above = draw(st.sampled_from([None, None, 0.0, 0.5, 1.0]))
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(docs) - 1)), max_size=3)))
    return docs, phrases, allow, mode, drop_above, [c for c in cuts if c < len(docs)]


def whole_corpus(path: Path, phrases, allow, mode, drop_above) -> list[dict]:
    """What `corpus-miner clean --phrases` writes, as records (the command's own steps)."""
    corpus = load_corpus([path])
    table, _ = phrases_from_texts(phrases, corpus.vocab, tokenize)
    coverage = Coverage.from_phrase_list(corpus, table)
    cleaner = Cleaner(mode, False, allow, drop_above, "[…]").fit(corpus, coverage)
    rows: list[dict] = []
    for records in cleaner.transform(read_documents([path])):
        rows += records.to_pylist()
    return rows


@settings(max_examples=60, deadline=None)
@given(cases())
def test_batches_give_the_whole_corpus_answer(case):
    docs, phrases, allow, mode, drop_above, cuts = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "docs.jsonl"
        path.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n"
                                for i, t in enumerate(docs)), encoding="utf-8")
        expected = whole_corpus(path, phrases, allow, mode, drop_above)
    cleaner = PhraseCleaner(phrases, mode, allow=allow, drop_above=drop_above)
    got: list[dict] = []
    bounds = [0, *cuts, len(docs)]
    for lo, hi in zip(bounds, bounds[1:]):
        result = cleaner.clean_arrow(docs[lo:hi])
        for i, (text, spans, share) in enumerate(zip(result.texts.to_pylist(),
                                                     result.junk_spans.to_pylist(),
                                                     result.junk_share)):
            if result.keep[i]:
                row = {"id": str(lo + i), "text": text}
                if mode == "annotate":
                    row |= {"junk_spans": spans, "junk_share": float(share)}
                got.append(row)
    assert got == expected


def test_null_texts_are_left_as_they_are():
    cleaner = PhraseCleaner(["accept all cookies"], "annotate")
    result = cleaner.clean_arrow(["Accept all cookies!", None, ""])
    assert result.texts.to_pylist() == ["Accept all cookies!", None, ""]
    assert result.junk_spans.to_pylist() == [[[0, 18]], None, []]
    assert result.keep.tolist() == [True, True, True]
    assert PhraseCleaner(["accept all cookies"]).clean_texts([None, "x. Accept all cookies"]) \
        == [None, "x."]


def test_clean_batch_replaces_the_text_column_and_drops_rows_in_every_column():
    cleaner = PhraseCleaner(["accept all cookies"], drop_above=0.7)
    batch = {"id": [1, 2, 3], "text": ["Hi there. Accept all cookies", "Accept all cookies",
                                        None], "url": ["a", "b", "c"]}
    assert cleaner.clean_batch(batch) == {"id": [1, 3], "text": ["Hi there.", None],
                                          "url": ["a", "c"]}
    annotated = PhraseCleaner(["accept all cookies"], "annotate").clean_batch(batch)
    assert annotated["text"] == batch["text"]
    assert annotated["junk_share"] == [0.6, 1.0, None]
    with pytest.raises(InputError, match="no 'body' column"):
        cleaner.clean_batch(batch, text_field="body")


def test_a_phrase_file_reads_like_the_command(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": i, "text": f"Page {i}. Share this post on news"})
                            + "\n" for i in range(5)), encoding="utf-8")
    assert main(["phrases", str(docs), "--sigma", "3", "--min-length", "3", "-o",
                 str(tmp_path / "p.tsv")]) == 0
    assert main(["clean", str(docs), "--phrases", str(tmp_path / "p.tsv"), "-o",
                 str(tmp_path / "c.jsonl")]) == 0
    expected = [json.loads(line)["text"] for line in
                (tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines()]
    cleaner = PhraseCleaner(tmp_path / "p.tsv")
    texts = [json.loads(line)["text"] for line in docs.read_text(encoding="utf-8").splitlines()]
    assert cleaner.clean_texts(texts) == expected
    again = pickle.loads(pickle.dumps(cleaner))  # as datatrove ships it to a worker
    assert again.clean_texts(texts) == expected and again.n_phrases == cleaner.n_phrases


def test_bad_parameters_fail_at_construction(tmp_path):
    with pytest.raises(ParameterError, match="mode must be one of"):
        PhraseCleaner(["a"], mode="cut")
    with pytest.raises(ParameterError, match="share between 0 and 1"):
        PhraseCleaner(["a"], drop_above=2)
    with pytest.raises(InputError, match="no such phrase file"):
        PhraseCleaner(tmp_path / "missing.tsv")
    with pytest.raises(ParameterError, match="list of strings"):
        PhraseCleaner([1, 2])


def test_no_phrases_change_nothing():
    result = PhraseCleaner([]).clean_arrow(["Hello world"])
    assert result.texts.to_pylist() == ["Hello world"]
    assert np.array_equal(result.handled, [0])
