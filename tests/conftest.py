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


@pytest.fixture(scope="session")
def s3_server():
    """One S3 API server (moto's) on 127.0.0.1 for the whole session."""
    pytest.importorskip("moto.server")
    pytest.importorskip("s3fs")
    from tests.object_store import S3Server

    server = S3Server()
    yield server
    server.stop()


@pytest.fixture
def s3(s3_server, monkeypatch):
    """The session's S3 server with its credentials and endpoint in the environment (as users
    set them), a fresh bucket in `s3.bucket`, and fast retries."""
    import fsspec

    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CORPUS_MINER_RETRIES", "2")
    monkeypatch.setenv("CORPUS_MINER_RETRY_WAIT", "0.05")
    fsspec.get_filesystem_class("s3").clear_instance_cache()  # endpoints differ between tests
    s3_server.bucket = s3_server.new_bucket()
    return s3_server
