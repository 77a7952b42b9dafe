"""Where the CPU of `tokenize` goes: one save_corpus run with a CPU timer around each stage.

The stages are the functions each block passes through, wrapped here (so this script follows the
names inside corpus_miner.corpus and corpus_miner.io; it fails loudly if one is renamed):
  read     the reader decoding Parquet/JSONL into batches (its own thread), `batch` included
  batch    of which: checking UTF-8, ids, counting (`_Reader._batch`)
  scan     tokenizing a block with its own table (`parallel._tokenize_local`, worker threads)
  merge    merging a block's vocabulary into the global one and remapping its ids
  write    writing and hashing the arrays of the saved folder (`ArrayWriter.write`)
  other    the rest of the process' CPU from the start of save_corpus: the main loop, hand-offs
           between threads, garbage collection
Each timer is the CPU time of the thread that runs the stage (CLOCK_THREAD_CPUTIME_ID, exact, so
stages on several threads add up to the process' CPU). A sampler also records every 0.5 s how
many cores the process kept busy (its CPU seconds per wall second); on a shared machine that is
bounded by what the other processes leave.

    python benchmarks/profile_tokenize.py PARTS_DIR [--threads N] [--out results/x.csv]

Appends to --out (e.g. benchmarks/results/profile_tokenize.csv) one row per run.
"""

from __future__ import annotations

import argparse
import collections
import csv
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from csv_table import write_csv  # noqa: E402

STAGES = ("read", "batch", "scan", "merge", "write")


class StageTimers:
    """CPU seconds per stage, from wrappers installed around the stage functions."""

    def __init__(self) -> None:
        self.seconds: collections.Counter = collections.Counter()
        self._lock = threading.Lock()

    def add(self, stage: str, seconds: float) -> None:
        with self._lock:
            self.seconds[stage] += seconds

    def wrap(self, stage: str, fn):
        def timed(*args, **kwargs):
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(stage, time.thread_time() - start)
        return timed

    def wrap_generator(self, stage: str, fn):
        def timed(*args, **kwargs):
            items = fn(*args, **kwargs)
            while True:
                start = time.thread_time()
                try:
                    item = next(items)
                except StopIteration:
                    return
                finally:
                    self.add(stage, time.thread_time() - start)
                yield item
        return timed

    def install(self) -> None:
        from corpus_miner.corpus import parallel
        from corpus_miner.io import artefact, readers

        parallel._tokenize_local = self.wrap("scan", parallel._tokenize_local)
        parallel.ParallelTokenizer._merge = self.wrap("merge", parallel.ParallelTokenizer._merge)
        artefact.ArrayWriter.write = self.wrap("write", artefact.ArrayWriter.write)
        readers._Reader._batch = self.wrap("batch", readers._Reader._batch)
        for name in ("_parquet", "_jsonl", "_text_folder"):
            setattr(readers._Reader, name,
                    self.wrap_generator("read", getattr(readers._Reader, name)))


def busy_cores(stop: threading.Event, samples: list) -> None:
    """Appends the process' CPU seconds per wall second over each 0.5 s until `stop`."""
    wall, cpu = time.perf_counter(), time.process_time()
    while not stop.wait(0.5):
        now_wall, now_cpu = time.perf_counter(), time.process_time()
        samples.append((now_cpu - cpu) / (now_wall - wall))
        wall, cpu = now_wall, now_cpu


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="what `corpus-miner tokenize` would read")
    parser.add_argument("--threads", type=int, default=None, help="default: every core")
    parser.add_argument("--out", type=Path, default=None, help="also append the row to this CSV")
    parser.add_argument("--scratch", type=Path, default=None, help="for the saved folder")
    args = parser.parse_args(argv)
    timers = StageTimers()
    timers.install()
    from corpus_miner.corpus.build import save_corpus

    scratch = Path(tempfile.mkdtemp(prefix="profile-tokenize-", dir=args.scratch))
    samples: list[float] = []
    stop = threading.Event()
    sampler = threading.Thread(target=busy_cores, args=(stop, samples), daemon=True)
    load = os.getloadavg()[0]
    try:
        sampler.start()
        wall, cpu = time.perf_counter(), time.process_time()
        corpus = save_corpus(args.inputs, scratch / "corpus", threads=args.threads)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        n_tokens = corpus.n_tokens
        del corpus
    finally:
        stop.set()
        shutil.rmtree(scratch, ignore_errors=True)
    seconds = dict(timers.seconds)
    named = sum(seconds.get(s, 0.0) for s in STAGES if s != "batch")  # batch is inside read
    seconds["other"] = cpu - named
    row = {"tokens": n_tokens, "threads": args.threads or len(os.sched_getaffinity(0)),
           "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
           "cpu_ns_per_token": round(cpu / n_tokens * 1e9, 1),
           **{f"{s}_ns_per_token": round(seconds.get(s, 0.0) / n_tokens * 1e9, 1)
              for s in (*STAGES, "other")},
           "busy_cores_median": round(statistics.median(samples), 2) if samples else None,
           "load_before": round(load, 1)}
    print(f"{n_tokens:,} tokens, {row['threads']} threads: wall {wall:.1f} s, CPU {cpu:.1f} s "
          f"({row['cpu_ns_per_token']} ns per token), busy cores median "
          f"{row['busy_cores_median']}, load {load:.1f}")
    for stage in (*STAGES, "other"):
        print(f"  {stage:6s} {seconds.get(stage, 0.0):8.2f} s CPU "
              f"{row[f'{stage}_ns_per_token']:7.1f} ns per token")
    if args.out:  # one row per run, appended
        rows = list(csv.DictReader(open(args.out, newline=""))) if args.out.exists() else []
        write_csv(args.out, rows + [row])
    return 0


if __name__ == "__main__":
    sys.exit(main())
