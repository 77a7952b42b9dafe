"""The one way the benchmarks write a result table: a CSV written atomically (a run stopped
halfway leaves the previous table), with the given columns or the union of the rows' keys in
first-seen order."""
from __future__ import annotations

import csv
import sys
from pathlib import Path

from corpus_miner.io.atomic import atomic_path


def write_csv(path: Path, rows: list[dict], columns: list[str] | None = None,
              announce: bool = True) -> None:
    if columns is None:
        columns = list(dict.fromkeys(key for row in rows for key in row))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    if announce:
        print(f"wrote {path}", file=sys.stderr)
