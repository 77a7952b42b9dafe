"""The seed's benchmark script and its converter, end to end on a small generated corpus.

Runs in a subprocess: the script starts and stops its own Spark session, which must not take the
shared test session down with it."""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.parametrize("io_mode", ["spark", "pyarrow"])
def test_converter_then_benchmark_write_the_seed_columns(tmp_path, io_mode):
    rng = random.Random(7)
    with open(tmp_path / "docs.jsonl", "w", encoding="utf-8") as handle:
        for d in range(60):  # every third document is a copy of the one before it
            if d % 3 != 2:
                text = " ".join(f"w{rng.randrange(5000)}" for _ in range(80))
            handle.write(json.dumps({"id": f"doc{d}", "text": text}) + "\n")
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    subprocess.run([sys.executable, str(BENCHMARKS / "jsonl_to_parquet.py"),
                    str(tmp_path / "docs.jsonl"), "-o", str(tmp_path / "parquet"),
                    "--rows-per-file", "25"], check=True, env=env, capture_output=True)
    assert len(list((tmp_path / "parquet").glob("part-*.parquet"))) == 3
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "benchmark_pes2o.py"), "--input-path",
         str(tmp_path / "parquet"), "--out-dir", str(tmp_path / "out"), "--sizes", "45",
         "--num-perm", "64", "--num-bands", "16", "--shingle-size", "5", "--max-shingles", "256",
         "--master", "local[2]", "--local-io-mode", io_mode, "--repeat", "1",
         "--threshold", "0.8", "--fp-prob", "1e-4", "--seed", "3", "--text-col", "text",
         "--id-col", "id"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    with open(tmp_path / "out" / "benchmark_results.csv", encoding="utf-8") as handle:
        rows = {row["method"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"lshbloom", "minhash_lsh"}
    for row in rows.values():
        for column in ("n_docs", "wall_clock_sec", "index_size_bytes", "index_size_gb",
                       "band_entries", "driver_rss_delta_gb"):
            assert row[column] != "", column
        assert row["n_docs"] == "45" and float(row["agreement"]) == 1.0
        # the first 45 documents in file order hold 15 copies (Spark's own file order differs)
        assert int(row["duplicates_found"]) == 15
    lshbloom = rows["lshbloom"]
    assert int(lshbloom["bloom_num_bits"]) > 0 and int(lshbloom["bloom_num_hashes"]) > 0
