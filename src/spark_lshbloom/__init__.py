"""The seed's public import path: `from spark_lshbloom import SparkLSHBloom`.

A thin layer over corpus_miner.spark; needs the `spark` extra
(pip install "corpus-miner[spark]", Java 17+). Its SparkLSHBloom is corpus-miner's with the one
method name of the seed that corpus-miner's one API does not have: `transform`, the seed's name
for `query` (seed code keeps running unchanged; new code uses `query`).
"""

from corpus_miner.spark import SparkBloomSpan, local_session
from corpus_miner.spark import SparkLSHBloom as _SparkLSHBloom

__all__ = ["SparkBloomSpan", "SparkLSHBloom", "local_session"]
__version__ = "0.1.0"


class SparkLSHBloom(_SparkLSHBloom):
    """corpus_miner.spark.SparkLSHBloom with the seed's `transform` (see the module docstring)."""

    def transform(self, new_df, text_col: str = "text", id_col: str | None = "id",
                  return_band_keys: bool = True):
        """The seed's name for `query`: new_df with `is_duplicate` and, as the seed had it,
        `band_keys` (unless return_band_keys=False); minhash_lsh also adds `duplicate_of`."""
        return self.query(new_df, text_col, id_col, return_band_keys)
