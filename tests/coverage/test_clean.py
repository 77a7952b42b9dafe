"""Cleaner on real files: annotate spans, remove then re-mine, mask, keep-first, allow, drop-above,
reviewed phrase lists, formats, atomic output and changed inputs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from corpus_miner.corpus import load_corpus, token_spans, tokenize
from corpus_miner.coverage.clean import DEFAULT_MASK, Cleaner
from corpus_miner.coverage.coverage import Coverage, phrases_from_texts
from corpus_miner.errors import InputError, NotFittedError, ParameterError
from corpus_miner.phrases import BloomSpan

SIGMA, MIN_LENGTH = 4, 4
TEMPLATES = {
    "shop.example.com": ["Free shipping on orders over 50 dollars! Returns: 30 days.",
                         "© 2024 Shop Example, Inc. — All rights reserved."],
    "news.example.org": ["Subscribe to our NEWSLETTER (we never share your e-mail).",
                         "Read also: Ten facts about Straße, Café & 東京 life"],
    "blog.example.net": ["Posted by the editors · Comments are closed · Share this post"],
}
WORDS = ("alpha Beta gamma DELTA épée naïve über Ωmega 東京 data-set co-op it's x2 42 "
         "river stone cloud lamp cedar maple quartz ember").split()


def web_documents(seed: int = 0, n_docs: int = 48) -> list[dict]:
    """Documents of three sites: random unique-ish words with each site's templates inserted at
    the start, middle or end, with varied punctuation, case and Unicode."""
    rng = random.Random(seed)
    hosts = list(TEMPLATES)
    docs = []
    for i in range(n_docs):
        host = hosts[i % len(hosts)]
        words = [rng.choice(WORDS) + rng.choice(["", "", "", ",", ".", "!"]) for _ in
                 range(rng.randint(12, 40))]
        body = [" ".join(words[j:j + 7]) for j in range(0, len(words), 7)]
        for template in TEMPLATES[host]:
            if rng.random() < 0.85:
                body.insert(rng.choice([0, len(body) // 2, len(body)]), template)
        sep = rng.choice(["\n", "\n\n", " "])
        docs.append({"id": f"doc-{i:03d}", "url": f"https://{host}/p/{i}?ref=x",
                     "lang": rng.choice(["en", "de"]), "text": sep.join(body)})
    docs.append({"id": "doc-all-template", "url": "https://shop.example.com/legal",
                 "lang": "en", "text": " ".join(TEMPLATES["shop.example.com"])})
    return docs


def write_jsonl(path: Path, docs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs),
                    encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    path = write_jsonl(tmp_path_factory.mktemp("web") / "web.jsonl", web_documents())
    corpus = load_corpus([path])
    miner = BloomSpan(sigma=SIGMA, min_length=MIN_LENGTH).fit(corpus)
    return path, corpus, miner, Coverage.from_miner(miner, corpus)


def covered_token_mask(coverage, doc):
    a, b = coverage.doc_offsets[doc], coverage.doc_offsets[doc + 1]
    return coverage.covered[a:b].astype(bool)


def test_annotate_spans_are_char_offsets_of_covered_tokens(web, tmp_path):
    path, corpus, _, coverage = web
    assert coverage.tokens_covered > 0
    out = tmp_path / "annotated.jsonl"
    stats = Cleaner(mode="annotate").fit(corpus, coverage).write([path], out)
    originals, rows = read_jsonl(path), read_jsonl(out)
    assert stats["documents_written"] == len(rows) == len(originals)
    for doc, (orig, row) in enumerate(zip(originals, rows)):
        assert {k: row[k] for k in orig} == orig  # text and every field untouched, same order
        starts, ends = token_spans(orig["text"])
        mask = covered_token_mask(coverage, doc)
        expected, i = [], 0
        while i < len(mask):  # merge consecutive covered tokens into one span
            if mask[i]:
                j = i
                while j + 1 < len(mask) and mask[j + 1]:
                    j += 1
                expected.append([int(starts[i]), int(ends[j])])
                i = j + 1
            else:
                i += 1
        assert row["junk_spans"] == expected
        assert row["junk_share"] == pytest.approx(mask.mean() if len(mask) else 0.0)
        for s, e in row["junk_spans"]:  # spans hold whole tokens of the original text
            assert tokenize(orig["text"][s:e])


def test_remove_then_remine_finds_no_removed_phrase(web, tmp_path):
    path, corpus, miner, coverage = web
    out = tmp_path / "clean.jsonl"
    Cleaner(mode="remove").fit(corpus, coverage).write([path], out)
    cleaned = load_corpus([out])
    # the cleaned text tokenizes to exactly the uncovered tokens of each document
    for doc in range(corpus.n_docs):
        keep = ~covered_token_mask(coverage, doc)
        original = corpus.doc_tokens(doc)[keep]
        assert [corpus.vocab[t] for t in original] == \
            [cleaned.vocab[t] for t in cleaned.doc_tokens(doc)]
    again = BloomSpan(sigma=SIGMA, min_length=MIN_LENGTH).fit(cleaned)
    before = {miner.phrases_.text(i) for i in range(len(miner.phrases_))}
    after = {again.phrases_.text(i) for i in range(len(again.phrases_))}
    assert before and not before & after
    # stronger: no originally frequent MIN_LENGTH-gram survives except across a cut
    frequent = set()
    for i in range(len(miner.phrases_)):
        ids = [corpus.vocab[t] for t in miner.phrases_.phrase_ids(i)]
        frequent |= {tuple(ids[s:s + MIN_LENGTH]) for s in range(len(ids) - MIN_LENGTH + 1)}
    for doc in range(corpus.n_docs):
        positions = np.flatnonzero(~covered_token_mask(coverage, doc))
        words = [cleaned.vocab[t] for t in cleaned.doc_tokens(doc)]
        for s in range(len(words) - MIN_LENGTH + 1):
            contiguous = positions[s + MIN_LENGTH - 1] - positions[s] == MIN_LENGTH - 1
            assert not (contiguous and tuple(words[s:s + MIN_LENGTH]) in frequent)


def test_mask_mode_replaces_each_span(web, tmp_path):
    path, corpus, _, coverage = web
    out = tmp_path / "masked.jsonl"
    Cleaner(mode="mask", mask_text="<<JUNK>>").fit(corpus, coverage).write([path], out)
    for doc, (orig, row) in enumerate(zip(read_jsonl(path), read_jsonl(out))):
        mask = covered_token_mask(coverage, doc)
        runs = int(mask[0]) + int(np.sum(mask[1:] & ~mask[:-1])) if len(mask) else 0
        assert row["text"].count("<<JUNK>>") == runs
        kept = [t for t, m in zip(tokenize(orig["text"]), mask) if not m]
        assert [t for t in tokenize(row["text"]) if t != "junk"] == kept


def test_keep_first_keeps_each_phrase_once(web, tmp_path):
    path, corpus, miner, coverage = web
    out = tmp_path / "first.jsonl"
    Cleaner(keep_first=True).fit(corpus, coverage).write([path], out)
    original_tokens = [" ".join(tokenize(d["text"])) for d in read_jsonl(path)]
    cleaned_tokens = [" ".join(tokenize(d["text"])) for d in read_jsonl(out)]
    for i in range(len(miner.phrases_)):
        phrase = " " + " ".join(tokenize(miner.phrases_.text(i))) + " "
        holders = [d for d, t in enumerate(original_tokens) if phrase in f" {t} "]
        assert len(holders) >= SIGMA
        assert phrase in f" {cleaned_tokens[holders[0]]} "
        assert not any(phrase in f" {cleaned_tokens[d]} " for d in holders[1:])


def test_allow_list_protects_a_phrase_everywhere(web, tmp_path):
    path, corpus, miner, coverage = web
    allowed = "Subscribe to our newsletter (we never share your e-mail)"  # other case/punct.
    words = " ".join(tokenize(allowed))
    out = tmp_path / "allowed.jsonl"
    cleaner = Cleaner(allow=[allowed]).fit(corpus, coverage)
    cleaner.write([path], out)
    originals, rows = read_jsonl(path), read_jsonl(out)
    holders = [i for i, d in enumerate(originals) if words in " ".join(tokenize(d["text"]))]
    assert len(holders) >= SIGMA
    for i in holders:
        assert words in " ".join(tokenize(rows[i]["text"]))
    assert cleaner.summary()["tokens_handled"] < coverage.tokens_covered
    # everything else is still removed
    shop = " ".join(tokenize(TEMPLATES["shop.example.com"][1]))
    assert not any(shop in " ".join(tokenize(r["text"])) for r in rows)


def test_drop_above_leaves_out_template_documents(web, tmp_path):
    path, corpus, _, coverage = web
    out = tmp_path / "dropped.parquet"
    cleaner = Cleaner(mode="annotate", drop_above=0.5).fit(corpus, coverage)
    stats = cleaner.write([path], out)
    table = pq.read_table(out)
    expected = [d for d, share in zip(corpus.doc_ids, coverage.doc_share) if share <= 0.5]
    assert table.column("id").to_pylist() == expected
    assert "doc-all-template" not in expected and stats["documents_dropped"] >= 1
    assert table.column_names == ["id", "url", "lang", "text", "junk_spans", "junk_share"]


def test_reviewed_phrase_list_is_applied_verbatim(web, tmp_path):
    path, corpus, _, _ = web
    reviewed = ["© 2024 Shop Example, Inc. — All rights reserved.", "never seen words here"]
    table, unmatched = phrases_from_texts(reviewed, corpus.vocab, tokenize)
    assert unmatched == ["never seen words here"]
    coverage = Coverage.from_phrase_list(corpus, table)
    out = tmp_path / "listed.jsonl.gz"
    Cleaner().fit(corpus, coverage).write([path], out)
    cleaned = load_corpus([out])
    target = " ".join(tokenize(reviewed[0]))
    assert coverage.phrases.df[0] >= SIGMA
    for doc in range(cleaned.n_docs):
        assert target not in cleaned.decode(cleaned.doc_tokens(doc))
    # other templates are left alone
    assert any(" ".join(tokenize(TEMPLATES["news.example.org"][0])) in cleaned.decode(
        cleaned.doc_tokens(d)) for d in range(cleaned.n_docs))


def test_interrupted_clean_leaves_no_output(web, tmp_path, monkeypatch):
    path, corpus, _, coverage = web
    out = tmp_path / "out.jsonl"
    cleaner = Cleaner().fit(corpus, coverage)
    original_cleaned = Cleaner._cleaned  # what transform calls per batch of documents

    def failing(self, texts, doc, is_text):
        if doc <= 30 < doc + len(is_text):
            raise KeyboardInterrupt
        return original_cleaned(self, texts, doc, is_text)

    monkeypatch.setattr(Cleaner, "_cleaned", failing)
    with pytest.raises(KeyboardInterrupt):
        cleaner.write([path], out)
    assert list(tmp_path.iterdir()) == []


def test_changed_input_is_detected(web, tmp_path):
    path, corpus, _, coverage = web
    docs = read_jsonl(path)
    docs[5]["text"] += " one more token"
    changed = write_jsonl(tmp_path / "changed.jsonl", docs)
    with pytest.raises(InputError, match="changed"):
        Cleaner().fit(corpus, coverage).write([changed], tmp_path / "x.jsonl")
    fewer = write_jsonl(tmp_path / "fewer.jsonl", docs[:10])
    with pytest.raises(InputError, match="changed"):
        Cleaner(mode="annotate").fit(corpus, coverage).write([fewer], tmp_path / "y.jsonl")
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "y.jsonl").exists()


def test_parameters_are_checked():
    with pytest.raises(ParameterError, match="mode"):
        Cleaner(mode="erase").fit(None, None)
    with pytest.raises(ParameterError, match="drop_above"):
        Cleaner(drop_above=1.5).fit(None, None)
    with pytest.raises(NotFittedError):
        Cleaner().document(0, "text")


def test_follows_the_estimator_convention(tmp_path):
    """Arguments stored as given, get_params/set_params, validation in fit, learned state ending
    in `_`; a parameter changed after fit takes effect at the next fit only."""
    cleaner = Cleaner(mode="mask", allow=["a b"])
    assert cleaner.get_params() == {"mode": "mask", "keep_first": False, "allow": ["a b"],
                                    "drop_above": None, "mask_text": DEFAULT_MASK}
    assert repr(cleaner) == "Cleaner(mode='mask', allow=['a b'])"
    cleaner.set_params(mode="erase")  # not checked until fit
    with pytest.raises(ParameterError, match="mode"):
        cleaner.fit(None, None)
    with pytest.raises(ParameterError, match="list of phrases"):
        Cleaner(allow="one phrase").fit(None, None)
    with pytest.raises(NotFittedError, match="fit\\(corpus, coverage\\)"):
        _ = Cleaner().mask_
    docs = [{"id": i, "text": f"page {i} shared footer text here"} for i in range(4)]
    path = write_jsonl(tmp_path / "in.jsonl", docs)
    corpus = load_corpus([path])
    miner = BloomSpan(sigma=2, min_length=3).fit(corpus)
    cleaner = Cleaner(mode="mask").fit(corpus, Coverage.from_miner(miner, corpus))
    cleaner.set_params(mode="remove")
    assert cleaner.params_.mode == "mask"  # the fitted one
    assert cleaner.document(0, "page 0 shared footer text here")[0] == f"page 0 {DEFAULT_MASK}"
