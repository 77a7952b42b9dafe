"""One very long JSON line: how the reader assembles and parses it.

A JSONL file whose first line holds one text of SIZE MB (random words) is read three ways:

* line assembly: joining the pending bytes to every 2 MiB read (`pending + block`, what the
  reader did before) against gathering the blocks and joining once (`iter_line_chunks`);
* parsing that line: Arrow's JSON parser against `json.loads` (the reader now sends lines that
  average over 1 MiB to `json.loads`);
* the whole `corpus-miner stats FILE` process (wall seconds and peak RSS of the child), also
  with another checkout's sources (--compare-src OTHER/src, e.g. the commit before the change).

Medians of --repeats runs, each method right after the other, so that a shared machine slows
both alike. Writes benchmarks/results/bench_long_line.csv.

    python benchmarks/bench_long_line.py --size-mb 200 --compare-src ../old-checkout/src
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.json as pa_json

from corpus_miner.io.jsonl import iter_line_chunks

RESULTS = Path(__file__).resolve().parent / "results"
BLOCK = 2 << 20  # the reader's batch size


def make_file(folder: Path, size_mb: int) -> Path:
    rng = random.Random(0)
    words = [f"w{i}" for i in range(5000)]
    piece = " ".join(rng.choice(words) for _ in range(200_000))
    text = " ".join([piece] * max(1, size_mb * 1_000_000 // len(piece)))
    path = folder / "long_line.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps({"id": "long", "text": text}) + "\n")
        out.write(json.dumps({"id": "short", "text": "a short document"}) + "\n")
    return path


def rejoin_per_read(stream, chunk_bytes):
    """The former assembly: the pending bytes joined to every block read."""
    pending = b""
    while block := stream.read(chunk_bytes):
        block = pending + block if pending else block
        cut = block.rfind(b"\n")
        if cut < 0:
            pending = block
            continue
        yield block[:cut + 1]
        pending = block[cut + 1:]
    if pending:
        yield pending


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def whole_process(path: Path, src: str | None = None) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of `corpus-miner stats path`, with `src` first on the
    import path when given. Each run is its own `time -f` process, so the peak is its own."""
    env = dict(os.environ, PYTHONPATH=src) if src else None
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "corpus_miner",
                           "stats", str(path)], check=True, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=env)
    seconds = time.perf_counter() - start
    return seconds, int(done.stderr.strip().splitlines()[-1]) / 1024  # %M is KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--compare-src", default=None,
                        help="another checkout's src folder, timed the same way (e.g. before)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = make_file(Path(tmp), args.size_mb)
        data = path.read_bytes()
        line = data[:data.index(b"\n") + 1]
        options = pa_json.ReadOptions(use_threads=False, block_size=len(line) + 1)
        runs: dict[str, list[float]] = {}
        for _ in range(args.repeats):
            for name, function in (
                    ("assembly: re-join per 2 MiB read (before)",
                     lambda: list(rejoin_per_read(io.BytesIO(data), BLOCK))),
                    ("assembly: gather blocks, join once (now)",
                     lambda: list(iter_line_chunks(io.BytesIO(data), BLOCK, "x"))),
                    ("parse the line: Arrow JSON (before)",
                     lambda: pa_json.read_json(pa.BufferReader(line), read_options=options)),
                    ("parse the line: json.loads (now)", lambda: json.loads(line))):
                runs.setdefault(name, []).append(timed(function))
            for label, src in (("", None), (" (--compare-src)", args.compare_src)):
                if label and not src:
                    continue
                seconds, peak = whole_process(path, src)
                runs.setdefault(f"stats, whole process s{label}", []).append(seconds)
                runs.setdefault(f"stats, peak RSS MB{label}", []).append(peak)
    rows = [{"size_mb": round(len(line) / 1e6, 1), "step": name,
             "median": round(statistics.median(values), 3), "runs": len(values)}
            for name, values in runs.items()]
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "bench_long_line.csv"
    with open(out, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    for row in rows:
        print(f"{row['step']:<45} {row['median']:>9}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
