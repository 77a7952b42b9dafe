"""Inputs that are streams, odd folders and odd columns (issue 10, "input handling"): compressed
stdin, named pipes and `<(zcat ...)`, unreadable subfolders, Parquet texts stored as bytes, and
line assembly when one line spans many reads."""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.cli import main
from corpus_miner.io import ReadStats, read_documents
from corpus_miner.io.jsonl import iter_line_chunks

ROWS = [{"id": f"r{i}", "text": f"line {i} of a stream"} for i in range(300)]
DATA = "".join(json.dumps(r) + "\n" for r in ROWS).encode()
COMPRESS = {"plain": lambda b: b, "gzip": gzip.compress,
            "zstd": lambda b: zstandard.ZstdCompressor().compress(b)}


def _ids(inputs, stats=None):
    return [i for b in read_documents(inputs, stats=stats) for i in b.ids.to_pylist()]


@pytest.mark.parametrize("kind", list(COMPRESS))
def test_stdin_is_decompressed_like_a_file(monkeypatch, kind):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(COMPRESS[kind](DATA))))
    assert _ids(["-"]) == [r["id"] for r in ROWS]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("kind", ["plain", "gzip"])
def test_a_named_pipe_is_streamed_not_rewound(tmp_path, kind, capsys):
    # `corpus-miner stats <(zcat x.gz)` used to fail with "lseek failed"
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as pipe:
            for start in range(0, len(data), 1000):  # small writes: reads see partial data
                pipe.write(data[start:start + 1000])

    data = COMPRESS[kind](DATA)
    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    assert main(["dedup", str(fifo), "-o", str(tmp_path / "out.jsonl"), "--annotate"]) == 0
    writer.join(10)
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == len(ROWS)
    # a pipe gives its bytes once: commands that read twice say so instead of misreading
    assert main(["clean", str(fifo), "-o", str(tmp_path / "c.jsonl")]) == 2
    assert "cannot be read twice" in capsys.readouterr().err


def test_unreadable_subfolder_is_counted_and_warned(tmp_path, monkeypatch, capsys):
    (tmp_path / "docs" / "locked").mkdir(parents=True)
    (tmp_path / "docs" / "a.txt").write_text("readable text")
    (tmp_path / "docs" / "locked" / "b.txt").write_text("hidden from us")
    listing = os.scandir

    def scandir(path="."):  # what a folder without read permission does (root reads anything)
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return listing(path)

    monkeypatch.setattr(os, "scandir", scandir)
    stats = ReadStats()
    assert _ids([tmp_path / "docs"], stats) == ["a.txt"]
    assert stats.unreadable_folders_skipped == 1
    assert main(["stats", str(tmp_path / "docs")]) == 0
    assert "warning: unreadable folders skipped 1" in capsys.readouterr().err


def test_parquet_texts_stored_as_bytes_are_decoded_and_counted(tmp_path):
    column = pa.array([b"caf\xc3\xa9", b"bad \xff byte", None], pa.large_binary())
    pq.write_table(pa.table({"text": column}), tmp_path / "b.parquet")
    stats = ReadStats()
    texts = [t for b in read_documents([tmp_path / "b.parquet"], stats=stats)
             for t in b.texts.to_pylist()]
    assert texts == ["café", "bad \ufffd byte", ""]
    assert (stats.binary_texts_decoded, stats.invalid_utf8_replaced, stats.null_texts) == (2, 1, 1)


class _Dribble(io.RawIOBase):
    """A stream returning at most `step` bytes per read, like a slow pipe."""

    def __init__(self, data: bytes, step: int):
        self._data, self._step, self._at = data, step, 0

    def readable(self):
        return True

    def readinto(self, buffer):
        piece = self._data[self._at:self._at + min(len(buffer), self._step)]
        buffer[:len(piece)] = piece
        self._at += len(piece)
        return len(piece)


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.binary(max_size=300).map(lambda b: b.replace(b"\n", b"")), max_size=12),
       chunk=st.integers(1, 64), step=st.integers(1, 64), last_newline=st.booleans())
def test_line_chunks_are_whole_lines_in_order(lines, chunk, step, last_newline):
    data = b"\n".join(lines) + (b"\n" if last_newline and lines else b"")
    chunks = list(iter_line_chunks(_Dribble(data, step), chunk, "x"))
    assert b"".join(chunks) == data.removeprefix(b"\xef\xbb\xbf")
    assert all(c.endswith(b"\n") for c in chunks[:-1])
