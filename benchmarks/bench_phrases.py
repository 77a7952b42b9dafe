"""BloomSpan vs FHK side by side: time, peak memory and identical answers across corpus sizes.

    python benchmarks/bench_phrases.py [--quick] [--timeout 300] [--cache-dir DIR]

Corpora: prefixes (1/8, 1/4, 1/2, all documents) of the real openjdk-17-doc corpus, all real
corpora concatenated, and the generators: Synthetic 1 (5,000 unique words per document, the
article's three phrases), a dense Synthetic 2 (15 windows of up to 100 tokens from 5 families of
200 per document of 100 background words) and web (one site per 100 pages). Real corpora are
tokenized once with corpus_miner.corpus.load_corpus and cached as saved TokenCorpus folders.
Every (corpus, setting, algorithm) runs in its own subprocess, so peak RSS belongs to that run
alone; the worker warms the numba cache on a tiny corpus first, so compile time is not measured.

Columns of benchmarks/results/bench_phrases.csv:
  seconds          wall time of the mining call (corpus already loaded), median of `runs` runs
  peak_rss_mb      peak resident memory of the worker process (Python, numba, corpus and mining)
  bytes_per_token  (peak RSS during the mining call - RSS just before it) / tokens: what mining
                   adds on top of the loaded corpus (itself 4 bytes/token of uint32 ids); the
                   peak is the kernel's high-water mark, reset right before the call
  us_per_token     seconds / tokens in microseconds
  identical        all algorithms returned the same rows (phrase, df, occurrences, order)
  auto_choice      for algorithm "auto" (the default): the algorithm it picked
Also writes bench_phrases.png (log-log time and memory against corpus size).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from corpus_miner.corpus.token_corpus import TOKENIZER

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from csv_table import write_csv  # noqa: E402
from data_paths import CORPORA  # noqa: E402

RESULTS = HERE / "results"
REAL = ["openjdk-17-doc", "perl-doc", "python3.11-doc", "host-copyright", "postgresql-doc-15",
        "bible-kjv", "ruby3.1-doc", "manpages", "debian-reference-en"]
SETTINGS = [(20, 10), (3, 5)]  # the article's main setting, and a permissive one
MAX_REPEATS = 3  # each run is repeated (same process) up to 3 times or until 15 s were spent;
REPEAT_BUDGET_SECONDS = 15.0  # the CSV has the median (the machine is shared, timings are noisy)
ALGORITHMS = ["bloomspan", "fhk", "auto"]
COLUMNS = ["corpus", "documents", "tokens", "algorithm", "sigma", "min_length", "seconds",
           "peak_rss_mb", "bytes_per_token", "us_per_token", "phrases", "identical", "runs",
           "auto_choice"]


# -- worker: one mining run in a fresh process ------------------------------------------------
def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    raise SystemExit(f"/proc/self/status has no {field}: this benchmark needs Linux")


def worker(corpus_dir: str, algorithm: str, sigma: int, min_length: int) -> None:
    from types import SimpleNamespace

    from corpus_miner.corpus.token_corpus import TokenCorpus
    from corpus_miner.memory import PeakRss
    from corpus_miner.phrases.bloomspan import mine_bloomspan
    from corpus_miner.phrases.exact import mine_fhk
    from corpus_miner.phrases.miner import BloomSpan

    def mine_auto(tokens, offsets, sigma, min_length, vocab):
        corpus = SimpleNamespace(tokens=tokens, doc_offsets=offsets, vocab=vocab)
        fitted = BloomSpan(sigma=sigma, min_length=min_length, algorithm="auto").fit(corpus)
        return fitted.phrases_, fitted.stats_

    miner = {"bloomspan": mine_bloomspan, "fhk": mine_fhk, "auto": mine_auto}[algorithm]
    tiny = np.array([1, 2, 3, 1, 2, 3, 0], dtype=np.uint32)
    miner(tiny, np.array([0, 3, 6, 7], dtype=np.int64), 2, 2, ["a", "b", "c", "d"])  # warm numba
    corpus = TokenCorpus.load(corpus_dir, mmap=False, verify=False)
    tokens = np.ascontiguousarray(corpus.tokens)
    offsets = np.ascontiguousarray(corpus.doc_offsets)
    # VmHWM, not getrusage: Linux carries ru_maxrss over from the parent across fork + exec.
    process_peak = _status_mb("VmHWM")
    times, added, peaks = [], [], []
    while len(times) < MAX_REPEATS and (not times or sum(times) < REPEAT_BUDGET_SECONDS):
        step = PeakRss()  # resets the kernel's high-water mark: this call's peak alone
        started = time.perf_counter()
        table, stats = miner(tokens, offsets, sigma, min_length, corpus.vocab)
        times.append(time.perf_counter() - started)
        memory = step.report()
        if memory["peak_rss_scope"] != "step":
            raise SystemExit("cannot measure the peak of one step here (needs Linux /proc)")
        peaks.append(memory["peak_rss_mb"])
        added.append(memory["peak_rss_mb"] - memory["rss_before_mb"])
    digest = hashlib.sha256()
    for i in range(len(table)):
        digest.update(table.phrase_ids(i).tobytes())
        digest.update(f"|{int(table.df[i])}|{int(table.occurrences[i])}\n".encode())
    json.dump({"seconds": float(np.median(times)), "runs": len(times),
               "peak_rss_mb": max(process_peak, *peaks), "mining_added_mb": max(0.0, max(added)),
               "phrases": len(table), "digest": digest.hexdigest(),
               "top": [table.text(i)[:100] for i in range(min(3, len(table)))],
               "stage_seconds": stats.get("seconds", {}),
               "auto_choice": stats.get("auto_choice", "")}, sys.stdout)


# -- corpora ------------------------------------------------------------------------------------
def _save(corpus, path: Path) -> Path:
    if not (path / "metadata.json").exists():
        corpus.save(path)
    return path


def _prefix(corpus, n_docs: int):
    from corpus_miner.corpus.token_corpus import TokenCorpus

    end = int(corpus.doc_offsets[n_docs])
    return TokenCorpus(corpus.tokens[:end], corpus.doc_offsets[:n_docs + 1],
                       [corpus.doc_ids[i] for i in range(n_docs)], corpus.vocab)


def _from_token_lists(docs, name: str):
    from corpus_miner.corpus.token_corpus import TokenCorpus

    vocab: dict[str, int] = {}
    ids = np.fromiter((vocab.setdefault(w, len(vocab)) for doc in docs for w in doc),
                      dtype=np.uint32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(doc) for doc in docs], out=offsets[1:])
    return TokenCorpus(ids, offsets, [f"{name}-{i}" for i in range(len(docs))], list(vocab))


# Cached corpora are only valid for one token rule and one web generator: name the cache by them.
CACHE_NAME = "corpus-miner-bench-" + hashlib.sha256(
    (TOKENIZER + "\0web-generator-2").encode()).hexdigest()[:10]
LABEL_PREFIX = {"openjdk-17-doc": "openjdk-17-doc", "all-real": "all real corpora",
                "synthetic1": "synthetic1 ", "synthetic2": "synthetic2 ", "web": "web "}


def build_corpora(cache: Path, quick: bool, only: str | None = None) -> list[tuple[str, str, Path]]:
    """(family, label, saved corpus folder) for every benchmark corpus (or those of family
    `only`), smallest first per family."""
    cache.mkdir(parents=True, exist_ok=True)
    real = [] if only in ("synthetic1", "synthetic2", "web") else _real_corpora(cache, quick)
    real = [c for c in real if only in (None, c[0])]
    return real + _generated_corpora(cache, quick, only)


def _real_corpora(cache: Path, quick: bool) -> list[tuple[str, str, Path]]:
    from corpus_miner.corpus import load_corpus

    out = []
    jdk_path = cache / "openjdk-17-doc"
    if not (jdk_path / "metadata.json").exists():
        print("tokenizing openjdk-17-doc ...", file=sys.stderr)
        _save(load_corpus([str(CORPORA / "openjdk-17-doc.jsonl.gz")]), jdk_path)
    from corpus_miner.corpus.token_corpus import TokenCorpus

    jdk = TokenCorpus.load(jdk_path, mmap=False, verify=False)
    fractions = (8, 2) if quick else (8, 4, 2)
    for denominator in fractions:
        n = jdk.n_docs // denominator
        out.append(("openjdk-17-doc", f"openjdk-17-doc 1/{denominator}",
                    _save(_prefix(jdk, n), cache / f"openjdk-17-doc-1of{denominator}")))
    out.append(("openjdk-17-doc", "openjdk-17-doc", jdk_path))
    if not quick:
        all_path = cache / "all-real"
        if not (all_path / "metadata.json").exists():
            print("tokenizing all real corpora ...", file=sys.stderr)
            _save(load_corpus([str(CORPORA / f"{name}.jsonl.gz") for name in REAL]), all_path)
        out.append(("all-real", "all real corpora", all_path))
    return out


def _generated_corpora(cache: Path, quick: bool, only: str | None) -> list[tuple[str, str, Path]]:
    from corpus_miner import synth

    out = []
    sizes = {
        "synthetic1": [(250,), (500,), (1000,)] if not quick else [(100,)],
        "synthetic2": [(1000,), (2000,), (4000,), (8000,)] if not quick else [(500,)],
        "web": [(2500,), (5000,), (10000,), (20000,)] if not quick else [(1000,)],
    }
    makers = {"synthetic1": lambda n: synth.synthetic1(n, 5000, seed=1),
              # dense: long windows (up to 100 tokens) of 5 families of 200, little background
              "synthetic2": lambda n: synth.synthetic2(n, 100, n_families=5, family_length=200,
                                                       windows_per_doc=15, max_window=100, seed=1),
              "web": lambda n: synth.web(n, n_sites=max(10, n // 100), seed=1)}
    for family, size_list in sizes.items():
        if only not in (None, family):
            continue
        for (n,) in size_list:
            path = cache / f"{family}-{n}"
            if not (path / "metadata.json").exists():
                print(f"generating {family} with {n} documents ...", file=sys.stderr)
                _save(_from_token_lists(makers[family](n), family), path)
            out.append((family, f"{family} {n} docs", path))
    return out


# -- driver -------------------------------------------------------------------------------------
def run_one(path: Path, algorithm: str, sigma: int, min_length: int, timeout: float) -> dict | None:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(path), algorithm,
               str(sigma), str(min_length)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"  {algorithm}: timed out after {timeout:.0f} s", file=sys.stderr)
        return None
    if done.returncode != 0:
        print(f"  {algorithm}: failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout)



def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from corpus_miner.io.atomic import atomic_path

    fig, (ax_time, ax_mem) = plt.subplots(1, 2, figsize=(13, 5.5))
    families = sorted({r["family"] for r in rows})
    colors = dict(zip(families, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for family in families:
        for algorithm, style in (("bloomspan", "-o"), ("fhk", "--s")):  # auto is one of them
            for sigma, min_length in SETTINGS:
                points = sorted((r["tokens"], r["seconds"], r["bytes_per_token"]) for r in rows
                                if r["family"] == family and r["algorithm"] == algorithm
                                and r["sigma"] == sigma and r["min_length"] == min_length
                                and r["seconds"] != "")
                if not points:
                    continue
                x = [p[0] for p in points]
                fill = "full" if sigma == SETTINGS[0][0] else "none"
                label = f"{family} {algorithm} s{sigma}/m{min_length}"
                ax_time.plot(x, [p[1] for p in points], style, color=colors[family],
                             fillstyle=fill, label=label, alpha=0.85)
                ax_mem.plot(x, [p[2] for p in points], style, color=colors[family],
                            fillstyle=fill, alpha=0.85)
    ax_time.set(xscale="log", yscale="log", xlabel="corpus tokens", ylabel="mining seconds",
                title="time (solid: bloomspan, dashed: fhk; filled: sigma 20/min 10)")
    ax_mem.set(xscale="log", yscale="log", xlabel="corpus tokens",
               ylabel="mining memory, bytes per token", title="peak RSS added by mining")
    for ax in (ax_time, ax_mem):
        ax.grid(True, which="both", alpha=0.3)
    ax_time.legend(fontsize=6, ncol=2, loc="upper left")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
        os.chmod(tmp, 0o644)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few small corpora only")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per run (default 300)")
    parser.add_argument("--cache-dir", default=os.path.join(tempfile.gettempdir(),
                                                            CACHE_NAME),
                        help="where tokenized corpora are kept between runs")
    parser.add_argument("--output", default=str(RESULTS / "bench_phrases.csv"))
    parser.add_argument("--only", choices=sorted(LABEL_PREFIX),
                        help="measure one family again; the output keeps the other rows")
    args = parser.parse_args(argv)
    started = time.time()
    corpora = build_corpora(Path(args.cache_dir), args.quick, args.only)
    rows = []
    if args.only:
        with open(args.output, newline="") as f:
            rows = [r for r in csv.DictReader(f)
                    if not r["corpus"].startswith(LABEL_PREFIX[args.only])]
    for family, label, path in corpora:
        meta = json.loads((path / "metadata.json").read_text())
        n_tokens, n_docs = int(meta["n_tokens"]), int(meta["n_docs"])
        for sigma, min_length in SETTINGS:
            print(f"{label}: {n_tokens} tokens, sigma {sigma}, min length {min_length}",
                  file=sys.stderr)
            results = {a: run_one(path, a, sigma, min_length, args.timeout) for a in ALGORITHMS}
            digests = {r["digest"] for r in results.values() if r}
            identical = "" if len(digests) == 0 or None in results.values() else \
                str(len(digests) == 1).lower()
            for algorithm, result in results.items():
                row = {"family": family, "corpus": label, "documents": n_docs, "tokens": n_tokens,
                       "algorithm": algorithm, "sigma": sigma, "min_length": min_length,
                       "identical": identical}
                if result:
                    added = result["mining_added_mb"]
                    row.update(seconds=round(result["seconds"], 3),
                               peak_rss_mb=round(result["peak_rss_mb"], 1),
                               bytes_per_token=round(added * 2**20 / max(n_tokens, 1), 2),
                               us_per_token=round(result["seconds"] * 1e6 / max(n_tokens, 1), 4),
                               phrases=result["phrases"], runs=result["runs"],
                               auto_choice=result["auto_choice"])
                    print(f"  {algorithm}: {result['seconds']:.2f} s, "
                          f"{row['bytes_per_token']} B/token"
                          f", {result['phrases']} phrases, identical={identical}", file=sys.stderr)
                else:
                    row.update(seconds="", peak_rss_mb="", bytes_per_token="", us_per_token="",
                               phrases="", runs=0)
                rows.append(row)
            # keep partial results if interrupted
            write_csv(Path(args.output), rows, COLUMNS, announce=False)
    plot(rows, Path(args.output).with_suffix(".png"))
    print(f"done in {time.time() - started:.0f} s: {args.output}", file=sys.stderr)
    return 0 if all(r["identical"] != "false" for r in rows) else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit(main())
