"""Report and clean next to mining: seconds and peak RSS of whole CLI runs, and a stage breakdown.

    python benchmarks/bench_report_clean.py [--corpus PATH] [--sigma 20] [--min-length 10]
                                            [--repeats 3]

Each command runs as `python -m corpus_miner ...` in its own subprocess (wrapped by a tiny parent
that reads the child's peak RSS from getrusage, so every figure belongs to that run alone). A
warm-up run fills the numba cache first, so compile time is not measured. Steps (same inputs):

  mine            corpus-miner phrases   (read + tokenize + BloomSpan + write phrases)
  report          corpus-miner report    (the same + coverage + second read + HTML + JSON)
  report_groups   report --group-by id   (one group per document: the most groups possible)
  clean_remove    corpus-miner clean     (the same + coverage + second read + rewrite .jsonl.gz)
  clean_annotate  clean --mode annotate -o .parquet

Then one in-process run times the stages (load, mine, coverage, collect, html, clean write).
Writes benchmarks/results/bench_report_clean.csv (one row per run) and
bench_report_clean_stages.csv; prints medians and the ratio to `mine`.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))
from data_paths import CORPORA  # noqa: E402

DEFAULT_CORPUS = CORPORA / "openjdk-17-doc.jsonl.gz"

# runs one command and prints {"seconds", "peak_rss_mb"} of that child alone
_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
seconds = time.perf_counter() - start
if done.returncode:
    sys.exit(done.stderr)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_rss_mb": rss}))
"""

_STAGES = """
import json, sys, time
from corpus_miner.corpus import load_corpus
from corpus_miner.io import read_documents
from corpus_miner.phrases import BloomSpan
from corpus_miner.coverage.clean import Cleaner
from corpus_miner.coverage.coverage import Coverage
from corpus_miner.coverage.report import CoverageReport
path, sigma, min_length, tmp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
t = {}
clock = time.perf_counter()
def lap(name):
    global clock
    now = time.perf_counter(); t[name] = now - clock; clock = now
corpus = load_corpus([path]); lap("load")
miner = BloomSpan(sigma=sigma, min_length=min_length).fit(corpus); lap("mine")
coverage = Coverage.from_miner(miner, corpus); lap("coverage")
report = CoverageReport(coverage).collect(read_documents([path]), corpus.doc_ids); lap("collect")
report.write_html(tmp + "/stages.html"); lap("html")
Cleaner().fit(corpus, coverage).write([path], tmp + "/stages.jsonl.gz"); lap("clean_write")
t["tokens"] = corpus.n_tokens; t["documents"] = corpus.n_docs
t["coverage_share"] = coverage.share; t["phrases"] = len(miner.phrases_)
print(json.dumps(t))
"""


def steps(corpus: Path, sigma: int, min_length: int, tmp: Path) -> dict[str, list[str]]:
    base = [str(corpus), "--sigma", str(sigma), "--min-length", str(min_length)]
    cli = [sys.executable, "-m", "corpus_miner"]
    return {
        "mine": cli + ["phrases", *base, "-o", str(tmp / "p.jsonl")],
        "report": cli + ["report", *base, "-o", str(tmp / "r.html"), "--json", str(tmp / "r.json")],
        "report_groups": cli + ["report", *base, "--group-by", "id", "--json",
                                str(tmp / "g.json")],
        "clean_remove": cli + ["clean", *base, "-o", str(tmp / "c.jsonl.gz")],
        "clean_annotate": cli + ["clean", *base, "--mode", "annotate", "-o",
                                 str(tmp / "a.parquet")],
    }


def measure(command: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-c", _MEASURE, *command], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--sigma", type=int, default=20)
    parser.add_argument("--min-length", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        out = subprocess.run([sys.executable, "-c", _STAGES, str(args.corpus), str(args.sigma),
                              str(args.min_length), tmp_name], capture_output=True, text=True,
                             check=True)  # also the warm-up: fills the numba cache
        stages = json.loads(out.stdout)
        rows = []
        commands = steps(args.corpus, args.sigma, args.min_length, tmp)
        for run in range(args.repeats):
            for step, command in commands.items():  # interleaved: drift hits every step alike
                result = measure(command)
                rows.append({"corpus": args.corpus.name, "documents": stages["documents"],
                             "tokens": stages["tokens"], "sigma": args.sigma,
                             "min_length": args.min_length, "step": step, "run": run,
                             "seconds": round(result["seconds"], 3),
                             "peak_rss_mb": round(result["peak_rss_mb"], 1),
                             "rss_bytes_per_token": round(result["peak_rss_mb"] * 2**20
                                                          / stages["tokens"], 2)})
                print(f"{step:15s} run {run}: {result['seconds']:7.2f} s  "
                      f"{result['peak_rss_mb']:7.0f} MB", file=sys.stderr)
    with open(RESULTS / "bench_report_clean.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with open(RESULTS / "bench_report_clean_stages.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["stage", "seconds"])
        for name in ("load", "mine", "coverage", "collect", "html", "clean_write"):
            writer.writerow([name, round(stages[name], 3)])
    print(f"\n{args.corpus.name}: {stages['documents']:,} documents, {stages['tokens']:,} tokens, "
          f"{stages['phrases']:,} phrases, coverage {100 * stages['coverage_share']:.1f}%")
    print(f"{'step':15s} {'median s':>9s} {'x mine':>7s} {'peak MB':>8s} {'B/token':>8s}")
    med = {s: statistics.median(r["seconds"] for r in rows if r["step"] == s) for s in commands}
    for step in commands:
        rss = max(r["peak_rss_mb"] for r in rows if r["step"] == step)
        print(f"{step:15s} {med[step]:9.2f} {med[step] / med['mine']:7.2f} {rss:8.0f} "
              f"{rss * 2**20 / stages['tokens']:8.1f}")
    names = ("load", "mine", "coverage", "collect", "html", "clean_write")
    print("stages (s): " + ", ".join(f"{k} {stages[k]:.2f}" for k in names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
