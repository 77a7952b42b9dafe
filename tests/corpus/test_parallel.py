"""The threaded tokenizer and the streamed save against the plain path (one TokenIdAssigner over
everything, and the plain-Python reference): same ids, offsets, vocabulary and folder, whatever
the thread count, block size or batch size."""

from __future__ import annotations

import json
from concurrent.futures import Future

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import TokenCorpus, TokenIdAssigner, load_corpus, parallel
from corpus_miner.corpus.build import save_corpus
from corpus_miner.corpus.parallel import ParallelTokenizer
from corpus_miner.corpus.vocabulary import Vocabulary
from corpus_miner.errors import InputError
from corpus_miner.io.readers import DocumentBatch
from corpus_miner.io.strings import StringList
from tests.corpus.reference import reference_ids
from tests.helpers import run_python

# few distinct tokens, so blocks share most of them and the merge order matters
ALPHABET = list("abAB Σς İ.\n中日é\u0301 9") + ["\u00df", "\U00020000", "\ufffd"]
texts = st.text(alphabet=st.sampled_from(ALPHABET), max_size=25)


def _batches(docs: list[str], cuts: list[int]) -> list[DocumentBatch]:
    bounds = sorted({0, len(docs), *[c % (len(docs) + 1) for c in cuts]})
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        texts_arr = pa.array(docs[lo:hi], pa.string())
        ids = pa.array([str(i) for i in range(lo, hi)], pa.string())
        out.append(DocumentBatch(ids, texts_arr, pa.table({"text": texts_arr}), "t", lo))
    return out


def _plain(docs: list[str]):
    assigner = TokenIdAssigner(initial_vocab=1, initial_tokens=1)
    assigner.add_texts(pa.array(docs, pa.string()))
    return assigner.finish()


def _run(batches, threads: int, block_bytes: int):
    tokenizer = ParallelTokenizer(threads, block_bytes=block_bytes)
    blocks = list(tokenizer.run(batches))
    tokens = np.concatenate([b.tokens for b in blocks] + [np.zeros(0, np.uint32)])
    ends, base = [0], 0
    for b in blocks:
        ends += (b.doc_offsets[1:] + base).tolist()
        base += len(b.tokens)
    return tokens, np.array(ends), list(tokenizer.vocabulary.strings())


@settings(max_examples=60, deadline=None)
@given(st.lists(texts, max_size=14), st.lists(st.integers(0, 20), max_size=5),
       st.integers(1, 40))
def test_ids_do_not_depend_on_threads_or_blocks(docs, cuts, block_bytes):
    tokens, offsets, vocab = _plain(docs)
    for threads in (1, 2, 3):
        got_tokens, got_offsets, got_vocab = _run(_batches(docs, cuts), threads, block_bytes)
        assert got_vocab == list(vocab)
        assert got_tokens.tolist() == tokens.tolist()
        assert got_offsets.tolist() == offsets.tolist()
    ids, ref_vocab = reference_ids(docs)
    assert list(vocab) == ref_vocab and sum(ids, []) == tokens.tolist()


def test_vocabulary_merge_grows_and_maps_in_local_order():
    def packed(token):  # the key of a token of up to 8 bytes: its bytes, little-endian
        return int.from_bytes(token.encode(), "little")

    vocab = Vocabulary(initial=1)
    first = vocab.merge(np.array([packed("x"), packed("yy")], np.uint64),
                        StringList.from_strings(["x", "yy"]))
    # longer tokens are keyed by a hash: the same key (a collision) with other bytes, or other
    # lengths, is a new entry, not the first one
    long_a, long_b, long_c = "w" * 40, "v" * 40, "v" * 41
    second = vocab.merge(np.array([packed("yy"), packed("x"), packed("z"), *[0x3300] * 4],
                                  np.uint64),
                         StringList.from_strings(["yy", "x", "z", long_a, long_b, long_c, long_a]))
    assert first.tolist() == [0, 1] and second.tolist() == [1, 0, 2, 3, 4, 5, 3]
    assert list(vocab.strings()) == ["x", "yy", "z", long_a, long_b, long_c]


def test_blocks_no_worker_started_are_scanned_by_the_merging_thread(monkeypatch):
    class Unstarted(Future):
        def result(self, timeout=None):
            raise AssertionError("waited for a block that no worker started")

    class IdlePool:  # starts nothing: every block is still pending when its turn to merge comes
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, fn, *args):
            return Unstarted()

    monkeypatch.setattr(parallel, "ThreadPoolExecutor", IdlePool)
    docs = ["Alpha beta", "BETA gamma ΣΑΣ", "", "delta alpha 中文", "gamma İx"]
    tokens, offsets, vocab = _plain(docs)
    got_tokens, got_offsets, got_vocab = _run(_batches(docs, [1, 2, 4]), 2, 1)
    assert got_vocab == list(vocab)
    assert got_tokens.tolist() == tokens.tolist() and got_offsets.tolist() == offsets.tolist()


def test_threads_must_be_positive():
    with pytest.raises(ValueError):
        ParallelTokenizer(0)


@pytest.fixture
def many_docs(tmp_path):
    rng = np.random.default_rng(5)
    words = ["alpha", "Beta", "ΣΟΦΙΑ", "中", "文", "İstanbul", "x1", "déjà"]
    rows = [{"id": f"doc-{i}", "text": " ".join(rng.choice(words, rng.integers(0, 30)))}
            for i in range(400)]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path, rows


@pytest.mark.parametrize("threads", [1, 2])
def test_load_corpus_same_for_every_thread_count(many_docs, threads):
    path, rows = many_docs
    corpus = load_corpus([path], batch_size=256, threads=threads)
    ids, vocab = reference_ids([r["text"] for r in rows])
    assert list(corpus.vocab) == vocab
    assert [corpus.doc_tokens(i).tolist() for i in range(corpus.n_docs)] == ids
    assert list(corpus.doc_ids) == [r["id"] for r in rows]


@pytest.mark.parametrize("threads", [1, 2])
def test_save_corpus_streams_the_same_folder_as_save(many_docs, tmp_path, threads):
    path, rows = many_docs
    whole = load_corpus([path], batch_size=256)
    whole.save(tmp_path / "whole")
    streamed = save_corpus([path], tmp_path / "streamed", batch_size=256, threads=threads)
    for name in ("tokens.bin", "doc_offsets.bin", "vocab_offsets.bin", "vocab_bytes.bin",
                 "doc_id_offsets.bin", "doc_id_bytes.bin", "metadata.json"):
        assert (tmp_path / "whole" / name).read_bytes() == \
            (tmp_path / "streamed" / name).read_bytes(), name
    again = TokenCorpus.load(tmp_path / "streamed", verify=True)
    assert streamed.n_tokens == again.n_tokens == whole.n_tokens
    assert list(again.doc_ids) == [r["id"] for r in rows]


def test_save_corpus_of_a_saved_corpus_copies_it(many_docs, tmp_path):
    path, _ = many_docs
    first = save_corpus([path], tmp_path / "a")
    copy = save_corpus([tmp_path / "a"], tmp_path / "b")
    assert np.array_equal(copy.tokens, first.tokens) and list(copy.vocab) == list(first.vocab)


def test_failed_save_corpus_leaves_no_folder(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{not json\n')
    with pytest.raises(InputError, match="malformed JSON"):
        save_corpus([bad], tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.jsonl"]


def test_merge_kernels_without_jit():
    """merge_vocab and remap_ids interpreted by Python (NUMBA_DISABLE_JIT=1): the threaded path
    still equals the reference."""
    code = """
        import pyarrow as pa
        from corpus_miner.corpus.parallel import ParallelTokenizer
        from corpus_miner.io.readers import DocumentBatch
        from tests.corpus.reference import reference_ids
        docs = ["Héllo wörld, HELLO!", "ΟΔΟΣ 42 中文 İx", "", "hello 中 x", "wörld new"]
        batches = []
        for i, doc in enumerate(docs):
            texts = pa.array([doc])
            batches.append(DocumentBatch(pa.array([str(i)]), texts, pa.table({"text": texts}),
                                         "t", i))
        tokenizer = ParallelTokenizer(2, block_bytes=8)
        got = [b.tokens[b.doc_offsets[i]:b.doc_offsets[i + 1]].tolist()
               for b in tokenizer.run(batches) for i in range(len(b.doc_offsets) - 1)]
        ids, vocab = reference_ids(docs)
        assert got == ids and list(tokenizer.vocabulary.strings()) == vocab, (got, ids)
        print("ok")
    """
    assert run_python(code, jit=False).strip() == "ok"


def test_count_corpus_counts_like_load_corpus(many_docs, tmp_path):
    from corpus_miner.corpus.build import count_corpus

    path, _ = many_docs
    corpus = load_corpus([path], batch_size=256)
    save_corpus([path], tmp_path / "saved")
    for source in ([path], [tmp_path / "saved"]):
        counts = count_corpus(source, batch_size=256, threads=2)
        assert (counts.n_docs, counts.n_tokens, counts.n_vocab) == \
            (corpus.n_docs, corpus.n_tokens, corpus.n_vocab)
        assert counts.read_stats.documents == corpus.read_stats.documents
