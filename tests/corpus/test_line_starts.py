"""Line and paragraph starts recorded by the compiled scan equal the plain-Python definition
(`corpus.tokenizer.line_starts`: the lines of str.splitlines()), through every path that builds
a corpus (one assigner with tiny buffers, the threaded tokenizer, a saved folder)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import TokenCorpus, TokenIdAssigner, kernels, load_corpus, tokenize
from corpus_miner.corpus.build import save_corpus
from corpus_miner.corpus.parallel import ParallelTokenizer
from corpus_miner.corpus.tokenizer import line_starts
from corpus_miner.errors import FormatError
from corpus_miner.io.readers import read_documents
from tests.helpers import run_python

# every break of str.splitlines(), \r\n, and characters that are neither (\x1f, \t, NBSP),
# next to words, CJK, marks and the characters that need the exact str.lower() path (İ, Σ)
BREAKS = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
PIECES = BREAKS + ["\x1f", "\t", " ", "\u00a0", "ab", "Cd", "x1", "中文", "a\u0301", "\u0301",
                   "İx", "ΟΔΟΣ", ".", "--", "longer_words_here"]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def reference(docs: list[str]) -> tuple[list[int], list[int]]:
    """Global line and paragraph starts of documents, from the definition."""
    lines, paragraphs, first = [], [], 0
    for text in docs:
        ls, ps = line_starts(text)
        lines += [first + x for x in ls]
        paragraphs += [first + x for x in ps]
        first += len(tokenize(text))
    return lines, paragraphs


def test_definition_on_an_example():
    text = "Share this: Twitter\n\nPosted in\r\nTutorials\n  \n. \nEnd"
    assert tokenize(text)[3:5] == ["posted", "in"]
    assert line_starts(text) == ([0, 3, 5, 6], [0, 3, 6])
    assert line_starts("") == ([], []) and line_starts("\n\n") == ([], [])


@settings(max_examples=200, deadline=None)
@given(st.lists(texts, max_size=6), st.integers(1, 3))
def test_assigner_flags_equal_the_definition(docs, n_batches):
    """Tiny buffers make the scan stop and resume inside documents (between breaks and
    tokens)."""
    assigner = TokenIdAssigner(initial_vocab=1, initial_tokens=1)
    for part in np.array_split(np.arange(len(docs)), n_batches):
        assigner.add_texts(pa.array([docs[i] for i in part], pa.string()))
    tokens, _, _, flags = assigner.finish_with_lines()
    assert flags.dtype == np.uint8 and len(flags) == len(tokens)
    lines, paragraphs = reference(docs)
    assert np.flatnonzero(flags).tolist() == lines
    assert np.flatnonzero(flags == kernels.PARAGRAPH_START).tolist() == paragraphs


@settings(max_examples=40, deadline=None)
@given(st.lists(texts, min_size=1, max_size=12), st.integers(1, 3), st.integers(1, 64))
def test_threaded_blocks_give_the_same_starts(docs, threads, block_bytes):
    tokenizer = ParallelTokenizer(threads, block_bytes=block_bytes)
    batches = [pa.array(docs[i:i + 2], pa.string()) for i in range(0, len(docs), 2)]

    class Batch:  # the readers' DocumentBatch, as far as the tokenizer looks
        def __init__(self, texts):
            self.texts = texts

    lines, paragraphs, first = [], [], 0
    for block in tokenizer.run(Batch(b) for b in batches):
        ls, ps = block.line_starts(first)
        lines += ls.tolist()
        paragraphs += ps.tolist()
        first += len(block.tokens)
    assert (lines, paragraphs) == reference(docs)


def write_jsonl(path, docs):
    path.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n"
                            for i, t in enumerate(docs)), encoding="utf-8")


DOCS = ["Home | About\nShare this: Twitter Facebook\n\nA paragraph of text.\nSecond line.",
        "", "one line only", "\n\n  lead\r\n\r\nIn a new paragraph\u2028same paragraph"]


def test_loaded_and_saved_corpora_keep_the_starts(tmp_path):
    write_jsonl(tmp_path / "docs.jsonl", DOCS)
    lines, paragraphs = reference(DOCS)
    loaded = load_corpus(tmp_path / "docs.jsonl")
    assert loaded.line_starts.tolist() == lines
    assert loaded.paragraph_starts.tolist() == paragraphs
    saved = save_corpus(tmp_path / "docs.jsonl", tmp_path / "saved", threads=2)
    again = TokenCorpus.load(tmp_path / "saved", verify=True)
    for corpus in (saved, again):
        assert corpus.line_starts.tolist() == lines
        assert corpus.paragraph_starts.tolist() == paragraphs
        assert corpus.tokens.tolist() == loaded.tokens.tolist()
    loaded.save(tmp_path / "resaved")
    assert TokenCorpus.load(tmp_path / "resaved").line_starts.tolist() == lines
    without = load_corpus(tmp_path / "docs.jsonl", lines=False)
    assert without.line_starts is None and without.paragraph_starts is None
    assert without.tokens.tolist() == loaded.tokens.tolist()


def test_a_corpus_without_lines_saves_and_loads_without_them(tmp_path):
    corpus = load_corpus(read_documents_path(tmp_path))
    bare = TokenCorpus(corpus.tokens, corpus.doc_offsets, corpus.doc_ids, corpus.vocab)
    bare.save(tmp_path / "bare")
    assert TokenCorpus.load(tmp_path / "bare", verify=True).line_starts is None
    with pytest.raises(ValueError, match="go together"):
        TokenCorpus(corpus.tokens, corpus.doc_offsets, corpus.doc_ids, corpus.vocab,
                    line_starts=corpus.line_starts)


def read_documents_path(tmp_path):
    write_jsonl(tmp_path / "docs.jsonl", DOCS)
    assert len(list(read_documents(tmp_path / "docs.jsonl"))) == 1
    return tmp_path / "docs.jsonl"


def as_version_2(folder) -> None:
    """Turn a saved corpus folder into one of the previous version (no line arrays)."""
    from corpus_miner.io.artefact import metadata_checksum

    meta_path = folder / "metadata.json"
    meta = json.loads(meta_path.read_text())
    meta["version"] = 2
    for key in ("lines", "n_lines", "n_paragraphs"):
        meta.pop(key)
    for name in ("line_starts.bin", "paragraph_starts.bin"):
        meta["arrays"].pop(name)
        (folder / name).unlink()
    meta.pop("checksum")
    meta["checksum"] = metadata_checksum(meta)
    meta_path.write_text(json.dumps(meta))


def test_version_2_folders_load_without_lines(tmp_path):
    """A folder of the previous version (the same arrays without the line ones) still loads."""
    corpus = load_corpus(read_documents_path(tmp_path))
    corpus.save(tmp_path / "v3")
    as_version_2(tmp_path / "v3")
    old = TokenCorpus.load(tmp_path / "v3", verify=True)
    assert old.line_starts is None and old.tokens.tolist() == corpus.tokens.tolist()


def test_damaged_line_arrays_are_refused(tmp_path):
    from corpus_miner.io.artefact import metadata_checksum

    corpus = load_corpus(read_documents_path(tmp_path))
    corpus.save(tmp_path / "c")
    meta_path = tmp_path / "c" / "metadata.json"
    meta = json.loads(meta_path.read_text())
    meta["n_lines"] += 1
    meta.pop("checksum")
    meta["checksum"] = metadata_checksum(meta)
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(FormatError, match="n_lines"):
        TokenCorpus.load(tmp_path / "c")


def test_line_flags_without_jit():
    code = """
        import numpy as np, pyarrow as pa
        from corpus_miner.corpus import TokenIdAssigner
        from tests.corpus.test_line_starts import reference
        docs = ["a b\\n\\nc\\r\\nd", "", "\\u2028x\\x85İy\\rz", "中文\\n\\u0301q"]
        assigner = TokenIdAssigner(initial_vocab=1, initial_tokens=1)
        assigner.add_texts(pa.array(docs))
        tokens, _, _, flags = assigner.finish_with_lines()
        lines, paragraphs = reference(docs)
        assert np.flatnonzero(flags).tolist() == lines, (flags, lines)
        assert np.flatnonzero(flags == 2).tolist() == paragraphs
        print("ok")
    """
    assert run_python(code, jit=False).strip() == "ok"
