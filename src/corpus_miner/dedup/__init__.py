"""LSHBloom near-duplicate detection: shingling and MinHash/OPH kernels, banding, mergeable
Bloom filters that grow by layers instead of overfilling, the index folder, and the local engine
(`LSHBloom`)."""

from typing import TYPE_CHECKING

from corpus_miner._lazy import lazy_attributes

if TYPE_CHECKING:
    from corpus_miner.dedup.banding import band_keys, choose_bands
    from corpus_miner.dedup.bloom import BloomFilter, bloom_size, key_fp_prob
    from corpus_miner.dedup.lshbloom import LSHBloom
    from corpus_miner.dedup.params import LSHBloomParams, canonical_mode
    from corpus_miner.dedup.pipeline import (
        band_keys_for_texts,
        shingles_for_texts,
        signatures_for_texts,
    )
    from corpus_miner.dedup.result import DedupResult
    from corpus_miner.dedup.scalable_bloom import ScalableBloomFilter
    from corpus_miner.dedup.state import LSHBloomState

__getattr__, __dir__ = lazy_attributes(globals(), {
    "corpus_miner.dedup.banding": "band_keys choose_bands",
    "corpus_miner.dedup.bloom": "BloomFilter bloom_size key_fp_prob",
    "corpus_miner.dedup.lshbloom": "LSHBloom",
    "corpus_miner.dedup.params": "LSHBloomParams canonical_mode",
    "corpus_miner.dedup.pipeline": "band_keys_for_texts shingles_for_texts signatures_for_texts",
    "corpus_miner.dedup.result": "DedupResult",
    "corpus_miner.dedup.scalable_bloom": "ScalableBloomFilter",
    "corpus_miner.dedup.state": "LSHBloomState",
})

__all__ = [
    "BloomFilter", "DedupResult", "LSHBloom", "LSHBloomParams", "LSHBloomState",
    "ScalableBloomFilter", "band_keys", "band_keys_for_texts",
    "bloom_size", "canonical_mode", "choose_bands", "key_fp_prob", "shingles_for_texts",
    "signatures_for_texts",
]
