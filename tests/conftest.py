"""Small fixture writers for the corpus tests (tests never read /work/corpora)."""

from __future__ import annotations

import gzip
import json

import pytest
import zstandard


def _lines(rows) -> bytes:
    return b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in rows)


@pytest.fixture
def write_jsonl(tmp_path):
    """write_jsonl(name, rows) -> path; rows are dicts or raw bytes lines; .gz/.zst compress."""

    def write(name, rows):
        data = _lines(rows)
        path = tmp_path / name
        if name.endswith(".gz"):
            data = gzip.compress(data)
        elif name.endswith(".zst"):
            data = zstandard.ZstdCompressor().compress(data)
        path.write_bytes(data)
        return path

    return write
