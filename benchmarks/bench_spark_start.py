"""Start-up of a local Spark session with and without the driver's class archive.

    python benchmarks/bench_spark_start.py [--web BIG --web-parts 3] [--repeats 5]

Each run is one process: `local_session` (class_archive on or off), a read of the Parquet
schema of the first --web-parts parts of BIG (`python benchmarks/gen_big.py BIG 1e9`; without
--web, a one-row DataFrame) and a count, then exit. Runs alternate between the two settings; the
first run with the archive on writes it when none is cached yet (its row says so: archive =
"written") and is left out of the medians. The cache is a fresh folder (XDG_CACHE_HOME), so the
user's own cache is untouched.

Writes benchmarks/results/bench_spark_start.csv: run, archive (off, written, used), seconds
(whole process), session_seconds, first_job_seconds, load (1-minute load average before).
"""

from __future__ import annotations

import argparse
import glob
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
from csv_table import write_csv  # noqa: E402

CHILD = """
import json, os, sys, time
started = time.perf_counter()
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
from corpus_miner.spark import local_session
archive, parts = json.loads(sys.argv[1])
spark = local_session("local[2]", class_archive=archive, spark__ui__enabled="false")
spark.sparkContext.setLogLevel("ERROR")
session = time.perf_counter()
df = spark.read.parquet(*parts) if parts else spark.range(1)
df.limit(1).count()
print(json.dumps({"session": session - started, "first_job": time.perf_counter() - session}))
"""


def run(archive: bool, parts: list[str], cache: str) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=cache, PYSPARK_PYTHON=sys.executable)
    load = os.getloadavg()[0]
    had = bool(glob.glob(os.path.join(cache, "corpus-miner", "spark", "classes-*.jsa")))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps([archive, parts])], env=env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    times = json.loads(done.stdout.strip().splitlines()[-1])
    return {"archive": "off" if not archive else "used" if had else "written",
            "seconds": round(seconds, 2), "session_seconds": round(times["session"], 2),
            "first_job_seconds": round(times["first_job"], 2), "load": round(load, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--web", help="folder of generated web pages (*.parquet)")
    parser.add_argument("--web-parts", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=str(HERE / "results" / "bench_spark_start.csv"))
    args = parser.parse_args()
    parts = sorted(glob.glob(os.path.join(args.web, "*.parquet")))[:args.web_parts] \
        if args.web else []
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for index in range(args.repeats + 1):  # the first archive run writes it
            for archive in (False, True):
                row = {"run": index, **run(archive, parts, cache)}
                rows.append(row)
                print(json.dumps(row), flush=True)
    write_csv(Path(args.out), rows)
    for kind in ("off", "used"):
        chosen = [r for r in rows if r["archive"] == kind]
        print(kind, "median seconds",
              statistics.median(r["seconds"] for r in chosen) if chosen else "-",
              "session", statistics.median(r["session_seconds"] for r in chosen)
              if chosen else "-")


if __name__ == "__main__":
    main()
