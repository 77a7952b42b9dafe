"""The web-page generator: determinism, page structure, planted reposts (and that dedup finds
them), Parquet parts, the token budget, the compiled renderer against plain Python, the CLI."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter

import numpy as np
import pyarrow.parquet as pq
import pytest

from corpus_miner import synth
from corpus_miner.cli import main
from corpus_miner.corpus import tokenize
from corpus_miner.dedup import LSHBloom
from corpus_miner.errors import OutputError, ParameterError
from corpus_miner.io import read_documents
from corpus_miner.synth import web_pages as w
from corpus_miner.synth import web_text, web_words, web_world
from tests.helpers import run_python
from tests.synth.test_article import answer

SMALL = w.WebParams(n_sites=6, vocabulary=3000, mean_body_words=120, repost_share=0.2, seed=3)


def pages(params=SMALL, n_docs=None, n_tokens=None) -> list[dict]:
    world = w.WebWorld(params)
    return [row for block in w.web_blocks(world, n_docs=n_docs, n_tokens=n_tokens)
            for row in w.block_table(world, block).to_pylist()]


def test_pages_carry_site_templates_split_by_variable_parts():
    docs = synth.web(400, n_sites=5, vocabulary=3000, mean_body_words=80, seed=0)
    assert len(docs) == 400
    result = answer(docs, 20, 10)
    lengths = [len(text.split()) for text, _, _ in result]
    supports = [df for _, df, _ in result]
    assert len(result) >= 10
    assert max(lengths) >= 20 and min(lengths) < 20  # templates of many lengths
    assert max(supports) >= 3 * min(supports)  # and many supports
    tokens = Counter(word for doc in docs for word in doc)
    assert any(word.isdigit() and 2015 <= int(word) <= 2025 for word in tokens)  # variable years
    assert any(word in tokens for word in ("anna", "boris", "chen"))  # variable names
    assert any(word in tokens for word in ("january", "june", "december"))  # date lines


def test_deterministic_given_seed_and_prefix_stable():
    first = pages(n_docs=2 * w.BLOCK_DOCS // 8)
    assert first == pages(n_docs=2 * w.BLOCK_DOCS // 8)
    assert pages(w.WebParams(**{**SMALL.__dict__, "seed": 4}), n_docs=50) != first[:50]
    assert pages(n_docs=37) == first[:37]  # asking for fewer pages gives the same first pages


def test_text_layout_and_tokens():
    world = w.WebWorld(SMALL)
    block = w.generate_block(world, 0, 300)
    rows = w.block_table(world, block).to_pylist()
    assert [r["id"] for r in rows] == [f"web-{i}" for i in range(300)]
    for row, a, b in zip(rows, block.doc_offsets[:-1], block.doc_offsets[1:]):
        text = row["text"]
        assert text == text.strip() and "\n\n\n" not in text and "  " not in text
        assert re.match(r"Posted on [A-Z][a-z]+ \d{1,2} \d{4}\n", text)  # the date line first
        # what the tokenizer sees is what was generated
        assert tokenize(text) == [world.vocab[t] for t in block.tokens[a:b]]
        assert re.fullmatch(r"https://site\d+\.example/page/\d+", row["url"])


def test_every_display_form_is_its_one_token():
    world = w.WebWorld(SMALL)
    assert len(world.display) == len(world.vocab)
    for display, token in zip(world.display, world.vocab):
        assert tokenize(display) == [token], display


def test_pages_read_like_the_web():
    """Sentences of English words, and boilerplate a person recognises among the phrases."""
    world = w.WebWorld(w.WebParams(n_sites=8, vocabulary=5000, mean_body_words=150, seed=2))
    block = w.generate_block(world, 0, 400)
    texts = w.block_table(world, block).column("text").to_pylist()
    english = set(web_words.NOUNS + web_words.VERBS + web_words.ADJECTIVES + web_words.ADVERBS
                  + web_words.DETERMINERS + web_words.PREPOSITIONS + web_words.PRONOUNS
                  + web_words.MODALS + web_words.CONJUNCTIONS)
    words = [t for text in texts for t in tokenize(text)]
    assert sum(t in english for t in words) / len(words) > 0.6  # the rest: made-up, numbers
    body = [p for text in texts for p in text.split("\n\n")[1:]
            if p.endswith(".") and "|" not in p]
    assert len(body) > 400
    sentences = [s for p in body for s in p.split(". ")]
    assert all(s[0].isupper() for s in sentences)
    assert 5 < np.median([len(tokenize(s)) for s in sentences]) < 15
    docs = [tokenize(text) for text in texts]
    phrases = " / ".join(text for text, _, _ in answer(docs, 20, 10))
    for boilerplate in ("we use cookies to improve your experience", "all rights reserved",
                        "subscribe to our newsletter", "privacy policy"):
        assert boilerplate in phrases, boilerplate


def test_words_of_a_class_follow_zipf():
    """fill_body draws each class's words with Zipf weights (exact alias sampling)."""
    body = w.WebWorld(SMALL).body
    noun = web_text.CLASS_NAMES.index("NOUN")
    n = 400_000
    tokens = np.zeros(n, dtype=np.int32)
    seps = np.zeros(n, dtype=np.uint8)
    rng = np.random.default_rng(0)
    web_text.fill_body(tokens, seps, np.array([0]), np.array([n]), np.array([0]),
                       np.full(n, noun, dtype=np.int64), np.zeros(n, dtype=np.uint8),
                       body.class_first, body.class_size, body.alias_prob, body.alias,
                       rng.random(n))
    size = int(body.class_size[noun])
    counts = np.bincount(tokens - body.class_first[noun], minlength=size)
    assert counts.sum() == n and len(counts) == size
    weights = 1.0 / np.arange(1, size + 1) ** SMALL.zipf_exponent
    expected = n * weights / weights.sum()
    assert np.all(np.abs(counts[:20] - expected[:20]) < 5 * np.sqrt(expected[:20]))


def test_made_up_words_are_distinct_and_new():
    rng = np.random.default_rng(1)
    exclude = {"bora", "tan"}
    classes = web_text.made_up_words(rng, [3000, 500, 1], [("",), ("ly",), ("ic",)], exclude)
    assert [len(c) for c in classes] == [3000, 500, 1]
    flat = [x for c in classes for x in c]
    assert len(set(flat)) == len(flat) and not exclude & set(flat)
    assert all(re.fullmatch("[a-z]+", x) for x in flat)
    assert all(x.endswith("ly") for x in classes[1])
    assert [len(x) for x in classes[0]] == sorted(len(x) for x in classes[0])


def _masked_paragraphs(text: str) -> list[list[str]]:
    """Paragraphs as token lists with the variable parts (digits, names, months) masked."""
    variable = set(web_world.NAMES) | set(web_world.MONTHS)
    return [["#" if word.isdigit() or word in variable else word for word in tokenize(p)]
            for p in text.split("\n\n")]


def test_reposts_are_copies_with_the_documented_edits():
    world = w.WebWorld(SMALL)
    kinds = Counter()
    for block in w.web_blocks(world, n_docs=600):
        rows = w.block_table(world, block).to_pylist()
        for d, row in enumerate(rows):
            kind = int(block.doc_kind[d])
            kinds[kind] += 1
            if kind == w.ORIGINAL:
                assert row["repost_of"] is None and block.doc_source[d] == -1
                continue
            source = rows[int(block.doc_source[d])]
            assert row["repost_of"] == source["id"] and source["repost_of"] is None
            assert block.doc_site[d] == block.doc_site[int(block.doc_source[d])]
            assert row["url"].split("/")[2] == source["url"].split("/")[2]  # same site
            mine, theirs = _masked_paragraphs(row["text"]), _masked_paragraphs(source["text"])
            assert row["text"].split("\n")[0] != source["text"].split("\n")[0] or kind  # new date
            if kind == w.REPOST_VARIABLES:
                assert mine == theirs
            elif kind == w.REPOST_ADDED:
                extra = [p for p in mine if p not in theirs]
                assert len(mine) == len(theirs) + 1 and len(extra) == 1
                assert w.EDIT_WORDS[0] <= len(extra[0]) <= w.EDIT_WORDS[1]
                assert [p for p in mine if p is not extra[0]] == theirs and mine[0] == theirs[0]
            else:
                gone = [p for p in theirs if p not in mine]
                assert len(mine) == len(theirs) - 1 and len(gone) == 1
                assert len(gone[0]) <= w.DROP_MAX_SHARE * sum(map(len, theirs))
                assert [p for p in theirs if p is not gone[0]] == mine and mine[0] == theirs[0]
    assert all(kinds[k] >= 10 for k in (w.REPOST_VARIABLES, w.REPOST_ADDED, w.REPOST_DROPPED))
    assert 0.15 < sum(kinds[k] for k in (1, 2, 3)) / 600 < 0.25


def test_dedup_finds_most_reposts_and_flags_few_originals():
    params = w.WebParams(n_sites=20, vocabulary=20000, mean_body_words=300, repost_share=0.05,
                         seed=11)
    rows = pages(params, n_docs=3000)
    result = LSHBloom().deduplicate([r["text"] for r in rows], [r["id"] for r in rows])
    flagged = np.asarray(result.is_duplicate)
    is_repost = np.array([r["repost_of"] is not None for r in rows])
    assert is_repost.sum() >= 100
    assert flagged[is_repost].mean() >= 0.85  # measured 0.95 on the quick start's pages
    assert flagged[~is_repost].mean() <= 0.01


def test_token_budget_stops_at_the_page_that_reaches_it():
    rows = pages(n_tokens=20000)
    counts = np.cumsum([len(tokenize(r["text"])) for r in rows])
    assert counts[-1] >= 20000 > counts[-2]
    assert rows == pages(n_docs=len(rows))
    first_block = int(w.generate_block(w.WebWorld(SMALL), 0).doc_offsets[-1])
    big = pages(n_tokens=first_block + 1000)  # crosses a block boundary
    assert len(big) > w.BLOCK_DOCS and big[:len(rows)] == rows


def test_render_equals_plain_python():
    world = w.WebWorld(SMALL)
    block = w.generate_block(world, 0, 50)
    table = w.block_table(world, block)
    expected = []
    for a, b in zip(block.doc_offsets[:-1], block.doc_offsets[1:]):
        text, capital = "", True
        for t, s in zip(block.tokens[a:b], block.seps[a:b]):
            word = world.display[t]
            text += (word[0].upper() + word[1:] if capital and word[0].islower() else word)
            text += web_text.SEPARATORS[s]
            capital = s in web_text.CAPITAL_AFTER
        expected.append(text)
    assert set(block.seps.tolist()) >= {web_text.PERIOD, web_text.COMMA, web_text.LINE,
                                        web_text.PERIOD_PARAGRAPH, web_text.PARAGRAPH}
    assert table.column("text").to_pylist() == expected


def test_same_pages_without_jit(tmp_path):
    """The renderer interpreted by Python (NUMBA_DISABLE_JIT=1) writes the same bytes."""
    code = """
        import hashlib, sys
        from corpus_miner.synth import web_pages as w
        world = w.WebWorld(w.WebParams(n_sites=4, vocabulary=500, mean_body_words=40,
                                       repost_share=0.2, seed=1))
        table = w.block_table(world, w.generate_block(world, 0, 30))
        print(hashlib.sha256("\\x00".join(table.column("text").to_pylist()).encode()).hexdigest())
    """
    assert run_python(code, jit=False) == run_python(code)


@pytest.mark.parametrize("name", ["web.jsonl", "web.jsonl.gz", "web.parquet", "parts"])
def test_write_web_formats_give_the_same_records(tmp_path, name):
    out = tmp_path / name
    counts = w.write_web(out, SMALL, n_docs=120)
    assert counts["documents"] == 120 and counts["reposts"] == sum(
        counts[k] for k in ("reposts_variables_only", "reposts_paragraph_added",
                            "reposts_paragraph_dropped"))
    records = [r for batch in read_documents([out]) for r in batch.records.to_pylist()]
    assert records == pages(n_docs=120)
    assert counts["tokens"] == sum(len(tokenize(r["text"])) for r in records)


def test_parquet_parts_are_replaced_but_other_folders_are_not(tmp_path, monkeypatch):
    monkeypatch.setattr(w, "PART_BLOCKS", 1)
    monkeypatch.setattr(w, "BLOCK_DOCS", 64)
    out = tmp_path / "parts"
    w.write_web(out, SMALL, n_docs=200)
    assert sorted(p.name for p in out.iterdir()) == [f"part-{i:05d}.parquet" for i in range(4)]
    assert sum(pq.read_metadata(p).num_rows for p in out.iterdir()) == 200
    w.write_web(out, SMALL, n_docs=70)  # a new run replaces the parts
    assert sorted(p.name for p in out.iterdir()) == ["part-00000.parquet", "part-00001.parquet"]
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    with pytest.raises(OutputError, match="not a corpus-miner output"):
        w.write_web(other, SMALL, n_docs=5)
    assert (other / "notes.txt").read_text() == "keep me"
    with pytest.raises(ParameterError, match="folder name"):
        w.write_web(tmp_path / "x.txt", SMALL, n_docs=5)


@pytest.mark.parametrize("kwargs, message", [
    ({"repost_share": 1.0}, "repost_share"),
    ({"n_sites": 0}, "n_sites=0"),
    ({"seed": -1}, "seed=-1"),
])
def test_bad_parameters(kwargs, message):
    with pytest.raises(ParameterError, match=message):
        w.WebWorld(w.WebParams(**{**SMALL.__dict__, **kwargs}))


def test_cli_web_summary_and_errors(tmp_path, capsys):
    out = tmp_path / "web.jsonl.gz"
    assert main(["generate", "web", "-o", str(out), "--docs", "200", "--sites", "4",
                 "--vocabulary", "800", "--body-words", "60", "--reposts", "0.2"]) == 0
    err = capsys.readouterr().err
    with gzip.open(out, "rt") as fh:
        rows = [json.loads(line) for line in fh]
    reposts = sum(r["repost_of"] is not None for r in rows)
    assert f"wrote 200 web pages ({sum(len(tokenize(r['text'])) for r in rows):,} tokens)" in err
    assert f"{reposts} of them are edited copies" in err and err.count("\n") == 1
    parts = tmp_path / "parts"
    assert main(["generate", "web", "-o", str(parts), "--tokens", "5e3", "--sites", "3",
                 "--vocabulary", "500", "--body-words", "50"]) == 0
    assert list(parts.glob("part-*.parquet"))
    capsys.readouterr()
    for argv, message in ((["--docs", "5", "--tokens", "100"], "not both"),
                          (["--tokens", "1.5"], "positive whole number")):
        assert main(["generate", "web", "-o", str(tmp_path / "y.jsonl"), *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1
    assert main(["generate", "synthetic1", "-o", str(tmp_path / "z.jsonl"), "--tokens", "9"]) == 2
    assert "--tokens is for web" in capsys.readouterr().err


@pytest.mark.parametrize("weights", [np.array([1.0]), np.array([3.0, 1.0]),
                                     1.0 / np.arange(1, 2001) ** 1.1,
                                     np.random.default_rng(5).random(300)])
def test_alias_table_gives_each_column_its_weight(weights):
    """What an alias table samples, summed column by column, is the normalised weights."""
    prob, alias = web_text.alias_table(weights)
    n = len(weights)
    mass = prob.copy()
    np.add.at(mass, alias, 1.0 - prob)  # a column's leftover goes to its alias
    assert np.allclose(mass / n, weights / weights.sum(), rtol=1e-9, atol=1e-12)
    assert ((0.0 <= prob) & (prob <= 1.0)).all() and ((0 <= alias) & (alias < n)).all()
