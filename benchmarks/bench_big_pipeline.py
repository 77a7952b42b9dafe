"""tokenize, phrases, report and clean at 100M to 1B tokens: whole CLI runs, wall and CPU seconds,
peak RSS, per prefix of a folder of Parquet parts.

Made for the 1,000,000,318-token web-like corpus of issue 14 (1,330,297 pages in 27 Parquet
parts, 3.7 GB); `corpus-miner generate web -o big/ --tokens 1e9` makes a similar one. A prefix of
N parts is a folder of links to the first N parts (sorted by name), so every size reads the same
pages. Each step is one process timed by its parent (os.wait4: wall, user + system CPU seconds,
peak RSS of that process alone). `phrases` mines from the same raw parts, so it is the mining
time that report and clean are compared with (both of them tokenize and mine first too).

    python benchmarks/bench_big_pipeline.py PARTS_DIR --parts 3 14 27 --steps tokenize
    python benchmarks/bench_big_pipeline.py PARTS_DIR --parts 3 27 --steps phrases report clean
    python benchmarks/bench_big_pipeline.py PARTS_DIR --parts 27 --stages   # in one process
    python benchmarks/bench_big_pipeline.py --plot-only

Appends rows to benchmarks/results/bench_big_pipeline.csv (one per run, with the git commit) and
redraws bench_big_pipeline.png from all rows: seconds and peak RSS bytes per token against
tokens, per step (the medians where a point was run more than once). The machine may be shared:
CPU seconds are what an idle machine's cores would need; check `free -g` first (report and clean
at 1B tokens peak near 10 GB).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
CSV = RESULTS / "bench_big_pipeline.csv"
STAGES_CSV = RESULTS / "bench_big_pipeline_stages.csv"
STEPS = ("tokenize", "phrases", "report", "clean")
FIELDS = ["step", "parts", "documents", "tokens", "text_bytes", "bytes_per_token", "sigma",
          "min_length", "threads", "wall_s", "cpu_s", "peak_rss_mb", "rss_bytes_per_token",
          "cpu_ns_per_token", "tokens_per_wall_s", "load_before", "commit"]


def prefix_folder(parts_dir: Path, n: int, scratch: Path) -> Path:
    parts = sorted(p for p in parts_dir.iterdir() if p.name.endswith(".parquet"))
    if n > len(parts):
        raise SystemExit(f"{parts_dir} has {len(parts)} parts, asked for {n}")
    folder = scratch / f"prefix-{n}"
    folder.mkdir(exist_ok=True)
    for part in parts[:n]:
        link = folder / part.name
        if not link.exists():
            link.symlink_to(part.resolve())
    return folder


def command(step: str, inputs: Path, out: Path, sigma: int, min_length: int) -> list[str]:
    cli = [str(Path(sys.executable).with_name("corpus-miner"))]
    mining = ["--sigma", str(sigma), "--min-length", str(min_length)]
    if step == "tokenize":
        return cli + ["tokenize", str(inputs), "-o", str(out / "corpus")]
    if step == "phrases":
        return cli + ["phrases", str(inputs), *mining, "-o", str(out / "phrases.jsonl")]
    if step == "report":
        return cli + ["report", str(inputs), *mining, "-o", str(out / "report.html"),
                      "--json", str(out / "report.json")]
    return cli + ["clean", str(inputs), *mining, "-o", str(out / "clean.parquet")]


def timed(argv: list[str]) -> dict:
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status:
        raise SystemExit(f"{' '.join(argv)} failed ({status}):\n{stderr}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mb": usage.ru_maxrss / 1024}


def corpus_figures(corpus: Path) -> dict:
    """Documents, tokens and text bytes, from a saved corpus' metadata."""
    meta = json.loads((corpus / "metadata.json").read_text())
    return {"documents": meta["n_docs"], "tokens": meta["n_tokens"],
            "text_bytes": meta["read_stats"]["bytes"]}


def tokenized_once(inputs: Path, scratch: Path) -> dict:
    out = scratch / f"{inputs.name}.corpus"
    subprocess.run(command("tokenize", inputs, out, 0, 0), check=True, capture_output=True)
    figures = corpus_figures(out / "corpus")
    shutil.rmtree(out)
    return figures


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


# One process, every stage of report and clean after one load and one mining run: the
# second-pass costs at a size where running each command on its own takes too long.
_STAGES = """
import json, resource, sys, time
from corpus_miner.corpus import load_corpus
from corpus_miner.io import read_documents
from corpus_miner.phrases import BloomSpan
from corpus_miner.coverage.clean import Cleaner
from corpus_miner.coverage.coverage import Coverage
from corpus_miner.coverage.report import CoverageReport
path, sigma, min_length, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
clock, cpu = time.perf_counter(), time.process_time()
def lap(stage):
    global clock, cpu
    now, used = time.perf_counter(), time.process_time()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"stage": stage, "wall_s": round(now - clock, 2),
                      "cpu_s": round(used - cpu, 2), "peak_rss_mb": round(peak, 1)}), flush=True)
    clock, cpu = now, used
corpus = load_corpus([path]); lap("load")
print(json.dumps({"documents": corpus.n_docs, "tokens": corpus.n_tokens,
                  "text_bytes": corpus.read_stats.bytes}), flush=True)
miner = BloomSpan(sigma=sigma, min_length=min_length).fit(corpus); lap("mine")
coverage = Coverage.from_miner(miner, corpus); del miner; lap("coverage")
report = CoverageReport(coverage).collect(read_documents([path]), corpus.doc_ids)
lap("report_contexts")
report.write_html(out + "/report.html"); report.write_json(out + "/report.json")
lap("report_write")
Cleaner().fit(corpus, coverage).write([path], out + "/clean.parquet"); lap("clean_write")
"""


def stages(args) -> None:
    """The in-process stage breakdown (see _STAGES) for each prefix; rows in *_stages.csv."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-big-", dir=args.scratch))
    try:
        for n in args.parts:
            inputs = prefix_folder(args.parts_dir, n, scratch)
            load = os.getloadavg()[0]
            child = subprocess.run([sys.executable, "-c", _STAGES, str(inputs), str(args.sigma),
                                    str(args.min_length), str(scratch)], capture_output=True,
                                   text=True)
            if child.returncode:
                raise SystemExit(f"stages failed:\n{child.stderr}")
            lines = [json.loads(line) for line in child.stdout.splitlines()]
            figures = next(line for line in lines if "tokens" in line)
            for stage in (line for line in lines if "stage" in line):
                row = {"parts": n, **figures, **stage, "sigma": args.sigma,
                       "min_length": args.min_length, "load_before": round(load, 1),
                       "commit": args.commit}
                append(row, STAGES_CSV)
                print(row, flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run(args) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="bench-big-", dir=args.scratch))
    try:
        for n in args.parts:
            inputs = prefix_folder(args.parts_dir, n, scratch)
            figures = None
            for _ in range(args.repeats):
                for step in [s for s in STEPS if s in args.steps]:
                    out = scratch / f"out-{step}"
                    out.mkdir(exist_ok=True)
                    load = os.getloadavg()[0]
                    result = timed(command(step, inputs, out, args.sigma, args.min_length))
                    if figures is None:
                        figures = (corpus_figures(out / "corpus") if step == "tokenize"
                                   else tokenized_once(inputs, scratch))
                    shutil.rmtree(out)
                    tokens = figures["tokens"]
                    row = {"step": step, "parts": n, **figures,
                           "bytes_per_token": round(figures["text_bytes"] / tokens, 3),
                           "sigma": args.sigma, "min_length": args.min_length,
                           "threads": len(os.sched_getaffinity(0)),
                           "wall_s": round(result["wall_s"], 2), "cpu_s": round(result["cpu_s"], 2),
                           "peak_rss_mb": round(result["peak_rss_mb"], 1),
                           "rss_bytes_per_token": round(result["peak_rss_mb"] * 2**20 / tokens, 3),
                           "cpu_ns_per_token": round(result["cpu_s"] / tokens * 1e9, 1),
                           "tokens_per_wall_s": round(tokens / result["wall_s"]),
                           "load_before": round(load, 1), "commit": args.commit}
                    append(row, CSV)
                    print(f"{step:9s} {n:3d} parts {tokens:>14,} tokens  "
                          f"wall {row['wall_s']:8.1f} s  cpu {row['cpu_s']:8.1f} s  "
                          f"peak {row['peak_rss_mb']:8.0f} MB  "
                          f"load {load:.1f}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def append(row: dict, path: Path = CSV) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS if path == CSV else list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)


def plot() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(CSV, newline="") as f:
        rows = list(csv.DictReader(f))
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(15, 4))
    for step in STEPS:
        points: dict[int, list[dict]] = {}
        for row in rows:
            if row["step"] == step:
                points.setdefault(int(row["tokens"]), []).append(row)
        if not points:
            continue
        tokens = sorted(points)
        med = {key: [statistics.median(float(r[key]) for r in points[t]) for t in tokens]
               for key in ("wall_s", "cpu_s", "cpu_ns_per_token", "rss_bytes_per_token")}
        line, = left.plot(tokens, med["cpu_s"], "o-", label=f"{step} CPU")
        left.plot(tokens, med["wall_s"], "x--", color=line.get_color(), label=f"{step} wall")
        middle.plot(tokens, med["cpu_ns_per_token"], "o-", color=line.get_color(), label=step)
        right.plot(tokens, med["rss_bytes_per_token"], "o-", color=line.get_color(), label=step)
    left.set(xscale="log", yscale="log", xlabel="tokens", ylabel="seconds",
             title="time (medians; wall on a shared 2-core machine)")
    middle.set(xscale="log", xlabel="tokens", ylabel="CPU ns per token", ylim=(0, None),
               title="cost per token")
    right.set(xscale="log", xlabel="tokens", ylabel="peak RSS bytes per token", ylim=(0, None),
              title="memory")
    left.legend(fontsize=7)
    middle.legend(fontsize=7)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / "bench_big_pipeline.png", dpi=120)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts_dir", type=Path, nargs="?", help="folder of Parquet parts")
    parser.add_argument("--parts", type=int, nargs="+", default=[3, 14, 27],
                        help="prefix sizes in parts (default 3 14 27: ~100M, 500M, 1B tokens)")
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS))
    parser.add_argument("--sigma", type=int, default=20)
    parser.add_argument("--min-length", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--scratch", type=Path, default=None,
                        help="folder for outputs (up to 2x the corpus in tokens; default /tmp)")
    parser.add_argument("--commit", default=None,
                        help="commit measured, for the CSV (default: this checkout's HEAD)")
    parser.add_argument("--stages", action="store_true",
                        help="instead of the CLI runs: one process per prefix timing load, mine, "
                        "coverage, report contexts, report write and clean write")
    parser.add_argument("--plot-only", action="store_true")
    args = parser.parse_args(argv)
    args.commit = args.commit or commit()
    if not args.plot_only:
        if args.parts_dir is None:
            parser.error("PARTS_DIR is required unless --plot-only")
        if args.stages:
            stages(args)
            return 0
        run(args)
    plot()
    return 0


if __name__ == "__main__":
    sys.exit(main())
