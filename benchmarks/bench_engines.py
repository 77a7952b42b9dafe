"""`corpus-miner phrases` on the three engines, same input, same machine: local, Spark local[N]
and a local Ray cluster of N CPUs; time, CPU, peak memory, same answer.

    python benchmarks/bench_engines.py [--tokens 1e7] [--settings 20:10,3:5] [--cpus 2]
        [--engines local,spark,ray] [--data DIR] [--repeat 1] [--output CSV]

Data: generated web pages (benchmarks/gen_big.py, Parquet parts of ~50k documents) of --tokens
tokens, written once to --data (default: a temporary folder). For each (sigma, min_length) the
engines run one after the other (--repeat rounds of them, the CSV holding the medians), each
as one command, after one untimed warm-up run of each engine on 200 pages:

* local: `corpus-miner phrases DATA --sigma S --min-length L -o local.tsv`;
* spark: the same with `--engine spark --master local[N]`, the driver's heap set by
  --driver-memory (default 8g, through PYSPARK_SUBMIT_ARGS; Spark's default of 1g is too small
  from about 10^8 tokens on);
* ray:   the same with `--engine ray` (a local cluster started by the command with the
  machine's cores: run it on an N-core machine, or give --cpus the machine's count).

Each command's whole process tree (JVM, Ray's raylet and workers included) is sampled every
0.2 s with psutil: peak resident memory (sum over the tree) and CPU seconds (user + system,
the last reading of every process seen). `identical` compares the phrase file with the local
engine's byte for byte. Start-up (JVM, Ray cluster) is inside `seconds`. Columns of
benchmarks/results/bench_engines.csv:

  tokens, documents, sigma, min_length, engine, cpus, seconds, cpu_seconds, peak_rss_mb,
  load_before, load_during, load_after, phrases, identical, runs

(load_*: the machine's 1-minute load average before, during (mean of the samples) and after
the command, since the machine may be shared.)

Also writes bench_engines.png (CPU seconds and peak memory per engine and setting; --plot-only
redraws it from the CSV).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
COLUMNS = ["tokens", "documents", "sigma", "min_length", "engine", "cpus", "seconds",
           "cpu_seconds", "peak_rss_mb", "load_before", "load_during", "load_after", "phrases",
           "identical", "runs"]


class TreeSampler:
    """Peak RSS and CPU seconds of a process and all its descendants, sampled."""

    def __init__(self, pid: int, every: float = 0.2):
        self.root = psutil.Process(pid)
        self.every = every
        self.peak = 0
        self.cpu: dict[int, float] = {}
        self.loads: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.NoSuchProcess:
                break
            rss = 0
            for proc in procs:
                try:
                    rss += proc.memory_info().rss
                    times = proc.cpu_times()
                    self.cpu[proc.pid] = times.user + times.system
                except psutil.Error:
                    pass
            self.peak = max(self.peak, rss)
            self.loads.append(os.getloadavg()[0])
            self._stop.wait(self.every)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def spark_heap(driver_memory: str) -> dict[str, str]:
    """The environment that gives a `--engine spark` command's driver JVM this heap. Local mode
    runs the executors inside the driver's JVM, whose heap Spark caps at 1g by default: too
    small for the stored batches of 10^8 tokens (the JVM dies)."""
    return {"PYSPARK_SUBMIT_ARGS": f"--driver-memory {driver_memory} pyspark-shell"}


def run_engine(engine: str, data: Path, sigma: int, min_length: int, cpus: int,
               out: Path, driver_memory: str = "8g") -> dict:
    argv = [sys.executable, "-m", "corpus_miner", "phrases", str(data), "--sigma", str(sigma),
            "--min-length", str(min_length), "-o", str(out), "--stats", str(out) + ".json"]
    env = dict(os.environ)
    if engine == "spark":
        argv += ["--engine", "spark", "--master", f"local[{cpus}]"]
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
        raise SystemExit(f"{engine} failed:\n{err[-3000:]}")
    stats = json.loads(Path(str(out) + ".json").read_text(encoding="utf-8"))
    return {"engine": engine, "cpus": cpus, "seconds": round(seconds, 2),
            "cpu_seconds": round(sum(sampler.cpu.values()), 2),
            "peak_rss_mb": round(sampler.peak / 2**20, 1), "load_before": round(load_before, 2),
            "load_during": round(sum(sampler.loads) / max(len(sampler.loads), 1), 2),
            "load_after": round(load_after, 2),
            "phrases": stats.get("phrases"), "documents": stats.get("documents"),
            "tokens": stats.get("tokens")}


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = sorted({(r["sigma"], r["min_length"]) for r in rows}, reverse=True)
    engines = list(dict.fromkeys(r["engine"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    width = 0.8 / len(engines)
    for k, engine in enumerate(engines):
        for ax, column in zip(axes, ("cpu_seconds", "peak_rss_mb")):
            values = [next((float(r[column]) for r in rows if r["engine"] == engine
                            and (r["sigma"], r["min_length"]) == s), 0.0) for s in settings]
            ax.bar([i + k * width for i in range(len(settings))], values, width, label=engine)
    for ax, label in zip(axes, ("CPU seconds of the process tree (start-up included)",
                                "peak RSS of the process tree, MB")):
        ax.set_xticks([i + width * (len(engines) - 1) / 2 for i in range(len(settings))])
        ax.set_xticklabels([f"σ {s} / L {m}" for s, m in settings])
        ax.set_ylabel(label)
    axes[0].legend()
    tokens = rows[0]["tokens"]
    fig.suptitle(f"corpus-miner phrases on {int(tokens):,} tokens of generated web pages, "
                 f"{rows[0]['cpus']} CPUs")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def warm_up(engines: list[str], data: Path, folder: Path, cpus: int,
            driver_memory: str) -> None:
    """One untimed run of each engine on the first 200 pages: numba's kernel cache (a fresh
    checkout compiles every kernel on its first run), the JVM's class archive and Ray's
    first start are not what the timed runs should measure."""
    import pyarrow.parquet as pq

    small = folder / "warm"
    small.mkdir(exist_ok=True)
    first = min(data.glob("*.parquet"))
    pq.write_table(pq.ParquetFile(first).read_row_group(0).slice(0, 200),
                   small / "part-00000.parquet")
    for engine in engines:
        run_engine(engine, small, 2, 5, cpus, folder / f"warm-{engine}.tsv", driver_memory)


def median_row(runs: list[dict]) -> dict:
    """One row of repeated runs: the medians of the measured columns (the others are equal)."""
    import statistics

    row = dict(runs[0])
    for column in ("seconds", "cpu_seconds", "peak_rss_mb", "load_before", "load_during",
                   "load_after"):
        row[column] = round(statistics.median(float(r[column]) for r in runs), 2)
    row["identical"] = all(r["identical"] is not False for r in runs) and (
        None if runs[0]["identical"] is None else True)
    row["runs"] = len(runs)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=float, default=1e7)
    parser.add_argument("--settings", default="20:10,3:5")
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 2,
                        help="Spark's local[N] (Ray's local cluster takes the machine's cores)")
    parser.add_argument("--engines", default="local,spark,ray")
    parser.add_argument("--data", default=None, help="folder for the generated pages (reused)")
    parser.add_argument("--driver-memory", default="8g",
                        help="the Spark driver JVM's heap (local mode: executors included)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds of the engines one after the other; the CSV has medians")
    parser.add_argument("--output", default=str(RESULTS / "bench_engines.csv"))
    parser.add_argument("--plot-only", action="store_true",
                        help="redraw the plot from the CSV of --output")
    args = parser.parse_args()
    if args.plot_only:
        with open(args.output, encoding="utf-8") as f:
            plot(list(csv.DictReader(f)), Path(args.output).with_suffix(".png"))
        return 0
    engines = args.engines.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(args.data) if args.data else Path(tmp) / "web"
        if not (data.exists() and any(data.glob("*.parquet"))):
            subprocess.run([sys.executable, str(HERE / "gen_big.py"), str(data),
                            str(int(args.tokens))], check=True)
        warm_up(engines, data, Path(tmp), args.cpus, args.driver_memory)
        rows = []
        for setting in args.settings.split(","):
            sigma, min_length = (int(x) for x in setting.split(":"))
            runs: dict[str, list[dict]] = {engine: [] for engine in engines}
            for _ in range(args.repeat):
                reference = None
                for engine in engines:
                    out = Path(tmp) / f"{engine}-{sigma}-{min_length}.tsv"
                    row = {"sigma": sigma, "min_length": min_length,
                           **run_engine(engine, data, sigma, min_length, args.cpus, out,
                                       args.driver_memory)}
                    if engine == "local":
                        reference = out.read_bytes()
                    row["identical"] = (None if reference is None
                                        else out.read_bytes() == reference)
                    runs[engine].append(row)
                    print(json.dumps(row), flush=True)
            rows += [median_row(runs[engine]) for engine in engines]
    RESULTS.mkdir(exist_ok=True)
    with open(args.output, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, COLUMNS)
        writer.writeheader()
        writer.writerows({k: r.get(k) for k in COLUMNS} for r in rows)
    plot(rows, Path(args.output).with_suffix(".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
