"""SparkBloomSpan vs the local engine: time, peak memory, shuffle bytes, same answer.

    python benchmarks/bench_spark_bloomspan.py [--docs DIR] --web BIG --web-parts 3 \\
        [--settings 20:10,3:5] [--master local[2]] [--driver-memory 8g]

Datasets: every documentation corpus of --docs (*.jsonl.gz, read together; by default the folder
`benchmarks/corpora/build_corpora.sh data/corpora` builds, see data_paths.py) and the first
--web-parts Parquet parts of --web (generated web pages: `python benchmarks/gen_big.py BIG 1e9`).
--no-docs skips the documentation corpora. For each dataset and (sigma, min_length):

* local: `corpus-miner phrases INPUT... --sigma S --min-length L -o local.tsv` as one process;
* spark: one process that starts a local Spark session, reads the inputs with Spark
  (spark.read.json / parquet), fits SparkBloomSpan and writes phrases_ to spark.tsv.

Both processes are sampled every 0.2 s with psutil: peak resident memory of the whole process
tree, and for Spark separately of the Python driver, the JVM (driver and executors in local
mode) and the Python workers (executor side). Shuffle bytes are the sum of shuffleWriteBytes
over all stages (Spark's REST API at the end of the run). `identical` compares the two TSV files
byte for byte. Columns of benchmarks/results/bench_spark_bloomspan.csv:

  dataset, tokens, documents, sigma, min_length, engine, seconds (whole process),
  fit_seconds (Spark: fit alone; local: the miner's own total), task_seconds (Spark: the run
  time of all tasks, summed: what a cluster's executors spend), cpu_seconds (user + system CPU
  of the whole process tree), load_before and load_during (the machine's 1-minute load average
  just before the run and its mean while it ran: the run's own processes included, so on this
  2-core machine anything above ~2 is other users' work), peak_rss_mb (process tree),
  driver_rss_mb, jvm_rss_mb, workers_rss_mb, shuffle_bytes, shuffle_bytes_per_token, rounds,
  phrases, identical, stage_seconds (JSON: seconds per stage of the fit), stats (JSON),
  java_options (--java-options)

Also writes bench_spark_bloomspan.png (time and memory per run).
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from csv_table import write_csv  # noqa: E402
from data_paths import CORPORA  # noqa: E402

RESULTS = HERE / "results"
COLUMNS = ["dataset", "tokens", "documents", "sigma", "min_length", "engine", "seconds",
           "fit_seconds", "task_seconds", "cpu_seconds", "load_before", "load_during",
           "peak_rss_mb", "driver_rss_mb", "jvm_rss_mb", "workers_rss_mb", "shuffle_bytes",
           "shuffle_bytes_per_token", "rounds", "phrases", "identical", "stage_seconds", "stats",
           "java_options"]


# -- the Spark run, in its own process ----------------------------------------------------------
def spark_worker(inputs: list[str], sigma: int, min_length: int, master: str,
                 driver_memory: str, out: str, report: str, java_options: str) -> None:
    import urllib.request

    from corpus_miner.phrases.result import write_phrases
    from corpus_miner.spark import SparkBloomSpan, local_session

    started = time.perf_counter()
    spark = local_session(master, app_name="bench-spark-bloomspan",
                          spark__driver__memory=driver_memory,
                          **({"spark__driver__extraJavaOptions": java_options}
                             if java_options else {}),
                          spark__ui__enabled="true", spark__ui__port="4048",
                          spark__sql__shuffle__partitions="8",
                          spark__sql__adaptive__enabled="false")
    spark.sparkContext.setLogLevel("ERROR")
    if all(path.endswith(".parquet") for path in inputs):
        df = spark.read.parquet(*inputs).select("id", "text")
    else:
        df = spark.read.schema("id string, text string").json(inputs)
    fit_started = time.perf_counter()
    model = SparkBloomSpan(sigma=sigma, min_length=min_length).fit(df)
    fit_seconds = time.perf_counter() - fit_started
    write_phrases(model.table_, out)
    ui = spark.sparkContext.uiWebUrl
    app = spark.sparkContext.applicationId
    with urllib.request.urlopen(f"{ui}/api/v1/applications/{app}/stages?status=complete") as r:
        stages = json.load(r)
    shuffle = sum(stage.get("shuffleWriteBytes", 0) for stage in stages)
    task_seconds = sum(stage.get("executorRunTime", 0) for stage in stages) / 1000
    cpu_seconds = sum(stage.get("executorCpuTime", 0) for stage in stages) / 1e9
    Path(report).write_text(json.dumps({
        "fit_seconds": fit_seconds, "seconds_in_process": time.perf_counter() - started,
        "shuffle_bytes": shuffle, "task_seconds": task_seconds, "jvm_cpu_seconds": cpu_seconds,
        "stats": model.stats_}))
    spark.stop()


# -- sampling a process tree -------------------------------------------------------------------
class TreeSampler:
    """Peak RSS of a process and its descendants, also split by kind (Python driver, JVM, Python
    workers), their CPU seconds and the machine's load average, sampled every `interval` seconds.
    A process's CPU time is its last sample (a short-lived child can lose up to one interval)."""

    def __init__(self, pid: int, interval: float = 0.2):
        import psutil

        self.root = psutil.Process(pid)
        self.peaks = {"tree": 0.0, "driver": 0.0, "jvm": 0.0, "workers": 0.0}
        self.cpu: dict[int, float] = {}
        self.loads: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(interval,), daemon=True)
        self._thread.start()

    def _run(self, interval: float) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                procs = [self.root] + self.root.children(recursive=True)
                sizes = {"tree": 0.0, "driver": 0.0, "jvm": 0.0, "workers": 0.0}
                for proc in procs:
                    try:
                        rss = proc.memory_info().rss / 2**20
                        name = proc.name()
                        times = proc.cpu_times()
                    except psutil.Error:
                        continue
                    self.cpu[proc.pid] = times.user + times.system
                    sizes["tree"] += rss
                    if proc.pid == self.root.pid:
                        sizes["driver"] += rss
                    elif name.startswith("java"):
                        sizes["jvm"] += rss
                    else:
                        sizes["workers"] += rss
                for key, value in sizes.items():
                    self.peaks[key] = max(self.peaks[key], value)
                self.loads.append(os.getloadavg()[0])
            except psutil.Error:
                pass
            self._stop.wait(interval)

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return {**self.peaks, "cpu_seconds": sum(self.cpu.values()),
                "load_during": sum(self.loads) / max(len(self.loads), 1)}


def run_sampled(command: list[str], env: dict | None = None) -> tuple[float, dict]:
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    proc = subprocess.Popen(command, env=env)
    sampler = TreeSampler(proc.pid)
    code = proc.wait()
    peaks = {**sampler.stop(), "load_before": load_before}
    if code != 0:
        raise SystemExit(f"{' '.join(command)} failed with exit code {code}")
    return time.perf_counter() - started, peaks


def measure(dataset: str, inputs: list[str], sigma: int, min_length: int, args,
            work: Path) -> list[dict]:
    local_out, spark_out = work / "local.tsv", work / "spark.tsv"
    local_stats, spark_report = work / "local.json", work / "spark.json"
    cli = ("import sys; from corpus_miner.cli import entry_point; "
           "sys.argv[0] = 'corpus-miner'; entry_point()")
    local_cmd = [sys.executable, "-c", cli, "phrases", *inputs, "--sigma",
                 str(sigma), "--min-length", str(min_length), "-o", str(local_out), "--stats",
                 str(local_stats)]
    local_seconds, local_peaks = run_sampled(local_cmd)
    stats = json.loads(local_stats.read_text())
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    spark_cmd = [sys.executable, __file__, "--spark-worker", json.dumps(
        [inputs, sigma, min_length, args.master, args.driver_memory, str(spark_out),
         str(spark_report), args.java_options])]
    spark_seconds, spark_peaks = run_sampled(spark_cmd, env)
    report = json.loads(spark_report.read_text())
    identical = local_out.read_bytes() == spark_out.read_bytes()
    tokens, documents = stats["tokens"], stats["documents"]
    spark_stats = report["stats"]
    base = {"dataset": f"{dataset} {args.label}".strip(), "java_options": args.java_options,
            "tokens": tokens, "documents": documents, "sigma": sigma,
            "min_length": min_length, "identical": identical, "phrases": stats["phrases"]}
    def machine(peaks: dict) -> dict:
        return {"cpu_seconds": round(peaks["cpu_seconds"], 1),
                "load_before": round(peaks["load_before"], 2),
                "load_during": round(peaks["load_during"], 2)}

    return [
        {**base, **machine(local_peaks), "engine": "local", "seconds": round(local_seconds, 2),
         "fit_seconds": round(stats["seconds_total"], 2), "task_seconds": "",
         "peak_rss_mb": round(local_peaks["tree"]), "driver_rss_mb": round(local_peaks["driver"]),
         "jvm_rss_mb": 0, "workers_rss_mb": 0, "shuffle_bytes": 0, "shuffle_bytes_per_token": 0,
         "rounds": "", "stage_seconds": json.dumps(stats.get("seconds", {})), "stats": ""},
        {**base, **machine(spark_peaks), "engine": "spark", "seconds": round(spark_seconds, 2),
         "fit_seconds": round(report["fit_seconds"], 2),
         "task_seconds": round(report["task_seconds"], 1),
         "peak_rss_mb": round(spark_peaks["tree"]), "driver_rss_mb": round(spark_peaks["driver"]),
         "jvm_rss_mb": round(spark_peaks["jvm"]), "workers_rss_mb": round(spark_peaks["workers"]),
         "shuffle_bytes": report["shuffle_bytes"],
         "shuffle_bytes_per_token": round(report["shuffle_bytes"] / max(tokens, 1), 2),
         "rounds": spark_stats["rounds"], "stage_seconds": json.dumps(
             {k: round(v, 2) for k, v in spark_stats["seconds"].items()}),
         "stats": json.dumps({k: v for k, v in spark_stats.items() if k != "seconds"})}]


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def label(row: dict) -> tuple:  # rows read back from the CSV hold strings
        return row["dataset"], int(row["sigma"]), int(row["min_length"])

    labels = sorted({label(r) for r in rows})
    # horizontal bars: one line per dataset label, which may be long ("web3 this release")
    fig, axes = plt.subplots(1, 2, figsize=(12, 1.2 + 0.42 * len(labels)), sharey=True)
    height = 0.38
    for i, engine in enumerate(("local", "spark")):
        chosen = {label(r): r for r in rows if r["engine"] == engine}
        ys = [j + (i - 0.5) * height for j in range(len(labels))]
        axes[0].barh(ys, [float(chosen[label]["seconds"]) for label in labels], height,
                     label=engine)
        axes[1].barh(ys, [float(chosen[label]["peak_rss_mb"]) for label in labels], height,
                     label=engine)
    axes[0].set_yticks(range(len(labels)))
    axes[0].set_yticklabels([f"{d}  σ{s}/L{m}" for d, s, m in labels], fontsize=8)
    axes[0].invert_yaxis()
    titles = ("whole-process seconds", "peak RSS of the process tree (MB)")
    for ax, title in zip(axes, titles, strict=True):
        ax.set_title(title)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--spark-worker":
        spark_worker(*json.loads(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", default=str(CORPORA),
                        help="folder of the documentation corpora (*.jsonl.gz)")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--web", help="folder of generated web pages (*.parquet)")
    parser.add_argument("--web-parts", type=int, default=3)
    parser.add_argument("--settings", default="20:10,3:5")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--java-options", default="",
                        help="more options for Spark's driver JVM (after local_session's own, "
                        "so they win), e.g. Java's default JIT thresholds to compare")
    parser.add_argument("--label", default="", help="added to the dataset column")
    parser.add_argument("--out", default=str(RESULTS / "bench_spark_bloomspan.csv"))
    parser.add_argument("--append", action="store_true",
                        help="add the rows to --out (the plot shows all of them)")
    args = parser.parse_args()
    settings = [tuple(int(x) for x in item.split(":")) for item in args.settings.split(",")]
    datasets = []
    if not args.no_docs:
        docs = sorted(glob.glob(os.path.join(args.docs, "*.jsonl.gz")))
        if not docs:
            raise SystemExit(f"no *.jsonl.gz in {args.docs}: build the corpora with "
                             f"`benchmarks/corpora/build_corpora.sh {args.docs}`")
        datasets.append(("docs", docs))
    if args.web:
        parts = sorted(glob.glob(os.path.join(args.web, "*.parquet")))[:args.web_parts]
        if not parts:
            raise SystemExit(f"no *.parquet in {args.web} (or --web-parts below 1)")
        datasets.append((f"web{len(parts)}", parts))
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-spark-bloomspan-") as tmp:
        for dataset, inputs in datasets:
            for sigma, min_length in settings:
                found = measure(dataset, inputs, sigma, min_length, args, Path(tmp))
                for row in found:
                    shown = COLUMNS[:COLUMNS.index("stage_seconds")]
                    print(json.dumps({k: row[k] for k in shown}), flush=True)
                rows += found
    out = Path(args.out)
    if args.append and out.exists():
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f)) + rows
    write_csv(out, rows, COLUMNS)
    plot(rows, out.with_suffix(".png"))


if __name__ == "__main__":
    main()
