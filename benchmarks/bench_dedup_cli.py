"""What the `dedup` command costs beyond the in-process pipeline, on the docpages-5466 data set
of bench_dedup_real.py (5,466 real documentation pages as JSONL, 64 MB).

Three commands, each a fresh process, round robin, medians of --repeats:
- start-up: `corpus-miner dedup ONE.jsonl -o out.jsonl --annotate` on a one-document file
  (interpreter, imports, JIT cache loads: what every invocation pays);
- CLI: `corpus-miner dedup docpages-5466.jsonl -o out.jsonl --annotate` (reads the input for the
  band keys, reads it again to write every record with is_duplicate);
- in-process: a Python process that loads the texts into a list, warms up on 20 of them, then
  times LSHBloom().deduplicate(texts) (texts in memory to duplicate flags).
Reported: wall and CPU (user + sys) seconds and peak RSS of each process; "beyond start-up" is the
CLI minus the start-up, compared with the in-process time (wall: the CLI reads ahead on a second
core; CPU: the work done).

Usage: python benchmarks/bench_dedup_cli.py [--repeats 3] [--work DIR]
Writes benchmarks/results/bench_dedup_cli.csv.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_dedup_real import build_dataset  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
IN_PROCESS = r"""
import json, sys, time
from corpus_miner.dedup import LSHBloom
texts = [json.loads(line)["text"] for line in open(sys.argv[1], encoding="utf-8")]
LSHBloom().deduplicate(texts[:20])
wall, cpu = time.perf_counter(), time.process_time()
flags = LSHBloom().deduplicate(texts).is_duplicate
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                  "duplicates": int(flags.sum())}))
"""


def run(command: list[str]) -> dict:
    """Wall seconds, CPU seconds (user + sys) and peak RSS (bytes) of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    out, err = child.stdout.read(), child.stderr.read()
    if status:
        raise RuntimeError(f"{' '.join(command)} failed: {err}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_rss": usage.ru_maxrss * 1024, "out": out, "err": err}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/corpus-miner-bench"))
    args = parser.parse_args(argv)
    dataset = build_dataset(args.work)
    one = args.work / "one-document.jsonl"
    with dataset.open(encoding="utf-8") as handle:
        one.write_text(handle.readline(), encoding="utf-8")
    cli = [str(Path(sys.executable).with_name("corpus-miner")), "dedup", "--annotate", "-o"]
    commands = {"start-up": cli + [str(args.work / "out-one.jsonl"), str(one)],
                "CLI": cli + [str(args.work / "out.jsonl"), str(dataset)],
                "in-process": [sys.executable, "-c", IN_PROCESS, str(dataset)]}
    run(commands["start-up"])  # JIT cache written once, outside the measurements
    runs: dict[str, list[dict]] = {name: [] for name in commands}
    for _ in range(args.repeats):
        for name, command in commands.items():
            runs[name].append(run(command))
    median = {name: {key: statistics.median(r[key] for r in results)
                     for key in ("wall", "cpu", "peak_rss")} for name, results in runs.items()}
    inner = [json.loads(r["out"]) for r in runs["in-process"]]
    median["in-process"]["wall"] = statistics.median(r["wall"] for r in inner)  # the pipeline alone
    median["in-process"]["cpu"] = statistics.median(r["cpu"] for r in inner)
    rows = []
    for name, figures in median.items():
        row = {"what": name, "wall_seconds": round(figures["wall"], 3),
               "cpu_seconds": round(figures["cpu"], 3),
               "peak_rss_mb": round(figures["peak_rss"] / 2**20, 1)}
        if name == "CLI":
            beyond_wall = figures["wall"] - median["start-up"]["wall"]
            beyond_cpu = figures["cpu"] - median["start-up"]["cpu"]
            row |= {"beyond_startup_wall": round(beyond_wall, 3),
                    "beyond_startup_cpu": round(beyond_cpu, 3),
                    "ratio_to_in_process_wall": round(beyond_wall / median["in-process"]["wall"], 2),
                    "ratio_to_in_process_cpu": round(beyond_cpu / median["in-process"]["cpu"], 2)}
        rows.append(row)
        print(", ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    duplicates = {r["duplicates"] for r in inner}
    print(f"in-process duplicates: {duplicates}; CLI: {(runs['CLI'][-1]['out'] + runs['CLI'][-1]['err']).strip()}")
    from eval_dedup_quality import write_csv
    write_csv(RESULTS / "bench_dedup_cli.csv", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
