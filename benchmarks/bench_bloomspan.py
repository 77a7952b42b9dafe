"""BloomSpan in detail: seconds (wall and CPU) per stage, memory per token, filter sizing.

    python benchmarks/bench_bloomspan.py [--corpora openjdk-17-doc perl-doc ...] [--repeats 3]
                                         [--cache-dir DIR] [--skip-filter-sweep]

(The side-by-side comparison with fhk across sizes is benchmarks/bench_phrases.py.)

Writes to benchmarks/results/:
  bloomspan_stages.csv  one row per (corpus, sigma, min_length): medians over --repeats runs, each
      in a fresh process (numba cache warmed on a tiny corpus first, corpus already loaded):
      seconds (and seconds_min, the best run: closest to an idle machine), cpu_seconds (process
      CPU time: on a shared, busy machine wall time also measures the other tenants),
      us_per_token and cpu_us_per_token, bytes_per_token (peak RSS of the
      mining call above the RSS just before it; the kernel's high-water mark is reset at the
      start), the CPU seconds of each stage, and the filter/seed counts.
  bloomspan_filter.csv  counting-filter size sweep at sigma 20, min_length 10: windows passing the
      filter against those whose hash occurs >= sigma times (the best any occurrence counter can
      do), for 1/16 ... 1 counter per counted window and 1 or 2 hash functions
      (default_filter_bytes uses 1/5 at sigma 20, 1 hash).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from csv_table import write_csv  # noqa: E402
from data_paths import CORPORA  # noqa: E402

RESULTS = HERE / "results"
DEFAULT_CORPORA = ["openjdk-17-doc", "perl-doc", "python3.11-doc", "bible-kjv"]
SETTINGS = [(20, 10), (5, 10)]
STAGES = ["word_df", "counting_filter", "candidates", "exact_seeds", "psi_order", "growth",
          "output"]


def worker(corpus_dir: str, sigma: int, min_length: int) -> None:
    from corpus_miner.corpus.token_corpus import TokenCorpus
    from corpus_miner.phrases.bloomspan import mine_bloomspan

    mine_bloomspan(np.array([1, 2, 1, 2, 0], np.uint32), np.array([0, 2, 4, 5]), 2, 2,
                   ["a", "b", "c"])  # warm the numba cache: compile time is not measured
    corpus = TokenCorpus.load(corpus_dir, mmap=False, verify=False)
    tokens = np.ascontiguousarray(corpus.tokens)
    offsets = np.ascontiguousarray(corpus.doc_offsets)
    _, stats = mine_bloomspan(tokens, offsets, sigma, min_length, corpus.vocab)
    json.dump(stats, sys.stdout)


def corpus_folder(cache: Path, name: str) -> Path:
    from corpus_miner.corpus import load_corpus

    folder = cache / name
    if not (folder / "metadata.json").exists():
        print(f"tokenizing {name} ...", file=sys.stderr)
        load_corpus([str(CORPORA / f"{name}.jsonl.gz")]).save(folder)
    return folder


def run_once(folder: Path, sigma: int, min_length: int) -> dict:
    done = subprocess.run([sys.executable, __file__, "--worker", str(folder), str(sigma),
                           str(min_length)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def stage_rows(names, cache: Path, repeats: int) -> list[dict]:
    rows = []
    for name in names:
        folder = corpus_folder(cache, name)
        for sigma, min_length in SETTINGS:
            runs = [run_once(folder, sigma, min_length) for _ in range(repeats)]
            first = runs[0]
            tokens = first["tokens"]
            med = lambda key, runs=runs: statistics.median(r[key] for r in runs)  # noqa: E731
            row = {"corpus": name, "tokens": tokens, "documents": first["documents"],
                   "sigma": sigma, "min_length": min_length, "repeats": repeats,
                   "seconds": round(med("seconds_total"), 4),
                   "cpu_seconds": round(med("cpu_seconds_total"), 4),
                   "seconds_min": round(min(r["seconds_total"] for r in runs), 4),
                   "us_per_token": round(med("seconds_total") / tokens * 1e6, 4),
                   "us_per_token_min": round(min(r["seconds_total"] for r in runs) / tokens * 1e6,
                                             4),
                   "cpu_us_per_token": round(med("cpu_seconds_total") / tokens * 1e6, 4),
                   "bytes_per_token": round(med("peak_rss_increase_mb") * 2**20 / tokens, 2),
                   "phrases": first["phrases"]}
            for stage in STAGES:
                row[f"cpu_{stage}"] = round(statistics.median(
                    r["cpu_seconds"].get(stage, 0.0) for r in runs), 4)
            for key in ("share_after_word_filter", "share_after_counting_filter"):
                row[key] = round(first[key], 4)
            for key in ("filter_bytes", "seeds", "seeds_left_pruned", "seeds_skipped_by_mask",
                        "nodes_visited", "occurrences_scanned_in_growth", "covered_tokens"):
                row[key] = first[key]
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    return rows


def filter_rows(names, cache: Path, sigma: int = 20, min_length: int = 10) -> list[dict]:
    from corpus_miner.corpus.token_corpus import TokenCorpus
    from corpus_miner.phrases import window_filter as wf
    from corpus_miner.phrases.doc_index import doc_block_shift, doc_block_table

    rows = []
    for name in names:
        corpus = TokenCorpus.load(corpus_folder(cache, name), mmap=False, verify=False)
        tokens = np.ascontiguousarray(corpus.tokens)
        offsets = np.ascontiguousarray(corpus.doc_offsets, dtype=np.int64)
        n = len(tokens)
        shift = doc_block_shift(n, len(offsets) - 1)
        table = doc_block_table(offsets, shift)
        words = wf.word_filter(tokens, offsets, len(corpus.vocab), sigma, min_length, 1)
        # the best any occurrence counter can do: windows whose hash occurs >= sigma times
        hashes = np.empty(n, dtype=np.uint64)
        wf.hash_windows(tokens, offsets, table, shift, words.word_ok, min_length, 0, n, hashes)
        counted = hashes[hashes != 0]
        _, inverse, counts = np.unique(counted, return_inverse=True, return_counts=True)
        true = int((counts[inverse] >= sigma).sum())
        del hashes, counted, inverse
        for per_window in (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1):
            for num_hashes in (1, 2):
                size = max(64, int(words.counted_windows * per_window))
                started = time.process_time()
                counters, bucket_bits = wf.fill_filter(tokens, offsets, table, shift,
                                                       words.word_ok, min_length, size,
                                                       num_hashes)
                _, passed = wf.query_filter(tokens, offsets, table, shift, words.word_ok,
                                            min_length, counters, bucket_bits, num_hashes, sigma)
                cpu = time.process_time() - started
                rows.append({"corpus": name, "tokens": n, "sigma": sigma,
                             "min_length": min_length, "counted_windows": words.counted_windows,
                             "windows_counted_sigma_times": true,
                             "bytes_per_window": per_window, "filter_bytes": size,
                             "num_hashes": num_hashes, "passed": passed,
                             "false_positives": passed - true,
                             "false_positive_share_of_removable":
                                 round((passed - true) / max(words.counted_windows - true, 1), 4),
                             "cpu_seconds_both_passes": round(cpu, 4)})
                print(json.dumps(rows[-1]), file=sys.stderr)
    return rows



def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", nargs="+", default=DEFAULT_CORPORA)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/corpus-miner-bench-cache"))
    parser.add_argument("--skip-filter-sweep", action="store_true")
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_csv(RESULTS / "bloomspan_stages.csv",
              stage_rows(args.corpora, args.cache_dir, args.repeats))
    if not args.skip_filter_sweep:
        write_csv(RESULTS / "bloomspan_filter.csv", filter_rows(args.corpora, args.cache_dir))


if __name__ == "__main__":
    main()
