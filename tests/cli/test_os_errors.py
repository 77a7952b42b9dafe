"""OS errors while writing are one line naming the output, with nothing half-written; a pipe
closed by its reader ends the run quietly (issue 10, "OS errors end in tracebacks")."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
import tempfile

import pytest

from corpus_miner.cli import main

ROWS = [{"id": i, "text": f"document number {i} with a few words of text"} for i in range(300)]


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def _files(folder):
    return sorted(p.name for p in folder.iterdir())


def test_disk_full_names_the_output(source, tmp_path, capsys):
    (tmp_path / "full.jsonl").symlink_to("/dev/full")  # every write: ENOSPC
    assert main(["dedup", str(source), "-o", str(tmp_path / "full.jsonl")]) == 2
    assert capsys.readouterr().err == (f"corpus-miner: error: {tmp_path / 'full.jsonl'}: cannot "
                                       "write (no space left on device)\n")


def test_full_or_closed_stdout_is_one_line(source, monkeypatch, capsys):
    for argv in (["dedup", str(source), "-o", "-"], ["stats", str(source)]):
        with open("/dev/full", "w") as full:  # closing flushes: after the error, harmlessly
            monkeypatch.setattr(sys, "stdout", full)
            assert main(argv) == 2
    monkeypatch.setattr(sys, "stdout", None)  # started with stdout closed (`>&-`)
    assert main(["dedup", str(source), "-o", "-"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "corpus-miner: error: stdout: cannot write (no space left on device)"] * 2 + [
        "corpus-miner: error: stdout: closed; redirect it or write to a file"]


def test_a_pipe_closed_by_its_reader_ends_quietly(source, monkeypatch, capsys):
    read_end, write_end = os.pipe()
    os.close(read_end)  # `| head` after its first line
    with os.fdopen(write_end, "w") as pipe:
        monkeypatch.setattr(sys, "stdout", pipe)
        assert main(["dedup", str(source), "-o", "-", "--annotate"]) == 0
    assert capsys.readouterr().err == ""


def test_permission_denied_on_the_output_folder(source, tmp_path, monkeypatch, capsys):
    # root may write anywhere, so the refusal is simulated where the OS would give it
    def no_access(path, mode, **kwargs):
        return False

    monkeypatch.setattr(os, "access", no_access)
    assert main(["clean", str(source), "-o", str(tmp_path / "out" / "c.jsonl")]) == 2
    assert "cannot write (permission denied on" in capsys.readouterr().err
    monkeypatch.undo()

    def mkstemp(*args, dir=None, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", dir)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)  # lost between the check and the write
    assert main(["dedup", str(source), "-o", str(tmp_path / "d.jsonl")]) == 2
    assert capsys.readouterr().err == (f"corpus-miner: error: {tmp_path / 'd.jsonl'}: cannot "
                                       "write (permission denied)\n")
    assert _files(tmp_path) == ["in.jsonl"]


def test_file_too_large_is_one_line_and_leaves_nothing(tmp_path):
    # `ulimit -f`: the kernel refuses to grow a file past the limit (EFBIG)
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))

    out = tmp_path / "web.jsonl"
    done = subprocess.run([sys.executable, "-m", "corpus_miner", "generate", "web", "--docs",
                           "100", "-o", str(out)], preexec_fn=limit, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr == f"corpus-miner: error: {out}: cannot write (file too large)\n"
    assert _files(tmp_path) == []
