"""The seed's public import path: `from spark_lshbloom import SparkLSHBloom`.

A thin re-export of corpus_miner.spark; needs the `spark` extra
(pip install "corpus-miner[spark]", Java 17+).
"""

from corpus_miner.spark import SparkBloomSpan, SparkLSHBloom, local_session

__all__ = ["SparkBloomSpan", "SparkLSHBloom", "local_session"]
__version__ = "0.1.0"
