"""Ingestion speed and memory: corpus-miner's tokenizer vs the naive re.findall + dict baseline.

Each (corpus, method, repeat) runs in a fresh subprocess pinned to one core, so peak RSS is the
method's own. Timed: read + decompress + JSON decode + lowercase + tokenize + id assignment, after
a warm-up on a tiny input (which loads numba's compiled cache and the code-point table; that
one-off cost is reported separately as startup_s). The machine may be shared, so besides wall
seconds the child's CPU seconds are reported (tokens_per_cpu_s): on one pinned core that is the
speed an idle core would give; the load average before each corpus is recorded (load_before).
Both methods must produce the same token id
sequence and vocabulary; the script fails otherwise.

    python benchmarks/bench_ingest.py                     # openjdk-17-doc and all corpora together
    python benchmarks/bench_ingest.py --corpus X.jsonl.gz --repeats 5
    python benchmarks/bench_ingest.py --each --corpus A.jsonl.gz B.jsonl.gz --out results/x.csv

Writes benchmarks/results/bench_ingest.csv (median of the repeats per method) and .png.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from csv_table import write_csv  # noqa: E402
from data_paths import CORPORA  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"

CHILD = r'''
import gzip, hashlib, json, os, sys, time
os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
import numpy as np, psutil, pyarrow as pa
pa.set_cpu_count(1); pa.set_io_thread_count(1)
method, paths = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
from corpus_miner.corpus import load_corpus
from corpus_miner.corpus.tokenizer import token_regex
token_run = token_regex()

def ours(paths):
    corpus = load_corpus(paths)
    return corpus.n_docs, corpus.tokens, list(corpus.vocab)

def baseline(paths):
    vocab, ids, n_docs = {}, [], 0
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                text = json.loads(line)["text"]
                n_docs += 1
                for token in token_run.findall(text.lower()):
                    ids.append(vocab.setdefault(token, len(vocab)))
    return n_docs, np.array(ids, dtype=np.uint32), list(vocab)

run = ours if method == "corpus-miner" else baseline
warm = os.path.join(os.environ["BENCH_TMP"], "warm.jsonl.gz")
run([warm])
startup = time.perf_counter() - t0
base_rss = psutil.Process().memory_info().rss
t1, c1 = time.perf_counter(), time.process_time()
n_docs, tokens, vocab = run(paths)
seconds, cpu = time.perf_counter() - t1, time.process_time() - c1
# VmHWM, not ru_maxrss: the latter can carry the parent's RSS over fork+exec.
with open("/proc/self/status") as fh:
    peak = next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmHWM:"))
digest = hashlib.sha256(tokens.tobytes() + "\n".join(vocab).encode()).hexdigest()
print(json.dumps(dict(documents=n_docs, tokens=int(len(tokens)), vocabulary=len(vocab),
                      seconds=seconds, cpu_s=cpu, startup_s=startup, peak_rss_mb=peak / 2**20,
                      base_rss_mb=base_rss / 2**20, digest=digest)))
'''

METHODS = ("corpus-miner", "re.findall+dict")


def run_child(method: str, paths: list[str], tmp: Path) -> dict:
    env = dict(os.environ, BENCH_TMP=str(tmp), NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", CHILD, method, *paths], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench(label: str, paths: list[str], repeats: int, tmp: Path) -> list[dict]:
    rows = []
    runs = {m: [] for m in METHODS}
    load = os.getloadavg()[0]  # the machine may be shared: recorded with the figures
    for _ in range(repeats):  # interleave methods so machine noise hits both alike
        for method in METHODS:
            runs[method].append(run_child(method, paths, tmp))
    digests = {r["digest"] for m in METHODS for r in runs[m]}
    if len(digests) != 1:
        raise SystemExit(f"{label}: token sequences differ between methods: {digests}")
    for method in METHODS:
        rs = runs[method]
        seconds = statistics.median(r["seconds"] for r in rs)
        cpu = statistics.median(r["cpu_s"] for r in rs)
        peak = statistics.median(r["peak_rss_mb"] for r in rs)
        base = statistics.median(r["base_rss_mb"] for r in rs)
        tokens = rs[0]["tokens"]
        rows.append(dict(
            corpus=label, method=method, repeats=repeats, documents=rs[0]["documents"],
            tokens=tokens, vocabulary=rs[0]["vocabulary"], seconds=round(seconds, 3),
            tokens_per_s=round(tokens / seconds), cpu_s=round(cpu, 3),
            tokens_per_cpu_s=round(tokens / cpu), startup_s=round(
                statistics.median(r["startup_s"] for r in rs), 3),
            peak_rss_mb=round(peak, 1), base_rss_mb=round(base, 1),
            bytes_per_token_over_base=round((peak - base) * 2**20 / max(tokens, 1), 2),
            same_tokens=True, load_before=round(load, 1)))
    ours, naive = rows
    ours["speedup_vs_baseline"] = round(naive["seconds"] / ours["seconds"], 2)
    naive["speedup_vs_baseline"] = 1.0
    return rows


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = sorted({r["corpus"] for r in rows}, key=[r["corpus"] for r in rows].index)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    width = 0.38
    for k, method in enumerate(METHODS):
        values = [float(next(r["tokens_per_cpu_s"] for r in rows
                             if r["corpus"] == c and r["method"] == method)) / 1e6 for c in labels]
        bars = ax.bar([i + (k - 0.5) * width for i in range(len(labels))], values, width,
                      label=method)
        ax.bar_label(bars, fmt="%.1f")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("million tokens per CPU second")
    ax.set_title("Ingestion on one core: read + decode + tokenize + ids")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", nargs="+", help="gzipped JSONL file(s) (default: openjdk-17-doc"
                        " alone, then all corpora of CORPUS_MINER_CORPORA together)")
    parser.add_argument("--each", action="store_true",
                        help="measure each --corpus file on its own (one row pair per file)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_ingest.csv")
    parser.add_argument("--replot", action="store_true", help="only redraw the plot from --out")
    args = parser.parse_args(argv)
    if args.replot:
        with open(args.out, newline="") as fh:
            plot(list(csv.DictReader(fh)), args.out.with_suffix(".png"))
        return 0
    if args.corpus and args.each:
        cases = [(Path(p).name.split(".")[0], [p]) for p in args.corpus]
    elif args.corpus:
        cases = [("+".join(Path(p).name.split(".")[0] for p in args.corpus), args.corpus)]
    else:
        every = sorted(str(p) for p in CORPORA.glob("*.jsonl.gz"))
        cases = [("openjdk-17-doc", [str(CORPORA / "openjdk-17-doc.jsonl.gz")]),
                 (f"all-{len(every)}-corpora", every)]
    tmp = args.out.parent / ".bench_ingest_tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    import gzip

    with gzip.open(tmp / "warm.jsonl.gz", "wt") as fh:
        fh.write(json.dumps({"id": "w", "text": "Warm up ΣΑΣ İ naïve 42"}) + "\n")
    rows = []
    for label, paths in cases:
        rows += bench(label, paths, args.repeats, tmp)
        for row in rows[-2:]:
            print(json.dumps(row), flush=True)
    (tmp / "warm.jsonl.gz").unlink()
    tmp.rmdir()
    write_csv(args.out, rows)
    plot(rows, args.out.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
