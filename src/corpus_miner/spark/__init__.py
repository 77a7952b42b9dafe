"""Spark engines: LSHBloom (the same kernels as corpus_miner.dedup, run inside pandas UDFs) and
BloomSpan (the distributed decomposition of phrases.distributed, exact).

Imported only when asked for (`from corpus_miner.spark import SparkLSHBloom, SparkBloomSpan` or
`from spark_lshbloom import ...`); without pyspark/pandas the import raises MissingExtraError
naming the `spark` extra. The names load on first use: every Python worker imports this package
to run a task, and a BloomSpan task needs neither pandas nor the LSHBloom engine (~0.5 s of
imports per worker).
"""

from corpus_miner._lazy import lazy_attributes
from corpus_miner.spark._require import require_spark

require_spark()

__all__ = ["SparkBloomSpan", "SparkLSHBloom", "local_session"]
__getattr__, __dir__ = lazy_attributes(globals(), {
    "corpus_miner.spark.bloomspan": "SparkBloomSpan",
    "corpus_miner.spark.lshbloom": "SparkLSHBloom",
    "corpus_miner.spark.session": "local_session",
})
