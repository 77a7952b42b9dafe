"""`index query --engine ray` and `dedup --against --engine ray` (issues 25, 27): the local
engine's records byte for byte, both modes, on snapshots where some documents repost indexed
ones and some copy each other."""

from __future__ import annotations

import json

import pytest

from corpus_miner import synth
from corpus_miner.cli import main

pytest.importorskip("ray")
pytestmark = pytest.mark.filterwarnings(r"ignore:::ray\.data\.context")


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ray-index")
    docs = synth.web(40, n_sites=3, vocabulary=300, mean_body_words=40, seed=6)
    pages = [{"id": f"p{i}", "text": " ".join(d)} for i, d in enumerate(docs)]
    pages[31]["text"] = pages[3]["text"]  # a repost of an indexed page
    pages[35]["text"] = pages[30]["text"]  # a copy inside the new snapshot
    del pages[33]["id"]  # named by its row number, on both engines
    paths = []
    for k, part in enumerate((pages[:20], pages[20:30], pages[30:])):
        path = folder / f"s{k}.jsonl"
        path.write_text("".join(json.dumps(p) + "\n" for p in part), encoding="utf-8")
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
def test_query_and_against_on_ray_write_the_local_records(ray_cluster, pages, tmp_path, mode):
    first, second = str(tmp_path / "first"), str(tmp_path / "second")
    assert main(["index", "build", pages[0], "-o", first, "--mode", mode]) == 0
    assert main(["index", "build", pages[1], "-o", second, "--mode", mode]) == 0
    for engine in ("local", "ray"):
        assert main(["index", "query", first, pages[2], "-o", str(tmp_path / f"q-{engine}.jsonl"),
                     "--annotate", "--engine", engine]) == 0
        assert main(["dedup", pages[2], "--against", second, first, "-o",
                     str(tmp_path / f"d-{engine}.jsonl"), "--annotate", "--mode", mode,
                     "--engine", engine]) == 0
    for name in ("q", "d"):
        local = (tmp_path / f"{name}-local.jsonl").read_bytes()
        assert (tmp_path / f"{name}-ray.jsonl").read_bytes() == local
    flags = [json.loads(line)["is_duplicate"]
             for line in (tmp_path / "d-local.jsonl").read_text().splitlines()]
    assert [i for i, f in enumerate(flags) if f] == [1, 5]
