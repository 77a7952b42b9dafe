"""`corpus-miner dedup --annotate` on the local engine and on Spark masters, same input, same
machine: time, CPU, peak memory, "beyond start-up", and whether the records are the local
engine's byte for byte.

    python benchmarks/bench_dedup_engines.py [--corpus openjdk-17-doc | --data PATH]
        [--masters local[2],spark://127.0.0.1:7077] [--repeat 1]

Each (engine, master) runs twice per round, each run a fresh `corpus-miner dedup` process: on
a one-document file cut from the input (start-up: interpreter, imports, for Spark the driver
JVM, the executors and their first Python workers) and on the whole input. "beyond start-up" is
the difference, and `ratio_beyond` divides it by the local engine's own (the target of issue
27: at most 3). Rounds go engine after engine (round robin), and the medians are reported.

A standalone master is not started here; start one with pyspark's jars, e.g. a master and two
1-core workers on 127.0.0.1:

    SPARK_HOME=$(python -c "import pyspark, os; print(os.path.dirname(pyspark.__file__))")
    $SPARK_HOME/bin/spark-class org.apache.spark.deploy.master.Master --host 127.0.0.1 \
        --port 7077 &
    $SPARK_HOME/bin/spark-class org.apache.spark.deploy.worker.Worker spark://127.0.0.1:7077 \
        --host 127.0.0.1 --cores 1 --memory 2g &     # twice

CPU seconds are those of the command's process tree (bench_engines.TreeSampler): with a
standalone master the executors are the workers' children, not the command's, so only the
driver's CPU is counted there (`cpu_seconds` says "driver" then). Writes
benchmarks/results/bench_dedup_engines.csv with the columns of COLUMNS.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_engines import TreeSampler  # noqa: E402

from csv_table import write_csv  # noqa: E402
from data_paths import corpus_file  # noqa: E402

RESULTS = HERE / "results"
COLUMNS = ["input", "documents", "engine", "master", "seconds", "cpu_seconds", "cpu_counted",
           "peak_rss_mb", "startup_seconds", "beyond_startup", "ratio_beyond", "load_during",
           "runs", "identical"]


def one_document(data: Path, folder: Path) -> Path:
    """The first record of a JSONL(.gz) input, a Parquet file or a folder of Parquet parts as a
    JSONL file of its own (start-up runs)."""
    if data.is_dir() or data.name.endswith(".parquet"):
        import pyarrow.parquet as pq

        part = min(data.rglob("*.parquet")) if data.is_dir() else data
        first = json.dumps(pq.ParquetFile(part).read_row_group(0).slice(0, 1).to_pylist()[0],
                           ensure_ascii=False) + "\n"
    else:
        opener = gzip.open if data.name.endswith(".gz") else open
        with opener(data, "rt", encoding="utf-8") as handle:
            first = handle.readline()
    path = folder / "one.jsonl"
    path.write_text(first, encoding="utf-8")
    return path


def run_dedup(data: Path, out: Path, master: str | None) -> dict:
    argv = [sys.executable, "-m", "corpus_miner", "dedup", str(data), "-o", str(out),
            "--annotate"]
    if master is not None:
        argv += ["--engine", "spark", "--master", master]
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(process.pid)
    _, err = process.communicate()
    seconds = time.perf_counter() - started
    sampler.stop()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{err[-3000:]}")
    return {"seconds": seconds, "cpu": sum(sampler.cpu.values()), "peak": sampler.peak,
            "load": statistics.mean(sampler.loads) if sampler.loads else os.getloadavg()[0],
            "note": err.strip().splitlines()[-1] if err.strip() else ""}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--corpus", default="openjdk-17-doc",
                        help="a corpus of benchmarks/data_paths.py (default: %(default)s)")
    source.add_argument("--data", type=Path, help="a JSONL(.gz) file, Parquet file or folder of "
                        "Parquet parts instead")
    parser.add_argument("--masters", default="local[2]",
                        help="comma-separated Spark masters to run besides the local engine")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    data = args.data if args.data is not None else corpus_file(args.corpus)
    engines: list[tuple[str, str | None]] = [("local", None)] + [
        ("spark", master) for master in args.masters.split(",") if master]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        one = one_document(data, work)
        runs: dict[int, dict[str, list[dict]]] = {i: {"startup": [], "full": []}
                                                  for i in range(len(engines))}
        for _ in range(args.repeat):
            for i, (_, master) in enumerate(engines):
                runs[i]["startup"].append(run_dedup(one, work / f"one-{i}.jsonl", master))
                runs[i]["full"].append(run_dedup(data, work / f"out-{i}.jsonl", master))
        local_bytes = (work / "out-0.jsonl").read_bytes()
        documents = local_bytes.count(b"\n")
        rows = []
        for i, (engine, master) in enumerate(engines):
            full, startup = runs[i]["full"], runs[i]["startup"]
            seconds = statistics.median(r["seconds"] for r in full)
            start = statistics.median(r["seconds"] for r in startup)
            rows.append({
                "input": data.name, "documents": documents, "engine": engine,
                "master": master or "", "seconds": round(seconds, 2),
                "cpu_seconds": round(statistics.median(r["cpu"] for r in full), 2),
                "cpu_counted": "driver" if master and master.startswith("spark://")
                else "all",
                "peak_rss_mb": round(statistics.median(r["peak"] for r in full) / 2**20, 1),
                "startup_seconds": round(start, 2), "beyond_startup": round(seconds - start, 2),
                "load_during": round(statistics.mean(r["load"] for r in full), 2),
                "runs": len(full),
                "identical": (work / f"out-{i}.jsonl").read_bytes() == local_bytes})
        for row in rows:
            row["ratio_beyond"] = round(row["beyond_startup"] / rows[0]["beyond_startup"], 2)
            print(", ".join(f"{k} {row[k]}" for k in COLUMNS), flush=True)
        print(f"last run: {runs[len(engines) - 1]['full'][-1]['note']}")
    write_csv(RESULTS / "bench_dedup_engines.csv", rows, COLUMNS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
