"""Chunks bounded by text size: their bounds, keys independent of them, and Python texts turned
into Arrow without pa.array (which imports pandas)."""

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from corpus_miner.dedup import pipeline
from corpus_miner.dedup.params import LSHBloomParams
from corpus_miner.dedup.pipeline import band_keys_for_texts, chunk_bounds
from corpus_miner.dedup.shingles import normalize_texts, shingle_batch
from corpus_miner.errors import InputError


def test_chunk_bounds_respect_bytes_and_documents():
    texts = ["a" * 10] * 7
    assert chunk_bounds(texts, max_bytes=25, max_docs=100) == [(0, 2), (2, 4), (4, 6), (6, 7)]
    assert chunk_bounds(texts, max_bytes=10**6, max_docs=3) == [(0, 3), (3, 6), (6, 7)]
    # a document longer than the budget is a chunk of its own
    assert chunk_bounds(["x", "y" * 100, "z"], max_bytes=50) == [(0, 1), (1, 2), (2, 3)]
    assert chunk_bounds([], max_bytes=5) == []


def test_chunk_bounds_count_utf8_bytes_of_arrow_input():
    texts = ["é" * 10, "a" * 10, "b"]  # 20, 10 and 1 bytes
    assert chunk_bounds(pa.array(texts), max_bytes=20) == [(0, 1), (1, 3)]
    chunked = pa.chunked_array([pa.array(texts[:1]), pa.array(texts[1:])])
    assert chunk_bounds(chunked, max_bytes=20) == [(0, 1), (1, 3)]


@pytest.mark.parametrize("sketch", ["oph", "minhash"])
def test_band_keys_do_not_depend_on_chunking(monkeypatch, sketch):
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "épsilon", "ζeta", "eta"]
    texts = [" ".join(rng.choice(words, size=int(n))) for n in rng.integers(0, 400, 60)]
    params = LSHBloomParams(num_perm=32, num_bands=8, sketch=sketch).validated()
    whole = band_keys_for_texts(texts, params)
    monkeypatch.setattr(pipeline, "CHUNK_BYTES", 300)
    monkeypatch.setattr(pipeline, "CHUNK_DOCS", 7)
    assert len(chunk_bounds(texts, pipeline.CHUNK_BYTES, pipeline.CHUNK_DOCS)) > 10
    assert np.array_equal(band_keys_for_texts(texts, params), whole)
    chunked = pa.chunked_array([texts[:25], texts[25:]])
    assert np.array_equal(band_keys_for_texts(chunked, params), whole)


def test_python_texts_convert_like_arrow_strings():
    texts = ["Hello  World", "", "Ünïcödé 漢字", b"bytes  too"]
    got = normalize_texts(texts).to_pylist()
    assert got == normalize_texts(pa.array(texts, pa.large_string())).to_pylist()
    assert got == ["hello world", "", "ünïcödé 漢字", "bytes too"]


@pytest.mark.parametrize("bad, match", [(["a", None], "document 1 .* is null"),
                                        (["a", 2.5], "document 1 is a float"),
                                        (["a\udc80"], "cannot be UTF-8 encoded"),
                                        ([b"\xff"], "not UTF-8")])
def test_bad_python_texts_are_refused_with_their_position(bad, match):
    with pytest.raises(InputError, match=match):
        shingle_batch(bad, 3)


def test_deduplicating_a_list_does_not_import_pandas():
    code = ("import sys\nfrom corpus_miner.dedup import LSHBloom\n"
            "LSHBloom(num_perm=16).deduplicate(['one text', 'one text', 'another'])\n"
            "print('pandas' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"
