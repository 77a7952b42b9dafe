"""`index add --engine ray` (issue 25 on Ray): snapshots added on Ray write the local engine's
outputs byte for byte and leave the same index (filters, band table, ids, snapshot records but
their times), both modes, both `add` rules; an input absorbed before is refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from corpus_miner import synth
from corpus_miner.cli import main
from corpus_miner.dedup import LSHBloom

pytest.importorskip("ray")
pytestmark = pytest.mark.filterwarnings(r"ignore:::ray\.data\.context")

RAY = ["--engine", "ray"]


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory):
    folder = tmp_path_factory.mktemp("snapshots")
    docs = synth.web(50, n_sites=3, vocabulary=300, mean_body_words=40, seed=4)
    pages = [{"id": f"p{i}", "text": " ".join(d)} for i, d in enumerate(docs)]
    pages[33]["text"] = pages[5]["text"]  # a repost in the second snapshot
    pages[12]["text"] = pages[10]["text"]  # a copy inside the first
    paths = []
    for k, part in enumerate((pages[:25], pages[25:])):
        path = folder / f"s{k}.jsonl"
        path.write_text("".join(json.dumps(p) + "\n" for p in part), encoding="utf-8")
        paths.append(str(path))
    return paths


def _index(path):
    model = LSHBloom.load(path)
    if model.mode_ == "lshbloom":
        content = [layer.bits.tobytes() for layer in model.index_.layers]
    else:
        keys, docs = model.index_.items()
        content = [keys.tobytes(), docs.tobytes(), model.ids_.to_pylist()]
    snapshots = [{k: v for k, v in s.items() if k != "time"} for s in model.snapshots_]
    return model.params_, model.n_documents_, content, snapshots


@pytest.mark.parametrize("extra", [["--expected-items", "8"], ["--mode", "minhash_lsh"],
                                   ["--add", "unique"]],
                         ids=["lshbloom", "minhash_lsh", "unique"])
def test_snapshots_added_on_ray_equal_the_local_engine(ray_cluster, snapshots, tmp_path, extra,
                                                   capsys):
    for engine, more in (("local", []), ("ray", RAY)):
        for k, snapshot in enumerate(snapshots):
            out = tmp_path / f"{engine}-{k}.jsonl"
            assert main(["index", "add", str(tmp_path / f"{engine}-index"), snapshot, "-o",
                         str(out), "--annotate", *extra, *more]) == 0
    for k in range(len(snapshots)):
        local = (tmp_path / f"local-{k}.jsonl").read_bytes()
        assert (tmp_path / f"ray-{k}.jsonl").read_bytes() == local
    flags = [json.loads(line)["is_duplicate"] for k in range(2)
             for line in (tmp_path / f"local-{k}.jsonl").read_text().splitlines()]
    assert np.flatnonzero(flags).tolist() == [12, 33]
    assert _index(tmp_path / "ray-index") == _index(tmp_path / "local-index")
    capsys.readouterr()
    assert main(["index", "add", str(tmp_path / "ray-index"), snapshots[0], "-o",
                 str(tmp_path / "again.jsonl"), *RAY]) == 2
    assert "was added to the index before" in capsys.readouterr().err
    assert not (tmp_path / "again.jsonl").exists()
