"""CPU seconds of the distributed miner's worker-side steps (what Spark's Python workers run).

    python benchmarks/bench_worker_cpu.py --web BIG [--web-parts 3] [--sigma 20] \\
        [--min-length 10] [--buckets 8] [--repeats 3] [--baseline-src OLD/src]

Runs phrases/distributed/driver.py's mine_partitions (the map and reduce steps of SparkBloomSpan
in one process, without Spark) on the first --web-parts Parquet parts of BIG (`python
benchmarks/gen_big.py BIG 1e9`): one partition per part, its text column in record batches of
10,000 rows. Each repeat runs in a fresh process (after a warm-up run on a small slice, so that
numba's compile cache is loaded), timing the whole fit and, inclusively, the steps below with
the process's CPU clock. With --baseline-src (the src folder of another checkout, e.g. `git
worktree add /tmp/base main`), the baseline and this checkout alternate, repeat by repeat, and
their PhraseTables are compared (sha256 of tokens, offsets, df, occurrences and vocabulary).

Writes benchmarks/results/bench_worker_cpu.csv: source, step, calls, cpu_s (median over the
repeats), plus a `total` row (mine_partitions) and a `sha256` column on it.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from csv_table import write_csv  # noqa: E402

# (module, attribute) of the steps timed; a class method as "Class.method". Inclusive: a step
# called inside another is counted in both. A step missing from a checkout is left out.
STEPS = [
    ("corpus_miner.phrases.distributed.encode", "tokenize_batch"),
    ("corpus_miner.phrases.distributed.stages", "local_to_blob"),
    ("corpus_miner.phrases.distributed.stages", "PartitionCounts.add"),
    ("corpus_miner.phrases.distributed.word_table", "WordCounter.add"),
    ("corpus_miner.phrases.distributed.encode", "WordCounter.add"),  # before word_table.py
    ("corpus_miner.phrases.distributed.stages", "PartitionCounts._flush_pairs"),
    ("corpus_miner.phrases.distributed.stages", "PartitionCounts.pairs"),
    ("corpus_miner._numba.sorted_runs", "sum_sorted_runs"),
    ("corpus_miner.phrases.distributed.counts", "sum_by_key"),  # before sorted_runs.py
    ("corpus_miner.phrases.distributed.stages", "keyed_word_blobs"),
    ("corpus_miner.phrases.distributed.stages", "keyed_pair_blobs"),
    ("corpus_miner.phrases.distributed.stages", "frequent_words"),
    ("corpus_miner.phrases.distributed.stages", "vocabulary"),
    ("corpus_miner.phrases.distributed.stages", "frequent_keys"),
    ("corpus_miner.phrases.distributed.stages", "local_from_blob"),
    ("corpus_miner.phrases.distributed.stages", "encode_batch"),
    ("corpus_miner.phrases.distributed.encode", "global_batch"),
    ("corpus_miner._numba.keyset", "KeySet.__call__"),
    ("corpus_miner._numba.keyset", "KeySet.__init__"),
    ("corpus_miner._numba.block_filter", "BlockFilter.__call__"),
    ("corpus_miner.phrases.distributed.stages", "partition_gram_statistics"),  # before chunks
    ("corpus_miner.phrases.distributed.stages", "PartitionGrams.flush"),
    ("corpus_miner.phrases.distributed.counts", "gram_statistics"),
    ("corpus_miner.phrases.distributed.counts", "merge_gram_statistics"),
    ("corpus_miner.phrases.distributed.stages", "classify_grams"),
    ("corpus_miner.phrases.distributed.stages", "mark_reach"),
    ("corpus_miner.phrases.distributed.stages", "partition_summary"),
    ("corpus_miner.phrases.distributed.stages", "route"),
    ("corpus_miner.phrases.distributed.stages", "reduce_round"),
]


def instrument(totals: dict) -> None:
    """Wrap every step so that its calls and CPU seconds add up in totals."""
    import functools
    import importlib

    for module_name, attribute in STEPS:
        *path, name = attribute.split(".")
        try:
            owner = importlib.import_module(module_name)
            for part in path:
                owner = getattr(owner, part)
            original = getattr(owner, name)
        except (ImportError, AttributeError):
            continue  # a step this checkout does not have

        def timed(*args, __original=original, __key=attribute, **kwargs):
            start = time.process_time()
            try:
                return __original(*args, **kwargs)
            finally:
                entry = totals[__key]
                entry[0] += 1
                entry[1] += time.process_time() - start

        wrapper = functools.wraps(original)(timed)
        setattr(owner, name, wrapper)
        if not path:  # also where a module imported the function by name
            for module in list(sys.modules.values()):
                if getattr(module, "__name__", "").startswith("corpus_miner") and \
                        getattr(module, name, None) is original:
                    setattr(module, name, wrapper)


def partitions(paths: list[str], rows: int | None = None):
    import pyarrow.parquet as pq

    out = []
    for path in paths:
        table = pq.read_table(path, columns=["text"])
        if rows is not None:
            table = table.slice(0, rows)
        out.append([batch.column(0) for batch in table.to_batches(max_chunksize=10_000)])
    return out


def table_digest(table) -> str:
    import numpy as np

    digest = hashlib.sha256()
    for array in (table.tokens, table.offsets, table.df, table.occurrences):
        digest.update(np.ascontiguousarray(array).tobytes())
    digest.update("\n".join(table.vocab[i] for i in range(len(table.vocab))).encode())
    return digest.hexdigest()


def one_run(args) -> dict:
    """One timed fit in this process (the child of main)."""
    from corpus_miner.phrases.distributed.driver import mine_partitions
    from corpus_miner.phrases.distributed.stages import Plan

    paths = sorted(glob.glob(os.path.join(args.web, "*.parquet")))[:args.web_parts]
    plan = Plan(args.sigma, args.min_length, buckets=args.buckets)
    mine_partitions(partitions(paths[:1], rows=2000), Plan(2, 3, buckets=args.buckets))  # warm-up
    data = partitions(paths)
    totals: dict = defaultdict(lambda: [0, 0.0])
    instrument(totals)
    start = time.process_time()
    table, _ = mine_partitions(data, plan)
    total = time.process_time() - start
    return {"total": total, "steps": {k: v for k, v in totals.items()},
            "phrases": len(table), "sha256": table_digest(table)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--web", required=True, help="folder of generated web pages (*.parquet)")
    parser.add_argument("--web-parts", type=int, default=3)
    parser.add_argument("--sigma", type=int, default=20)
    parser.add_argument("--min-length", type=int, default=10)
    parser.add_argument("--buckets", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline-src", help="src folder of the checkout to compare with")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", default=str(HERE / "results" / "bench_worker_cpu.csv"))
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_run(args)))
        return
    sources = {"this": None}
    if args.baseline_src:
        sources = {"baseline": os.path.abspath(args.baseline_src), "this": None}
    runs: dict[str, list[dict]] = defaultdict(list)
    for repeat in range(args.repeats):
        for label, src in sources.items():
            env = dict(os.environ)
            if src:
                env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
            command = [sys.executable, __file__, "--child", "--web", args.web,
                       "--web-parts", str(args.web_parts), "--sigma", str(args.sigma),
                       "--min-length", str(args.min_length), "--buckets", str(args.buckets)]
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"{label} failed:\n{done.stderr}")
            run = json.loads(done.stdout.strip().splitlines()[-1])
            runs[label].append(run)
            print(f"repeat {repeat} {label}: {run['total']:.2f} CPU s, {run['phrases']} phrases",
                  flush=True)
    rows = []
    for label, done in runs.items():
        digests = {r["sha256"] for r in done}
        rows.append({"source": label, "step": "total", "calls": 1,
                     "cpu_s": round(statistics.median(r["total"] for r in done), 2),
                     "sha256": ",".join(sorted(digests))})
        for _, attribute in STEPS:
            found = [r["steps"][attribute] for r in done if attribute in r["steps"]]
            if found:
                rows.append({"source": label, "step": attribute, "calls": found[0][0],
                             "cpu_s": round(statistics.median(f[1] for f in found), 2),
                             "sha256": ""})
    write_csv(args.out, rows)
    by_step: dict[str, dict[str, float]] = defaultdict(dict)
    for row in rows:
        by_step[row["step"]][row["source"]] = row["cpu_s"]
    for step, values in by_step.items():
        print(f"{step:40s} " + "  ".join(f"{k} {v:7.2f}" for k, v in values.items()))
    if len({r["sha256"] for r in rows if r["step"] == "total"}) > 1:
        raise SystemExit("the sources found different phrases")


if __name__ == "__main__":
    main()
