"""Adapter between Spark's pandas batches and the local kernels (runs inside Spark workers).

Spark has no unsigned 64-bit type, so band keys travel as array<bigint>: the same 64 bits as the
local engine's uint64 keys, reinterpreted (`view`), never converted. Every function here takes a
pandas batch and calls corpus_miner.dedup's batch functions, so a document gets the very same band
keys and Bloom bits whichever engine, batch or partition processes it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from corpus_miner.dedup.bloom import BloomFilter
from corpus_miner.dedup.params import LSHBloomParams
from corpus_miner.dedup.pipeline import band_keys_for_texts

SEGMENT_BYTES = 1 << 20
"""Filters are shipped and merged in 1 MiB segments; all-zero segments are not shipped at all."""


def texts_to_arrow(texts: pd.Series) -> pa.Array:
    """A pandas text column as an Arrow string array (None -> null, rejected by the kernels)."""
    return pa.Array.from_pandas(texts, type=pa.large_string())


def band_keys_of_series(texts: pd.Series, params: LSHBloomParams) -> np.ndarray:
    """uint64 (n, bands) band keys of a pandas batch of texts."""
    return band_keys_for_texts(texts_to_arrow(texts), params)


def keys_to_series(keys: np.ndarray) -> pd.Series:
    """uint64 (n, bands) keys as a pandas Series of int64 arrays (Spark array<bigint>)."""
    signed = np.ascontiguousarray(keys).view(np.int64)
    return pd.Series(list(signed), dtype=object)


def series_to_keys(series: pd.Series, bands: int) -> np.ndarray:
    """A pandas batch of array<bigint> band keys back to uint64 (n, bands)."""
    if len(series) == 0:
        return np.empty((0, bands), np.uint64)
    keys = np.stack([np.asarray(row, dtype=np.int64) for row in series])
    return np.ascontiguousarray(keys).view(np.uint64)


def list_column_to_keys(column: pa.Array, bands: int) -> np.ndarray:
    """An Arrow array<bigint> column of band keys as uint64 (n, bands), without a copy per row."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    flat = column.flatten().to_numpy(zero_copy_only=False)
    if len(flat) != len(column) * bands:
        raise ValueError(f"expected {bands} band keys per row, got {len(flat)} "
                         f"for {len(column)} rows")
    return np.ascontiguousarray(flat, dtype=np.int64).view(np.uint64).reshape(len(column), bands)


def filter_segments(bloom: BloomFilter, segment_bytes: int = SEGMENT_BYTES,
                    twice: BloomFilter | None = None):
    """(segment index, bytes) of every segment of the filter with at least one bit set; with
    `twice` (add_counting's companion) the bytes are the filter's segment then twice's."""
    bits = bloom.bits
    for segment, start in enumerate(range(0, len(bits), segment_bytes)):
        chunk = bits[start:start + segment_bytes]
        if chunk.any():
            if twice is not None:
                chunk = np.concatenate([chunk, twice.bits[start:start + segment_bytes]])
            yield segment, chunk.tobytes()


def or_segments(group: pd.DataFrame) -> pd.DataFrame:
    """The shipped copies of one filter segment (rows of equal `key`) OR-ed into one row."""
    merged = np.frombuffer(group["bits"].iloc[0], np.uint8).copy()
    for raw in group["bits"].iloc[1:]:
        merged |= np.frombuffer(raw, np.uint8)
    return group.iloc[:1].assign(bits=[merged.tobytes()])


def merge_counted_segments(group: pd.DataFrame) -> pd.DataFrame:
    """or_segments for (filter, twice) segments: a bit is set twice in the union if it is in
    either twice half, or in both filter halves."""
    first = np.frombuffer(group["bits"].iloc[0], np.uint8)
    half = len(first) // 2
    once, twice = first[:half].copy(), first[half:].copy()
    for raw in group["bits"].iloc[1:]:
        other = np.frombuffer(raw, np.uint8)
        twice |= other[half:] | (once & other[:half])
        once |= other[:half]
    return group.iloc[:1].assign(bits=[np.concatenate([once, twice]).tobytes()])


def assemble_filter(num_bits: int, num_hashes: int, segments,
                    segment_bytes: int = SEGMENT_BYTES, counted: bool = False):
    """A filter from merged (segment index, bytes) pairs; counted: (filter, twice) from
    (filter, twice) segments."""
    blooms = [BloomFilter(num_bits, num_hashes) for _ in range(2 if counted else 1)]
    for segment, raw in segments:
        start = segment * segment_bytes
        bits = np.frombuffer(raw, np.uint8)
        parts = np.split(bits, 2) if counted else [bits]
        for bloom, part in zip(blooms, parts):
            bloom.bits[start:start + len(part)] |= part
    return tuple(blooms) if counted else blooms[0]
