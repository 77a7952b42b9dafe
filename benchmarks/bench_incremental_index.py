"""Recurring crawls: monthly snapshots of generated web pages added one by one to one index
(`corpus-miner index add`), against one `corpus-miner dedup` over all of them.

`corpus-miner generate web --reposts SHARE` writes pages of which a share are edited copies of
earlier pages (field `repost_of`, the planted truth); the pages are cut into --snapshots
consecutive files of --pages pages each, so that a repost's original is in the same snapshot or
an earlier one. Each snapshot is added in a fresh process:

    corpus-miner index add INDEX sNN.jsonl -o uNN.jsonl --annotate --expected-items PAGES

Reported per snapshot: CPU seconds (user + sys of the process) and wall seconds, peak RSS, the
index's bytes after it (the Bloom layers of the current generation), the bytes the add wrote
(layers not hard-linked from the previous generation), documents flagged, planted reposts
found, and unplanted documents flagged. Then one `dedup --annotate --expected-items PAGES` over
the concatenation (same filter plan): its CPU seconds, and whether its flags equal the flags of
the twelve adds (they must: a document's layer depends only on its ordinal). Last, the index
size for 10^9 documents at the default fp_prob (1e-5), extrapolated by the layer plan (each
layer twice the documents of the one before at half its rate) and from the measured bytes per
document, and the probes a query makes (bands x hashes of every layer, each a random read of an
index that does not fit in memory).

Usage: python benchmarks/bench_incremental_index.py [--snapshots 12] [--pages 20000]
           [--work DIR]
Writes benchmarks/results/incremental_index.csv, incremental_index_summary.csv and
incremental_index.png.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def run(command: list[str]) -> dict:
    """Wall seconds, CPU seconds (user + sys) and peak RSS (bytes) of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    out, err = child.stdout.read(), child.stderr.read()
    if status:
        raise RuntimeError(f"{' '.join(command)} failed: {err}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_rss": usage.ru_maxrss * 1024, "out": out, "err": err}


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "corpus_miner", *args]


def split(pages: Path, work: Path, snapshots: int, per: int) -> tuple[list[Path], dict]:
    """The generated pages cut into snapshot files; id -> repost_of of every page."""
    truth, files = {}, []
    with pages.open(encoding="utf-8") as source:
        for k in range(snapshots):
            path = work / f"s{k + 1:02d}.jsonl"
            with path.open("w", encoding="utf-8") as out:
                for _ in range(per):
                    line = source.readline()
                    record = json.loads(line)
                    truth[record["id"]] = record.get("repost_of")
                    out.write(line)
            files.append(path)
    return files, truth


def flags(path: Path) -> list[tuple[str, bool]]:
    with path.open(encoding="utf-8") as handle:
        return [(r["id"], bool(r["is_duplicate"])) for r in map(json.loads, handle)]


def generation_bytes(index: Path) -> tuple[int, int, dict]:
    """(bytes of the current generation's layers, bytes not shared with the previous one, its
    metadata)."""
    current = json.loads((index / "metadata.json").read_text())["current"]
    folder = index / current
    meta = json.loads((folder / "metadata.json").read_text())
    total = new = 0
    for item in folder.iterdir():
        if item.name.startswith("bloom_"):
            info = item.stat()
            total += info.st_size
            new += info.st_size if info.st_nlink == 1 else 0
    return total, new, meta


def extrapolate(meta: dict, documents: int) -> dict:
    """Bytes and query probes of an index of `documents` documents grown from the same first
    layer by the layer plan (corpus_miner.dedup.scalable_bloom)."""
    from corpus_miner.dedup.scalable_bloom import layer_shape

    plan = meta["bloom"]
    capacity, fp_prob, bands = plan["capacity"], plan["fp_prob"], meta["bands"]
    held, index, used, total_bits, probes = 0, 0, 0.0, 0, 0
    while held < documents:
        rate = (fp_prob - used) / 2.0
        bits, hashes = layer_shape(capacity << index, rate, bands)
        total_bits += bits
        probes += bands * hashes
        used += rate
        held += capacity << index
        index += 1
    return {"layers": index, "bytes": total_bits // 8, "probes_per_query": probes}


def one_layer(meta: dict, documents: int) -> int:
    """Bytes of one first layer sized for all `documents` (an index built in one go)."""
    from corpus_miner.dedup.scalable_bloom import layer_shape

    return layer_shape(documents, meta["bloom"]["fp_prob"] / 2.0, meta["bands"])[0] // 8


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshots", type=int, default=12)
    parser.add_argument("--pages", type=int, default=20000, help="pages per snapshot")
    parser.add_argument("--reposts", type=float, default=0.1)
    parser.add_argument("--work", type=Path, default=Path("/tmp/corpus-miner-incremental"))
    args = parser.parse_args(argv)
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    pages = work / "pages.jsonl"
    total = args.snapshots * args.pages
    if not pages.exists():
        run(cli("generate", "web", "--docs", str(total), "--reposts", str(args.reposts),
                "--seed", "25", "-o", str(pages)))
    files, truth = split(pages, work, args.snapshots, args.pages)
    index = work / "index"
    if index.exists():
        import shutil
        shutil.rmtree(index)
    expected = ["--expected-items", str(args.pages)]
    run(cli("index", "add", str(work / "warm"), str(files[0]), "-o", str(work / "warm.jsonl"),
            *expected))  # JIT caches written once, outside the measurements
    load = [os.getloadavg()[0]]
    rows, added_flags = [], []
    for k, path in enumerate(files):
        out = work / f"u{k + 1:02d}.jsonl"
        figures = run(cli("index", "add", str(index), str(path), "-o", str(out), "--annotate",
                          *expected))
        got = flags(out)
        added_flags += got
        size, new, meta = generation_bytes(index)
        planted = sum(1 for doc, _ in got if truth[doc] is not None)
        found = sum(1 for doc, dup in got if dup and truth[doc] is not None)
        wrong = sum(1 for doc, dup in got if dup and truth[doc] is None)
        rows.append({"snapshot": k + 1, "pages": len(got), "indexed": meta["n_documents"],
                     "cpu_seconds": round(figures["cpu"], 2),
                     "wall_seconds": round(figures["wall"], 2),
                     "peak_rss_mb": round(figures["peak_rss"] / 2**20, 1),
                     "index_bytes": size, "bytes_written": new,
                     "layers": len(meta["bloom"]["layers"]),
                     "flagged": sum(dup for _, dup in got), "planted": planted,
                     "planted_found": found, "unplanted_flagged": wrong})
        print(", ".join(f"{key} {value}" for key, value in rows[-1].items()), flush=True)
    one = run(cli("dedup", *map(str, files), "-o", str(work / "one.jsonl"), "--annotate",
                  *expected))
    load.append(os.getloadavg()[0])
    same = flags(work / "one.jsonl") == added_flags
    size, _, meta = generation_bytes(index)
    per_doc = size / meta["n_documents"]
    billion = extrapolate(meta, 10**9)
    summary = {
        "snapshots": args.snapshots, "pages_per_snapshot": args.pages,
        "add_cpu_seconds_total": round(sum(r["cpu_seconds"] for r in rows), 2),
        "add_cpu_seconds_min": min(r["cpu_seconds"] for r in rows),
        "add_cpu_seconds_max": max(r["cpu_seconds"] for r in rows),
        "one_shot_cpu_seconds": round(one["cpu"], 2),
        "one_shot_peak_rss_mb": round(one["peak_rss"] / 2**20, 1),
        "flags_identical_to_one_shot": same,
        "planted": sum(r["planted"] for r in rows),
        "planted_found": sum(r["planted_found"] for r in rows),
        "unplanted_flagged": sum(r["unplanted_flagged"] for r in rows),
        "index_bytes": size, "bytes_per_document": round(per_doc, 1),
        "billion_docs_layers": billion["layers"], "billion_docs_bytes": billion["bytes"],
        "billion_docs_bytes_per_document": round(billion["bytes"] / 1e9, 1),
        "billion_docs_probes_per_query": billion["probes_per_query"],
        "billion_docs_bytes_at_measured_rate": round(per_doc * 1e9),
        "billion_docs_one_layer_bytes": one_layer(meta, 10**9),
        "load_average": f"{load[0]:.1f}-{load[1]:.1f}"}
    for key, value in summary.items():
        print(f"{key}: {value}")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from csv_table import write_csv
    write_csv(RESULTS / "incremental_index.csv", rows)
    write_csv(RESULTS / "incremental_index_summary.csv", [summary])
    plot(rows, summary, RESULTS / "incremental_index.png")
    return 0


def plot(rows: list[dict], summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    snapshot = [r["snapshot"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.bar(snapshot, [r["cpu_seconds"] for r in rows], color="tab:blue")
    left.axhline(summary["one_shot_cpu_seconds"] / len(rows), color="tab:gray", linestyle="--",
                 label="one-shot dedup / snapshots")
    left.set_xlabel("snapshot")
    left.set_ylabel("CPU seconds of `index add`")
    left.set_title(f"{summary['pages_per_snapshot']:,} pages per snapshot")
    left.legend(loc="lower right")
    right.plot(snapshot, [r["index_bytes"] / 2**20 for r in rows], marker="o",
               label="index (current generation)")
    right.plot(snapshot, [r["bytes_written"] / 2**20 for r in rows], marker="x",
               label="written by the add")
    right.set_xlabel("snapshot")
    right.set_ylabel("MiB")
    right.set_title("index bytes")
    right.legend(loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
