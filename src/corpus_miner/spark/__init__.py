"""Spark engines: LSHBloom (the same kernels as corpus_miner.dedup, run inside pandas UDFs) and
BloomSpan (the distributed decomposition of phrases.distributed, exact).

Imported only when asked for (`from corpus_miner.spark import SparkLSHBloom, SparkBloomSpan` or
`from spark_lshbloom import ...`); without pyspark/pandas the import raises MissingExtraError
naming the `spark` extra.
"""

from corpus_miner.spark._require import require_spark

require_spark()

from corpus_miner.spark.bloomspan import SparkBloomSpan  # noqa: E402
from corpus_miner.spark.lshbloom import SparkLSHBloom  # noqa: E402
from corpus_miner.spark.session import local_session  # noqa: E402

__all__ = ["SparkBloomSpan", "SparkLSHBloom", "local_session"]
