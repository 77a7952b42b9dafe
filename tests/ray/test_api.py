"""RayBloomSpan's coverage, report and clean against the local BloomSpan: the same rows, report
and records for any number of blocks (hypothesis corpora, blocks 1/2/5/one per document, salted
groups), and for every kind of documents (paths, a Ray Dataset, Arrow data)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus_miner import BloomSpan
from corpus_miner.errors import InputError, ParameterError
from tests.coverage.test_clean import MIN_LENGTH, SIGMA, web_documents, write_jsonl
from tests.phrases.corpora import small_corpora
from tests.phrases.test_distributed import as_texts

pytest.importorskip("ray")
pytestmark = pytest.mark.filterwarnings(r"ignore:::ray\.data\.context")

from corpus_miner.ray import RayBloomSpan  # noqa: E402


def blocks(texts: list[str], n: int) -> list[pa.Array]:
    """Documents in order, cut into n consecutive blocks (some may be empty)."""
    cuts = [len(texts) * i // n for i in range(n + 1)]
    return [pa.array(texts[cuts[i]:cuts[i + 1]], pa.string()) for i in range(n)]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_corpora(), st.sampled_from([1, 2, 5, 0]), st.sampled_from([2, 10**9]))
def test_coverage_report_and_clean_of_any_blocks_equal_local(ray_cluster, case, n_blocks, salt):
    docs, sigma, min_length = case
    texts = as_texts(docs)
    parts = blocks(texts, n_blocks or len(texts))  # 0: one block per document
    miner = RayBloomSpan(sigma=sigma, min_length=min_length, buckets=3,
                         salt_threshold=salt).fit(parts)
    local = BloomSpan(sigma, min_length).fit(texts)
    table = pa.table({"text": texts})
    found = miner.report(parts, top=4, examples=2).to_dict()
    assert json.dumps(found) == json.dumps(local.report(table, top=4, examples=2).to_dict())
    rows = miner.coverage(parts).take_all()
    expected = local.coverage(table).to_pylist()
    assert [{k: r[k] for k in ("tokens", "tokens_covered")} for r in rows] == \
        [{k: r[k] for k in ("tokens", "tokens_covered")} for r in expected]
    assert [[list(s) for s in r["junk_spans"]] for r in rows] == \
        [r["junk_spans"] for r in expected]
    cleaned = miner.clean(parts, mode="remove").take_all()
    assert [r["text"] for r in cleaned] == local.clean(table).column("text").to_pylist()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    docs = web_documents(seed=13, n_docs=45)
    del docs[4]["id"]  # a record without an id is numbered by its row, on both engines
    path = write_jsonl(tmp_path_factory.mktemp("ray-api") / "web.jsonl", docs)
    table = pa.table({"id": [d.get("id", "4") for d in docs], "url": [d["url"] for d in docs],
                      "text": [d["text"] for d in docs]})
    return {"path": path, "table": table, "local": BloomSpan(SIGMA, MIN_LENGTH).fit(path)}


@pytest.fixture(scope="module")
def from_path(ray_cluster, data):
    return RayBloomSpan(SIGMA, MIN_LENGTH).fit(data["path"])


def test_fit_on_paths_and_texts_gives_the_local_phrases(data, from_path):
    expected = list(data["local"].phrases_.rows())
    assert len(expected) > 3
    assert list(from_path.phrases_.rows()) == expected
    texts = data["table"].column("text").to_pylist()
    assert list(RayBloomSpan(SIGMA, MIN_LENGTH).fit(texts).phrases_.rows()) == expected


def test_coverage_of_paths_equals_the_local_rows(data, from_path):
    found = [{**row, "junk_spans": [list(s) for s in row["junk_spans"]]}
             for row in from_path.coverage(data["path"]).take_all()]
    assert found == data["local"].coverage(data["path"]).to_pylist()


def test_report_of_a_dataset_and_of_paths_equal_the_local_report(ray_cluster, data, from_path):
    """A Dataset of three blocks: the documents keep its order, block by block."""
    options = {"group_by": "url:host", "top": 6, "examples": 2}
    ds = ray_cluster.data.from_arrow([data["table"].slice(0, 20), data["table"].slice(20, 5),
                                      data["table"].slice(25)])
    found = from_path.report(ds, **options).to_dict()
    expected = data["local"].report(data["table"], **options).to_dict()
    assert json.dumps(found) == json.dumps(expected)
    assert expected["groups"] and expected["hogs_by_psi"][0]["examples"]
    assert json.dumps(from_path.report(data["path"], **options).to_dict()) == json.dumps(
        data["local"].report(data["path"], **options).to_dict())


def test_clean_of_a_dataset_keeps_every_column(ray_cluster, data, from_path, tmp_path):
    ds = ray_cluster.data.from_arrow(data["table"]).repartition(3)
    ordered = pa.Table.from_pylist(ds.take_all())
    for mode in ("mask", "annotate"):
        found = pa.Table.from_pylist(from_path.clean(ds, mode=mode).take_all())
        assert found.to_pylist() == data["local"].clean(ordered, mode=mode).to_pylist()
    out = tmp_path / "clean.jsonl"
    stats = from_path.clean(data["table"], mode="mask", output=out)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert records == data["local"].clean(data["table"], mode="mask").to_pylist()
    assert stats["documents_written"] == len(records)


def test_clean_of_input_files_writes_the_local_bytes(data, from_path, tmp_path):
    """Every field of every record, as the `clean` command writes them."""
    found, expected = tmp_path / "ray.jsonl", tmp_path / "local.jsonl"
    stats = from_path.clean(data["path"], mode="remove", output=found)
    data["local"].clean(data["path"], mode="remove", output=expected)
    assert found.read_bytes() == expected.read_bytes()
    assert stats["documents_changed"] > 0


def test_documents_ray_cannot_read_are_refused(data, from_path):
    from corpus_miner.corpus import load_corpus

    with pytest.raises(InputError, match="TokenCorpus keeps no text"):
        RayBloomSpan(SIGMA, MIN_LENGTH).fit(load_corpus(data["path"]))
    with pytest.raises(InputError, match="cannot read documents from int"):
        from_path.coverage(42)
    with pytest.raises(ParameterError, match="mode must be one of"):
        from_path.clean(data["table"], mode="erase")
