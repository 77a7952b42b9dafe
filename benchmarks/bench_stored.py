"""What it costs the JVM to keep a DataFrame of large binary rows for a second job: Spark's
columnar cache (persist) against kept rows (localCheckpoint), next to a plain pass-through.

    python benchmarks/bench_stored.py [--repeats 3]

One local[2] session (its own process). Python workers (mapInArrow) yield 800 MB of random blobs
of 2 MB over 4 partitions (profile_spark_cpu.py's `blobs`), as SparkBloomSpan's passes yield
their stored batches. Per repeat and way, in turn:
- pass-through: the blobs go straight into a second mapInArrow that counts them;
- persist: persist(MEMORY_AND_DISK), a count() builds the cache, then one scan by mapInArrow;
- rows kept: corpus_miner.spark.stored.keep (localCheckpoint in local mode), a count() stores
  the rows, then one scan.
CPU seconds are those of the JVM and of the Python workers (psutil), wall seconds the driver's.
A warm-up round (left out) lets the JIT compile first.

Writes benchmarks/results/bench_stored.csv: repeat, way, step, wall_s, jvm_cpu_s, workers_cpu_s;
and prints the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from profile_spark_cpu import PARTITIONS, blobs, count_rows, process_cpu  # noqa: E402

from csv_table import write_csv  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "bench_stored.csv")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import profile_spark_cpu
    from pyspark import StorageLevel, cloudpickle

    # the workers cannot import a benchmark script: its functions travel by value
    cloudpickle.register_pickle_by_value(profile_spark_cpu)

    from corpus_miner.spark import local_session, stored

    spark = local_session("local[2]", app_name="bench-stored", spark__driver__memory="8g",
                          spark__ui__enabled="false")
    spark.sparkContext.setLogLevel("ERROR")
    source = spark.range(PARTITIONS, numPartitions=PARTITIONS).mapInArrow(blobs, "blob binary")
    rows: list[dict] = []

    def timed(repeat: int, way: str, step: str, action, *args) -> None:
        cpu, clock = process_cpu(), time.perf_counter()
        action(*args)
        now, after = time.perf_counter(), process_cpu()
        rows.append({"repeat": repeat, "way": way, "step": step,
                     "wall_s": round(now - clock, 3),
                     "jvm_cpu_s": round(after["jvm"] - cpu["jvm"], 3),
                     "workers_cpu_s": round(after["workers"] - cpu["workers"], 3)})

    def scan(df) -> None:
        df.mapInArrow(count_rows, "n long").collect()

    for repeat in range(args.repeats + 1):  # repeat 0: warm-up
        timed(repeat, "pass-through", "one scan", scan, source)
        persisted = source.persist(StorageLevel.MEMORY_AND_DISK)
        timed(repeat, "persist", "store (count)", persisted.count)
        timed(repeat, "persist", "scan", scan, persisted)
        persisted.unpersist(blocking=True)
        kept = stored.keep(source)
        timed(repeat, "rows kept", "store (count)", kept.count)
        timed(repeat, "rows kept", "scan", scan, kept)
        stored.drop(kept)
    spark.stop()
    rows = [row for row in rows if row["repeat"] > 0]
    write_csv(args.out, rows)
    for way, step in dict.fromkeys((row["way"], row["step"]) for row in rows):
        mine = [row for row in rows if (row["way"], row["step"]) == (way, step)]
        print(f"{way:13s} {step:20s} " + "  ".join(
            f"{key} {statistics.median(row[key] for row in mine):6.2f}"
            for key in ("wall_s", "jvm_cpu_s", "workers_cpu_s")))


if __name__ == "__main__":
    main()
