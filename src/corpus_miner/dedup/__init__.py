"""LSHBloom near-duplicate detection: shingling and MinHash/OPH kernels, banding, a mergeable
Bloom filter with a versioned on-disk format, and the local engine (`LSHBloom`)."""

from corpus_miner.dedup.banding import band_keys, choose_bands
from corpus_miner.dedup.bloom import BloomFilter, bloom_size, key_fp_prob
from corpus_miner.dedup.lshbloom import LSHBloom
from corpus_miner.dedup.params import LSHBloomParams, canonical_mode
from corpus_miner.dedup.pipeline import band_keys_for_texts, shingles_for_texts, signatures_for_texts
from corpus_miner.dedup.result import DedupResult

__all__ = [
    "BloomFilter", "DedupResult", "LSHBloom", "LSHBloomParams", "band_keys", "band_keys_for_texts",
    "bloom_size", "canonical_mode", "choose_bands", "key_fp_prob", "shingles_for_texts",
    "signatures_for_texts",
]
