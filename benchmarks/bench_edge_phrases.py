"""What sentence starts and edge phrases cost: tokenizing and cleaning, this build against a
baseline source tree, whole CLI processes, alternating on the same machine.

    python benchmarks/bench_edge_phrases.py --tokens 2e7 --baseline-src OLD/src --work /tmp/ep

Generates `corpus-miner generate web --tokens N` (bench_line_phrases.py's shape) once, then per
repeat runs, each as its own process: `tokenize INPUT -o DIR` with the baseline source tree and
with this one (the scan's sentence-break test is skipped unless asked: the cost asked of users
who do not use edge phrases), this build's `tokenize --sentences` (the cost when asked), and
`clean INPUT --sigma 20 --mode annotate` with the baseline and with this build at
--min-edge-length 0 (whose output must be the baseline's; it is compared) and 5. Every build is
warmed up once on a small corpus first (numba's cache). Writes
benchmarks/results/bench_edge_phrases.csv: one row per run with wall and CPU seconds (the
process tree's), peak RSS and the load average.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from bench_line_phrases import SHAPE, run

from csv_table import write_csv

RESULTS = Path(__file__).resolve().parent / "results"
CLEAN = ["--sigma", "20", "--mode", "annotate"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=float, default=2e7)
    parser.add_argument("--baseline-src", type=Path, required=True,
                        help="src folder of the build to compare with (e.g. main's)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--work", type=Path, required=True, help="scratch folder")
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_edge_phrases.csv")
    args = parser.parse_args(argv)
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / f"web-{args.tokens:.0e}"
    if not list(corpus.glob("*.parquet")):
        run(["generate", "web", "--tokens", f"{args.tokens:.0f}", "--seed", "1", "-o",
             str(corpus), *SHAPE], None)
    inputs = sorted(str(p) for p in corpus.glob("*.parquet"))
    small = work / "warm.jsonl.gz"
    if not small.exists():
        run(["generate", "web", "--docs", "300", "-o", str(small)], None)
    runs = {  # name: (build source, command after the inputs)
        "tokenize baseline": (args.baseline_src, ["tokenize", "-o", "DIR"]),
        "tokenize": (None, ["tokenize", "-o", "DIR"]),
        "tokenize --sentences": (None, ["tokenize", "--sentences", "-o", "DIR"]),
        "clean baseline": (args.baseline_src, ["clean", *CLEAN, "-o", "OUT"]),
        "clean --min-edge-length 0": (None, ["clean", *CLEAN, "--min-edge-length", "0", "-o",
                                             "OUT"]),
        "clean --min-edge-length 5": (None, ["clean", *CLEAN, "--min-edge-length", "5", "-o",
                                             "OUT"]),
    }
    for src in (args.baseline_src, None):  # fill each build's numba cache before timing
        run(["clean", str(small), *CLEAN, "-o", str(work / "warm.jsonl")], src)
        run(["tokenize", str(small), "-o", str(work / "warm-corpus")], src)
        shutil.rmtree(work / "warm-corpus")
    rows = []
    for repeat in range(args.repeats):
        outputs = {}
        for name, (src, command) in runs.items():
            target = work / ("out.jsonl" if "OUT" in command else "corpus")
            shutil.rmtree(target, ignore_errors=True)
            command = [str(target) if part in ("DIR", "OUT") else part for part in command]
            figures = run([command[0], *inputs, *command[1:]], src)
            if target.is_file():
                outputs[name] = target.read_bytes()
                target.unlink()
            else:
                shutil.rmtree(target)
            rows.append({"repeat": repeat, "run": name, **figures})
            print(rows[-1], file=sys.stderr)
        if outputs["clean baseline"] != outputs["clean --min-edge-length 0"]:
            raise SystemExit("clean --min-edge-length 0 differs from the baseline's clean")
    write_csv(args.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
