"""What each continuation round of the distributed miner ships, run in-process.

    python benchmarks/bench_distributed_rounds.py [--docs DIR] [--sigma 3] [--min-length 5] \\
        [--partitions 8] [--buckets 8] [--window-cap 1024]

Reads every documentation corpus of --docs (*.jsonl.gz, together; see data_paths.py) with
corpus-miner's reader, deals the documents round-robin to --partitions partitions and mines them
with phrases/distributed/driver.py: the same map and reduce steps as SparkBloomSpan, in one
process, without Spark. Also runs the local engine on the same documents and checks that the
phrases are the same, row for row. Writes benchmarks/results/bench_distributed_rounds.csv, one
row per round:

  round, depth_lo, depth_hi (phrase lengths the round decides), deferred (windows it defers to
  the next round), shipped_tokens (window-pool tokens of all routed summaries: what is shuffled),
  largest_bucket_tokens (the most one reducer received), window_tokens (the sum of the distinct
  windows' lengths per routed summary: what copying every window, as before the pools, would
  have shipped), plus for the whole run: seconds, peak_rss_mb (this process: every partition and
  every routed summary of a round are held at once here, unlike on a cluster), tokens_in_chains,
  phrases, identical (same rows as the local engine).
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import threading
import time
from pathlib import Path

import psutil
import pyarrow as pa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from corpus_miner import BloomSpan  # noqa: E402
from corpus_miner.corpus import load_corpus  # noqa: E402
from corpus_miner.io.readers import read_documents  # noqa: E402
from corpus_miner.phrases.distributed.driver import mine_partitions  # noqa: E402
from corpus_miner.phrases.distributed.stages import Plan  # noqa: E402

from csv_table import write_csv  # noqa: E402
from data_paths import CORPORA  # noqa: E402


class PeakRss:
    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        process = psutil.Process()
        while not self._stop.is_set():
            self.peak = max(self.peak, process.memory_info().rss)
            self._stop.wait(0.2)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak >> 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", default=str(CORPORA))
    parser.add_argument("--sigma", type=int, default=3)
    parser.add_argument("--min-length", type=int, default=5)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--buckets", type=int, default=8)
    parser.add_argument("--window-cap", type=int, default=Plan.window_cap,
                        help="round 0's window beyond min_length (the library's default)")
    parser.add_argument("--out", default=str(HERE / "results" / "bench_distributed_rounds.csv"))
    args = parser.parse_args()
    inputs = sorted(glob.glob(os.path.join(args.docs, "*.jsonl.gz")))
    if not inputs:
        raise SystemExit(f"no *.jsonl.gz in {args.docs}")
    texts = pa.concat_arrays([batch.texts for batch in read_documents(inputs)])
    n = args.partitions
    parts = [[texts.take(pa.array(range(p, len(texts), n)))] for p in range(n)]
    plan = Plan(args.sigma, args.min_length, window_cap=args.window_cap, buckets=args.buckets)
    rss = PeakRss()
    started = time.perf_counter()
    table, stats = mine_partitions(parts, plan)
    seconds = time.perf_counter() - started
    peak = rss.stop()
    corpus = load_corpus(inputs)
    local = BloomSpan(args.sigma, args.min_length).fit(corpus).phrases_
    identical = list(table.rows()) == list(local.rows())
    rows = []
    for r in range(stats["rounds"]):
        lo, hi = plan.depths(r)
        rows.append({"round": r, "depth_lo": lo, "depth_hi": hi,
                     "deferred": stats[f"round_{r}_deferred"],
                     "shipped_tokens": stats[f"round_{r}_shipped_tokens"],
                     "largest_bucket_tokens": stats[f"round_{r}_largest_bucket_tokens"],
                     "window_tokens": stats[f"round_{r}_window_tokens"],
                     "seconds": round(seconds, 1), "peak_rss_mb": peak,
                     "tokens": int(corpus.doc_offsets[-1]),
                     "tokens_in_chains": stats["tokens_in_frequent_gram_chains"],
                     "sigma": args.sigma, "min_length": args.min_length,
                     "partitions": n, "buckets": args.buckets,
                     "window_cap": args.window_cap, "phrases": len(table),
                     "identical": identical})
        print(rows[-1])
    write_csv(Path(args.out), rows)


if __name__ == "__main__":
    main()
