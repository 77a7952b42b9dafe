"""spark.stored: which deployments keep rows (local mode) and that drop() frees the storage."""

from __future__ import annotations

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from corpus_miner.spark import stored  # noqa: E402


class _Master:
    def __init__(self, master: str):
        self.sparkContext = type("Context", (), {"master": master})()


@pytest.mark.parametrize("master, local", [
    ("local", True), ("local[2]", True), ("local[*]", True), ("local[2,4]", True),
    ("local-cluster[2,1,1024]", False), ("spark://host:7077", False), ("yarn", False),
    ("k8s://https://host:443", False)])
def test_local_mode_is_one_executor_in_the_driver(master, local):
    assert stored.local_mode(_Master(master)) is local


def _storage(spark) -> int:
    return sum(info.memSize() + info.diskSize()
               for info in spark.sparkContext._jsc.sc().getRDDStorageInfo())


@pytest.mark.parametrize("local_storage", [True, False])
def test_kept_frame_is_stored_by_its_first_job_and_dropped(spark, monkeypatch, local_storage):
    monkeypatch.setattr(stored, "local_mode", lambda spark: local_storage)
    calls = spark.sparkContext.accumulator(0)

    def blobs(batches):
        calls.add(1)
        for batch in batches:
            yield pa.RecordBatch.from_arrays([pa.array([b"x" * 1000] * batch.num_rows)],
                                             names=["blob"])

    before = _storage(spark)
    kept = stored.keep(spark.range(0, 40, numPartitions=4).mapInArrow(blobs, "blob binary"))
    assert kept.count() == 40 and kept.filter("length(blob) = 1000").count() == 40
    assert calls.value == 4  # computed once, by the first job
    assert _storage(spark) > before
    stored.drop(kept)
    assert _storage(spark) == before
