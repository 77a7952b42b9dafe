"""`corpus-miner dedup --annotate` on the local engine, on Spark masters and on Ray, same input,
same machine: time, CPU, peak memory, "beyond start-up", and whether the records are the local
engine's byte for byte.

    python benchmarks/bench_dedup_engines.py [--corpus openjdk-17-doc | --data PATH]
        [--engines local,spark,ray] [--masters local[2],spark://127.0.0.1:7077] [--repeat 1]
        [--format jsonl|parquet] [--output CSV]

After one untimed warm-up run of each engine on the one-document file, each engine (every
Spark master of --masters for `spark`; `ray`: a local Ray cluster started by the command with
the machine's cores) runs twice per round, each run a fresh `corpus-miner
dedup` process: on a one-document file cut from the input (start-up: interpreter, imports, for
Spark the driver JVM, the executors and their first Python workers, for Ray the cluster's
daemons and its first workers) and on the whole input. "beyond start-up" is the difference, in
wall seconds and in CPU seconds, and `ratio_beyond` / `cpu_ratio_beyond` divide it by the local
engine's own (the target of issue 27: at most 3). Rounds go engine after engine (round robin),
and the medians are reported. On a shared machine the CPU figures are the ones to compare.

A standalone master is not started here; start one with pyspark's jars, e.g. a master and two
1-core workers on 127.0.0.1:

    SPARK_HOME=$(python -c "import pyspark, os; print(os.path.dirname(pyspark.__file__))")
    $SPARK_HOME/bin/spark-class org.apache.spark.deploy.master.Master --host 127.0.0.1 \
        --port 7077 &
    $SPARK_HOME/bin/spark-class org.apache.spark.deploy.worker.Worker spark://127.0.0.1:7077 \
        --host 127.0.0.1 --cores 1 --memory 2g &     # twice

CPU seconds are those of the command's process tree (bench_engines.TreeSampler): with a
standalone master the executors are the workers' children, not the command's, so only the
driver's CPU is counted there (`cpu_counted` says "driver" then). `identical` compares the
sha256 of each engine's output with the local engine's (outputs are hashed and removed as
they are written, so a large input needs room for two outputs only). --format parquet writes
Parquet instead of JSONL (less to write for a large input; the same writer on every engine).
Spark's driver JVM gets --driver-memory (default 8g: bench_engines.spark_heap). Writes --output
(default benchmarks/results/bench_dedup_engines.csv) with the columns of
COLUMNS; load_* are the machine's 1-minute load average before, during and after the runs.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
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
from bench_engines import TreeSampler, spark_heap  # noqa: E402

from csv_table import write_csv  # noqa: E402
from data_paths import corpus_file  # noqa: E402

RESULTS = HERE / "results"
COLUMNS = ["input", "documents", "engine", "master", "seconds", "cpu_seconds", "cpu_counted",
           "peak_rss_mb", "startup_seconds", "beyond_startup", "ratio_beyond",
           "startup_cpu_seconds", "cpu_beyond_startup", "cpu_ratio_beyond", "load_before",
           "load_during", "load_after", "runs", "identical"]


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


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 24):
            digest.update(chunk)
    return digest.hexdigest()


def run_dedup(data: Path, out: Path, engine: str, master: str | None,
              driver_memory: str = "8g") -> dict:
    argv = [sys.executable, "-m", "corpus_miner", "dedup", str(data), "-o", str(out),
            "--annotate"]
    env = dict(os.environ)
    if engine == "spark":
        argv += ["--engine", "spark", "--master", str(master)]
        env.update(spark_heap(driver_memory))
    elif engine == "ray":
        argv += ["--engine", "ray"]
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    sampler = TreeSampler(process.pid)
    _, err = process.communicate()
    seconds = time.perf_counter() - started
    load_after = os.getloadavg()[0]
    sampler.stop()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{err[-3000:]}")
    digest = sha256(out)
    out.unlink()
    return {"seconds": seconds, "cpu": sum(sampler.cpu.values()), "peak": sampler.peak,
            "load_before": load_before, "load_after": load_after,
            "load": statistics.mean(sampler.loads) if sampler.loads else load_after,
            "sha256": digest, "note": err.strip().splitlines()[-1] if err.strip() else ""}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--corpus", default="openjdk-17-doc",
                        help="a corpus of benchmarks/data_paths.py (default: %(default)s)")
    source.add_argument("--data", type=Path, help="a JSONL(.gz) file, Parquet file or folder of "
                        "Parquet parts instead")
    parser.add_argument("--engines", default="local,spark,ray",
                        help="comma-separated, among local (always run first: the reference), "
                        "spark and ray")
    parser.add_argument("--masters", default="local[2]",
                        help="comma-separated Spark masters, one run each with --engines spark")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--driver-memory", default="8g",
                        help="the Spark driver JVM's heap (local mode: executors included)")
    parser.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl",
                        help="the output's format (default: %(default)s)")
    parser.add_argument("--output", type=Path, default=RESULTS / "bench_dedup_engines.csv")
    args = parser.parse_args(argv)
    data = args.data if args.data is not None else corpus_file(args.corpus)
    chosen = set(args.engines.split(","))
    engines: list[tuple[str, str | None]] = [("local", None)]
    if "spark" in chosen:
        engines += [("spark", master) for master in args.masters.split(",") if master]
    if "ray" in chosen:
        engines.append(("ray", None))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        one = one_document(data, work)
        runs: dict[int, dict[str, list[dict]]] = {i: {"startup": [], "full": []}
                                                  for i in range(len(engines))}
        # untimed: numba's kernel cache (a fresh checkout compiles every kernel on its first
        # run) and Spark's class archive are not what the runs should measure
        for i, (engine, master) in enumerate(engines):
            run_dedup(one, work / f"warm-{i}.{args.format}", engine, master, args.driver_memory)
        for _ in range(args.repeat):
            for i, (engine, master) in enumerate(engines):
                for kind, path in (("startup", one), ("full", data)):
                    run = run_dedup(path, work / f"{kind}-{i}.{args.format}", engine, master,
                                    args.driver_memory)
                    runs[i][kind].append(run)
                    print(f"{engine} {master or ''} {kind}: {run['seconds']:.2f} s, "
                          f"{run['cpu']:.2f} CPU s, load {run['load_before']:.2f} -> "
                          f"{run['load_after']:.2f}", flush=True)
        local_digest = runs[0]["full"][0]["sha256"]
        documents = pq_or_jsonl_rows(data)
        rows = []
        for i, (engine, master) in enumerate(engines):
            full, startup = runs[i]["full"], runs[i]["startup"]
            seconds = statistics.median(r["seconds"] for r in full)
            start = statistics.median(r["seconds"] for r in startup)
            cpu = statistics.median(r["cpu"] for r in full)
            start_cpu = statistics.median(r["cpu"] for r in startup)
            rows.append({
                "input": data.name, "documents": documents, "engine": engine,
                "master": master or "", "seconds": round(seconds, 2),
                "cpu_seconds": round(cpu, 2),
                "cpu_counted": "driver" if master and master.startswith("spark://")
                else "all",
                "peak_rss_mb": round(statistics.median(r["peak"] for r in full) / 2**20, 1),
                "startup_seconds": round(start, 2), "beyond_startup": round(seconds - start, 2),
                "startup_cpu_seconds": round(start_cpu, 2),
                "cpu_beyond_startup": round(cpu - start_cpu, 2),
                "load_before": round(statistics.mean(r["load_before"] for r in full), 2),
                "load_during": round(statistics.mean(r["load"] for r in full), 2),
                "load_after": round(statistics.mean(r["load_after"] for r in full), 2),
                "runs": len(full),
                "identical": all(r["sha256"] == local_digest for r in full)})
        for row in rows:
            row["ratio_beyond"] = round(row["beyond_startup"] / rows[0]["beyond_startup"], 2)
            row["cpu_ratio_beyond"] = round(row["cpu_beyond_startup"]
                                            / rows[0]["cpu_beyond_startup"], 2)
            print(", ".join(f"{k} {row[k]}" for k in COLUMNS), flush=True)
        print(f"last run: {runs[len(engines) - 1]['full'][-1]['note']}")
    write_csv(args.output, rows, COLUMNS)
    return 0


def pq_or_jsonl_rows(data: Path) -> int:
    """The number of records of the input (a Parquet file or folder of parts, or JSONL(.gz))."""
    if data.is_dir() or data.name.endswith(".parquet"):
        import pyarrow.parquet as pq

        parts = sorted(data.rglob("*.parquet")) if data.is_dir() else [data]
        return sum(pq.ParquetFile(part).metadata.num_rows for part in parts)
    opener = gzip.open if data.name.endswith(".gz") else open
    with opener(data, "rb") as handle:
        return sum(1 for line in handle if line.strip())


if __name__ == "__main__":
    sys.exit(main())
