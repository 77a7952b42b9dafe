"""with_input_order(order_col=...): ORDER is the rank of each row's value, whether the integer
column already holds 0..n-1 (used as it is) or any other values (ranked); repeated and null
values are refused the same way on both paths."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from corpus_miner.errors import InputError  # noqa: E402
from corpus_miner.spark.frames import ORDER, with_input_order  # noqa: E402

values = st.one_of(
    st.integers(1, 12).flatmap(lambda n: st.permutations(list(range(n)))),  # dense: as given
    st.lists(st.integers(-5, 20), min_size=1, max_size=12, unique=True),  # gaps: ranked
    st.lists(st.integers(0, 4), min_size=2, max_size=8),  # may repeat
)


@pytest.fixture(scope="module")
def warm(spark):
    """A pickling job before hypothesis runs: pyspark raises the recursion limit on its first
    one, which hypothesis reports as an error inside a test."""
    df = spark.createDataFrame(spark.sparkContext.parallelize([("a", "x", 3)], 1),
                               "id string, text string, pos long")
    with_input_order(df, "pos", "text")[0].collect()
    return spark


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values, st.integers(1, 3))
def test_order_is_the_rank_of_the_order_column(warm, pos, partitions):
    spark = warm
    rows = [(f"d{i}", f"text {i}", p) for i, p in enumerate(pos)]
    df = spark.createDataFrame(spark.sparkContext.parallelize(rows, partitions),
                               "id string, text string, pos long")
    if len(set(pos)) < len(pos):
        with pytest.raises(InputError, match="repeated values"):
            with_input_order(df, "pos", "text")
        return
    ordered, n_rows, n_null = with_input_order(df, "pos", "text")
    assert (n_rows, n_null) == (len(pos), 0)
    rank = {p: r for r, p in enumerate(sorted(pos))}
    found = {row["id"]: row[ORDER] for row in ordered.select("id", ORDER).collect()}
    assert found == {f"d{i}": rank[p] for i, p in enumerate(pos)}


def test_null_order_values_are_refused(spark):
    df = spark.createDataFrame([("a", "x", 0), ("b", "y", None), ("c", "z", 1)],
                               "id string, text string, pos long")
    with pytest.raises(InputError, match="has null values"):
        with_input_order(df, "pos", "text")
