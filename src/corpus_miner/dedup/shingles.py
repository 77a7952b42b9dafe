"""Shingling: normalised text -> 64-bit shingle hashes, for a whole batch of documents at once.

Normalisation (pyarrow, vectorised): lowercase (Unicode), every run of whitespace becomes one space,
leading/trailing whitespace removed; whitespace is what Python's `str.split()` splits on.

Shingles are either character n-grams (`kind="char"`, default, n = `shingle_size` Unicode code
points) or word n-grams (`kind="word"`, n words of the normalised text). A document shorter than one
shingle contributes its whole normalised text as a single shingle; an empty document has none.

Each shingle is hashed over its UTF-8 bytes with FNV-1a 64 followed by the SplitMix64 finaliser, in
numba over the batch's flat byte buffer and offsets (no Python object per shingle).

`max_shingles` caps the per-document work deterministically: a document whose shingle list is
longer than the cap keeps the `max_shingles` smallest *distinct* shingle hashes (a bottom-k sample:
the same shingle is kept or dropped in every document, so similar documents keep similar samples).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from corpus_miner.dedup._hashing import FNV_OFFSET, FNV_PRIME, splitmix64
from corpus_miner.errors import InputError, ParameterError

SHINGLE_KINDS = ("char", "word")

# Exactly the characters Python's str.split() treats as whitespace, in RE2 syntax.
_WHITESPACE_RUN = r"[\t\n\x0b\x0c\r\x1c-\x1f\x{85}\p{Z}]+"
_SPACE = np.uint8(32)


def normalize_texts(texts: Sequence[str] | pa.Array | pa.ChunkedArray) -> pa.LargeStringArray:
    """Lowercase and collapse whitespace runs; returns a large_string array (int64 offsets)."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if not isinstance(texts, pa.Array):
        try:
            texts = pa.array(texts, type=pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"texts must be strings: {exc}; convert them with str() first") from None
    if not (pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type)):
        raise InputError(f"texts must be a string array, got Arrow type {texts.type}")
    if texts.null_count:
        first = pc.index(pc.is_null(texts), True).as_py()
        raise InputError(f"text of document {first} (0-based, in this batch) is null; "
                         "drop or fill null texts before deduplication")
    lowered = pc.utf8_lower(texts)
    collapsed = pc.replace_substring_regex(lowered, pattern=_WHITESPACE_RUN, replacement=" ")
    trimmed = pc.utf8_trim(collapsed, characters=" ")
    return trimmed.cast(pa.large_string())


def text_buffers(texts: pa.LargeStringArray) -> tuple[np.ndarray, np.ndarray]:
    """Zero-copy view of a large_string array as (uint8 bytes, int64 offsets relative to them)."""
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int64)[texts.offset: texts.offset + len(texts) + 1]
    data_buf = texts.buffers()[2]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return data, offsets


@njit(cache=True)
def _unit_starts(data, start, end, word_mode):
    """Byte starts of the units (code points or words) of data[start:end]; an extra entry `end`."""
    count = 0
    for i in range(start, end):
        b = data[i]
        if word_mode:
            if b != _SPACE and (i == start or data[i - 1] == _SPACE):
                count += 1
        elif (b & np.uint8(0xC0)) != np.uint8(0x80):
            count += 1
    starts = np.empty(count + 1, np.int64)
    k = 0
    for i in range(start, end):
        b = data[i]
        if word_mode:
            if b != _SPACE and (i == start or data[i - 1] == _SPACE):
                starts[k] = i
                k += 1
        elif (b & np.uint8(0xC0)) != np.uint8(0x80):
            starts[k] = i
            k += 1
    # For words the n-gram ends before the separating space; `end + 1` makes `starts[j] - 1` work.
    starts[count] = end + 1 if word_mode else end
    return starts


@njit(cache=True, inline="always")
def _hash_bytes(data, start, end):
    h = FNV_OFFSET
    for i in range(start, end):
        h = (h ^ np.uint64(data[i])) * FNV_PRIME
    return splitmix64(h)


@njit(cache=True)
def _shingle_counts(data, offsets, shingle_size, word_mode):
    n_docs = len(offsets) - 1
    counts = np.zeros(n_docs, np.int64)
    for d in range(n_docs):
        units = len(_unit_starts(data, offsets[d], offsets[d + 1], word_mode)) - 1
        if units >= shingle_size:
            counts[d] = units - shingle_size + 1
        elif units > 0:
            counts[d] = 1
    return counts


@njit(cache=True)
def shingle_hashes_kernel(data, offsets, shingle_size, word_mode):
    """Hashes of all shingles of all documents: (flat uint64 hashes, int64 per-document offsets)."""
    counts = _shingle_counts(data, offsets, shingle_size, word_mode)
    out_offsets = np.zeros(len(counts) + 1, np.int64)
    for d in range(len(counts)):
        out_offsets[d + 1] = out_offsets[d] + counts[d]
    hashes = np.empty(out_offsets[-1], np.uint64)
    for d in range(len(counts)):
        if counts[d] == 0:
            continue
        starts = _unit_starts(data, offsets[d], offsets[d + 1], word_mode)
        units = len(starts) - 1
        width = min(shingle_size, units)
        for j in range(counts[d]):
            stop = starts[j + width] - 1 if word_mode else starts[j + width]
            hashes[out_offsets[d] + j] = _hash_bytes(data, starts[j], stop)
    return hashes, out_offsets


@njit(cache=True)
def cap_shingles_kernel(hashes, offsets, max_shingles):
    """Documents with more than max_shingles hashes keep their max_shingles smallest distinct ones."""
    n_docs = len(offsets) - 1
    new_counts = np.empty(n_docs, np.int64)
    for d in range(n_docs):
        new_counts[d] = min(offsets[d + 1] - offsets[d], max_shingles)
    # Distinct counts can be smaller than the cap: compute the kept lists first, then pack.
    kept = np.empty(offsets[-1], np.uint64)
    for d in range(n_docs):
        seg = hashes[offsets[d]: offsets[d + 1]]
        if len(seg) <= max_shingles:
            kept[offsets[d]: offsets[d] + len(seg)] = seg
            continue
        ordered = np.sort(seg)
        k = 0
        for i in range(len(ordered)):
            if k == max_shingles:
                break
            if i == 0 or ordered[i] != ordered[i - 1]:
                kept[offsets[d] + k] = ordered[i]
                k += 1
        new_counts[d] = k
    out_offsets = np.zeros(n_docs + 1, np.int64)
    for d in range(n_docs):
        out_offsets[d + 1] = out_offsets[d] + new_counts[d]
    out = np.empty(out_offsets[-1], np.uint64)
    for d in range(n_docs):
        out[out_offsets[d]: out_offsets[d + 1]] = kept[offsets[d]: offsets[d] + new_counts[d]]
    return out, out_offsets


def shingle_batch(texts, shingle_size: int = 5, kind: str = "char",
                  max_shingles: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Normalise a batch of texts and return (uint64 shingle hashes, int64 offsets of len n+1)."""
    if kind not in SHINGLE_KINDS:
        raise ParameterError(f"shingle kind must be one of {SHINGLE_KINDS}, got {kind!r}")
    if shingle_size < 1:
        raise ParameterError(f"shingle_size must be >= 1, got {shingle_size}")
    data, offsets = text_buffers(normalize_texts(texts))
    hashes, hash_offsets = shingle_hashes_kernel(data, offsets, int(shingle_size), kind == "word")
    if max_shingles is not None:
        hashes, hash_offsets = cap_shingles_kernel(hashes, hash_offsets, int(max_shingles))
    return hashes, hash_offsets
