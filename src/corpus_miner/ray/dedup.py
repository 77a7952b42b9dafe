"""Band keys of document blocks (ray.documents) in Ray tasks, with the local engine's kernels
(dedup.pipeline): the shingling and MinHash, the costly part of a deduplication, run in the
workers; the driver receives 8 bytes x bands per document (what the local `dedup` holds between
its two reads) and decides with the local LSHBloom, so the flags and the index are the local
engine's."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import ray

from corpus_miner.dedup.params import LSHBloomParams


@ray.remote
def _block_keys(block: pa.Table, params: LSHBloomParams, first: int, text_col: str = "text",
                id_col: str | None = "id", number_ids: bool = True) -> tuple:
    """(band keys, ids (None without an id column; with number_ids a null id is the row number,
    as the local readers number a record without one), digest (documents, value) of the texts
    at their global indexes; first: the global index of the block's first row)."""
    from corpus_miner.dedup.pipeline import band_keys_for_texts
    from corpus_miner.io.digest import OrderedDigest

    texts = block_texts(block, text_col)
    digest = OrderedDigest()
    digest.update(texts, first)
    ids = None
    if id_col is not None and id_col in block.column_names:
        ids = block.column(id_col).combine_chunks()
        if number_ids:
            numbers = pa.array([str(first + i) for i in range(block.num_rows)], pa.string())
            ids = pc.if_else(pc.is_null(ids), numbers, ids)
    return band_keys_for_texts(texts, params), ids, digest.state()


def block_texts(block: pa.Table, text_col: str) -> pa.Array:
    """The texts of a block as the local LSHBloom reads a table's: a null text is empty."""
    texts = block.column(text_col).combine_chunks()
    if pa.types.is_null(texts.type):
        texts = texts.cast(pa.string())
    return pc.fill_null(texts, "")


def ordered_keys(blocks: list, params: LSHBloomParams, offsets, text_col: str = "text",
                 id_col: str | None = "id", number_ids: bool = True,
                 in_flight: int | None = None) -> Iterator[tuple]:
    """(band keys, ids, digest state) of each block in order, at most `in_flight` blocks
    computed ahead of the one the driver takes (default: twice the cluster's CPUs, so that
    every CPU stays busy): what waits for the driver stays bounded however many blocks there
    are."""
    if in_flight is None:
        in_flight = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    waiting: deque = deque()
    for i, block in enumerate(blocks):
        waiting.append(_block_keys.remote(block, params, int(offsets[i]), text_col, id_col,
                                          number_ids))
        if len(waiting) >= in_flight:
            yield ray.get(waiting.popleft())
    while waiting:
        yield ray.get(waiting.popleft())


def block_keys(blocks: list, params: LSHBloomParams) -> tuple[list, list, tuple[int, int]]:
    """(uint64 (documents, bands) band keys of each document block, its ids, in order; the
    OrderedDigest state of their texts, for the driver's second read)."""
    from corpus_miner.io.digest import OrderedDigest
    from corpus_miner.ray.documents import block_offsets

    keys, ids, digest = [], [], OrderedDigest()
    for found, named, (documents, value) in ordered_keys(blocks, params,
                                                         block_offsets(blocks)):
        keys.append(found)
        ids.append(named)
        digest.combine(value, documents)
    return keys, ids, digest.state()


def concatenated(keys: list, params: LSHBloomParams) -> np.ndarray:
    return np.concatenate([np.zeros((0, params.bands_rows[0]), np.uint64), *keys])
