"""`index add --engine spark` (issue 25 on Spark): snapshots added on Spark write the local
engine's outputs byte for byte and leave the same index (filters, band table, ids, snapshot
records but their times), both modes; an input absorbed before is refused before Spark starts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pandas")

from corpus_miner import synth  # noqa: E402
from corpus_miner.cli import main  # noqa: E402
from corpus_miner.dedup import LSHBloom  # noqa: E402

SPARK = ["--engine", "spark", "--master", "local[2]"]


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
    return _index_of(LSHBloom.load(path))


def _index_of(model):
    if model.mode_ == "lshbloom":
        content = [layer.bits.tobytes() for layer in model.index_.layers]
    else:
        keys, docs = model.index_.items()
        content = [keys.tobytes(), docs.tobytes(), model.ids_.to_pylist()]
    snapshots = [{k: v for k, v in s.items() if k != "time"} for s in model.snapshots_]
    return model.params_, model.n_documents_, content, snapshots


@pytest.mark.parametrize("extra", [["--expected-items", "8"], ["--mode", "minhash_lsh"]],
                         ids=["lshbloom", "minhash_lsh"])
def test_snapshots_added_on_spark_equal_the_local_engine(snapshots, tmp_path, extra, capsys):
    for engine, more in (("local", []), ("spark", SPARK)):
        for k, snapshot in enumerate(snapshots):
            out = tmp_path / f"{engine}-{k}.jsonl"
            assert main(["index", "add", str(tmp_path / f"{engine}-index"), snapshot, "-o",
                         str(out), "--annotate", *extra, *more]) == 0
    for k in range(len(snapshots)):
        local = (tmp_path / f"local-{k}.jsonl").read_bytes()
        assert (tmp_path / f"spark-{k}.jsonl").read_bytes() == local
    flags = [json.loads(line)["is_duplicate"] for k in range(2)
             for line in (tmp_path / f"local-{k}.jsonl").read_text().splitlines()]
    assert np.flatnonzero(flags).tolist() == [12, 33]
    assert _index(tmp_path / "spark-index") == _index(tmp_path / "local-index")
    capsys.readouterr()
    assert main(["index", "add", str(tmp_path / "spark-index"), snapshots[0], "-o",
                 str(tmp_path / "again.jsonl"), *SPARK]) == 2
    assert "was added to the index before" in capsys.readouterr().err
    assert not (tmp_path / "again.jsonl").exists()


def test_kill_9_at_any_moment_of_a_spark_add_leaves_the_old_index_or_the_new(snapshots, tmp_path):
    """SIGKILL to the whole command (driver, JVM and Python workers: its process group, no
    handler runs) at moments spread over the length of a run: the index loads and is the old
    one or the new one, whole; the output is absent or complete; no temporary file is left in
    the index folder after the next add."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.helpers import ROOT

    index, out = tmp_path / "index", tmp_path / "u.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))

    def add(snapshot: str, output) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "corpus_miner", "index", "add", str(index),
                                 snapshot, "-o", str(output), "--expected-items", "8", *SPARK],
                                env=env, stderr=subprocess.DEVNULL, start_new_session=True)

    started = time.monotonic()
    assert add(snapshots[0], tmp_path / "u0.jsonl").wait(timeout=300) == 0
    length = time.monotonic() - started  # of a whole run on this machine, now
    old = LSHBloom.load(index)
    second = len(Path(snapshots[1]).read_text(encoding="utf-8").splitlines())
    outcomes = set()
    for share in (0.5, 0.85, 1.0):
        child = add(snapshots[1], out)
        time.sleep(share * length)
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        now = LSHBloom.load(index)
        if now.n_documents_ == old.n_documents_:
            assert _index(index) == _index_of(old)
            outcomes.add("old")
        else:
            assert now.n_documents_ == old.n_documents_ + second
            outcomes.add("new")
            break
        if out.exists():
            assert len(out.read_text(encoding="utf-8").splitlines()) == second
    final = tmp_path / "final.jsonl"
    assert main(["index", "add", str(index), snapshots[1], "-o", str(final), "--expected-items",
                 "8", *(["--force"] if "new" in outcomes else [])]) == 0
    assert [p.name for p in index.iterdir() if p.name.endswith(".tmp")] == []
    assert LSHBloom.load(index).n_documents_ >= old.n_documents_ + second

