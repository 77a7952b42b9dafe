"""Where SparkBloomSpan's CPU goes: the JVM, the Python workers and the Python driver, per phase.

    python benchmarks/profile_spark_cpu.py --web BIG [--web-parts 3] [--sigma 20] [--min-length 10]

One process starts a local[2] session and records the CPU seconds (user + system, from psutil)
of the Python driver, the JVM (driver and executors in local mode) and the Python workers after
each phase:

* session: starting the JVM and the session;
* warm-up: a job over 4 synthetic partitions of 2 MB binary values (the JVM's first job compiles
  its hot paths);
* persist / scan: the price of moving stored tables, with the Python side doing nothing: 800 MB
  of binary values made in Python workers, persisted (as SparkBloomSpan stores its tables), then
  handed back to Python workers;
* read: the first --web-parts Parquet parts of BIG (`python benchmarks/gen_big.py BIG 1e9`) read
  by Spark and handed to Python workers that only count rows;
* fit: SparkBloomSpan(sigma, min_length).fit on the same parts (it reads them again).

Writes benchmarks/results/profile_spark_cpu.csv: phase, seconds (wall), driver_cpu, jvm_cpu,
workers_cpu (each the phase's own), load (1-minute load average at its end), fit stages (JSON:
seconds per stage of the fit, on the fit row), jvm_threads (JSON, on the fit row: CPU seconds of
the JVM's threads by kind over the whole run, e.g. "Executor task launch worker for task #",
"C# CompilerThread#", "GC Thread##"; Linux only), java_options (--java-options).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from csv_table import write_csv  # noqa: E402

BLOB_BYTES = 2 << 20
BLOBS_PER_PARTITION = 100
PARTITIONS = 4  # of the blobs' DataFrame: 800 MB in all


def process_cpu() -> dict[str, float]:
    """CPU seconds so far of this process (driver), the JVM and the Python workers."""
    import psutil

    me = psutil.Process()
    out = {"driver": 0.0, "jvm": 0.0, "workers": 0.0}
    for proc in [me] + me.children(recursive=True):
        try:
            times = proc.cpu_times()
            kind = "driver" if proc.pid == me.pid else \
                "jvm" if proc.name().startswith("java") else "workers"
        except psutil.Error:
            continue
        out[kind] += times.user + times.system
    return out


def blobs(batches):
    import numpy as np
    import pyarrow as pa

    for _ in batches:
        pass
    raw = np.random.default_rng(0).integers(0, 255, BLOB_BYTES, dtype=np.uint8).tobytes()
    for _ in range(BLOBS_PER_PARTITION // 10):
        yield pa.RecordBatch.from_arrays([pa.array([raw] * 10, pa.binary())], names=["blob"])


def jvm_threads(pid: int) -> dict[str, float]:
    """CPU seconds so far of the JVM's threads by kind (names from /proc, digits dropped):
    executor task threads, the JIT's compiler threads, garbage collection, ..."""
    import re

    tick = os.sysconf("SC_CLK_TCK")
    kinds: dict[str, float] = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                name = re.sub(r"[0-9]+", "#", f.read().strip())
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kinds[name] = kinds.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return {k: round(v, 1) for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]) if v >= 0.1}


def count_rows(batches):
    import pyarrow as pa

    yield pa.RecordBatch.from_arrays([pa.array([sum(b.num_rows for b in batches)])], names=["n"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--web", required=True, help="folder of generated web pages (*.parquet)")
    parser.add_argument("--web-parts", type=int, default=3)
    parser.add_argument("--sigma", type=int, default=20)
    parser.add_argument("--min-length", type=int, default=10)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--java-options", default="",
                        help="more options for the driver JVM (after local_session's own)")
    parser.add_argument("--out", default=str(HERE / "results" / "profile_spark_cpu.csv"))
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    parts = sorted(glob.glob(os.path.join(args.web, "*.parquet")))[:args.web_parts]
    if not parts:
        raise SystemExit(f"no *.parquet in {args.web}")

    from pyspark import StorageLevel

    from corpus_miner.spark import SparkBloomSpan, local_session

    rows: list[dict] = []
    last = {"driver": 0.0, "jvm": 0.0, "workers": 0.0}
    clock = [time.perf_counter()]

    def phase(name: str, **extra) -> None:
        nonlocal last
        now, cpu = time.perf_counter(), process_cpu()
        row = {"phase": name, "seconds": round(now - clock[0], 2),
               **{f"{k}_cpu": round(cpu[k] - last[k], 2) for k in cpu},
               "load": round(os.getloadavg()[0], 2), "fit_stages": "", **extra}
        rows.append(row)
        print(json.dumps(row), flush=True)
        last, clock[0] = cpu, time.perf_counter()

    spark = local_session(args.master, app_name="profile-spark-cpu",
                          spark__driver__memory="8g", spark__ui__enabled="false",
                          **({"spark__driver__extraJavaOptions": args.java_options}
                             if args.java_options else {}))
    spark.sparkContext.setLogLevel("ERROR")
    phase("session")
    seed = spark.range(PARTITIONS, numPartitions=PARTITIONS)
    seed.mapInArrow(blobs, "blob binary").mapInArrow(count_rows, "n long").collect()
    phase("warm-up")
    stored = seed.mapInArrow(blobs, "blob binary").persist(StorageLevel.MEMORY_AND_DISK)
    stored.count()
    phase("persist 800 MB")
    stored.mapInArrow(count_rows, "n long").collect()
    phase("scan 800 MB")
    stored.unpersist()
    df = spark.read.parquet(*parts).select("id", "text")
    df.select("text").mapInArrow(count_rows, "n long").collect()
    phase(f"read web{len(parts)}")
    model = SparkBloomSpan(sigma=args.sigma, min_length=args.min_length).fit(df)
    phase(f"fit web{len(parts)} sigma {args.sigma}",
          fit_stages=json.dumps({k: round(v, 2) for k, v in model.stats_["seconds"].items()}),
          jvm_threads=json.dumps(jvm_threads(spark.sparkContext._gateway.proc.pid)),
          java_options=args.java_options)
    spark.stop()
    write_csv(Path(args.out), rows)


if __name__ == "__main__":
    main()
