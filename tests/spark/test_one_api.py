"""One Python API on Spark: SparkBloomSpan takes the local BloomSpan's kinds of documents and
gives the local engine's phrases, coverage rows, report and cleaned records (few Spark runs: one
fit per kind, one report, one clean)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pandas")

from corpus_miner import BloomSpan  # noqa: E402
from corpus_miner.corpus import load_corpus  # noqa: E402
from corpus_miner.errors import InputError  # noqa: E402
from corpus_miner.spark import SparkBloomSpan  # noqa: E402
from tests.coverage.test_clean import MIN_LENGTH, SIGMA, web_documents, write_jsonl  # noqa: E402


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    docs = web_documents(seed=13, n_docs=45)
    del docs[4]["id"]  # a record without an id is numbered by its row, on both engines
    path = write_jsonl(tmp_path_factory.mktemp("spark-api") / "web.jsonl", docs)
    table = pa.table({"id": [d.get("id", "4") for d in docs], "url": [d["url"] for d in docs],
                      "text": [d["text"] for d in docs]})
    return {"path": path, "table": table, "local": BloomSpan(SIGMA, MIN_LENGTH).fit(path)}


def _rows(df) -> list[dict]:
    return [row.asDict() for row in df.collect()]


@pytest.fixture(scope="module")
def from_path(spark, data):
    return SparkBloomSpan(SIGMA, MIN_LENGTH).fit(data["path"])


def test_fit_on_paths_and_texts_gives_the_local_phrases(spark, data, from_path):
    expected = list(data["local"].phrases_.rows())
    assert len(expected) > 3
    assert _rows(from_path.phrases_) == expected
    texts = data["table"].column("text").to_pylist()
    assert _rows(SparkBloomSpan(SIGMA, MIN_LENGTH).fit(texts).phrases_) == expected


def test_coverage_of_paths_equals_the_local_rows(data, from_path):
    found = [{**row, "junk_spans": [list(s) for s in row["junk_spans"]]}
             for row in _rows(from_path.coverage(data["path"]))]
    assert found == data["local"].coverage(data["path"]).to_pylist()


def test_report_of_a_frame_equals_the_local_report(spark, data, from_path):
    """A frame of three partitions: the documents keep its order, partition by partition."""
    options = {"group_by": "url:host", "top": 6, "examples": 2}
    frame = spark.createDataFrame(data["table"]).repartition(3)
    ordered = frame.toArrow().select(["id", "url", "text"])  # the frame's own order
    found = from_path.report(frame, **options).to_dict()
    expected = data["local"].report(ordered, **options).to_dict()
    assert json.dumps(found) == json.dumps(expected)
    assert expected["groups"] and expected["hogs_by_psi"][0]["examples"]


def test_clean_writes_the_local_records(spark, data, from_path, tmp_path):
    out = tmp_path / "clean.jsonl"
    stats = from_path.clean(spark.createDataFrame(data["table"]), mode="mask", output=out)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = data["local"].clean(data["table"], mode="mask").to_pylist()
    assert records == expected and stats["documents_written"] == len(expected)


def test_documents_spark_cannot_read_are_refused(spark, data, from_path):
    with pytest.raises(InputError, match="TokenCorpus keeps no text"):
        SparkBloomSpan(SIGMA, MIN_LENGTH).fit(load_corpus(data["path"]))
    with pytest.raises(InputError, match="cannot read documents from int"):
        from_path.coverage(42)


def test_clean_of_input_files_writes_the_local_bytes(data, from_path, tmp_path):
    """Every field of every record, as the `clean` command writes them."""
    found, expected = tmp_path / "spark.jsonl", tmp_path / "local.jsonl"
    stats = from_path.clean(data["path"], mode="remove", output=found)
    data["local"].clean(data["path"], mode="remove", output=expected)
    assert found.read_bytes() == expected.read_bytes()
    assert stats["documents_changed"] > 0
