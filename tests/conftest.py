"""Small fixture writers for the corpus tests (tests never read /work/corpora)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os

import pytest
import zstandard

# Commands run in-process by the tests start no prewarm process on a first compile (one per test
# that compiles would load the machine for nothing); tests/cli/test_prewarm.py turns it on.
os.environ.setdefault("CORPUS_MINER_PREWARM", "0")


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


def _snapshot(root) -> dict:
    """{relative path: sha256} of every file under root, hidden ones included."""
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, root)] = hashlib.sha256(handle.read()).hexdigest()
    return found


@pytest.fixture
def snapshot():
    """snapshot(folder) -> {relative path: sha256} of every file: to show nothing changed."""
    return _snapshot
