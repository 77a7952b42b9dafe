"""Texts -> shingles -> signatures -> band keys for one batch: the functions both engines call.

The Spark engine calls these inside mapInPandas / pandas UDFs on each batch of texts; since they
depend only on the batch's texts and the parameters, a document gets the same signature and band
keys whichever engine, batch or partition processes it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from corpus_miner.dedup.banding import band_keys
from corpus_miner.dedup.minhash import signatures
from corpus_miner.dedup.params import LSHBloomParams
from corpus_miner.dedup.shingles import shingle_batch


def shingles_for_texts(texts, params: LSHBloomParams) -> tuple[np.ndarray, np.ndarray]:
    """(uint64 shingle hashes, int64 offsets) of a batch of texts."""
    return shingle_batch(texts, params.shingle_size, params.shingle_kind, params.max_shingles)


def signatures_for_texts(texts, params: LSHBloomParams) -> np.ndarray:
    """uint64 (n_docs, num_perm) MinHash or OPH signatures of a batch of texts."""
    hashes, offsets = shingles_for_texts(texts, params)
    return signatures(hashes, offsets, params.num_perm, params.seed, params.sketch)


CHUNK_DOCS = 1024  # bounds the shingle/signature buffers; results do not depend on it


def band_keys_for_texts(texts, params: LSHBloomParams) -> np.ndarray:
    """uint64 (n_docs, bands) band keys of a batch of texts (processed CHUNK_DOCS at a time)."""
    bands, rows = params.bands_rows
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    n_docs = len(texts)
    keys = np.empty((n_docs, bands), np.uint64)
    for start in range(0, n_docs, CHUNK_DOCS):
        chunk = texts[start:start + CHUNK_DOCS]
        keys[start:start + len(chunk)] = band_keys(signatures_for_texts(chunk, params), bands, rows)
    return keys
