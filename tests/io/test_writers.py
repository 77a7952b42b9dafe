"""write_records: JSONL, JSONL.gz and Parquet output keeps rows, order, fields and types."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpus_miner.errors import ParameterError
from corpus_miner.io import read_documents, write_records

ROWS = [{"id": "a", "text": "x y", "n": 1, "tags": ["p", "q"]},
        {"id": "b", "text": "ü", "n": 2, "tags": []}]


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".parquet"])
def test_round_trip_through_reader(write_jsonl, tmp_path, suffix):
    source = write_jsonl("in.jsonl", ROWS)
    out = tmp_path / f"out{suffix}"
    assert write_records(read_documents([source]), out) == 2
    records = [r for b in read_documents([out]) for r in b.records.to_pylist()]
    assert records == ROWS
    assert list(records[0]) == ["id", "text", "n", "tags"]


def test_parquet_widens_schema_across_batches(tmp_path):
    first = pa.table({"id": ["a"], "text": ["x"], "url": pa.nulls(1)})
    second = pa.table({"id": ["b"], "text": ["y"], "url": ["http://e"], "extra": [3]})
    third = pa.table({"id": ["c"], "text": ["z"]})
    out = tmp_path / "out.parquet"
    assert write_records([first, second, third], out) == 3
    table = pq.read_table(out)
    assert table.column_names == ["id", "text", "url", "extra"]
    assert table.to_pylist() == [
        {"id": "a", "text": "x", "url": None, "extra": None},
        {"id": "b", "text": "y", "url": "http://e", "extra": 3},
        {"id": "c", "text": "z", "url": None, "extra": None}]
    assert not [p for p in tmp_path.iterdir() if p.name != "out.parquet"]


def test_unknown_extension_is_refused(tmp_path):
    with pytest.raises(ParameterError, match="unknown output format"):
        write_records(pa.table({"text": ["x"]}), tmp_path / "out.csv")


def test_gzip_output_of_many_tables_keeps_order(tmp_path):
    """Tables are compressed by a worker thread while the next ones are encoded."""
    tables = [pa.table({"id": [f"{t}-{i}" for i in range(50)], "text": ["x"] * 50})
              for t in range(40)]
    out = tmp_path / "out.jsonl.gz"
    assert write_records(iter(tables), out) == 2000
    ids = [r["id"] for b in read_documents([out]) for r in b.records.to_pylist()]
    assert ids == [f"{t}-{i}" for t in range(40) for i in range(50)]


def test_a_failing_source_or_sink_leaves_no_gzip_output(tmp_path):
    def broken():
        yield pa.table({"id": ["a"]})
        raise RuntimeError("source broke")

    out = tmp_path / "out.jsonl.gz"
    with pytest.raises(RuntimeError, match="source broke"):
        write_records(broken(), out)
    assert not list(tmp_path.iterdir())

    class FullDisk:
        def write(self, data):
            raise OSError("no space left on device")

    from corpus_miner.io.writers import _WriteInBackground

    writer = _WriteInBackground(FullDisk())
    with pytest.raises(OSError, match="no space"):
        for _ in range(100):  # the worker's error surfaces at a later write or at close
            writer.write("x\n")
        writer.close()


MIXED = [{"id": "a", "text": "x", "meta": 1, "tags": ["p"], "flag": True},
         {"id": "b", "text": "y", "meta": "1", "tags": {"k": [2, None]}, "flag": "yes"},
         {"id": "c", "text": "z", "meta": None, "tags": "s", "flag": 0.5}]


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".parquet"])
def test_mixed_type_fields_come_back_exactly(write_jsonl, tmp_path, suffix):
    """A field holding a number here and a string there (1 vs "1") is not flattened to text."""
    source = write_jsonl("mixed.jsonl", MIXED)
    out = tmp_path / f"out{suffix}"
    assert write_records(read_documents([source]), out) == 3
    again = tmp_path / "again.jsonl"  # Parquet keeps JSON text; reading it back decodes it
    write_records(read_documents([out]), again)
    with open(again, encoding="utf-8") as handle:
        assert [json.loads(line) for line in handle] == MIXED
