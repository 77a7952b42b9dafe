"""Readers and writers at URLs, on fsspec's memory filesystem (fast, in-process): the same
records as from the same files on disk, globs in sorted order, sharded outputs and their
manifest, objects that change between two reads."""

import gzip
import json
import uuid

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpus_miner.errors import InputError, OutputError
from corpus_miner.io import read_documents, write_records
from corpus_miner.io.formats import ShardPlan
from corpus_miner.io.remote import consistent_reads
from corpus_miner.io.shards import MANIFEST


@pytest.fixture
def memory():
    """A fresh folder on the memory filesystem: (fs, 'memory://NAME')."""
    fs = fsspec.filesystem("memory")
    name = f"t{uuid.uuid4().hex[:10]}"
    yield fs, f"memory://{name}"
    fs.rm(f"/{name}", recursive=True) if fs.exists(f"/{name}") else None


def _rows(n, prefix="d"):
    return [{"id": f"{prefix}{i}", "text": f"document {i} of {prefix} with a few words",
             "n": i} for i in range(n)]


def _jsonl(rows) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def _records(batches):
    return [(b.ids.to_pylist(), b.texts.to_pylist()) for b in batches]


def _put(fs, url, data):
    fs.pipe_file(url.split("://", 1)[1], data)


def test_the_same_records_as_from_the_same_files_on_disk(memory, tmp_path):
    fs, root = memory
    files = {"b.jsonl": _jsonl(_rows(7, "b")), "a.jsonl.gz": gzip.compress(_jsonl(_rows(5, "a")))}
    table = pa.Table.from_pylist(_rows(9, "p"))
    for name, data in files.items():
        _put(fs, f"{root}/in/{name}", data)
        (tmp_path / name).write_bytes(data)
    pq.write_table(table, tmp_path / "p.parquet", row_group_size=4)
    _put(fs, f"{root}/in/p.parquet", (tmp_path / "p.parquet").read_bytes())
    for name in ("a.jsonl.gz", "b.jsonl", "p.parquet"):
        local = _records(read_documents(tmp_path / name, batch_size=64))
        assert _records(read_documents(f"{root}/in/{name}", batch_size=64)) == local
    globbed = list(read_documents(f"{root}/in/*", batch_size=64))
    assert [b.source.rsplit("/", 1)[-1] for b in globbed][0] == "a.jsonl.gz"  # sorted names
    assert _records(globbed) == _records(read_documents(
        [tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl", tmp_path / "p.parquet"], batch_size=64))


def test_a_prefix_of_parquet_parts_and_a_prefix_of_text_files(memory, tmp_path):
    fs, root = memory
    for k in (1, 0, 2):
        sink = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_pylist(_rows(3, f"part{k}-")), sink)
        _put(fs, f"{root}/parts/part-{k:05d}.parquet", sink.getvalue().to_pybytes())
    _put(fs, f"{root}/parts/_SUCCESS", b"")
    ids = [i for b in read_documents(f"{root}/parts/") for i in b.ids.to_pylist()]
    assert ids == [f"part{k}-{i}" for k in range(3) for i in range(3)]
    _put(fs, f"{root}/texts/z.txt", b"last")
    _put(fs, f"{root}/texts/sub/a.txt", b"first")
    _put(fs, f"{root}/texts/.hidden", b"never")
    batches = list(read_documents(f"{root}/texts"))
    assert _records(batches) == [(["sub/a.txt", "z.txt"], ["first", "last"])]


def test_missing_objects_and_unmatched_patterns_are_one_line_errors(memory):
    fs, root = memory
    with pytest.raises(InputError, match="no object matches this pattern"):
        list(read_documents(f"{root}/nothing-*.jsonl"))
    with pytest.raises(InputError, match="no such"):
        list(read_documents(f"{root}/missing.jsonl"))


@pytest.mark.parametrize("name", ["out.jsonl", "out.jsonl.gz", "out.parquet"])
def test_written_objects_are_byte_identical_to_local_files(memory, tmp_path, name):
    fs, root = memory
    (tmp_path / "in.jsonl").write_bytes(_jsonl(_rows(20)))
    assert write_records(read_documents(tmp_path / "in.jsonl"), tmp_path / name) == 20
    assert write_records(read_documents(tmp_path / "in.jsonl"), f"{root}/{name}") == 20
    assert fs.cat(f"/{root.split('://')[1]}/{name}") == (tmp_path / name).read_bytes()


def test_an_output_that_is_an_input_is_refused_and_left_as_it_was(memory):
    fs, root = memory
    data = _jsonl(_rows(3))
    _put(fs, f"{root}/x.jsonl", data)
    with pytest.raises(OutputError, match="same object"):
        write_records(read_documents(f"{root}/x.jsonl"), f"{root}//x.jsonl")
    assert fs.cat(f"/{root.split('://')[1]}/x.jsonl") == data


@pytest.mark.parametrize("part_format", ["parquet", "jsonl", "jsonl.gz"])
def test_sharded_output_and_its_manifest_read_back_in_order(memory, tmp_path, part_format):
    fs, root = memory
    (tmp_path / "in.jsonl").write_bytes(_jsonl(_rows(50)))
    plan = ShardPlan(shards=4, part_format=part_format, total_rows=50)
    written = write_records(read_documents(tmp_path / "in.jsonl", batch_size=300),
                            f"{root}/out/", shards=plan)
    assert written == 50
    names = sorted(p.rsplit("/", 1)[-1] for p in fs.ls(f"/{root.split('://')[1]}/out",
                                                       detail=False))
    assert names == [MANIFEST] + [f"part-{k:05d}.{part_format}" for k in range(4)]
    manifest = json.loads(fs.cat(f"/{root.split('://')[1]}/out/{MANIFEST}"))
    assert [p["rows"] for p in manifest["parts"]] and sum(p["rows"] for p in manifest["parts"]) \
        == manifest["rows"] == 50
    assert all(p["rows"] > 0 for p in manifest["parts"])
    back = [i for b in read_documents(f"{root}/out/") for i in b.ids.to_pylist()]
    assert back == [f"d{i}" for i in range(50)]
    local = tmp_path / "local"
    write_records(read_documents(tmp_path / "in.jsonl", batch_size=300), f"{local}/", shards=plan)
    assert [i for b in read_documents(local) for i in b.ids.to_pylist()] == back
    for part in manifest["parts"]:  # the same parts, byte for byte, on disk and in the store
        assert (local / part["name"]).read_bytes() == fs.cat(
            f"/{root.split('://')[1]}/out/{part['name']}")


def test_shard_size_starts_new_parts_and_a_changed_part_is_refused(memory, tmp_path):
    fs, root = memory
    rows = [{**row, "text": row["text"] * 10} for row in _rows(200)]  # ~80 kB
    (tmp_path / "in.jsonl").write_bytes(_jsonl(rows))
    write_records(read_documents(tmp_path / "in.jsonl", batch_size=10_000), f"{root}/out/",
                  shards=ShardPlan(shard_bytes=25_000, part_format="jsonl"))
    path = f"/{root.split('://')[1]}/out"
    parts = [p for p in fs.ls(path, detail=False) if "part-" in p]
    # a part ends at the first batch that takes it to the size: at most one batch beyond it
    assert len(parts) >= 3 and all(fs.size(p) < 25_000 + 10_000 for p in parts)
    fs.pipe_file(parts[1], b'{"id": "x", "text": "edited"}\n')
    with pytest.raises(InputError, match="manifest says"):
        list(read_documents(f"{root}/out/"))
    fs.rm_file(parts[1])
    with pytest.raises(InputError, match="is missing"):
        list(read_documents(f"{root}/out/"))


def test_an_object_replaced_between_two_reads_is_refused(memory):
    fs, root = memory
    _put(fs, f"{root}/x.jsonl", _jsonl(_rows(3)))
    with consistent_reads():
        assert len(_records(read_documents(f"{root}/x.jsonl"))) == 1
        _put(fs, f"{root}/x.jsonl", _jsonl(_rows(4)))
        with pytest.raises(InputError, match="changed while this command read it"):
            list(read_documents(f"{root}/x.jsonl"))
    assert len(list(read_documents(f"{root}/x.jsonl"))) == 1  # outside: a new read, no pin


def test_a_sharded_output_that_fails_midway_leaves_no_part(memory, tmp_path):
    fs, root = memory
    rows = [{**row, "text": row["text"] * 10} for row in _rows(100)]
    (tmp_path / "in.jsonl").write_bytes(_jsonl(rows) + b"{not json\n")  # fails at the end
    with pytest.raises(InputError, match="malformed JSON"):
        write_records(read_documents(tmp_path / "in.jsonl", batch_size=5_000), f"{root}/out/",
                      shards=ShardPlan(shard_bytes=8_000, part_format="jsonl"))
    assert not fs.exists(f"/{root.split('://')[1]}/out") or \
        fs.find(f"/{root.split('://')[1]}/out") == []
