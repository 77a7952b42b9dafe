"""TokenCorpus: building, save/load round trip, and refusal of damaged folders."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import TokenCorpus, load_corpus
from corpus_miner.errors import FormatError
from corpus_miner.io.artefact import metadata_checksum
from corpus_miner.io.strings import StringList
from tests.corpus.reference import reference_ids

DOCS = [{"id": "d1", "text": "The cat sat. THE CAT!"}, {"id": "d2", "text": ""},
        {"id": "d3", "text": "Ωmega σας ΣΑΣ 42"}]


@pytest.fixture
def corpus(write_jsonl):
    return load_corpus([write_jsonl("docs.jsonl", DOCS)])


def test_load_corpus_matches_reference(corpus):
    ids, vocab = reference_ids([d["text"] for d in DOCS])
    assert corpus.n_docs == 3 and corpus.n_tokens == sum(map(len, ids))
    assert list(corpus.vocab) == vocab and list(corpus.doc_ids) == ["d1", "d2", "d3"]
    assert [corpus.doc_tokens(i).tolist() for i in range(3)] == ids
    assert corpus.decode(corpus.doc_tokens(0)) == "the cat sat the cat"
    assert corpus.token_id("cat") == 1 and corpus.token_id("dog") is None
    assert corpus.tokens.dtype == np.uint32 and corpus.doc_offsets.dtype == np.int64
    assert corpus.read_stats.documents == 3


@pytest.mark.parametrize("mmap", [True, False])
def test_save_load_round_trip(corpus, tmp_path, mmap):
    corpus.save(tmp_path / "c")
    loaded = TokenCorpus.load(tmp_path / "c", mmap=mmap)
    assert isinstance(loaded.tokens, np.memmap) == mmap
    np.testing.assert_array_equal(loaded.tokens, corpus.tokens)
    np.testing.assert_array_equal(loaded.doc_offsets, corpus.doc_offsets)
    assert loaded.vocab == corpus.vocab and list(loaded.doc_ids) == list(corpus.doc_ids)
    assert loaded.read_stats == corpus.read_stats
    assert load_corpus([tmp_path / "c"]).n_tokens == corpus.n_tokens  # saved folder as input


def test_save_accepts_plain_lists_and_empty_corpus(tmp_path):
    empty = TokenCorpus(np.zeros(0, np.uint32), np.zeros(1, np.int64), [], [])
    empty.save(tmp_path / "e")
    loaded = TokenCorpus.load(tmp_path / "e")
    assert loaded.n_docs == 0 and loaded.n_tokens == 0 and len(loaded.vocab) == 0
    small = TokenCorpus(np.array([1, 0, 1], np.uint32), np.array([0, 1, 3], np.int64),
                        ["x", "y"], ["é", "b"])
    small.save(tmp_path / "s")
    assert TokenCorpus.load(tmp_path / "s").decode([0, 1]) == "é b"


def test_decode_writes_cjk_characters_without_spaces(write_jsonl):
    from corpus_miner.corpus import tokenize

    text = "我们使用cookie来改善您的体验"
    corpus = load_corpus(write_jsonl("cjk.jsonl", [{"text": text}]))
    decoded = corpus.decode(corpus.doc_tokens(0))
    assert decoded == "我们使用 cookie 来改善您的体验" and tokenize(decoded) == tokenize(text)


def test_empty_input_is_a_valid_empty_corpus(write_jsonl, tmp_path):
    corpus = load_corpus([write_jsonl("empty.jsonl", [])])
    assert corpus.n_docs == 0 and corpus.n_tokens == 0 and corpus.doc_offsets.tolist() == [0]
    corpus.save(tmp_path / "c")
    assert TokenCorpus.load(tmp_path / "c").n_docs == 0


def test_overwrite_is_atomic_and_leaves_no_temp(corpus, tmp_path):
    corpus.save(tmp_path / "c")
    corpus.save(tmp_path / "c")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "docs.jsonl"]


def _damage(folder, name, how):
    path = folder / name
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[:-3])
    elif how == "flip":
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    elif how == "delete":
        path.unlink()


@pytest.mark.parametrize("name,how,message", [
    ("tokens.bin", "truncate", "tokens.bin is truncated"),
    ("tokens.bin", "flip", "tokens.bin: checksum mismatch"),
    ("vocab_bytes.bin", "flip", "vocab_bytes.bin: checksum mismatch"),
    ("doc_offsets.bin", "delete", "missing doc_offsets.bin"),
    ("metadata.json", "delete", "no metadata.json"),
    ("metadata.json", "truncate", "unreadable or corrupt"),
])
def test_damaged_folder_is_refused(corpus, tmp_path, name, how, message):
    corpus.save(tmp_path / "c")
    _damage(tmp_path / "c", name, how)
    with pytest.raises(FormatError, match=message):
        TokenCorpus.load(tmp_path / "c", verify=True)


def test_default_load_checks_sizes_and_metadata_but_hashes_only_on_request(corpus, tmp_path):
    """Hashing a 4 GB corpus on every load would take seconds: a changed byte inside a file of
    the right size is found by verify=True; truncation and edited metadata are found always."""
    corpus.save(tmp_path / "c")
    _damage(tmp_path / "c", "vocab_bytes.bin", "flip")
    TokenCorpus.load(tmp_path / "c")
    with pytest.raises(FormatError, match="checksum mismatch"):
        TokenCorpus.load(tmp_path / "c", verify=True)
    _damage(tmp_path / "c", "tokens.bin", "truncate")
    with pytest.raises(FormatError, match="truncated"):
        TokenCorpus.load(tmp_path / "c")


def _edit_metadata(folder, edit, keep_checksum=False):
    """Edit metadata.json; unless keep_checksum, also forge a matching checksum (a deliberate
    edit), so that the loader's checks of the values themselves are exercised."""
    meta_path = folder / "metadata.json"
    meta = json.loads(meta_path.read_text())
    edit(meta)
    if not keep_checksum:
        meta["checksum"] = metadata_checksum(meta)
    meta_path.write_text(json.dumps(meta))


@pytest.mark.parametrize("edit", [
    lambda m: m.update(n_tokens=m["n_tokens"] + 1), lambda m: m.update(tokenizer="other"),
    lambda m: m["arrays"]["tokens.bin"].update(shape=[1]), lambda m: m.pop("n_vocab"),
])
def test_any_metadata_edit_is_refused_by_the_checksum(corpus, tmp_path, edit):
    corpus.save(tmp_path / "c")
    _edit_metadata(tmp_path / "c", edit, keep_checksum=True)
    with pytest.raises(FormatError, match="does not match its checksum"):
        TokenCorpus.load(tmp_path / "c")


@pytest.mark.parametrize("edit,message", [
    (lambda m: m.update(version=99), "newer corpus-miner"),
    (lambda m: m.update(format="other"), "is not 'corpus-miner/token-corpus'"),
    # a corpus saved before CJK characters became tokens of their own
    (lambda m: m.update(tokenizer="str.lower, then maximal runs of \\p{L}\\p{M}\\p{N}"),
     "saved with another token rule"),
    (lambda m: m.update(n_tokens=m["n_tokens"] + 1), "tokens length differs from n_tokens"),
    (lambda m: m.update(n_docs=2.5), "'n_docs' must be int, got 2.5"),
    (lambda m: m.update(n_docs="3"), "'n_docs' must be int"),
    (lambda m: m.update(n_docs=True), "'n_docs' must be int"),
    (lambda m: m.update(n_docs=-1), "'n_docs' must be >= 0"),
    (lambda m: m["arrays"]["tokens.bin"].update(shape=[1]), "longer than its metadata says"),
    (lambda m: m["arrays"]["tokens.bin"].pop("shape"), "tokens.bin has no valid shape"),
    (lambda m: m["arrays"]["tokens.bin"].update(shape=["x"]), "no valid shape"),
    (lambda m: m["arrays"]["tokens.bin"].update(dtype="<f8"), "expected <u4"),
    (lambda m: m["arrays"]["tokens.bin"].update(dtype="O"), "unusable dtype"),
    (lambda m: m["arrays"].pop("doc_offsets.bin"), "does not list doc_offsets.bin"),
    (lambda m: m.update(arrays=[]), "no 'arrays' table"),
    (lambda m: m["texts_digest"].update(value="z" * 16), "texts_digest is not the digest"),
    (lambda m: m["texts_digest"].update(value=12), "texts_digest is not the digest"),
    (lambda m: m["texts_digest"].update(documents=m["n_docs"] + 1), "texts_digest is not"),
    (lambda m: m.update(texts_digest=[1, 2]), "texts_digest is not the digest"),
])
def test_forged_metadata_is_refused_in_one_line(corpus, tmp_path, edit, message):
    corpus.save(tmp_path / "c")
    _edit_metadata(tmp_path / "c", edit)
    with pytest.raises(FormatError, match=message) as caught:
        TokenCorpus.load(tmp_path / "c")
    assert "\n" not in str(caught.value)


def test_a_version_1_folder_is_refused_with_a_message_to_re_create_it(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    np.save(folder / "tokens.npy", np.zeros(3, np.uint32))
    (folder / "metadata.json").write_text(json.dumps(
        {"format": "corpus-miner/token-corpus", "version": 1, "n_docs": 1, "arrays": {}}))
    with pytest.raises(FormatError,
                       match=r"version 1 is not supported.*older.*corpus-miner tokenize"):
        TokenCorpus.load(folder)


def test_string_list_behaves_like_a_list():
    strings = StringList.from_strings(["a", "", "ß€", "a"])
    assert len(strings) == 4 and strings[2] == "ß€" and strings[-1] == "a"
    assert strings[1:3] == ["", "ß€"]
    assert strings.index("a") == 0 and "ß€" in strings and "z" not in strings
    assert strings == ["a", "", "ß€", "a"] and strings.to_arrow().to_pylist() == list(strings)
    with pytest.raises(IndexError):
        strings[4]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("aB Σς İ.\n中é\u0301 9")), max_size=30),
                max_size=12), st.sampled_from([16, 64, 1 << 20]))
def test_load_corpus_over_many_batches_matches_reference(tmp_path_factory, docs, batch_size):
    path = tmp_path_factory.mktemp("prop") / "d.jsonl"
    path.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs))
    corpus = load_corpus([path], batch_size=batch_size)
    ids, vocab = reference_ids(docs)
    assert list(corpus.vocab) == vocab
    assert list(corpus.doc_ids) == [str(i) for i in range(len(docs))]
    assert [corpus.doc_tokens(i).tolist() for i in range(corpus.n_docs)] == ids


def _page(i: int, word: str) -> dict:
    return {"id": f"p{i}", "text": f"accept all cookies to continue reading {word} story {i}"}


def test_a_saved_corpus_keeps_the_texts_digest_that_checks_a_second_read(tmp_path):
    """tokenize's folder (save_corpus) and TokenCorpus.save keep the digest of the texts read;
    a Cleaner fitted on the loaded folder refuses inputs rewritten since (the same ids and token
    counts, other words), writing nothing; a folder saved without it loads with None."""
    from corpus_miner.corpus.build import save_corpus
    from corpus_miner.coverage.clean import Cleaner
    from corpus_miner.coverage.coverage import Coverage
    from corpus_miner.errors import InputError
    from corpus_miner.phrases import BloomSpan

    def write_pages(word):
        source.write_text("".join(json.dumps(_page(i, word)) + "\n" for i in range(30)))

    source = tmp_path / "pages.jsonl"
    write_pages("local")
    built = load_corpus([source])
    save_corpus([source], tmp_path / "saved")
    saved = TokenCorpus.load(tmp_path / "saved")
    assert saved.texts_digest == built.texts_digest is not None
    built.save(tmp_path / "again")
    assert TokenCorpus.load(tmp_path / "again").texts_digest == built.texts_digest

    miner = BloomSpan(sigma=5, min_length=4).fit(saved)
    cleaner = Cleaner().fit(saved, Coverage.from_miner(miner, saved))
    assert cleaner.write([source], tmp_path / "out.jsonl")["documents_written"] == 30
    write_pages("other")
    with pytest.raises(InputError, match="changed between clean's two reads"):
        cleaner.write([source], tmp_path / "out2.jsonl")
    assert not (tmp_path / "out2.jsonl").exists()

    _edit_metadata(tmp_path / "again", lambda m: m.pop("texts_digest"))
    assert TokenCorpus.load(tmp_path / "again").texts_digest is None
