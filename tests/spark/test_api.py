"""SparkLSHBloom: the seed README's usage, identity with the local engine, index cross-loading."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pandas")

from corpus_miner.dedup import LSHBloom  # noqa: E402
from corpus_miner.errors import NotFittedError  # noqa: E402
from spark_lshbloom import SparkLSHBloom  # noqa: E402

from .corpus import planted_corpus  # noqa: E402

IDS, TEXTS, IS_COPY = planted_corpus()


@pytest.fixture(scope="module")
def df(spark):
    frame = pd.DataFrame({"id": IDS, "text": TEXTS, "extra": np.arange(len(IDS))})
    return spark.createDataFrame(frame)


def _column(pdf: pd.DataFrame, name: str) -> np.ndarray:
    return pdf.sort_values("extra")[name].to_numpy()


def test_seed_readme_usage(spark, df, tmp_path):
    """Every usage the seed README shows, as written, with a correct answer."""
    half = len(IDS) // 2
    reference_df = df.filter(df["extra"] < half)
    new_df = df.filter(df["extra"] >= half)

    lsh = SparkLSHBloom(threshold=0.85, num_perm=256, mode="lshbloom")
    assert lsh.fit(reference_df, text_col="text", id_col="id") is lsh
    lsh.save(str(tmp_path / "my_bloom_filter"))
    lsh = SparkLSHBloom.load(str(tmp_path / "my_bloom_filter"))
    result_df = lsh.transform(new_df, text_col="text", id_col="id")
    assert {"is_duplicate", "band_keys"} <= set(result_df.columns)
    unique_new_df = result_df.filter(~result_df["is_duplicate"])
    # New documents that are copies of a reference document are the only ones flagged.
    originals = np.flatnonzero(~IS_COPY)
    source = {i: originals[originals <= i].max() for i in range(len(IDS))}
    expected = {IDS[i] for i in range(half, len(IDS)) if source[i] >= half}
    assert {row.id for row in unique_new_df.select("id").collect()} == expected
    assert lsh.bloom.num_bits > 0 and lsh.bloom.num_hashes > 0

    unique_df = lsh.deduplicate(df, text_col="text", id_col="id")
    local = LSHBloom(threshold=0.85, num_perm=256, mode="lshbloom")
    local_unique = [IDS[i] for i in local.deduplicate(TEXTS, IDS).unique_indices()]
    # The local engine's answer, in input order; defaults find every planted copy and remove no
    # original; the filter the one-shot run leaves behind has the local engine's bits.
    assert [row.id for row in unique_df.collect()] == local_unique == [IDS[i] for i in originals]
    assert lsh.bloom == local.index_

    banding = SparkLSHBloom(threshold=0.85, num_perm=256, mode="minhash_lsh")
    unique_df = banding.deduplicate(df, text_col="text", id_col="id")
    assert sorted(row.id for row in unique_df.collect()) == local_unique


@pytest.mark.parametrize("alias,canonical", [("bloom", "lshbloom"), ("bloom_filter", "lshbloom"),
                                             ("lshbloom", "lshbloom"), ("banding", "minhash_lsh"),
                                             ("minhash_lsh", "minhash_lsh")])
def test_mode_aliases(alias, canonical):
    lsh = SparkLSHBloom(mode=alias)
    assert lsh.mode == alias  # constructor arguments are stored as given
    assert lsh.params.validated().mode == canonical


@pytest.mark.parametrize("use_pandas_udf", [True, False])
def test_band_keys_and_bloom_bits_equal_local(df, use_pandas_udf):
    params = dict(threshold=0.8, num_perm=64, fp_prob=1e-4)
    model = SparkLSHBloom(use_pandas_udf=use_pandas_udf, **params).fit(df)
    local = LSHBloom(**params).fit(TEXTS)
    assert model.bloom == local.index_
    with_keys = model.query(df, return_band_keys=True).toPandas()
    keys = np.stack(_column(with_keys, "band_keys")).view(np.uint64)
    np.testing.assert_array_equal(keys, local._band_keys(TEXTS))


@pytest.mark.parametrize("use_pandas_udf", [True, False])
def test_query_with_and_without_keys_and_on_its_own_output(df, use_pandas_udf):
    model = SparkLSHBloom(num_perm=64, use_pandas_udf=use_pandas_udf).fit(
        df.filter(df["extra"] < 20))
    with_keys = model.query(df, return_band_keys=True)
    assert with_keys.columns == [*df.columns, "band_keys", "is_duplicate"]
    flags = _column(with_keys.toPandas(), "is_duplicate")
    assert flags[:20].all() and not flags.all()  # the fitted rows, and not every other row
    without = model.query(df)
    assert without.columns == [*df.columns, "is_duplicate"]
    np.testing.assert_array_equal(_column(without.toPandas(), "is_duplicate"), flags)
    # on its own output: the columns are replaced in place, not added twice
    again = model.query(with_keys, return_band_keys=True)
    assert again.columns == with_keys.columns
    np.testing.assert_array_equal(_column(again.toPandas(), "is_duplicate"), flags)


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
def test_index_cross_loading(spark, df, tmp_path, mode):
    """Spark-fitted index -> local engine and local-fitted index -> Spark give the same answers."""
    reference, queries = TEXTS[::2], TEXTS[1::2]
    ref_df = spark.createDataFrame(pd.DataFrame({"id": IDS[::2], "text": reference}))
    query_df = spark.createDataFrame(pd.DataFrame({"id": IDS[1::2], "text": queries,
                                                   "extra": np.arange(len(queries))}))
    SparkLSHBloom(mode=mode, num_perm=128).fit(ref_df).save(tmp_path / "from_spark")
    LSHBloom(mode=mode, num_perm=128).fit(reference, IDS[::2]).save(tmp_path / "from_local")

    from_spark = LSHBloom.load(tmp_path / "from_spark").query(queries)
    on_spark = SparkLSHBloom.load(tmp_path / "from_local").query(query_df).toPandas()
    np.testing.assert_array_equal(_column(on_spark, "is_duplicate"), from_spark.is_duplicate)
    assert from_spark.is_duplicate.sum() >= 5
    if mode == "minhash_lsh":
        assert list(_column(on_spark, "duplicate_of")) == from_spark.duplicate_of_id
    assert (tmp_path / "from_spark" / "metadata.json").read_bytes().count(b"lsh-index") == 1


def test_import_without_pyspark_names_the_extra():
    code = ("import sys; sys.modules['pyspark'] = None\n"
            "from corpus_miner.errors import MissingExtraError\n"
            "try:\n    import spark_lshbloom\nexcept MissingExtraError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install "corpus-miner[spark]"' in out.stdout
    code = "import sys, corpus_miner.dedup; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # the local engine never imports Spark


def test_estimator_convention_and_state_api(df):
    lsh = SparkLSHBloom(mode="bloom", num_perm=64, deduplicate_chunks=2)
    assert lsh.get_params()["mode"] == "bloom" and lsh.get_params()["deduplicate_chunks"] == 2
    assert repr(lsh) == "SparkLSHBloom(num_perm=64, mode='bloom', deduplicate_chunks=2)"
    assert not lsh.is_fitted()
    with pytest.raises(NotFittedError, match="not fitted yet"):
        lsh.bloom  # noqa: B018
    lsh.set_params(threshold=0.8).fit(df)
    assert lsh.mode_ == "lshbloom" and lsh.params_.threshold == 0.8 and lsh.n_documents_ == len(IDS)
    state = lsh.to_state()
    assert state.bloom is lsh.bloom_ and state.n_documents == len(IDS)
    local = LSHBloom.from_state(state)
    assert local.index_ == lsh.bloom_ and local.index_ is not lsh.bloom_  # a copy to add to
    served = SparkLSHBloom.from_state(LSHBloom(num_perm=64, threshold=0.8).fit(TEXTS).to_state())
    assert served.bloom == lsh.bloom


def test_expected_items_below_the_row_count_keeps_the_promise_and_equals_local(df):
    """Spark counts the rows, so like the local engine on a list it sizes one layer for
    max(expected_items, rows) instead of overfilling a filter sized for expected_items."""
    model = SparkLSHBloom(num_perm=64, expected_items=5).fit(df)
    local = LSHBloom(num_perm=64, expected_items=5).fit(TEXTS)
    assert model.bloom == local.index_ and model.bloom.capacity == len(TEXTS)
    assert len(model.bloom.layers) == 1 and model.bloom.documents == [len(TEXTS)]
    flags = SparkLSHBloom(num_perm=64, expected_items=5).deduplicate(df, annotate=True).toPandas()
    expected = LSHBloom(num_perm=64, expected_items=5).deduplicate(TEXTS, IDS).is_duplicate
    np.testing.assert_array_equal(_column(flags, "is_duplicate"), expected)


def test_a_layered_index_built_from_a_stream_is_served_by_spark(spark, df, tmp_path):
    """A local index that grew layers (streamed with a small expected_items) loads in Spark,
    whose queries OR the layers like the local ones, and saves back unchanged."""
    local = LSHBloom(num_perm=64, expected_items=7)
    for start in range(0, len(TEXTS) // 2, 10):
        local.partial_fit(TEXTS[start:min(start + 10, len(TEXTS) // 2)])
    assert len(local.index_.layers) >= 3
    local.save(tmp_path / "grown")
    served = SparkLSHBloom.load(tmp_path / "grown")
    assert served.bloom == local.index_
    for use_pandas_udf in (True, False):
        served.set_params(use_pandas_udf=use_pandas_udf)
        result = served.query(df).toPandas()
        np.testing.assert_array_equal(_column(result, "is_duplicate"),
                                      local.query(TEXTS).is_duplicate)
    served.save(tmp_path / "again")
    assert LSHBloom.load(tmp_path / "again").index_ == local.index_


@pytest.mark.parametrize("value", [True, False])
def test_a_boolean_filter_fp_is_refused(spark, value):
    from corpus_miner.errors import ParameterError
    from corpus_miner.spark import SparkBloomSpan

    frame = spark.createDataFrame([("a b c",)], "text string")
    with pytest.raises(ParameterError, match="filter_fp"):
        SparkBloomSpan(sigma=2, min_length=2, filter_fp=value).fit(frame, text_col="text",
                                                                   id_col=None)
