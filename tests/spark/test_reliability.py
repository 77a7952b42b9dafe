"""Same answers for any partitioning and after task retries; clear errors for bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pandas")

from pyspark import TaskContext  # noqa: E402

from corpus_miner.dedup import LSHBloom  # noqa: E402
from corpus_miner.errors import FormatError, InputError, NotFittedError, ParameterError  # noqa: E402
from spark_lshbloom import SparkLSHBloom  # noqa: E402

from .corpus import planted_corpus  # noqa: E402

IDS, TEXTS, IS_COPY = planted_corpus(n_originals=45, seed=1)
PARAMS = dict(num_perm=64, threshold=0.8, deduplicate_chunks=3)


@pytest.fixture(scope="module")
def frame():
    return pd.DataFrame({"id": IDS, "text": TEXTS, "pos": np.arange(len(IDS))})


@pytest.fixture(scope="module")
def expected():
    return LSHBloom(**{k: v for k, v in PARAMS.items() if k != "deduplicate_chunks"}) \
        .deduplicate(TEXTS, IDS)


def _flags(pdf: pd.DataFrame) -> np.ndarray:
    return pdf.sort_values("pos")["is_duplicate"].to_numpy()


def test_any_partitioning_gives_the_same_answer(spark, frame, expected):
    """Input order kept in 1 and 5 partitions; an explicit order_col after a hash shuffle.
    Chunks (3) cut through copy pairs, so in-chunk and cross-chunk matches are both exercised."""
    base = spark.createDataFrame(frame)
    rows = [tuple(row) for row in frame.itertuples(index=False)]
    for df in (base.coalesce(1), spark.createDataFrame(spark.sparkContext.parallelize(rows, 5),
                                                       base.schema)):
        model = SparkLSHBloom(**PARAMS)
        result = model.deduplicate(df, annotate=True).toPandas()
        np.testing.assert_array_equal(_flags(result), expected.is_duplicate)
    shuffled = base.repartition(4, "id")
    banding = SparkLSHBloom(mode="banding", **PARAMS)
    result = banding.deduplicate(shuffled, order_col="pos", annotate=True).toPandas()
    np.testing.assert_array_equal(_flags(result), expected.is_duplicate)
    assert (_flags(result) == IS_COPY).all()
    local = LSHBloom(mode="banding", num_perm=64, threshold=0.8)
    assert list(result.sort_values("pos")["duplicate_of"]) == local.deduplicate(TEXTS, IDS) \
        .duplicate_of_id
    assert banding.band_entries_ == local.index_.num_keys


def test_many_chunks_in_small_waves_give_the_same_answer(spark, frame, expected, monkeypatch):
    """A wave budget of one filter: 7 chunks go through 7 build + query waves."""
    import corpus_miner.spark.lshbloom as spark_lshbloom

    monkeypatch.setattr(spark_lshbloom, "WAVE_BYTES", 1)
    model = SparkLSHBloom(**{**PARAMS, "deduplicate_chunks": 7})
    result = model.deduplicate(spark.createDataFrame(frame), annotate=True).toPandas()
    np.testing.assert_array_equal(_flags(result), expected.is_duplicate)
    assert model.bloom == LSHBloom(**{k: v for k, v in PARAMS.items()
                                      if k != "deduplicate_chunks"}).fit(TEXTS).index_


def test_retried_tasks_give_the_same_answer(spark, frame, expected, tmp_path):
    """Partition 0 fails after its first batch on its first attempt of every stage; Spark retries
    it (master local[2,4]) and the filter and the duplicates are those of a clean run."""
    marker_dir = str(tmp_path)

    def fail_first_attempt(batches):
        context = TaskContext.get()
        for number, batch in enumerate(batches):
            if number == 1 and context.partitionId() == 0 and context.attemptNumber() == 0:
                open(f"{marker_dir}/failed-{context.stageId()}", "w").close()
                raise RuntimeError("injected failure on the first attempt")
            yield batch

    base = spark.createDataFrame(frame)
    flaky = base.mapInPandas(fail_first_attempt, base.schema)
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "16")
    try:
        model = SparkLSHBloom(**PARAMS)
        result = model.deduplicate(flaky, annotate=True).toPandas()
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    assert len(list(tmp_path.glob("failed-*"))) >= 2  # failures did happen, in several stages
    clean = LSHBloom(**{k: v for k, v in PARAMS.items() if k != "deduplicate_chunks"})
    clean.deduplicate(TEXTS)
    assert model.bloom == clean.index_
    np.testing.assert_array_equal(_flags(result), expected.is_duplicate)


def test_input_errors_are_clear(spark, frame, tmp_path):
    df = spark.createDataFrame(frame)
    model = SparkLSHBloom(**PARAMS)
    with pytest.raises(InputError, match="text_col='body' is not a column"):
        model.fit(df, text_col="body")
    with pytest.raises(InputError, match="id_col='key' is not a column"):
        model.deduplicate(df, id_col="key")
    with pytest.raises(InputError, match="column 'pos' has type bigint, expected string"):
        model.fit(df, text_col="pos")
    with_null = spark.createDataFrame(pd.DataFrame({"id": ["a", "b"], "text": ["x y z", None]}))
    for call in (model.fit, model.deduplicate):
        with pytest.raises(InputError, match="null for id='b'"):
            call(with_null)
    with pytest.raises(InputError, match="order_col='rank' is not a column"):
        model.deduplicate(df, order_col="rank")
    with pytest.raises(NotFittedError, match="not fitted"):
        SparkLSHBloom().query(df)


def test_parameter_errors_are_clear(spark, frame, tmp_path):
    df = spark.createDataFrame(frame)
    for kwargs, match in [({"threshold": 1.5}, "threshold"), ({"mode": "exact"}, "mode"),
                          ({"deduplicate_chunks": 0}, "deduplicate_chunks"),
                          ({"use_pandas_udf": "yes"}, "use_pandas_udf"),
                          ({"num_bands": 65, "num_perm": 64}, "num_bands")]:
        with pytest.raises(ParameterError, match=match):
            SparkLSHBloom(**kwargs).fit(df)
    path = tmp_path / "index"
    LSHBloom(num_perm=64, threshold=0.8).fit(TEXTS[:10]).save(path)
    with pytest.raises(ParameterError,
                       match=r"saved with other parameters: num_perm=64 \(yours 128\)"):
        SparkLSHBloom(num_perm=128, threshold=0.8).load(path)
    assert SparkLSHBloom(num_perm=64, threshold=0.8).load(path).params_.num_perm == 64
    with pytest.raises(FormatError, match="not a corpus-miner index folder"):
        SparkLSHBloom.load(tmp_path)
    with pytest.raises(ParameterError, match="only in mode='lshbloom'"):
        SparkLSHBloom.from_local(LSHBloom(mode="banding").fit(TEXTS[:5])).bloom  # noqa: B018
