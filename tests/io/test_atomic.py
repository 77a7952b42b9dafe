"""atomic_path / atomic_dir on awkward targets: special files, folders, files in the way."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from corpus_miner.errors import OutputError
from corpus_miner.io.atomic import atomic_dir, atomic_path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_special_file_is_written_in_place_not_renamed_over(tmp_path):
    # `--json /dev/null` used to rename a regular file over /dev/null (as root, for everyone).
    fifo = tmp_path / "figures.json"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    try:
        with atomic_path(fifo) as tmp:
            tmp.write_bytes(b'{"ok": 1}')
    finally:
        # if the pipe was renamed over, the reader still waits on it: let it go
        if reader.is_alive() and stat.S_ISFIFO(os.stat(fifo).st_mode):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(5)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received == [b'{"ok": 1}']
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figures.json"]


def test_file_output_onto_a_folder_is_a_clear_error(tmp_path):
    with pytest.raises(OutputError, match="is a folder"):
        with atomic_path(tmp_path):
            pass


def test_folder_output_onto_a_file_is_refused_and_the_file_kept(tmp_path):
    # It used to move the file aside to a hidden ".name.old-PID" that was never removed.
    target = tmp_path / "corpus"
    target.write_text("user data")
    with pytest.raises(OutputError, match="not a folder"):
        with atomic_dir(target):
            pass
    assert target.read_text() == "user data"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]


def test_folder_output_never_replaces_a_folder_it_did_not_write(tmp_path):
    target = tmp_path / "Documents"
    target.mkdir()
    (target / "thesis.txt").write_text("years of work")
    with pytest.raises(OutputError, match="not a corpus-miner output"):
        with atomic_dir(target):
            pass
    assert (target / "thesis.txt").read_text() == "years of work"


def test_folder_output_replaces_its_own_earlier_output_and_empty_folders(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    with atomic_dir(target) as tmp:  # empty: fine
        (tmp / "metadata.json").write_text('{"format": "corpus-miner/token-corpus"}')
    with atomic_dir(target) as tmp:  # ours: replaced
        (tmp / "metadata.json").write_text('{"format": "corpus-miner/lsh-index"}')
    assert "lsh-index" in (target / "metadata.json").read_text()
