"""Speed, memory and index size of LSHBloom vs datasketch, on one core, on the same documents.

Documents: windows of real documentation pages (benchmarks/data_paths.py), normalised and cut to
2,004 characters, so each has 2,000 character 5-shingles. Every method runs the full pipeline on
them (shingle + sketch + index query/insert, in input order):
- datasketch: MinHash(num_perm).update_batch(shingles) + MinHashLSH(params=(bands, rows))
  query then insert (shingling in Python, as a datasketch user does);
- ours: LSHBloom(...).deduplicate(texts) for each mode and sketch (numba, JIT warmed up first).
Times are medians of --repeats rounds; each round runs every method once (round robin, so load
from other processes hits all methods alike). The machine is shared, so speeds are computed from the
process CPU time (time.process_time: single-threaded code, so CPU time = time on one core); wall
times are reported next to them. Peak memory is measured in a fresh process per method (after
loading the texts and a JIT warm-up) as the largest RSS increase seen by a 2 ms sampler during the
run, divided by the number of documents. Index sizes are the bytes of the saved index
folders (lshbloom at the default fp_prob and at the seed prototype's 0.001 per band key with
128 perms / 32 bands, vs the exact band table).

Usage: python benchmarks/bench_dedup.py [--docs 2000] [--repeats 3]
Writes benchmarks/results/bench_dedup.csv and bench_dedup_index_size.csv.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # one core

import numpy as np  # noqa: E402
import psutil  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_miner.dedup import LSHBloom  # noqa: E402
from corpus_miner.dedup.banding import band_keys  # noqa: E402
from corpus_miner.dedup.bloom import BloomFilter  # noqa: E402
from corpus_miner.dedup.minhash import signatures  # noqa: E402
from corpus_miner.dedup.shingles import normalize_texts, shingle_batch  # noqa: E402

from csv_table import write_csv  # noqa: E402
from groundtruth import load_texts  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
WINDOW = 2004


def bench_documents(n_docs: int) -> list[str]:
    docs = load_texts(["openjdk-17-doc", "perl-doc", "python3.11-doc", "postgresql-doc-15",
                       "host-copyright", "ruby3.1-doc"], min_chars=WINDOW)
    out = []
    for text in normalize_texts([t for _, t in docs]).to_pylist():
        for start in range(0, len(text) - WINDOW + 1, WINDOW):
            out.append(text[start:start + WINDOW])
    rng = np.random.default_rng(0)
    picked = rng.choice(len(out), size=min(n_docs, len(out)), replace=False)
    return [out[i] for i in sorted(picked)]


class PeakRSS:
    """Largest RSS increase over the start value while the block runs (sampled every 2 ms)."""

    def __enter__(self):
        self.process = psutil.Process()
        self.start = self.peak = self.process.memory_info().rss
        self.running = True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def _sample(self):
        while self.running:
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.002)

    def __exit__(self, *exc):
        self.running = False
        self.thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)
        self.increase = self.peak - self.start


def run_datasketch(texts, num_perm, bands, rows, seed=1):
    from datasketch import MinHash, MinHashLSH
    lsh = MinHashLSH(num_perm=num_perm, params=(bands, rows))
    flags = 0
    for d, text in enumerate(texts):
        grams = {text[i:i + 5].encode() for i in range(len(text) - 4)}
        m = MinHash(num_perm=num_perm, seed=seed)
        m.update_batch(list(grams))
        flags += bool(lsh.query(m))
        lsh.insert(d, m)
    return flags


def run_ours(texts, mode, sketch, num_perm):
    model = LSHBloom(num_perm=num_perm, mode=mode, sketch=sketch)
    return int(model.deduplicate(texts).is_duplicate.sum())


def round_robin(methods: dict, repeats: int) -> dict:
    """name -> (median CPU seconds, median wall seconds, result), each method once per round."""
    cpu = {name: [] for name in methods}
    wall = {name: [] for name in methods}
    results = {}
    for _ in range(repeats):
        for name, fn in methods.items():
            cpu_start, wall_start = time.process_time(), time.perf_counter()
            results[name] = fn()
            cpu[name].append(time.process_time() - cpu_start)
            wall[name].append(time.perf_counter() - wall_start)
    return {name: (statistics.median(cpu[name]), statistics.median(wall[name]), results[name])
            for name in methods}


def memory_worker(method, sketch, mode, texts_file, num_perm, bands, rows) -> None:
    """Runs in a fresh process: print the peak RSS increase (bytes) of one full run."""
    texts = json.loads(Path(texts_file).read_text())
    if method == "datasketch":
        run_datasketch(texts[:20], num_perm, bands, rows)
        fn = lambda: run_datasketch(texts, num_perm, bands, rows)  # noqa: E731
    else:
        run_ours(texts[:20], mode, sketch, num_perm)
        fn = lambda: run_ours(texts, mode, sketch, num_perm)  # noqa: E731
    with PeakRSS() as peak:
        fn()
    print(json.dumps({"peak_increase": peak.increase}))


def peak_memory(method, sketch, mode, texts_file, num_perm, bands, rows) -> int:
    command = [sys.executable, __file__, "--memory-worker", method, sketch, mode, texts_file,
               "--num-perm", str(num_perm), "--bands-rows", str(bands), str(rows)]
    proc = subprocess.run(command, capture_output=True, text=True, check=True)
    return int(json.loads(proc.stdout.strip().splitlines()[-1])["peak_increase"])


def stage_breakdown(texts, num_perm, sketch, repeats):
    """Median seconds of each stage of the lshbloom pipeline."""
    model = LSHBloom(num_perm=num_perm, sketch=sketch)
    bands, rows = model.params.validated().bands_rows
    stages = {"normalise+shingle": [], "sketch": [], "band keys": [], "bloom query+insert": []}
    for _ in range(repeats):
        t0 = time.process_time()
        hashes, offsets = shingle_batch(texts, 5)
        t1 = time.process_time()
        sig = signatures(hashes, offsets, num_perm, 1, sketch)
        t2 = time.process_time()
        keys = band_keys(sig, bands, rows)
        t3 = time.process_time()
        BloomFilter.for_documents(len(texts), bands, 1e-5).query_then_insert(keys)
        t4 = time.process_time()
        for name, dt in zip(stages, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            stages[name].append(dt)
    return {name: statistics.median(v) for name, v in stages.items()}


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.iterdir() if f.is_file())


def index_sizes(texts):
    ids = [f"doc-{i:07d}" for i in range(len(texts))]
    seed_fp = 1 - (1 - 0.001) ** 32  # the seed prototype: 0.001 per band key, 32 bands
    configs = [("default (t=0.85, 256 perms, fp_prob=1e-5/doc)", dict(num_perm=256, fp_prob=1e-5)),
               ("seed prototype (128 perms, 32 bands, 0.001/key)",
                dict(num_perm=128, num_bands=32, fp_prob=seed_fp))]
    rows_out = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, kwargs in configs:
            bloom = LSHBloom(mode="lshbloom", **kwargs).fit(texts)
            table = LSHBloom(mode="minhash_lsh", **kwargs).fit(texts, ids=ids)
            bloom.save(Path(tmp) / "bloom")
            table.save(Path(tmp) / "table")
            bloom_bytes = folder_bytes(Path(tmp) / "bloom")
            table_bytes = folder_bytes(Path(tmp) / "table")
            rows_out.append({"config": label, "n_docs": len(texts), "bands": bloom.bands_,
                             "fp_prob_per_doc": round(kwargs["fp_prob"], 6),
                             "band_entries": table.index_.num_keys,
                             "lshbloom_bytes": bloom_bytes, "band_table_bytes": table_bytes,
                             "bloom_bits_per_key": round(
                                 bloom.index_.num_bits / (len(texts) * bloom.bands_), 2),
                             "size_ratio": round(table_bytes / bloom_bytes, 2)})
    return rows_out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--num-perm", type=int, default=256)
    parser.add_argument("--memory-worker", nargs=4, metavar=("METHOD", "SKETCH", "MODE", "TEXTS"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--bands-rows", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_worker:
        memory_worker(*args.memory_worker, args.num_perm, *args.bands_rows)
        return 0
    texts = bench_documents(args.docs)
    n_docs = len(texts)
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    print(f"{n_docs} documents of {WINDOW} characters ({megabytes:.1f} MB), "
          f"{args.num_perm} perms", flush=True)
    bands, rows = LSHBloom(num_perm=args.num_perm).params.validated().bands_rows
    for mode in ("lshbloom", "minhash_lsh"):
        for sketch in ("minhash", "oph"):
            run_ours(texts[:20], mode, sketch, args.num_perm)  # JIT warm-up (cache=True: one-off)
    methods = {("datasketch", "minhash", "MinHashLSH"):
               lambda: run_datasketch(texts, args.num_perm, bands, rows)}
    for mode in ("lshbloom", "minhash_lsh"):
        for sketch in ("minhash", "oph"):
            methods[("corpus-miner", sketch, mode)] = (
                lambda mode=mode, sketch=sketch: run_ours(texts, mode, sketch, args.num_perm))
    timings = round_robin(methods, args.repeats)
    rows_out = [(*name, *timings[name]) for name in methods]
    with tempfile.TemporaryDirectory() as tmp:
        texts_file = str(Path(tmp) / "texts.json")
        Path(texts_file).write_text(json.dumps(texts))
        peaks = [peak_memory(method, sketch, mode, texts_file, args.num_perm, bands, rows)
                 for method, sketch, mode, *_ in rows_out]
    table = []
    base = rows_out[0][3]
    for (method, sketch, mode, seconds, wall, found), peak in zip(rows_out, peaks):
        table.append({"method": method, "sketch": sketch, "index": mode, "n_docs": n_docs,
                      "num_perm": args.num_perm, "bands": bands, "rows": rows,
                      "cpu_seconds": round(seconds, 4), "wall_seconds": round(wall, 4),
                      "docs_per_s": round(n_docs / seconds, 1),
                      "mb_per_s": round(megabytes / seconds, 3),
                      "speedup_vs_datasketch": round(base / seconds, 1),
                      "peak_mem_bytes_per_doc": int(peak / n_docs), "duplicates_found": found})
        print(f"{method:12s} {sketch:8s} {mode:12s} {n_docs / seconds:10.0f} docs/s "
              f"{megabytes / seconds:7.2f} MB/s  x{base / seconds:6.1f}  "
              f"{peak / n_docs / 1024:6.1f} KiB/doc peak  dups={found}", flush=True)
    for sketch in ("minhash", "oph"):
        stages = stage_breakdown(texts, args.num_perm, sketch, args.repeats)  # CPU seconds
        print(f"lshbloom/{sketch} stages: "
              + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in stages.items()))
        for name, value in stages.items():
            table.append({"method": f"stage:{name}", "sketch": sketch, "index": "lshbloom",
                          "n_docs": n_docs, "num_perm": args.num_perm, "bands": bands, "rows": rows,
                          "cpu_seconds": round(value, 4), "docs_per_s": round(n_docs / value, 1),
                          "mb_per_s": round(megabytes / value, 3)})
    write_csv(RESULTS / "bench_dedup.csv", table)
    sizes = index_sizes(bench_documents(max(args.docs, 5000)))
    for row in sizes:
        print(f"index size, {row['config']}: lshbloom {row['lshbloom_bytes']:,} B vs band table "
              f"{row['band_table_bytes']:,} B -> {row['size_ratio']}x smaller "
              f"({row['bloom_bits_per_key']} bits/key)")
    write_csv(RESULTS / "bench_dedup_index_size.csv", sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
