"""Phrase mining at up to a billion tokens on one machine: whole-process time and memory per size.

    python benchmarks/bench_mine_1b.py PARQUET_DIR [--sizes 3 8 27] [--settings 20/10 3/5]
        [--algorithms bloomspan fhk] [--cache-dir DIR] [--reference-src DIR]

PARQUET_DIR is a folder of Parquet parts (id, text), e.g. the 1,000,000,318-token web-like corpus
made by `python benchmarks/gen_big.py DIR 1e9` (27 parts of ~37M tokens; see the README). --sizes
lists how many leading parts make each corpus (3 parts ~ 113M tokens, 8 ~ 301M, 27 = all). Each
corpus is tokenized once (`corpus-miner tokenize`, cached in --cache-dir) and then mined by
`corpus-miner phrases CORPUS --sigma S --min-length L --algorithm A -o OUT --stats STATS` under
/usr/bin/time -v, one process per run, so the figures are what a user of the command gets.
Before each run the corpus files are read once, so every run starts with them in the page cache
(as right after `tokenize`; a corpus read from disk adds its read time, ~12 s for 4 GB here):

  wall_seconds, user_seconds, sys_seconds   of the whole process (start-up and output included)
  peak_rss_mb        the process's maximum resident set, memory-mapped corpus pages included
  bytes_per_token    peak_rss_mb / tokens;  us_per_token = wall_seconds / tokens
  cores_used         (user + sys) / wall
  load_1min          the 1-minute load average before and after the run, averaged (ours included)
  stage columns      wall seconds per mining stage, from --stats
  output_sha256      of the phrase file; with --reference-src DIR each run is repeated with
                     PYTHONPATH=DIR (another checkout's src/) and `identical` says whether the
                     two phrase files are the same bytes

Writes benchmarks/results/bench_mine_1b.csv and bench_mine_1b.png (tokens against seconds and
against bytes per token).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from csv_table import write_csv

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
STAGES = ["word_df", "counting_filter", "candidates", "exact_seeds", "psi_order", "growth",
          "output"]
COLUMNS = ["corpus", "tokens", "documents", "algorithm", "sigma", "min_length", "code",
           "wall_seconds", "user_seconds", "sys_seconds", "cores_used", "load_1min", "peak_rss_mb",
           "bytes_per_token", "us_per_token", "phrases", "seeds", "window_ok_share",
           *[f"stage_{s}" for s in STAGES], "output_sha256", "identical"]


def tokenized(parquet_dir: Path, n_parts: int, cache: Path) -> Path:
    """The first n_parts Parquet parts tokenized into a saved corpus (made once)."""
    out = cache / f"{parquet_dir.name}-{n_parts}parts.corpus"
    if (out / "metadata.json").exists():
        return out
    parts = sorted(parquet_dir.glob("*.parquet"))[:n_parts]
    if len(parts) < n_parts:
        raise SystemExit(f"{parquet_dir} has {len(parts)} Parquet parts, fewer than {n_parts}")
    links = cache / f"{parquet_dir.name}-{n_parts}parts"
    links.mkdir(parents=True, exist_ok=True)
    for part in parts:
        link = links / part.name
        if not link.exists():
            link.symlink_to(part.resolve())
    print(f"tokenizing {n_parts} parts -> {out}", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "corpus_miner", "tokenize", str(links), "-o", str(out)],
                   check=True)
    return out


def read_into_page_cache(corpus: Path) -> None:
    for file in sorted(corpus.iterdir()):
        with open(file, "rb") as f:
            while f.read(1 << 24):
                pass


def _time_v(stderr: str, label: str) -> float:
    match = re.search(rf"{re.escape(label)}: ([0-9:.]+)", stderr)
    if not match:
        raise SystemExit(f"/usr/bin/time -v printed no '{label}'")
    value = match.group(1)
    if label.startswith("Elapsed"):
        seconds = 0.0
        for piece in value.split(":"):
            seconds = seconds * 60 + float(piece)
        return seconds
    return float(value)


def mine(corpus: Path, algorithm: str, sigma: int, min_length: int, work: Path,
         src: str | None) -> dict:
    tag = f"{corpus.stem}-{algorithm}-{sigma}-{min_length}-{'ref' if src else 'new'}"
    out, stats_path = work / f"{tag}.jsonl", work / f"{tag}.stats.json"
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    command = ["/usr/bin/time", "-v", sys.executable, "-m", "corpus_miner", "phrases",
               str(corpus), "--sigma", str(sigma), "--min-length", str(min_length),
               "--algorithm", algorithm, "-o", str(out), "--stats", str(stats_path)]
    print(" ".join(command[2:]), file=sys.stderr)
    read_into_page_cache(corpus)
    load = os.getloadavg()[0]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    load = (load + os.getloadavg()[0]) / 2
    if done.returncode != 0:
        raise SystemExit(f"failed: {done.stderr[-2000:]}")
    stats = json.loads(stats_path.read_text())
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    out.unlink()
    wall = _time_v(done.stderr, "Elapsed (wall clock) time (h:mm:ss or m:ss)")
    user = _time_v(done.stderr, "User time (seconds)")
    system = _time_v(done.stderr, "System time (seconds)")
    peak_mb = _time_v(done.stderr, "Maximum resident set size (kbytes)") / 1024
    tokens = int(stats["tokens"])
    row = {"tokens": tokens, "documents": stats["documents"], "algorithm": stats["algorithm"],
           "sigma": sigma, "min_length": min_length, "code": "reference" if src else "this",
           "wall_seconds": round(wall, 2), "user_seconds": round(user, 2),
           "sys_seconds": round(system, 2), "cores_used": round((user + system) / wall, 2),
           "load_1min": round(load, 2),
           "peak_rss_mb": round(peak_mb, 1),
           "bytes_per_token": round(peak_mb * 2**20 / max(tokens, 1), 2),
           "us_per_token": round(wall * 1e6 / max(tokens, 1), 4),
           "phrases": stats["phrases"], "seeds": stats.get("seeds", ""),
           "window_ok_share": round(stats["share_after_counting_filter"], 4)
           if "share_after_counting_filter" in stats else "",
           "output_sha256": digest}
    for stage in STAGES:
        row[f"stage_{stage}"] = round(stats.get("seconds", {}).get(stage, 0.0), 2)
    return row


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_time, ax_mem) = plt.subplots(1, 2, figsize=(12, 5))
    series = sorted({(r["algorithm"], r["sigma"], r["min_length"], r["code"]) for r in rows})
    for algorithm, sigma, min_length, code in series:
        points = sorted((r["tokens"], float(r["user_seconds"]) + float(r["sys_seconds"]),
                         r["wall_seconds"], r["bytes_per_token"]) for r in rows
                        if (r["algorithm"], r["sigma"], r["min_length"], r["code"])
                        == (algorithm, sigma, min_length, code))
        label = f"{algorithm} sigma {sigma} / min {min_length}" + \
            (" (reference)" if code == "reference" else "")
        style = "--s" if code == "reference" else "-o"
        x = [p[0] for p in points]
        line, = ax_time.plot(x, [p[1] for p in points], style, label=label + ", CPU")
        ax_time.plot(x, [p[2] for p in points], ":", color=line.get_color(), label=label + ", wall")
        ax_mem.plot(x, [p[3] for p in points], style, label=label)
    ax_time.set(xscale="log", yscale="log", xlabel="corpus tokens",
                ylabel="seconds (whole process)", title="time: CPU (user + sys) and wall")
    ax_mem.set(xscale="log", xlabel="corpus tokens", ylabel="peak RSS / token (bytes)",
               title="memory, memory-mapped corpus (4 B/token) included")
    for ax in (ax_time, ax_mem):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("parquet_dir", type=Path)
    parser.add_argument("--sizes", type=int, nargs="+", default=[3, 8, 27],
                        help="leading Parquet parts per corpus (default 3 8 27)")
    parser.add_argument("--settings", nargs="+", default=["20/10"],
                        help="SIGMA/MIN_LENGTH pairs (default 20/10)")
    parser.add_argument("--algorithms", nargs="+", default=["bloomspan"])
    parser.add_argument("--cache-dir", type=Path,
                        default=Path(tempfile.gettempdir()) / "corpus-miner-bench-1b")
    parser.add_argument("--reference-src", default=None,
                        help="another checkout's src/ folder to run the same commands with")
    parser.add_argument("--output", type=Path, default=RESULTS / "bench_mine_1b.csv")
    args = parser.parse_args(argv)
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=args.cache_dir))
    rows = list(csv.DictReader(open(args.output))) if args.output.exists() else []
    for row in rows:  # keep earlier rows (other sizes or settings) unless measured again
        for key in ("tokens", "sigma", "min_length"):
            row[key] = int(row[key])
        for key in ("wall_seconds", "bytes_per_token"):
            row[key] = float(row[key])
    for n_parts in args.sizes:
        corpus = tokenized(args.parquet_dir, n_parts, args.cache_dir)
        for setting in args.settings:
            sigma, min_length = (int(x) for x in setting.split("/"))
            for algorithm in args.algorithms:
                measured = [mine(corpus, algorithm, sigma, min_length, work, None)]
                if args.reference_src:
                    measured.append(mine(corpus, algorithm, sigma, min_length, work,
                                         args.reference_src))
                    same = measured[0]["output_sha256"] == measured[1]["output_sha256"]
                    for row in measured:
                        row["identical"] = str(same).lower()
                for row in measured:
                    row["corpus"] = f"{args.parquet_dir.name} {n_parts} parts"
                    rows = [r for r in rows if (r["corpus"], r["algorithm"], r["sigma"],
                                                r["min_length"], r["code"]) != (
                        row["corpus"], row["algorithm"], row["sigma"], row["min_length"],
                        row["code"])]
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr)
                write_csv(args.output, rows, COLUMNS, announce=False)
    plot(rows, args.output.with_suffix(".png"))
    return 0 if all(r.get("identical", "") != "false" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
