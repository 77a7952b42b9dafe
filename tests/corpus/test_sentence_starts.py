"""Sentence starts recorded by the compiled scan equal the plain-Python definition
(`corpus.tokenizer.sentence_starts`), through every path that builds a corpus, and are recorded
only when asked for."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import TokenCorpus, TokenIdAssigner, kernels, load_corpus, tokenize
from corpus_miner.corpus.build import save_corpus
from corpus_miner.corpus.parallel import ParallelTokenizer
from corpus_miner.corpus.tokenizer import sentence_starts
from tests.corpus.test_line_starts import reference as line_reference
from tests.corpus.test_line_starts import write_jsonl
from tests.helpers import run_python

# stops, CJK marks, whitespace of every kind (and characters that are not), next to words and
# the characters that need the exact str.lower() path
PIECES = [".", "!", "?", ":", ";", ",", "\u3002", "\uff01", "\uff1f", "\uff1a", "\u3001", " ",
          "\n", "\t", "\u00a0", "\u2003", "\u3000", "\x1f", "\u200b", ")", '"', "...", "ab",
          "Cd", "中文", "a\u0301", "İx", "ΟΔΟΣ", "x1"]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def reference(docs: list[str]) -> list[int]:
    """Global sentence starts of documents, from the definition."""
    found, first = [], 0
    for text in docs:
        found += [first + k for k in sentence_starts(text)]
        first += len(tokenize(text))
    return found


def test_definition_on_an_example():
    text = "Last sentence. Follow us: here!\nNext (see x.) and y.z 中文。好"
    tokens = tokenize(text)
    assert [tokens[k] for k in sentence_starts(text)] == ["follow", "here", "next", "and", "好"]
    assert sentence_starts(". A") == [] and sentence_starts("") == []


def test_whitespace_is_that_of_re():
    space = re.compile(r"\s")
    is_space = kernels.is_space.py_func
    wrong = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000
             and is_space(cp) != bool(space.match(chr(cp)))]
    assert wrong == []


@settings(max_examples=200, deadline=None)
@given(st.lists(texts, max_size=6), st.integers(1, 3))
def test_assigner_flags_equal_the_definition(docs, n_batches):
    """Tiny buffers make the scan stop and resume inside the text between two tokens."""
    assigner = TokenIdAssigner(initial_vocab=1, initial_tokens=1, sentences=True)
    for part in np.array_split(np.arange(len(docs)), n_batches):
        assigner.add_texts(pa.array([docs[i] for i in part], pa.string()))
    tokens, _, _, flags = assigner.finish_with_lines()
    assert np.flatnonzero(flags & kernels.SENTENCE_BREAK).tolist() == reference(docs)
    lines, paragraphs = line_reference(docs)  # the line flags are unchanged by the bit
    assert np.flatnonzero(flags & kernels.LINE_FLAGS).tolist() == lines
    assert np.flatnonzero((flags & kernels.LINE_FLAGS) == kernels.PARAGRAPH_START).tolist() \
        == paragraphs


@settings(max_examples=40, deadline=None)
@given(st.lists(texts, max_size=6))
def test_not_recorded_unless_asked(docs):
    assigner = TokenIdAssigner(initial_vocab=1, initial_tokens=1)
    assigner.add_texts(pa.array(docs, pa.string()))
    flags = assigner.finish_with_lines()[3]
    assert not (flags & kernels.SENTENCE_BREAK).any()


@settings(max_examples=40, deadline=None)
@given(st.lists(texts, min_size=1, max_size=12), st.integers(1, 3), st.integers(1, 64))
def test_threaded_blocks_give_the_same_starts(docs, threads, block_bytes):
    tokenizer = ParallelTokenizer(threads, block_bytes=block_bytes, sentences=True)

    class Batch:  # the readers' DocumentBatch, as far as the tokenizer looks
        def __init__(self, texts):
            self.texts = texts

    found, first = [], 0
    for block in tokenizer.run(Batch(pa.array(docs[i:i + 2], pa.string()))
                               for i in range(0, len(docs), 2)):
        found += block.sentence_starts(first).tolist()
        first += len(block.tokens)
    assert found == reference(docs)


DOCS = ["Home | About\nShare this: Twitter. Facebook\n\nA paragraph of text. Second one.",
        "", ". lead", "中文。好 ok! no?yes"]


def test_loaded_and_saved_corpora_keep_the_starts(tmp_path):
    write_jsonl(tmp_path / "docs.jsonl", DOCS)
    expected = reference(DOCS)
    assert expected  # the example has breaks
    loaded = load_corpus(tmp_path / "docs.jsonl", sentences=True)
    assert loaded.sentence_starts.tolist() == expected
    saved = save_corpus(tmp_path / "docs.jsonl", tmp_path / "saved", threads=2, sentences=True)
    again = TokenCorpus.load(tmp_path / "saved", verify=True)
    for corpus in (saved, again):
        assert corpus.sentence_starts.tolist() == expected
        assert corpus.tokens.tolist() == loaded.tokens.tolist()
        assert corpus.line_starts.tolist() == loaded.line_starts.tolist()
    loaded.save(tmp_path / "resaved")
    assert TokenCorpus.load(tmp_path / "resaved").sentence_starts.tolist() == expected
    plain = load_corpus(tmp_path / "docs.jsonl")
    assert plain.sentence_starts is None
    plain.save(tmp_path / "plain")
    assert TokenCorpus.load(tmp_path / "plain", verify=True).sentence_starts is None
    assert not (tmp_path / "plain" / "sentence_starts.bin").exists()


def test_sentence_flags_without_jit():
    code = """
        import numpy as np, pyarrow as pa
        from corpus_miner.corpus import TokenIdAssigner, kernels
        from tests.corpus.test_sentence_starts import reference
        docs = ["a. b\\n\\nc:\\r\\nd", "", "x\\u3002İy! z", "中文?\\u00a0q"]
        assigner = TokenIdAssigner(initial_vocab=1, initial_tokens=1, sentences=True)
        assigner.add_texts(pa.array(docs))
        flags = assigner.finish_with_lines()[3]
        found = np.flatnonzero(flags & kernels.SENTENCE_BREAK).tolist()
        assert found == reference(docs), (found, reference(docs))
        print("ok")
    """
    assert run_python(code, jit=False).strip() == "ok"
