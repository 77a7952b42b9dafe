"""The file suffixes of record outputs: a module of its own, light, so that the command line
checks its outputs before importing any reader or writer."""

from __future__ import annotations

OUTPUT_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")


def writes_jsonl(path) -> bool:
    """True when write_records writes JSONL to `path` (a .jsonl or .jsonl.gz file, or stdout)."""
    return str(path) == "-" or str(path).lower().endswith((".jsonl", ".jsonl.gz"))
