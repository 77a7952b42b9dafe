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
core; CPU: the work done). With --compare-src OTHER/src (another checkout's sources, e.g. the
commit before a change), its start-up and CLI run in the same round robin, and the records both
CLIs wrote are compared as JSON values. The load average is recorded: on a shared machine, wall
times grow with it, CPU times less so.

Usage: python benchmarks/bench_dedup_cli.py [--repeats 3] [--work DIR] [--compare-src OTHER/src]
Writes benchmarks/results/bench_dedup_cli.csv.
"""

from __future__ import annotations

import argparse
import itertools
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


def run(command: list[str], src: str | None = None) -> dict:
    """Wall seconds, CPU seconds (user + sys) and peak RSS (bytes) of one child process."""
    env = dict(os.environ, PYTHONPATH=src) if src else None
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    out, err = child.stdout.read(), child.stderr.read()
    if status:
        raise RuntimeError(f"{' '.join(command)} failed: {err}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_rss": usage.ru_maxrss * 1024, "out": out, "err": err}


def same_records(a: Path, b: Path) -> bool:
    """Both files hold the same records, line by line, as JSON values."""
    with a.open("rb") as first, b.open("rb") as second:
        return all(x is not None and y is not None and json.loads(x) == json.loads(y)
                   for x, y in itertools.zip_longest(first, second))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/corpus-miner-bench"))
    parser.add_argument("--compare-src", default=None,
                        help="another checkout's src folder, timed the same way (e.g. before)")
    args = parser.parse_args(argv)
    dataset = build_dataset(args.work)
    one = args.work / "one-document.jsonl"
    with dataset.open(encoding="utf-8") as handle:
        one.write_text(handle.readline(), encoding="utf-8")
    cli = [sys.executable, "-m", "corpus_miner", "dedup", "--annotate", "-o"]
    commands = {"start-up": (cli + [str(args.work / "out-one.jsonl"), str(one)], None),
                "CLI": (cli + [str(args.work / "out.jsonl"), str(dataset)], None),
                "in-process": ([sys.executable, "-c", IN_PROCESS, str(dataset)], None)}
    if args.compare_src:
        src = str(Path(args.compare_src).resolve())
        commands["start-up (--compare-src)"] = (cli + [str(args.work / "out-one-other.jsonl"),
                                                       str(one)], src)
        commands["CLI (--compare-src)"] = (cli + [str(args.work / "out-other.jsonl"),
                                                  str(dataset)], src)
    for command, src in commands.values():  # JIT caches written once, outside the measurements
        if command[-1] == str(one):
            run(command, src)
    load = [os.getloadavg()[0]]
    runs: dict[str, list[dict]] = {name: [] for name in commands}
    for _ in range(args.repeats):
        for name, (command, src) in commands.items():
            runs[name].append(run(command, src))
    load.append(os.getloadavg()[0])
    median = {name: {key: statistics.median(r[key] for r in results)
                     for key in ("wall", "cpu", "peak_rss")} for name, results in runs.items()}
    inner = [json.loads(r["out"]) for r in runs["in-process"]]
    median["in-process"]["wall"] = statistics.median(r["wall"] for r in inner)  # the pipeline alone
    median["in-process"]["cpu"] = statistics.median(r["cpu"] for r in inner)
    same = (same_records(args.work / "out.jsonl", args.work / "out-other.jsonl")
            if args.compare_src else None)
    rows = []
    for name, figures in median.items():
        row = {"what": name, "wall_seconds": round(figures["wall"], 3),
               "cpu_seconds": round(figures["cpu"], 3),
               "peak_rss_mb": round(figures["peak_rss"] / 2**20, 1)}
        if name.startswith("CLI"):
            startup = median[name.replace("CLI", "start-up")]
            beyond_wall = figures["wall"] - startup["wall"]
            beyond_cpu = figures["cpu"] - startup["cpu"]
            in_process = median["in-process"]
            row |= {"beyond_startup_wall": round(beyond_wall, 3),
                    "beyond_startup_cpu": round(beyond_cpu, 3),
                    "ratio_to_in_process_wall": round(beyond_wall / in_process["wall"], 2),
                    "ratio_to_in_process_cpu": round(beyond_cpu / in_process["cpu"], 2)}
            if same is not None:
                row["same_records_both_clis"] = same
        row["load_average"] = f"{load[0]:.1f}-{load[1]:.1f}"
        rows.append(row)
        print(", ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    duplicates = {r["duplicates"] for r in inner}
    last_cli = runs["CLI"][-1]
    print(f"in-process duplicates: {duplicates}; "
          f"CLI: {(last_cli['out'] + last_cli['err']).strip()}")
    if same is not None:
        print(f"both CLIs wrote the same records (as JSON values): {same}")
    from csv_table import write_csv
    write_csv(RESULTS / "bench_dedup_cli.csv", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
