"""Two source trees of corpus-miner side by side: the first run's compile of `phrases` (the
command that compiles most), and its warm run on a larger input, alternating between the trees in
every repeat (a shared machine's load then weighs on both alike).

Compile: phrases on --small with an empty numba cache of the tree's own and the prewarm process
off (CORPUS_MINER_PREWARM=0), minus the same run again with the cache filled (CPU and wall
seconds). Warm: phrases on --big, the fastest of two runs, with the CPU seconds of each stage that
`--stats` reports (tokenize, growth, ...).

A tree is a folder holding the package (`src` of a checkout, or of an older commit:
`git archive COMMIT src | tar -x -C DIR`); it goes first on PYTHONPATH, so one virtualenv serves
both.

Usage: python benchmarks/bench_compile_ab.py --base DIR/src --new src --small SMALL --big BIG
       [--repeats 3] [--python PATH] [--tag NAME] [-- phrases options]
Writes benchmarks/results/bench_compile_ab.csv (one row per tree and repeat) and prints medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_first_run import write_csv

RESULTS = Path(__file__).resolve().parent / "results"


def run(python: str, argv: list[str], env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of `python -m corpus_miner ARGV` in a fresh process."""
    start = time.perf_counter()
    child = subprocess.Popen([python, "-m", "corpus_miner", *argv], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise RuntimeError(f"corpus-miner {' '.join(argv)} failed: {child.stderr.read()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def measure(args, tree: str, work: Path) -> dict:
    cache = work / "numba-cache"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve()), "NUMBA_CACHE_DIR": str(cache),
           "CORPUS_MINER_PREWARM": "0"}
    small = ["phrases", args.small, *args.options, "-o", str(work / "small.tsv")]
    cold_wall, cold_cpu = run(args.python, small, env)
    warm_wall, warm_cpu = run(args.python, small, env)
    stats = work / "stats.json"
    big = ["phrases", args.big, *args.options, "-o", str(work / "big.tsv"), "--stats", str(stats)]
    runs = []
    for _ in range(2):
        runs.append((*run(args.python, big, env), json.loads(stats.read_text())))
    wall, cpu, figures = min(runs, key=lambda r: r[0])
    row = {"compile_cpu_s": cold_cpu - warm_cpu, "compile_wall_s": cold_wall - warm_wall,
           "big_wall_s": wall, "big_cpu_s": cpu, "load_1min": os.getloadavg()[0]}
    for stage, seconds in figures.get("cpu_seconds", {}).items():
        row[f"{stage}_cpu_s"] = seconds
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the tree to compare against")
    parser.add_argument("--new", required=True)
    parser.add_argument("--small", required=True, help="input of the compile runs")
    parser.add_argument("--big", required=True, help="input of the warm runs")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--tag", default="")
    parser.add_argument("--results", default=str(RESULTS))
    parser.add_argument("options", nargs="*", help="phrases' options (after --; default "
                        "--sigma 20 --min-length 10)")
    args = parser.parse_args(argv)
    args.options = args.options or ["--sigma", "20", "--min-length", "10"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="compile-ab-") as tmp:
        for repeat in range(args.repeats):
            for name in ("base", "new"):
                row = {"tag": args.tag, "tree": name, "repeat": repeat,
                       "options": " ".join(args.options),
                       **measure(args, getattr(args, name), Path(tmp) / name)}
                rows.append(row)
                print(row, flush=True)
    for name in ("base", "new"):
        mine = [r for r in rows if r["tree"] == name]
        print(name, {key: round(statistics.median(r[key] for r in mine), 3) for key in mine[0]
                     if key.endswith("_s")})
    Path(args.results).mkdir(parents=True, exist_ok=True)
    write_csv(Path(args.results) / "bench_compile_ab.csv", rows, append=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
