"""OS errors while writing are one line naming the output, with nothing half-written; a pipe
closed by its reader ends the run quietly (issue 10, "OS errors end in tracebacks")."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys

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


@pytest.fixture
def locked(tmp_path):
    """A folder nobody may create files in, root included (immutable), or skip."""
    folder = tmp_path / "locked"
    folder.mkdir()
    if os.geteuid() == 0:
        if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode:
            pytest.skip("root can write anywhere and chattr is not available here")
        yield folder
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    else:
        folder.chmod(0o500)
        yield folder
        folder.chmod(0o700)


def test_an_unwritable_output_folder_is_refused_before_any_work(source, locked, capsys):
    assert main(["clean", str(source), "-o", str(locked / "c.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"corpus-miner: error: {locked / 'c.jsonl'}: cannot write (")
    assert err.count("\n") == 1 and list(locked.iterdir()) == []


def test_an_error_while_writing_leaves_no_temporary_file(source, tmp_path, monkeypatch, capsys):
    def refuse(src, dst):  # e.g. the folder was made read-only while the command ran
        raise PermissionError(errno.EACCES, "Permission denied", os.fspath(src), os.fspath(dst))

    monkeypatch.setattr(os, "replace", refuse)
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


def test_a_closed_stderr_keeps_summaries_out_of_the_records_on_stdout(source, monkeypatch,
                                                                       capsys):
    monkeypatch.setattr(sys, "stderr", None)  # `2>&-`: print(file=None) would use stdout
    assert main(["dedup", str(source), "-o", "-", "--annotate"]) == 0
    sys.stderr.close()  # the /dev/null that main put in its place
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(ROWS) and all(json.loads(line)["id"] >= 0 for line in lines)
