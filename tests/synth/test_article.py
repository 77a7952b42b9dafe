"""The article's generators: determinism, the Synthetic 1 known answer, the shapes they promise,
the CLI (the web generator: test_web.py)."""

import json
import os
import stat
from collections import Counter

import pytest

from corpus_miner import synth
from corpus_miner.cli import main
from corpus_miner.errors import ParameterError
from corpus_miner.phrases.exact import mine_fhk
from tests.helpers import encode_words


def answer(docs, sigma, min_length):
    tokens, offsets, vocab = encode_words(docs)
    table, _ = mine_fhk(tokens, offsets, sigma, min_length, vocab)
    return [(table.text(i), int(table.df[i]), int(table.occurrences[i])) for i in range(len(table))]


def test_synthetic1_background_words_are_unique_8_letter_words():
    docs = synth.synthetic1(20, words_per_doc=300, seed=1)
    phrase_words = {w for text, _ in synth.ARTICLE_PHRASES for w in text.split()}
    background = [w for doc in docs for w in doc if w not in phrase_words]
    assert len(background) == 20 * 300
    assert len(set(background)) == len(background)
    assert all(len(w) == 8 and w.isalpha() and w.islower() for w in background)


@pytest.mark.parametrize("sigma,min_length,expected", [
    (2, 2, [("another unique phrase for testing", 5, 5), ("this is the first test sentence", 3, 3),
            ("a third sentence", 4, 4)]),
    (4, 3, [("another unique phrase for testing", 5, 5), ("a third sentence", 4, 4)]),
    (3, 4, [("another unique phrase for testing", 5, 5),
            ("this is the first test sentence", 3, 3)]),
    (6, 2, []),
])
def test_synthetic1_known_answer(sigma, min_length, expected):
    docs = synth.synthetic1(40, words_per_doc=500, seed=7)
    assert answer(docs, sigma, min_length) == expected


def test_synthetic1_custom_phrases_and_supports():
    docs = synth.synthetic1(10, words_per_doc=50, phrases=[("cookie banner text here", 10)], seed=2)
    assert answer(docs, 2, 2) == [("cookie banner text here", 10, 10)]
    with pytest.raises(ParameterError, match="support 11"):
        synth.synthetic1(10, 50, phrases=[("too many docs", 11)])


@pytest.mark.parametrize("generator", [
    lambda seed: synth.synthetic1(5, 100, seed=seed),
    lambda seed: synth.synthetic2(5, 100, seed=seed),
])
def test_generators_are_deterministic_given_seed(generator):
    assert generator(4) == generator(4)
    assert generator(4) != generator(5)


def test_synthetic2_makes_almost_every_family_ngram_frequent():
    docs = synth.synthetic2(80, words_per_doc=100, n_families=1, family_length=20,
                            windows_per_doc=10, seed=0)
    df = Counter()
    for doc in docs:
        df.update({tuple(doc[i:i + 3]) for i in range(len(doc) - 2)})
    frequent = [gram for gram, count in df.items() if count >= 10]
    # One family of length 20 has 18 trigrams; nearly all of them reach df >= 10.
    assert len(frequent) >= 15
    result = answer(docs, 10, 3)
    assert len(result) >= 3  # many overlapping maximal windows, not one whole family
    assert max(len(text.split()) for text, _, _ in result) < 20


def test_generate_cli_writes_jsonl_atomically(tmp_path, capsys):
    out = tmp_path / "s1.jsonl"
    assert main(["generate", "synthetic1", "-o", str(out), "--docs", "6", "--words-per-doc", "30",
                 "--seed", "3", "--phrase", "hello big world:2"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["id"] for row in rows] == [f"synthetic1-{i}" for i in range(6)]
    assert sum("hello big world" in row["text"] for row in rows) == 2
    docs = synth.synthetic1(6, 30, [("hello big world", 2)], seed=3)
    assert rows == [{"id": f"synthetic1-{i}", "text": " ".join(doc)} for i, doc in enumerate(docs)]
    assert stat.S_IMODE(os.stat(out).st_mode) & 0o044  # readable by others, unlike a temp file
    assert [p.name for p in tmp_path.iterdir()] == ["s1.jsonl"]  # no temporary left behind
    assert "wrote 6 documents" in capsys.readouterr().err


def test_generated_file_through_the_tokenizer_gives_the_known_answer(tmp_path):
    from corpus_miner.corpus import load_corpus

    out = tmp_path / "s1.jsonl.gz"
    assert main(["generate", "synthetic1", "-o", str(out), "--docs", "12",
                 "--words-per-doc", "300", "--seed", "9"]) == 0
    corpus = load_corpus([str(out)])
    assert corpus.n_docs == 12 and corpus.n_tokens == 12 * 300 + 3 * 6 + 5 * 5 + 4 * 3
    table, _ = mine_fhk(corpus.tokens, corpus.doc_offsets, 2, 2, corpus.vocab)
    assert [(table.text(i), int(table.df[i])) for i in range(len(table))] == [
        ("another unique phrase for testing", 5), ("this is the first test sentence", 3),
        ("a third sentence", 4)]


def test_generate_cli_synthetic2_window_length(tmp_path):
    out = tmp_path / "s2.jsonl"
    assert main(["generate", "synthetic2", "-o", str(out), "--docs", "5", "--words-per-doc", "10",
                 "--family-length", "30", "--max-window", "30", "--windows-per-doc", "3"]) == 0
    docs = [json.loads(line)["text"].split() for line in out.read_text().splitlines()]
    assert docs == synth.synthetic2(5, 10, family_length=30, windows_per_doc=3, max_window=30)
    assert main(["generate", "synthetic2", "-o", str(out), "--max-window", "99"]) == 2


@pytest.mark.parametrize("kind", ["synthetic2", "web"])
def test_generate_cli_other_kinds_gzip(tmp_path, kind):  # web: more in test_web.py
    import gzip

    out = tmp_path / "c.jsonl.gz"
    assert main(["generate", kind, "-o", str(out), "--docs", "12", "--words-per-doc", "20",
                 "--body-words", "20", "--sites", "2", "--vocabulary", "300"]) == 0
    with gzip.open(out, "rt") as f:
        assert len([json.loads(line) for line in f]) == 12


def test_generate_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["generate", "web", "-o", str(tmp_path / "x.txt")]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    assert main(["generate", "synthetic1", "-o", str(tmp_path / "x.jsonl"), "--docs", "2"]) == 2
    err = capsys.readouterr().err
    assert "support" in err and err.strip().count("\n") == 0
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("argv, message", [
    (["synthetic1", "--docs", "5", "--seed", "-1"], "seed=-1: must be a non-negative integer"),
    (["web", "--docs", "5", "--seed", "-7"], "seed=-7"),
    # 0 used to fall back to the default size, then blamed the phrases for not fitting
    (["synthetic1", "--docs", "5", "--words-per-doc", "0"], "words_per_doc=0"),
])
def test_generate_cli_bad_seed_and_size_are_one_line_errors(tmp_path, capsys, argv, message):
    assert main(["generate", *argv, "-o", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.strip().count("\n") == 0 and "Traceback" not in err
    assert not list(tmp_path.iterdir())
