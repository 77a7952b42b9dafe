"""Band keys of document blocks (ray.documents) in Ray tasks, with the local engine's kernels
(dedup.pipeline): the shingling and MinHash, the costly part of a deduplication, run in the
workers; the driver receives 8 bytes x bands per document (what the local `dedup` holds between
its two reads) and decides with the local LSHBloom, so the flags and the index are the local
engine's."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import ray

from corpus_miner.dedup.params import LSHBloomParams


@ray.remote
def _block_keys(block: pa.Table, params: LSHBloomParams, first: int) -> tuple:
    """(band keys, ids as the local readers give them (the row number where a record has
    none), digest (documents, value) of the texts at their global indexes)."""
    import pyarrow.compute as pc

    from corpus_miner.dedup.pipeline import band_keys_for_texts
    from corpus_miner.io.digest import OrderedDigest

    texts = block.column("text").combine_chunks()
    digest = OrderedDigest()
    digest.update(texts, first)
    numbers = pa.array([str(first + i) for i in range(block.num_rows)], pa.string())
    ids = pc.if_else(pc.is_null(block.column("id").combine_chunks()), numbers,
                     block.column("id").combine_chunks())
    return band_keys_for_texts(texts, params), ids, digest.state()


def block_keys(blocks: list, params: LSHBloomParams) -> tuple[list, list, tuple[int, int]]:
    """(uint64 (documents, bands) band keys of each block, its ids, in order; the
    OrderedDigest state of their texts, for the driver's second read)."""
    from corpus_miner.io.digest import OrderedDigest
    from corpus_miner.ray.documents import block_offsets

    offsets = block_offsets(blocks)
    refs = [_block_keys.remote(b, params, int(offsets[i])) for i, b in enumerate(blocks)]
    keys, ids, digest = [], [], OrderedDigest()
    for ref in refs:  # in order, one block's keys at a time besides those gathered
        found, named, (documents, value) = ray.get(ref)
        keys.append(found)
        ids.append(named)
        digest.combine(value, documents)
    return keys, ids, digest.state()


def concatenated(keys: list, params: LSHBloomParams) -> np.ndarray:
    return np.concatenate([np.zeros((0, params.bands_rows[0]), np.uint64), *keys])
