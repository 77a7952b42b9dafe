"""SparkLSHBloom.deduplicate(update=True) (issues 24 and 25): snapshots deduplicated one after
another on Spark give the local engine's flags and, byte for byte, its index, both modes, both
`add` rules; few, small examples (Spark is slow)."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pyspark")
pytest.importorskip("pandas")

from corpus_miner.dedup import LSHBloom  # noqa: E402
from corpus_miner.errors import ParameterError  # noqa: E402
from corpus_miner.spark import SparkLSHBloom  # noqa: E402

from .corpus import planted_corpus  # noqa: E402

IDS, TEXTS, IS_COPY = planted_corpus()
N = 60  # the first rows: copies of earlier rows among them
PARAMS = dict(num_perm=64, expected_items=8)  # a small first layer: layers grow


def _frame(spark, start, stop):
    frame = pd.DataFrame({"id": IDS[start:stop], "text": TEXTS[start:stop]})
    return spark.createDataFrame(frame).coalesce(2)


@pytest.fixture(scope="module")
def warm(spark):
    """One Spark job with UDFs before hypothesis runs: pyspark raises the recursion limit on
    its first pickling, which hypothesis reports as an error inside a test."""
    SparkLSHBloom(num_perm=16).deduplicate(_frame(spark, 0, 3)).count()
    return spark


def _same_index(spark_model, local) -> bool:
    a, b = spark_model.to_local(), local
    if a.n_documents_ != b.n_documents_:
        return False
    if a.mode_ == "lshbloom":
        return a.index_ == b.index_
    (ka, da), (kb, db) = a.index_.items(), b.index_.items()
    return bool((ka == kb).all() and (da == db).all() and a.ids_.equals(b.ids_))


@pytest.mark.parametrize("mode, add", [("lshbloom", "all"), ("minhash_lsh", "all"),
                                       ("lshbloom", "unique")])
@settings(max_examples=1, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(1, N - 1), min_size=1, max_size=2, unique=True))
def test_snapshots_on_spark_equal_the_local_engine(warm, mode, add, cuts):
    spark = warm
    bounds = [0, *sorted(cuts), N]
    on_spark = SparkLSHBloom(mode=mode, deduplicate_chunks=2, **PARAMS)
    local = LSHBloom(mode=mode, **PARAMS)
    for a, b in zip(bounds, bounds[1:]):
        found = on_spark.deduplicate(_frame(spark, a, b), annotate=True, update=True, add=add)
        pdf = found.toPandas()
        order = {i: k for k, i in enumerate(IDS[a:b])}
        pdf = pdf.sort_values("id", key=lambda col: col.map(order))
        expected = local.deduplicate(TEXTS[a:b], IDS[a:b], update=True, add=add)
        assert pdf["is_duplicate"].tolist() == expected.is_duplicate.tolist()
        if mode == "minhash_lsh":
            assert [None if pd.isna(x) else x for x in pdf["duplicate_of"]] \
                == expected.duplicate_of_id
        assert _same_index(on_spark, local)
    assert sum(IS_COPY[:N]) and local.n_documents_ > 0


def test_update_continues_a_loaded_index_and_refuses_other_parameters(spark, tmp_path):
    local = LSHBloom(**PARAMS)
    local.deduplicate(TEXTS[:30], IDS[:30], update=True)
    local.save(tmp_path / "index")
    on_spark = SparkLSHBloom.load(tmp_path / "index")
    flags = on_spark.deduplicate(_frame(spark, 30, N), annotate=True, update=True)
    expected = local.deduplicate(TEXTS[30:N], IDS[30:N], update=True).is_duplicate
    got = flags.toPandas().set_index("id").loc[IDS[30:N], "is_duplicate"].tolist()
    assert got == expected.tolist()
    on_spark.save(tmp_path / "index")
    assert LSHBloom.load(tmp_path / "index").index_ == local.index_
    with pytest.raises(ParameterError, match="other parameters than the fitted index's"):
        on_spark.set_params(seed=2).deduplicate(_frame(spark, 0, 5), update=True)
    with pytest.raises(ParameterError, match="add must be 'all' or 'unique'"):
        SparkLSHBloom().deduplicate(_frame(spark, 0, 5), update=True, add="some")
