"""Measured false-positive rate of small Bloom filters: the sizing rule alone, with num_bits
rounded up to a prime, and as a layer is sized now (a prime of at least 2^20 bits).

Double hashing probes start + i * step (mod num_bits); in a small filter the probe sequences of
different keys are far from independent, so the rate the sizing rule predicts is not reached.
Each filter holds `capacity` documents of 13 random band keys at 5e-4 per document (the first
layer's rate at fp_prob = 1e-3) and is queried with 100,000 documents of fresh random keys,
--repeats times.

Usage: python benchmarks/bench_bloom_small.py [--repeats 40]
Writes benchmarks/results/bloom_small_filters.csv.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from corpus_miner.dedup.bloom import BloomFilter, bloom_size, key_fp_prob
from corpus_miner.dedup.scalable_bloom import layer_shape, next_prime

RATE, BANDS, QUERIES = 5e-4, 13, 100_000
sys.path.insert(0, str(Path(__file__).resolve().parent))
from csv_table import write_csv  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "bloom_small_filters.csv"


def measure(num_bits: int, num_hashes: int, capacity: int, repeats: int, rng) -> float:
    flagged = 0
    for _ in range(repeats):
        bloom = BloomFilter(num_bits, num_hashes)
        bloom.add(rng.integers(0, 2**64 - 1, (capacity, BANDS), np.uint64, endpoint=True))
        queries = rng.integers(0, 2**64 - 1, (QUERIES, BANDS), np.uint64, endpoint=True)
        flagged += int(bloom.contains_any(queries).sum())
    return flagged / (repeats * QUERIES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    rows = []
    for capacity in (1, 20, 100, 1000, 10_000):
        rule = bloom_size(capacity * BANDS, key_fp_prob(RATE, BANDS))
        sizings = (("rule", rule), ("rule, prime", (next_prime(rule[0]), rule[1])),
                   ("layer (prime >= 2^20)", layer_shape(capacity, RATE, BANDS)))
        for sizing, (num_bits, num_hashes) in sizings:
            measured = measure(num_bits, num_hashes, capacity, args.repeats, rng)
            rows.append({"capacity": capacity, "sizing": sizing, "num_bits": num_bits,
                         "num_hashes": num_hashes, "configured_rate": RATE,
                         "measured_rate": measured, "ratio": round(measured / RATE, 3)})
            print(rows[-1], flush=True)
    write_csv(OUT, rows)

if __name__ == "__main__":
    main()
