"""Speed of `corpus-miner generate web`: whole CLI runs, wall and CPU seconds, peak RSS, bytes.

Each size runs as its own process (`corpus-miner generate web --tokens N -o DIR`, Parquet parts),
with the shape of a large web crawl: 20,000 sites, a 400,000-word Zipf vocabulary, 450-word
bodies. CPU seconds include the writer thread (the generator uses up to two cores).

    python benchmarks/bench_generate.py --tokens 1e8 1e9 --out-dir /tmp/gen
    python benchmarks/bench_generate.py --tokens 1e8 --repeats 3 --baseline-src OLD/src \
        --out-dir /tmp/gen

With --baseline-src, every repeat runs that source tree (first on PYTHONPATH) and then the
current one, alternating, so the two see the same machine. Writes
benchmarks/results/bench_generate.csv (one row per run: version, repeat, load average).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from csv_table import write_csv

RESULTS = Path(__file__).resolve().parent / "results"
SHAPE = ["--sites", "20000", "--vocabulary", "400000", "--body-words", "450"]


def run(tokens: float, folder: Path, seed: int, src: Path | None = None) -> dict:
    shutil.rmtree(folder, ignore_errors=True)
    command = ["corpus-miner", "generate", "web", "--tokens", f"{tokens:.0f}", "--seed",
               str(seed), "-o", str(folder), *SHAPE]
    started = time.perf_counter()
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)  # this child's own CPU time and peak RSS
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"generate failed: {err}")
    summary = err.strip().splitlines()[-1]
    pages, n_tokens = (int(x.replace(",", "")) for x in
                       re.search(r"wrote ([\d,]+) web pages \(([\d,]+) tokens\)", summary).groups())
    size = sum(p.stat().st_size for p in folder.glob("*.parquet"))
    cpu_s = usage.ru_utime + usage.ru_stime
    peak = usage.ru_maxrss * 1024
    return {"tokens_asked": int(tokens), "pages": pages, "tokens": n_tokens,
            "wall_s": round(wall, 2), "cpu_s": round(cpu_s, 2),
            "tokens_per_s": round(n_tokens / wall), "peak_rss_mb": round(peak / 2**20),
            "parquet_bytes": size, "parts": len(list(folder.glob("*.parquet"))),
            # the folder as OUT_DIR/NAME: the table holds no path of the machine it ran on
            "summary": summary.replace(str(folder), f"OUT_DIR/{folder.name}")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", nargs="+", type=float, default=[1e8, 1e9])
    parser.add_argument("--out-dir", type=Path, required=True,
                        help="scratch folder for the generated parts (removed afterwards)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", action="store_true", help="keep the generated parts")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--baseline-src", type=Path, default=None,
                        help="another source tree (its src/) to run alternately with this one")
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_generate.csv")
    args = parser.parse_args(argv)
    versions = [("current", None)]
    if args.baseline_src is not None:
        versions.insert(0, ("baseline", args.baseline_src.resolve()))
    rows = []
    for tokens in args.tokens:
        for repeat in range(args.repeats):
            for version, src in versions:
                folder = args.out_dir / f"web-{tokens:.0e}-{version}"
                row = {"version": version, "repeat": repeat, **run(tokens, folder, args.seed, src),
                       "load_1min": round(os.getloadavg()[0], 1)}
                rows.append(row)
                print(json.dumps(row), flush=True)
                if not args.keep:
                    shutil.rmtree(folder, ignore_errors=True)
    write_csv(args.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
