"""SparkLSHBloom.partial_fit and merge (issue 25): snapshots added on Spark give the local
engine's index byte for byte, including layers that grow; merges follow the local rules."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pandas")

from corpus_miner.dedup import LSHBloom  # noqa: E402
from corpus_miner.errors import ParameterError  # noqa: E402
from spark_lshbloom import SparkLSHBloom  # noqa: E402

from .corpus import planted_corpus  # noqa: E402

IDS, TEXTS, IS_COPY = planted_corpus()
CUTS = (0, 7, 40, len(TEXTS) // 2, len(TEXTS))


def _frame(spark, start, stop, partitions=3):
    frame = pd.DataFrame({"id": IDS[start:stop], "text": TEXTS[start:stop]})
    return spark.createDataFrame(frame).coalesce(partitions)


@pytest.mark.parametrize("use_pandas_udf", [True, False])
def test_snapshots_added_on_spark_equal_the_local_index(spark, tmp_path, use_pandas_udf):
    spark_model = SparkLSHBloom(num_perm=64, expected_items=10, use_pandas_udf=use_pandas_udf)
    local = LSHBloom(num_perm=64, expected_items=10)
    for start, stop in zip(CUTS, CUTS[1:]):
        spark_model.partial_fit(_frame(spark, start, stop))
        local.partial_fit(TEXTS[start:stop])
        assert spark_model.bloom == local.index_
    assert len(local.index_.layers) >= 4  # layers grew across the snapshots
    spark_model.save(tmp_path / "spark")
    local.save(tmp_path / "local")
    for layer in range(len(local.index_.layers)):
        name = f"gen-000001/bloom_{layer}.bin"
        assert (tmp_path / "spark" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    # a loaded index grows on Spark as locally, and the folder gets its next generation
    loaded = SparkLSHBloom.load(tmp_path / "spark")
    loaded.partial_fit(_frame(spark, 0, 5))
    loaded.save(tmp_path / "spark")
    local.partial_fit(TEXTS[:5])
    assert LSHBloom.load(tmp_path / "spark").index_ == local.index_


def test_merge_on_spark_follows_the_local_rules(spark):
    half = len(TEXTS) // 2
    first = SparkLSHBloom(num_perm=64, expected_items=len(TEXTS)).fit(_frame(spark, 0, half))
    second = SparkLSHBloom(num_perm=64, expected_items=len(TEXTS)).fit(
        _frame(spark, half, len(TEXTS)))
    union = LSHBloom(num_perm=64, expected_items=len(TEXTS)).fit(TEXTS)
    assert first.merge(second).bloom == union.index_
    other_seed = SparkLSHBloom(num_perm=64, expected_items=len(TEXTS), seed=2).fit(
        _frame(spark, half, len(TEXTS)))
    with pytest.raises(ParameterError, match="seed is 1 in the first index and 2 in the other"):
        first.merge(other_seed)
    with pytest.raises(ParameterError, match="partial_fit on Spark adds to a Bloom filter"):
        SparkLSHBloom(mode="minhash_lsh").partial_fit(_frame(spark, 0, 5))
