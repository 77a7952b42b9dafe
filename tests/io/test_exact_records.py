"""Every field of every record comes back exactly (issue 10, "record fields change type"):
integers beyond int64, fields mixing integers and floats, lone surrogates, rows without fields."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpus_miner.cli import main
from corpus_miner.errors import ParameterError
from corpus_miner.io import read_documents, write_records
from corpus_miner.io.jsonl import JSON_TEXT, json_values, parse_chunk

TEMPLATE = "subscribe to our newsletter for weekly updates on all new products"
RECORDS = [
    {"id": 18446744073709551615, "text": f"{TEMPLATE} alpha one", "score": 1, "n": [1, 2.5]},
    {"id": 18446744073709551614, "text": f"{TEMPLATE} beta two", "score": 1.5, "n": [3]},
    {"id": -9223372036854775809, "text": f"{TEMPLATE} gamma three", "score": 2,
     "meta": {"w": 1.0, "x": 2}},
    {"id": 12, "text": f"{TEMPLATE} delta four", "score": 1e300, "meta": {"w": 7}},
    {"id": 2**70, "text": f"{TEMPLATE} epsilon five", "score": -0.0, "big": 2**64 - 1},
]


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def _read(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _strict(value):
    """Comparable form that tells 1 from 1.0 and True from 1 (== does not)."""
    return json.dumps(value, sort_keys=True)


@pytest.mark.parametrize("command", [
    ["dedup", "{src}", "--annotate"],
    ["dedup", "{src}", "--annotate", "--expected-items", "100"],
    ["clean", "{src}", "--sigma", "2", "--min-length", "4", "--mode", "annotate"],
    ["index", "query", "{idx}", "{src}", "--annotate"],
])
def test_jsonl_to_jsonl_keeps_every_value_exactly(tmp_path, command):
    source = _jsonl(tmp_path / "in.jsonl", RECORDS)
    assert main(["index", "build", source, "-o", str(tmp_path / "idx")]) == 0
    out = tmp_path / "out.jsonl"
    argv = [a.format(src=source, idx=tmp_path / "idx") for a in command]
    assert main([*argv, "-o", str(out)]) == 0
    added = {"is_duplicate", "duplicate_of", "junk_spans", "junk_share"}
    written = [{k: v for k, v in r.items() if k not in added} for r in _read(out)]
    expected = RECORDS  # dedup and index query write each record as it was read
    if command[0] == "clean":  # clean encodes its records again: fields a record lacks are null
        expected = [{**{k: None for k in ("score", "n", "meta", "big")}, **r} for r in RECORDS]
    assert [_strict(r) for r in written] == [_strict(r) for r in expected]


def test_clean_remove_keeps_other_fields_exactly(tmp_path):
    source = _jsonl(tmp_path / "in.jsonl", RECORDS)
    out = tmp_path / "out.jsonl"
    assert main(["clean", source, "--sigma", "2", "--min-length", "4", "-o", str(out)]) == 0
    written = _read(out)
    assert [r["text"] for r in written] == ["alpha one", "beta two", "gamma three",
                                            "delta four", "epsilon five"]
    assert [_strict(r["id"]) for r in written] == [_strict(r["id"]) for r in RECORDS]
    assert [_strict(r["score"]) for r in written] == [_strict(r["score"]) for r in RECORDS]


def test_arrow_fast_path_hands_possible_integers_to_the_exact_path():
    # Arrow reads {1, 1.5} and 2**64 - 1 as doubles; such chunks must take the Python path
    for lines, field in ((b'{"a": 1}\n{"a": 1.5}\n', "a"),
                         (b'{"a": 18446744073709551615}\n', "a"),
                         (b'{"a": [1, 2.5]}\n', "a"),
                         (b'{"a": {"b": 1}}\n{"a": {"b": 2.5}}\n', "a")):
        parsed = parse_chunk(lines, 1, "x", "text", False)
        values = [json.loads(line)[field] for line in lines.splitlines()]
        assert _strict(json_values(parsed.table, field)) == _strict(values)
    floats = parse_chunk(b'{"a": 0.5}\n{"a": 2.25}\n', 1, "x", "text", False)
    assert floats.python_texts is None  # non-integral doubles stay on the fast path
    assert floats.table.schema.field("a").type == pa.float64()


def test_lone_surrogates_are_replaced_everywhere_and_counted(tmp_path):
    line = '{"id": "\\ud800x", "text": "a \\udfff b", "meta": {"\\ud801": ["\\udc00"]}}\n'
    (tmp_path / "s.jsonl").write_text(line + '{"id": "ok", "text": "\\ud83d\\ude00"}\n')
    stats_batches = list(read_documents([tmp_path / "s.jsonl"]))
    records = stats_batches[0].records.to_pylist()
    assert records[0]["id"] == "\ufffdx" and records[0]["text"] == "a \ufffd b"
    assert records[0]["meta"] == {"\ufffd": ["\ufffd"]}
    assert records[1]["text"] == "\U0001f600"  # a valid pair is one character, kept


def test_records_without_fields_round_trip(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text('{}\n{"id": 1, "text": "a b"}\n{}\n')
    out = tmp_path / "out.jsonl"
    write_records(read_documents([source], skip_bad=True), out)
    assert out.read_text() == source.read_text()  # records read from JSONL: as they were
    write_records([b.records for b in read_documents([source], skip_bad=True)], out)
    assert _read(out) == [{"id": None, "text": None}, {"id": 1, "text": "a b"},
                          {"id": None, "text": None}]
    only_empty = pa.Table.from_struct_array(pa.array([{}] * 2, pa.struct([])))
    write_records(only_empty, tmp_path / "empty.jsonl")
    assert _read(tmp_path / "empty.jsonl") == [{}, {}]
    with pytest.raises(ParameterError, match="without any field"):
        write_records(only_empty, tmp_path / "empty.parquet")


def test_parquet_output_never_rounds_across_batches(tmp_path):
    # integers in one batch, floats in the next: one Parquet column cannot hold both as numbers,
    # so the field becomes JSON text (exact) instead of doubles (1 -> 1.0, 2**63 - 1 rounded)
    tables = [pa.table({"x": pa.array([1, 2**63 - 1])}), pa.table({"x": pa.array([0.5])}),
              pa.table({"x": pa.array([2**64 - 1], pa.uint64())})]
    out = tmp_path / "o.parquet"
    assert write_records(tables, out) == 4
    read = pq.read_table(out)
    assert read.schema.field("x").metadata == {JSON_TEXT: b"1"}
    assert _strict(json_values(read, "x")) == _strict([1, 2**63 - 1, 0.5, 2**64 - 1])
    # exact widenings stay typed: nulls then strings, int32 then int64, a struct gaining a field
    widening = [pa.table({"s": pa.nulls(1), "i": pa.array([1], pa.int32()),
                          "m": pa.array([{"a": 1}])}),
                pa.table({"s": ["x"], "i": pa.array([2**40]), "m": pa.array([{"a": 2, "b": "y"}])})]
    write_records(widening, tmp_path / "w.parquet")
    schema = pq.read_schema(tmp_path / "w.parquet")
    assert (str(schema.field("s").type), str(schema.field("i").type)) == ("string", "int64")
    assert pq.read_table(tmp_path / "w.parquet").to_pylist()[1] == {
        "s": "x", "i": 2**40, "m": {"a": 2, "b": "y"}}


def test_parquet_output_refuses_values_json_cannot_carry(tmp_path):
    tables = [pa.table({"b": pa.array([b"\xff"], pa.binary())}), pa.table({"b": ["text"]})]
    with pytest.raises(ParameterError, match="cannot hold exactly"):
        write_records(tables, tmp_path / "o.parquet")
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_a_number_beyond_a_double_is_kept_as_spelled_or_refused_in_one_line(tmp_path, capsys):
    """1e400 overflows to infinity when parsed, and json would write it back as Infinity, which
    is not JSON (issue 22): dedup writes the line as read; clean, which encodes its records
    again, refuses in one line and writes nothing."""
    lines = [json.dumps({"id": i, "text": f"{TEMPLATE} page {i}"})[:-1] + ', "x": 1e400}'
             for i in range(6)]
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["dedup", str(source), "--annotate", "-o", str(out)]) == 0
    assert all('"x": 1e400' in line for line in out.read_text().splitlines())
    assert "Infinity" not in out.read_text()
    capsys.readouterr()
    cleaned = tmp_path / "cleaned.jsonl"
    assert main(["clean", str(source), "--sigma", "2", "--min-length", "4", "-o",
                 str(cleaned)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'x'" in err and "1e400" in err
    assert not cleaned.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl"]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_lshbloom_annotation_drops_a_stale_duplicate_of(tmp_path, fmt):
    """minhash_lsh adds duplicate_of; annotating its output again in lshbloom mode (which names
    no match) must not leave the old duplicate_of next to a fresh is_duplicate."""
    rows = [{"id": i, "text": f"{TEMPLATE} page {i % 3}"} for i in range(6)]
    source = _jsonl(tmp_path / "in.jsonl", rows)
    first = tmp_path / f"first.{fmt}"
    assert main(["dedup", source, "--annotate", "--mode", "minhash_lsh", "--threshold", "0.99",
                 "-o", str(first)]) == 0
    again = tmp_path / "again.jsonl"
    assert main(["dedup", str(first), "--annotate", "--threshold", "0.99", "-o",
                 str(again)]) == 0
    records = _read(again)
    assert [sorted(r) for r in records] == [["id", "is_duplicate", "text"]] * 6
    assert [r["is_duplicate"] for r in records] == [False] * 3 + [True] * 3
    minhash = tmp_path / "minhash.jsonl"  # minhash_lsh replaces it with its own
    assert main(["dedup", str(first), "--annotate", "--mode", "minhash_lsh", "--threshold",
                 "0.99", "-o", str(minhash)]) == 0
    assert [r["duplicate_of"] for r in _read(minhash)] == [None] * 3 + ["0", "1", "2"]
