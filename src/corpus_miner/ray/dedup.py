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
    """(band keys, digest (documents, value) of the texts at their global indexes)."""
    from corpus_miner.dedup.pipeline import band_keys_for_texts
    from corpus_miner.io.digest import OrderedDigest

    texts = block.column("text").combine_chunks()
    digest = OrderedDigest()
    digest.update(texts, first)
    return band_keys_for_texts(texts, params), digest.state()


def band_keys(blocks: list, params: LSHBloomParams) -> tuple[np.ndarray, tuple[int, int]]:
    """(uint64 (documents, bands) band keys of the blocks in order, the OrderedDigest state of
    their texts, for the driver's second read)."""
    from corpus_miner.io.digest import OrderedDigest
    from corpus_miner.ray.documents import block_offsets

    offsets = block_offsets(blocks)
    refs = [_block_keys.remote(b, params, int(offsets[i])) for i, b in enumerate(blocks)]
    bands = params.bands_rows[0]
    keys, digest = [np.zeros((0, bands), np.uint64)], OrderedDigest()
    for ref in refs:  # in order, one block's keys at a time besides those gathered
        found, (documents, value) = ray.get(ref)
        keys.append(found)
        digest.combine(value, documents)
    return np.concatenate(keys), digest.state()
