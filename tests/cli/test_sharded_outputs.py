"""Sharded record outputs on a local disk: -o FOLDER/, --shards, --shard-size, and refusals."""

import json

import pytest

from corpus_miner.cli import main
from corpus_miner.io import read_documents


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": f"page {i} " + "word " * 40})
                            + "\n" for i in range(120)))
    return str(path)


def _records(path):
    return [(b.ids.to_pylist(), b.texts.to_pylist()) for b in read_documents(path)]


def test_shards_read_back_as_the_single_file(source, tmp_path):
    assert main(["dedup", source, "-o", str(tmp_path / "one.jsonl")]) == 0
    assert main(["dedup", source, "-o", str(tmp_path / "parts"), "--shards", "3",
                 "--shard-format", "jsonl"]) == 0
    names = sorted(p.name for p in (tmp_path / "parts").iterdir())
    assert names == ["_manifest.json", "part-00000.jsonl", "part-00001.jsonl", "part-00002.jsonl"]
    one = [i for ids, _ in _records(tmp_path / "one.jsonl") for i in ids]
    assert [i for ids, _ in _records(tmp_path / "parts") for i in ids] == one
    big = tmp_path / "big.jsonl"  # 3 batches: a part ends at the batch that fills it
    big.write_text("".join(json.dumps({"id": f"b{i}", "text": f"page {i} " + f"w{i} " * 120})
                           + "\n" for i in range(6000)))
    assert main(["dedup", str(big), "-o", f"{tmp_path / 'sized'}/", "--shard-size", "1MB",
                 "--shard-format", "jsonl", "--threshold", "0.999"]) == 0
    parts = sorted((tmp_path / "sized").glob("part-*.jsonl"))
    assert len(parts) == 3
    assert [i for ids, _ in _records(tmp_path / "sized") for i in ids] == \
        [f"b{i}" for i in range(6000)]


@pytest.mark.parametrize(("extra", "message"), [
    (["-o", "-", "--shards", "2"], "a sharded output is a folder"),
    (["-o", "{tmp}/x/", "--shards", "2", "--shard-size", "1MB"], "not both"),
    (["-o", "{tmp}/x/", "--shard-size", "lots"], "not a size"),
    (["-o", "{tmp}/x/", "--shards", "2", "--mode", "minhash_lsh"], "use --shard-size"),
])
def test_refused_before_any_work(source, tmp_path, capsys, extra, message):
    argv = ["dedup", source, *[part.format(tmp=tmp_path) for part in extra]]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
