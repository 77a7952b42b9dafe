"""`dedup --against --engine spark` (issue 25): read-only checks against indexes on Spark write
the local engine's records byte for byte, both modes."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pandas")

from corpus_miner import synth  # noqa: E402
from corpus_miner.cli import main  # noqa: E402

SPARK = ["--engine", "spark", "--master", "local[2]"]


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
def test_dedup_against_on_spark_writes_the_local_records(tmp_path, mode):
    docs = synth.web(36, n_sites=3, vocabulary=300, mean_body_words=40, seed=6)
    pages = [{"id": f"p{i}", "text": " ".join(d)} for i, d in enumerate(docs)]
    pages[31]["text"] = pages[3]["text"]  # a repost of an indexed page
    pages[33]["text"] = pages[30]["text"]  # a copy inside the new snapshot
    paths = []
    for k, part in enumerate((pages[:20], pages[20:28], pages[28:])):
        path = tmp_path / f"s{k}.jsonl"
        path.write_text("".join(json.dumps(p) + "\n" for p in part), encoding="utf-8")
        paths.append(str(path))
    indexes = [str(tmp_path / "i0"), str(tmp_path / "i1")]
    for path, index in zip(paths, indexes):
        assert main(["index", "build", path, "-o", index, "--mode", mode]) == 0
    for engine, more in (("local", []), ("spark", SPARK)):
        assert main(["dedup", paths[2], "--against", indexes[1], indexes[0], "--annotate",
                     "--mode", mode, "-o", str(tmp_path / f"{engine}.jsonl"), *more]) == 0
    local = (tmp_path / "local.jsonl").read_bytes()
    assert (tmp_path / "spark.jsonl").read_bytes() == local
    flags = [json.loads(line)["is_duplicate"] for line in local.decode().splitlines()]
    assert [i for i, f in enumerate(flags) if f] == [3, 5]
