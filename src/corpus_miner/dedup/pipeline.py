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
from corpus_miner.io.strings import arrow_string_buffers


def shingles_for_texts(texts, params: LSHBloomParams) -> tuple[np.ndarray, np.ndarray]:
    """(uint64 shingle hashes, int64 offsets) of a batch of texts."""
    return shingle_batch(texts, params.shingle_size, params.shingle_kind, params.max_shingles)


def signatures_for_texts(texts, params: LSHBloomParams) -> np.ndarray:
    """uint64 (n_docs, num_perm) MinHash or OPH signatures of a batch of texts."""
    hashes, offsets = shingles_for_texts(texts, params)
    return signatures(hashes, offsets, params.num_perm, params.seed, params.sketch)


CHUNK_BYTES = 1 << 21  # text per chunk: shingling holds ~10 bytes per text byte (hashes, copies)
CHUNK_DOCS = 1024  # and at most this many documents (signatures: 8 bytes x num_perm each)


def _text_lengths(texts) -> np.ndarray:
    """Bytes (Arrow, Python bytes) or characters (Python strings) of each text; 0 for what is not
    text (the shingler reports it)."""
    if isinstance(texts, (pa.Array, pa.ChunkedArray)):
        if not (pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type)):
            return np.zeros(len(texts), np.int64)
        # from the offsets: fill_null(0) would convert 0 with pa.scalar, which imports pandas
        # where it is installed (0.1-0.3 s of a small run)
        lengths = np.diff(arrow_string_buffers(texts)[0])
        if texts.null_count:  # a null's slot may have a length: it counts 0
            lengths[np.asarray(texts.is_null().to_numpy(zero_copy_only=False), bool)] = 0
        return lengths
    return np.fromiter((len(t) if isinstance(t, (str, bytes)) else 0 for t in texts), np.int64,
                       len(texts))


def chunk_bounds(texts, max_bytes: int = CHUNK_BYTES,
                 max_docs: int = CHUNK_DOCS) -> list[tuple[int, int]]:
    """(start, stop) of consecutive chunks of at most max_bytes of text and max_docs documents
    (a longer document is a chunk of its own): working memory follows text size, not counts."""
    ends = np.cumsum(_text_lengths(texts))
    bounds, start = [], 0
    while start < len(ends):
        before = ends[start - 1] if start else 0
        stop = int(np.searchsorted(ends, before + max_bytes, side="right"))
        stop = min(max(stop, start + 1), start + max_docs)
        bounds.append((start, stop))
        start = stop
    return bounds


def band_keys_for_texts(texts, params: LSHBloomParams) -> np.ndarray:
    """uint64 (n_docs, bands) band keys of a batch of texts (computed chunk by chunk, see
    chunk_bounds; the keys do not depend on the chunking)."""
    bands, rows = params.bands_rows
    keys = np.empty((len(texts), bands), np.uint64)
    for start, stop in chunk_bounds(texts):
        keys[start:stop] = band_keys(signatures_for_texts(texts[start:stop], params), bands, rows)
    return keys
