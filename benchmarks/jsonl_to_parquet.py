"""Convert JSONL corpora (.jsonl, .gz, .zst) into a folder of Parquet files (id, text) for Spark.

    python benchmarks/jsonl_to_parquet.py data/corpora/openjdk-17-doc.jsonl.gz -o data/jdk10k
    python benchmarks/jsonl_to_parquet.py A.jsonl.gz B.jsonl.gz -o data/mix --limit 20000

Documents keep their input order (file after file) across part-NNNNN.parquet files of
--rows-per-file rows. With several inputs, ids are prefixed by the input's name ("name:id") so they
stay unique. Each file is written atomically; the folder is replaced only when complete.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from corpus_miner.io.atomic import atomic_dir
from corpus_miner.io.readers import read_documents


def _stem(path: str) -> str:
    name = Path(path).name
    for suffix in (".gz", ".zst", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return name


def _only_parquet_parts(folder: Path) -> bool:
    """An earlier conversion's output (only part-*.parquet files) may be replaced."""
    return all(p.name.startswith("part-") and p.suffix == ".parquet" for p in folder.iterdir())


def convert(inputs: list[str], out_dir: str, rows_per_file: int = 5000, limit: int | None = None,
            text_field: str = "text", id_field: str = "id") -> int:
    """Write the documents of `inputs` to out_dir/part-*.parquet; returns the number written."""
    prefix = len(inputs) > 1
    written, part, pending = 0, 0, []
    with atomic_dir(out_dir, replaceable=_only_parquet_parts) as tmp:
        def flush():
            nonlocal part, pending
            if pending:
                pq.write_table(pa.concat_tables(pending).combine_chunks(),
                               tmp / f"part-{part:05d}.parquet", compression="zstd")
                part, pending = part + 1, []

        for path in inputs:
            for batch in read_documents([path], text_field=text_field, id_field=id_field):
                ids = batch.ids.cast(pa.string())
                if prefix:
                    ids = pa.array([f"{_stem(path)}:{value}" for value in ids.to_pylist()])
                table = pa.table({"id": ids, "text": batch.texts.cast(pa.string())})
                if limit is not None:
                    table = table.slice(0, max(0, limit - written))
                while len(table):
                    room = rows_per_file - sum(len(t) for t in pending)
                    pending.append(table.slice(0, room))
                    table = table.slice(room)
                    written += len(pending[-1])
                    if sum(len(t) for t in pending) == rows_per_file:
                        flush()
                if limit is not None and written >= limit:
                    break
            if limit is not None and written >= limit:
                break
        flush()
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="+", help="JSONL files (.jsonl, .jsonl.gz, .jsonl.zst)")
    parser.add_argument("-o", "--out-dir", required=True)
    parser.add_argument("--rows-per-file", type=int, default=5000)
    parser.add_argument("--limit", type=int, default=None, help="stop after this many documents")
    parser.add_argument("--text-field", default="text")
    parser.add_argument("--id-field", default="id")
    args = parser.parse_args(argv)
    n = convert(args.inputs, args.out_dir, args.rows_per_file, args.limit, args.text_field,
                args.id_field)
    print(f"wrote {n} documents to {args.out_dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
