"""The file suffixes of record outputs: a module of its own, light, so that the command line
checks its outputs before importing any reader or writer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

OUTPUT_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")


def writes_jsonl(path) -> bool:
    """True when write_records writes JSONL to `path` (a .jsonl or .jsonl.gz file, or stdout)."""
    return str(path) == "-" or str(path).lower().endswith((".jsonl", ".jsonl.gz"))


PART_SUFFIXES = {"parquet": ".parquet", "jsonl": ".jsonl", "jsonl.gz": ".jsonl.gz"}


@dataclass(frozen=True)
class ShardPlan:
    """How a sharded output is cut: into `shards` parts of about equal numbers of input
    documents (`total_rows` of them, or a function giving the number once the first records
    are there), or a new part once one holds `shard_bytes`; parts are `part_format` files
    (parquet, jsonl or jsonl.gz)."""

    shards: int | None = None
    shard_bytes: int | None = None
    part_format: str = "parquet"
    total_rows: int | Callable[[], int] | None = None

    def validate(self) -> ShardPlan:
        from corpus_miner.errors import ParameterError

        if self.shards is not None and self.shard_bytes is not None:
            raise ParameterError("give --shards or --shard-size, not both")
        if self.shards is not None and not 1 <= self.shards <= 99999:
            raise ParameterError(f"--shards {self.shards}: must be 1 to 99999")
        if self.part_format not in PART_SUFFIXES:
            raise ParameterError(f"--shard-format {self.part_format}: use one of "
                                 f"{', '.join(PART_SUFFIXES)}")
        return self
