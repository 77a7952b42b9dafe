"""Speed of `corpus-miner generate web`: whole CLI runs, wall and CPU seconds, peak RSS, bytes.

Each size runs as its own process (`corpus-miner generate web --tokens N -o DIR`, Parquet parts),
with the shape of a large web crawl: 20,000 sites, a 400,000-word Zipf vocabulary, 450-word
bodies. CPU seconds include the writer thread (the generator uses up to two cores).

    python benchmarks/bench_generate.py --tokens 1e8 1e9 --out-dir /tmp/gen

Writes benchmarks/results/bench_generate.csv.
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


def run(tokens: float, folder: Path, seed: int) -> dict:
    shutil.rmtree(folder, ignore_errors=True)
    command = ["corpus-miner", "generate", "web", "--tokens", f"{tokens:.0f}", "--seed",
               str(seed), "-o", str(folder), *SHAPE]
    started = time.perf_counter()
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
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
            "summary": summary}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", nargs="+", type=float, default=[1e8, 1e9])
    parser.add_argument("--out-dir", type=Path, required=True,
                        help="scratch folder for the generated parts (removed afterwards)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", action="store_true", help="keep the generated parts")
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_generate.csv")
    args = parser.parse_args(argv)
    rows = []
    for tokens in args.tokens:
        folder = args.out_dir / f"web-{tokens:.0e}"
        rows.append(run(tokens, folder, args.seed))
        print(json.dumps(rows[-1]), flush=True)
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    write_csv(args.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
