"""What keeping line starts costs: tokenizing and mining, this build against a baseline source
tree, whole CLI processes, alternating on the same machine.

    python benchmarks/bench_line_phrases.py --tokens 1e8 --baseline-src OLD/src --work /tmp/lp

Generates `corpus-miner generate web --tokens N` (the shape of bench_generate.py) once, then per
repeat runs, each as its own process, first with the baseline source tree on PYTHONPATH and then
with this one: `tokenize INPUT -o DIR` (the scan now also records line starts) and `phrases INPUT
--sigma 20 --min-length 10` (whose answer must not change; it is compared); then this build's
`phrases ... --min-line-length 3` (the whole-line phrases on top). Every process is warmed up
once on a small corpus first (numba's cache). Writes benchmarks/results/bench_line_phrases.csv:
one row per run with wall and CPU seconds (the process tree's), peak RSS and the load average.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from csv_table import write_csv

RESULTS = Path(__file__).resolve().parent / "results"
SHAPE = ["--sites", "20000", "--vocabulary", "400000", "--body-words", "450"]
MINING = ["--sigma", "20", "--min-length", "10"]


def run(args: list[str], src: Path | None) -> dict:
    """One corpus-miner process: wall, CPU (its children included) and peak RSS."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    command = [sys.executable, "-c", "import sys; from corpus_miner.cli import main; "
               "sys.exit(main(sys.argv[1:]))", *args]
    started = time.perf_counter()
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args)} failed: {err[-2000:]}")
    return {"wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024), "load": round(os.getloadavg()[0], 1)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=float, default=1e8)
    parser.add_argument("--baseline-src", type=Path, required=True,
                        help="src folder of the build to compare with (e.g. main's)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--work", type=Path, required=True, help="scratch folder")
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_line_phrases.csv")
    args = parser.parse_args(argv)
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / f"web-{args.tokens:.0e}"
    if not (corpus / "manifest.json").exists() and not list(corpus.glob("*.parquet")):
        run(["generate", "web", "--tokens", f"{args.tokens:.0f}", "--seed", "1", "-o",
             str(corpus), *SHAPE], None)
    inputs = sorted(str(p) for p in corpus.glob("*.parquet"))
    small = work / "warm.jsonl.gz"
    if not small.exists():
        run(["generate", "web", "--docs", "300", "-o", str(small)], None)
    builds = {"baseline": args.baseline_src, "this": None}
    for src in builds.values():  # fill each build's numba cache before timing
        run(["phrases", str(small), *MINING, "-o", str(work / "warm.tsv")], src)
        run(["tokenize", str(small), "-o", str(work / "warm-corpus")], src)
        shutil.rmtree(work / "warm-corpus")
    rows = []
    for repeat in range(args.repeats):
        for step in ("tokenize", "phrases"):
            answers = {}
            for build, src in builds.items():
                if step == "tokenize":
                    target = work / f"corpus-{build}"
                    shutil.rmtree(target, ignore_errors=True)
                    figures = run(["tokenize", *inputs, "-o", str(target)], src)
                    shutil.rmtree(target)
                else:
                    target = work / f"phrases-{build}.tsv"
                    figures = run(["phrases", *inputs, *MINING, "-o", str(target)], src)
                    answers[build] = target.read_bytes()
                rows.append({"repeat": repeat, "step": step, "build": build, **figures})
                print(rows[-1], file=sys.stderr)
            if answers and answers["baseline"] != answers["this"]:
                raise SystemExit("phrases without --min-line-length differ between the builds")
        figures = run(["phrases", *inputs, *MINING, "--min-line-length", "3", "-o",
                       str(work / "phrases-lines.tsv")], None)
        rows.append({"repeat": repeat, "step": "phrases --min-line-length 3", "build": "this",
                     **figures})
        print(rows[-1], file=sys.stderr)
    write_csv(args.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
