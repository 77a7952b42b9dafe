"""`corpus-miner dedup` on a large corpus: wall time, CPU time and peak RSS of the whole command.

Measured on the 1,000,000,318-token web-like corpus of issue 14 (1,330,297 pages, 27 Parquet
parts, 3.7 GB), default settings (OPH, 256 permutations, threshold 0.85, Bloom filter sized by
counting the input: two reads of the input), output Parquet. Any folder or file `dedup` reads works.

Usage: python benchmarks/bench_dedup_big.py INPUT [--out DIR] [--label NAME] [-- extra dedup flags]
Appends one row to benchmarks/results/bench_dedup_big.csv.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def input_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", type=Path)
    parser.add_argument("--out", type=Path, default=Path("/tmp/corpus-miner-bench"),
                        help="folder for the output (removed afterwards)")
    parser.add_argument("--label", default=None, help="name of the input in the CSV")
    parser.add_argument("extra", nargs="*", help="more dedup flags, after --")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    output = args.out / "dedup-big-unique.parquet"
    command = [str(Path(sys.executable).with_name("corpus-miner")), "dedup", str(args.input),
               "-o", str(output), *args.extra]
    print(" ".join(command), flush=True)
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)  # a summary line only: the pipes cannot fill up
    wall = time.perf_counter() - start
    out, err = child.stdout.read(), child.stderr.read()
    if status:
        raise SystemExit(f"dedup failed ({status}): {err.strip()}")
    summary = (out + err).strip().splitlines()[-1]
    figures = {key: int(value.replace(",", "")) for key, value in
               re.findall(r"(documents|duplicates|written) ([\d,]+)", summary)}
    row = {"input": args.label or args.input.name, "input_bytes": input_bytes(args.input),
           "flags": " ".join(args.extra), "documents": figures.get("documents"),
           "duplicates": figures.get("duplicates"), "written": figures.get("written"),
           "wall_seconds": round(wall, 1), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
           "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
           "docs_per_s": round(figures.get("documents", 0) / wall, 1),
           "output_bytes": output.stat().st_size}
    output.unlink()
    print(row, flush=True)
    path = RESULTS / "bench_dedup_big.csv"
    new = not path.exists()
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
