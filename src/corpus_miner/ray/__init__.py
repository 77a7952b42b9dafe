"""The Ray engine: the engine-neutral steps of phrases/distributed on a Ray cluster (a local one
by default). Needs the `ray` extra.

    import ray
    from corpus_miner.ray import RayBloomSpan

    ray.init(num_cpus=2)
    miner = RayBloomSpan(sigma=20, min_length=10).fit(ray.data.read_parquet("pages/"))
    miner.phrases_                                    # a PhraseTable, as BloomSpan's
    RayLSHBloom(threshold=0.8).deduplicate(ray.data.read_parquet("pages/"))  # unique rows
"""

from typing import TYPE_CHECKING

from corpus_miner._lazy import lazy_attributes

if TYPE_CHECKING:
    from corpus_miner.ray.bloomspan import RayBloomSpan
    from corpus_miner.ray.lshbloom import RayLSHBloom

__getattr__, __dir__ = lazy_attributes(globals(), {
    "corpus_miner.ray.bloomspan": "RayBloomSpan",
    "corpus_miner.ray.lshbloom": "RayLSHBloom",
})

__all__ = ["RayBloomSpan", "RayLSHBloom"]
