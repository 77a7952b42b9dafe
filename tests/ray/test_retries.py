"""A Ray task that dies once does not change the answer: the worker process running the first
read of a block exits (a real crash: os._exit, no exception to catch), Ray runs the task again,
and RayBloomSpan's phrases, report and cleaned rows are those of a clean run."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest

from corpus_miner import BloomSpan
from tests.coverage.test_clean import MIN_LENGTH, SIGMA, web_documents

pytest.importorskip("ray")
pytestmark = pytest.mark.filterwarnings(r"ignore:::ray\.data\.context")

from corpus_miner.ray import RayBloomSpan  # noqa: E402


def crashing_once(marker: str):
    """A map_batches function whose first call, over the whole cluster, kills its worker."""
    def passing(batch: pa.Table) -> pa.Table:
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return batch
        os._exit(1)

    return passing


def test_a_task_that_dies_once_gives_the_same_answer(ray_cluster, tmp_path):
    docs = web_documents(seed=5, n_docs=40)
    table = pa.table({"id": [d["id"] for d in docs], "text": [d["text"] for d in docs]})
    marker = str(tmp_path / "crashed")
    ds = ray_cluster.data.from_arrow([table.slice(0, 15), table.slice(15, 10), table.slice(25)]) \
        .map_batches(crashing_once(marker), batch_format="pyarrow", batch_size=None)
    miner = RayBloomSpan(SIGMA, MIN_LENGTH, buckets=3).fit(ds)
    assert os.path.exists(marker)  # a worker died
    local = BloomSpan(SIGMA, MIN_LENGTH).fit(table)
    assert list(miner.phrases_.rows()) == list(local.phrases_.rows())
    assert len(miner.phrases_) > 2
    ordered = pa.Table.from_pylist(ds.take_all())
    assert json.dumps(miner.report(ds, top=5, examples=2).to_dict()) == json.dumps(
        local.report(ordered, top=5, examples=2).to_dict())
