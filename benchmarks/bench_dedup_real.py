"""Near-duplicate detection side by side on real documentation pages: our default (OPH), our
classic MinHash, datasketch MinHashLSH and rensa, one fresh process per method, medians of 3.

Data set "docpages-5466": every page of postgresql-doc-15, python3.11-doc and perl-doc plus the
first 2,840 pages of openjdk-17-doc (5,316 pages, in that order), with 150 planted near-duplicate
copies (light word edits, truncations and paragraph moves of a random earlier page, inserted at a
random later position; benchmarks/groundtruth.py): 5,466 documents, ~64M characters.

Each worker process loads the texts into memory (a list of str), warms up (JIT cache load on 20
documents), then three times runs texts -> duplicate flags with 256 permutations, threshold 0.85,
13 bands x 19 rows (rensa: 16 x 16, it needs bands dividing num_perm), in input order (query,
then insert). Figures per method:
- seconds: median CPU time of the whole run (the box is shared; single-threaded work, so CPU time
  is time on one core), wall_seconds next to it; shingle_seconds: CPU time of the shingling alone
  (ours: normalise + hash the shingles of every chunk, a second pass after the run; Python
  libraries: normalise + the set of character 5-grams, as their users must, timed inside the run);
  sketch_seconds = seconds - shingle_seconds (sketch, band keys, index);
- peak_rss_mb: the worker's maximum RSS (imports, texts and working memory: what `time -v` shows);
  texts_rss_mb: its RSS after imports, loading the texts and the warm-up, before the runs;
  working_mb: the peak RSS during the runs minus texts_rss (the method's own working memory);
- copies_found: planted copies flagged, of 150; false_removals: flagged documents whose exact
  Jaccard with every earlier document is below 0.7 (candidates from an exact band table at a low
  threshold, a seed no method uses).
Classic MinHash's band keys are checked against the plain kernel (every shingle occurrence x every
permutation) on all documents: `signatures_identical` in the CSV.

Usage: python benchmarks/bench_dedup_real.py [--repeats 3] [--work DIR]
Writes benchmarks/results/bench_dedup_real.csv.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # one core, like the Python libraries

import numpy as np  # noqa: E402

# groundtruth, eval_dedup_quality: imported where used, so that a worker process imports only its
# own method's library
sys.path.insert(0, str(Path(__file__).resolve().parent))

RESULTS = Path(__file__).resolve().parent / "results"
DATASET = "docpages-5466"
SOURCES = [("postgresql-doc-15", None), ("python3.11-doc", None), ("perl-doc", None),
           ("openjdk-17-doc", 2840)]
COPIES = 150
LIGHT_EDITS = (0.01, 0.02, 0.03)  # copies stay near-duplicates (most above J = 0.85)
NUM_PERM, THRESHOLD, BANDS, ROWS, SHINGLE = 256, 0.85, 13, 19, 5
RENSA_BANDS = 16  # rensa needs num_perm divisible by the bands: 16 x 16, its usual setting at 256
METHODS = ("corpus-miner oph", "corpus-miner minhash", "datasketch", "rensa")


def build_dataset(work: Path) -> Path:
    """Write the documents (JSONL: id, text, copy_of) once; later runs reuse the file."""
    from groundtruth import load_texts, plant_near_duplicates
    path = work / f"{DATASET}.jsonl"
    if path.exists():
        return path
    docs = []
    for name, limit in SOURCES:
        docs += load_texts([name], limit_per_corpus=limit)
    ids, texts, planted = plant_near_duplicates(docs, COPIES, seed=0, strengths=LIGHT_EDITS)
    copy_of = {copy: original for copy, original, _, _ in planted}
    work.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for i, (doc_id, text) in enumerate(zip(ids, texts)):
            handle.write(json.dumps({"id": doc_id, "text": text, "copy_of": copy_of.get(i)}) + "\n")
    return path


def read_dataset(path: Path) -> tuple[list[str], list]:
    """(texts, copy_of): one record at a time, so that only the texts stay in memory."""
    texts, copy_of = [], []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            texts.append(record["text"])
            copy_of.append(record["copy_of"])
    return texts, copy_of


# -- the methods: texts -> flags, plus their shingling alone ---------------------------------------
def python_grams(text: str) -> list[bytes]:
    text = " ".join(text.lower().split())
    return list({text[i:i + SHINGLE].encode() for i in range(max(1, len(text) - SHINGLE + 1))})


def run_ours(texts, sketch):
    """(flags, CPU seconds of shingling alone: a second pass over the chunks, as the pipeline)."""
    from corpus_miner.dedup import LSHBloom
    from corpus_miner.dedup.pipeline import chunk_bounds, shingles_for_texts
    model = LSHBloom(threshold=THRESHOLD, num_perm=NUM_PERM, num_bands=BANDS, sketch=sketch)
    flags = model.deduplicate(texts).is_duplicate
    start = time.process_time()
    for first, stop in chunk_bounds(texts):
        shingles_for_texts(texts[first:stop], model.params_)
    return flags, time.process_time() - start


def run_python_library(texts, new_sketch, update, lsh):
    """(flags, seconds of shingling inside the run) for a library used as its users do: grams
    built in Python, one sketch per document, query then insert."""
    flags, shingling = np.zeros(len(texts), bool), 0.0
    for d, text in enumerate(texts):
        start = time.process_time()
        grams = python_grams(text)
        shingling += time.process_time() - start
        sketch = new_sketch()
        update(sketch, grams)
        flags[d] = bool(lsh.query(sketch))
        lsh.insert(d, sketch)
    return flags, shingling


def run_datasketch(texts):
    from datasketch import MinHash, MinHashLSH
    return run_python_library(texts, lambda: MinHash(num_perm=NUM_PERM, seed=1),
                              lambda m, grams: m.update_batch(grams),
                              MinHashLSH(num_perm=NUM_PERM, params=(BANDS, ROWS)))


def run_rensa(texts):
    from rensa import RMinHash, RMinHashLSH
    return run_python_library(texts, lambda: RMinHash(num_perm=NUM_PERM, seed=1),
                              lambda m, grams: m.update(grams),
                              RMinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM,
                                          num_bands=RENSA_BANDS))


RUNS = {"corpus-miner oph": lambda t: run_ours(t, "oph"),
        "corpus-miner minhash": lambda t: run_ours(t, "minhash"),
        "datasketch": run_datasketch, "rensa": run_rensa}


def classic_matches_plain(texts) -> bool:
    """Band keys of the classic kernel equal those of the plain kernel on every document."""
    from corpus_miner.dedup.banding import band_keys
    from corpus_miner.dedup.minhash import minhash_kernel, minhash_plain_kernel, permutations
    from corpus_miner.dedup.params import LSHBloomParams
    from corpus_miner.dedup.pipeline import chunk_bounds, shingles_for_texts
    params = LSHBloomParams(num_perm=NUM_PERM, sketch="minhash").validated()
    a, b = permutations(NUM_PERM, params.seed)
    for start, stop in chunk_bounds(texts):
        hashes, offsets = shingles_for_texts(texts[start:stop], params)
        fast = band_keys(minhash_kernel(hashes, offsets, a, b), BANDS, ROWS)
        plain = band_keys(minhash_plain_kernel(hashes, offsets, a, b), BANDS, ROWS)
        if not np.array_equal(fast, plain):
            return False
    return True


def memory(field: str) -> int:
    """Bytes of a memory figure of this process (/proc/self/status: VmRSS now, VmHWM its peak;
    getrusage's ru_maxrss would include the parent's peak, which survives exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def worker(method: str, dataset: Path, repeats: int) -> None:
    """Runs in a fresh process; prints one JSON line."""
    texts, _ = read_dataset(dataset)
    run = RUNS[method]
    run(texts[:20])  # JIT cache load / library warm-up
    load_peak, texts_rss = memory("VmHWM"), memory("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # restart the peak: the runs' own from here
    wall, cpu, shingle = [], [], []
    for _ in range(repeats):
        wall_start, cpu_start = time.perf_counter(), time.process_time()
        flags, shingling = run(texts)
        wall.append(time.perf_counter() - wall_start)
        cpu.append(time.process_time() - cpu_start)
        if method.startswith("corpus-miner"):  # its shingling pass came after the run
            cpu[-1] -= shingling
            wall[-1] -= shingling
        shingle.append(shingling)
    run_peak = memory("VmHWM")
    peak = max(load_peak, run_peak)
    print(json.dumps({"seconds": statistics.median(cpu), "wall_seconds": statistics.median(wall),
                      "shingle_seconds": statistics.median(shingle),
                      "peak_rss": peak, "texts_rss": texts_rss, "run_peak_rss": run_peak,
                      "flags": np.flatnonzero(flags).tolist()}))


def run_worker(method: str, dataset: Path, repeats: int) -> dict:
    command = [sys.executable, __file__, "--worker", method, "--dataset", str(dataset),
               "--repeats", str(repeats)]
    proc = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def best_earlier_jaccards(texts, work: Path) -> np.ndarray:
    """Exact best Jaccard of each document with an earlier one (cached next to the data)."""
    from groundtruth import best_earlier_jaccard, candidate_pairs
    path = work / f"{DATASET}.best_jaccard.npy"
    if not path.exists():
        np.save(path, best_earlier_jaccard(texts, candidate_pairs(texts)))
    return np.load(path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/tmp/corpus-miner-bench"),
                        help="where the data set and its ground truth are cached")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--worker", choices=METHODS, help=argparse.SUPPRESS)
    parser.add_argument("--dataset", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, args.dataset, args.repeats)
        return 0
    dataset = build_dataset(args.work)
    texts, copy_of = read_dataset(dataset)
    n_docs, chars = len(texts), sum(map(len, texts))
    print(f"{DATASET}: {n_docs} documents, {chars / 1e6:.1f}M characters", flush=True)
    best = best_earlier_jaccards(texts, args.work)
    copies = np.array([c is not None for c in copy_of])
    identical = classic_matches_plain(texts)
    print(f"classic MinHash band keys identical to the plain kernel: {identical}", flush=True)
    rows = []
    for method in args.methods:
        result = run_worker(method, dataset, args.repeats)
        flags = np.zeros(n_docs, bool)
        flags[result["flags"]] = True
        sketch = result["seconds"] - result["shingle_seconds"]
        row = {"dataset": DATASET, "method": method, "n_docs": n_docs, "num_perm": NUM_PERM,
               "bands": RENSA_BANDS if method == "rensa" else BANDS,
               "rows": NUM_PERM // RENSA_BANDS if method == "rensa" else ROWS,
               "seconds": round(result["seconds"], 3),
               "wall_seconds": round(result["wall_seconds"], 3),
               "docs_per_s": round(n_docs / result["seconds"], 1),
               "shingle_seconds": round(result["shingle_seconds"], 3),
               "sketch_seconds": round(sketch, 3),
               "docs_per_s_excluding_shingling": round(n_docs / max(sketch, 1e-9), 1),
               "peak_rss_mb": round(result["peak_rss"] / 2**20, 1),
               "texts_rss_mb": round(result["texts_rss"] / 2**20, 1),
               "working_mb": round((result["run_peak_rss"] - result["texts_rss"]) / 2**20, 1),
               "flagged": int(flags.sum()), "copies_found": int((flags & copies).sum()),
               "copies": int(copies.sum()),
               "false_removals": int((flags & (best < 0.7)).sum()),
               "signatures_identical": identical if method == "corpus-miner minhash" else ""}
        rows.append(row)
        print(f"{method:22s} {row['docs_per_s']:8.0f} docs/s  excl. shingling "
              f"{row['docs_per_s_excluding_shingling']:8.0f} docs/s  "
              f"peak {row['peak_rss_mb']:6.1f} MB "
              f"(before runs {row['texts_rss_mb']:.1f}, working {row['working_mb']:.1f})  "
              f"copies {row['copies_found']}/{row['copies']}  "
              f"false removals {row['false_removals']}", flush=True)
    from csv_table import write_csv
    write_csv(RESULTS / "bench_dedup_real.csv", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
