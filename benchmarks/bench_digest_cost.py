"""What the texts digest costs `clean`: whole-process seconds of `corpus-miner clean`, next to
the seconds of the digest itself over the same texts (io.digest.OrderedDigest, the kernel both
reads run once each): its first pass in a process (loading the kernel from numba's cache
included) and a warm pass.

    python benchmarks/bench_digest_cost.py CORPUS.jsonl [--repeats 3]

CORPUS: e.g. `corpus-miner generate web --tokens 2e7 -o web20m.jsonl`. A warm-up run fills the
numba cache first. Writes benchmarks/results/bench_digest_cost.csv (one row per run, with the
machine's load average at its start) and prints the medians.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"

_DIGEST = """
import sys, time
from corpus_miner.io import read_documents
from corpus_miner.io.digest import OrderedDigest
batches = list(read_documents([sys.argv[1]]))
passes = []
for _ in range(3):  # the first pass also loads the kernel from numba's cache
    started = time.perf_counter()
    digest = OrderedDigest()
    for batch in batches:
        digest.update(batch.texts, digest.documents)
    passes.append(time.perf_counter() - started)
print(passes[0], min(passes[1:]), sum(b.texts.nbytes for b in batches))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "out.jsonl")
        command = [sys.executable, "-m", "corpus_miner", "clean", args.corpus, "-o", out]
        subprocess.run(command, check=True, capture_output=True)  # warm-up: numba cache
        for run in range(args.repeats):
            load = os.getloadavg()[0]
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            rows.append({"what": "clean", "run": run, "seconds": time.perf_counter() - started,
                         "text_bytes": "", "load": load})
            load = os.getloadavg()[0]
            done = subprocess.run([sys.executable, "-c", _DIGEST, args.corpus], check=True,
                                  capture_output=True, text=True)
            first, warm, nbytes = done.stdout.split()
            rows.append({"what": "digest_first_pass", "run": run, "seconds": float(first),
                         "text_bytes": int(nbytes), "load": load})
            rows.append({"what": "digest_warm_pass", "run": run, "seconds": float(warm),
                         "text_bytes": int(nbytes), "load": load})
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "bench_digest_cost.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, ["what", "run", "seconds", "text_bytes", "load"])
        writer.writeheader()
        writer.writerows(rows)
    for what in ("clean", "digest_first_pass", "digest_warm_pass"):
        print(what, round(statistics.median(r["seconds"] for r in rows if r["what"] == what), 3))


if __name__ == "__main__":
    main()
