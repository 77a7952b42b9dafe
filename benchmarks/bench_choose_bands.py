"""Time to choose (bands, rows) from a threshold: the line searches of choose_bands against the
brute force over every pair (the previous implementation), and whether they agree.

The brute force evaluates the FP and FN areas of all ~num_perm * ln(num_perm) pairs with
bands * rows <= num_perm (numpy Simpson integrals); choose_bands searches ~2 sqrt(num_perm) lines
along which the error is unimodal. Each figure is one call in a fresh cache (the JIT compiled
before timing), median of --repeats.

Usage: python benchmarks/bench_choose_bands.py [--brute-max 4096] [--repeats 3]
Writes benchmarks/results/choose_bands.csv.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from functools import partial
from pathlib import Path

from corpus_miner.dedup.banding import banding_errors, choose_bands

sys.path.insert(0, str(Path(__file__).resolve().parent))
from csv_table import write_csv  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "choose_bands.csv"


def brute_force(threshold: float, num_perm: int) -> tuple[int, int]:
    best, best_error = (1, num_perm), float("inf")
    for bands in range(1, num_perm + 1):
        for rows in range(1, num_perm // bands + 1):
            error = 0.5 * sum(banding_errors(threshold, bands, rows))
            if error < best_error - 1e-15:
                best, best_error = (bands, rows), error
    return best


def timed(function, repeats: int):
    seconds, answer = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        answer = function()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brute-max", type=int, default=4096,
                        help="largest num_perm timed with the brute force (65536 takes minutes)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    choose_bands(0.85, 64)  # compile the kernels
    rows = []
    for threshold in (0.5, 0.85):
        for num_perm in (256, 1024, 4096, 16384, 65536):
            # __wrapped__: the line search itself, without the cache in front of it
            fast, answer = timed(partial(choose_bands.__wrapped__, threshold, num_perm),
                                 args.repeats)
            row = {"threshold": threshold, "num_perm": num_perm, "bands": answer[0],
                   "rows": answer[1], "line_search_s": round(fast, 4), "brute_force_s": "",
                   "same_answer": ""}
            if num_perm <= args.brute_max:
                slow, expected = timed(partial(brute_force, threshold, num_perm), 1)
                row.update(brute_force_s=round(slow, 3), same_answer=expected == answer)
            rows.append(row)
            print(row, flush=True)
    write_csv(OUT, rows)

if __name__ == "__main__":
    main()
