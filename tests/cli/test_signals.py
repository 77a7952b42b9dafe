"""Signals leave either the old output or the complete new one, and no temporary file
(issue 10, "SIGTERM and SIGHUP leave temporary files"; the fault-injection test of its "done").

The in-process test raises SIGTERM at chosen lines of corpus_miner's own code (a tracer counts
the lines a run executes), among them every line of the atomic writers, where an interruption
is most harmful; compiled kernels run between lines. A real process checks the exit codes.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import corpus_miner
from corpus_miner.cli import main
from corpus_miner.io import signals

PACKAGE = os.path.dirname(corpus_miner.__file__)
ATOMIC = os.path.join(PACKAGE, "io", "atomic.py")
TEMPLATE = "read our terms of service before you use any part of this web site"


class _Tracer:
    """Counts the lines corpus_miner executes; raises SIGTERM at line number `at` (1-based),
    once corpus_miner's handler is in place (before, SIGTERM would end the test run). Records
    the line numbers spent in the atomic writers."""

    def __init__(self, at: int | None = None):
        self.at, self.count, self.atomic, self.fired = at, 0, [], False

    def __call__(self, frame, event, arg):
        if frame.f_code.co_filename.startswith(PACKAGE):
            return self._line
        return None

    def _line(self, frame, event, arg):
        if event == "line":
            self.count += 1
            if frame.f_code.co_filename == ATOMIC:
                self.atomic.append(self.count)
            if (not self.fired and self.at is not None and self.count >= self.at
                    and signal.getsignal(signal.SIGTERM) is signals._handler):
                self.fired = True
                signal.raise_signal(signal.SIGTERM)
        return self._line


def _traced(argv, tracer):
    sys.settrace(tracer)
    try:
        return main(argv)
    finally:
        sys.settrace(None)


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


COMMANDS = {  # name -> (argv after the inputs, output name)
    "clean": (["--sigma", "3", "--min-length", "4"], "out.jsonl.gz"),
    "dedup": ([], "out.parquet"),
    "tokenize": ([], "corpus"),
    "index build": ([], "idx"),
}


def _index_state(folder):
    """What readers of the index in `folder` see (its generations and the times they record
    differ run to run, so not the bytes), the folder's entries and any temporary file left."""
    from corpus_miner.dedup import LSHBloom

    index = folder / "idx"
    leftovers = sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp"))
    model = LSHBloom.load(index)
    layers = tuple(hashlib.sha256(layer.bits).hexdigest() for layer in model.index_.layers)
    return sorted(os.listdir(folder)), model.n_documents_, layers, leftovers


# A signal between open() returning and `with` taking the file drops the file object unclosed;
# CPython closes it at once (refcount) and warns: harmless, and no code of ours can avoid it.
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_signal_at_any_moment_leaves_the_old_or_the_new_output(tmp_path, command, capsys,
                                                                 snapshot):
    if command == "index build":  # a new generation each time: compared as readers see it
        snapshot = _index_state
    extra, name = COMMANDS[command]
    old_rows = [{"id": i, "text": f"{TEMPLATE} old {i}"} for i in range(8)]
    new_rows = [{"id": i, "text": f"{TEMPLATE} new page {i} " * (1 + i % 3)} for i in range(40)]
    _write(tmp_path / "old.jsonl", old_rows)
    _write(tmp_path / "in.jsonl", new_rows)
    out_dir = tmp_path / "out"
    argv = [*command.split(), str(tmp_path / "in.jsonl"), *extra, "-o", str(out_dir / name)]
    assert main([*command.split(), str(tmp_path / "old.jsonl"), *extra, "-o",
                 str(out_dir / name)]) == 0
    old = snapshot(out_dir)
    reference = tmp_path / "reference"
    assert main(argv[:-1] + [str(reference / name)]) == 0
    new = snapshot(reference)
    assert new != old

    counting = _Tracer()
    assert _traced(argv, counting) == 0 and snapshot(out_dir) == new
    assert main([*command.split(), str(tmp_path / "old.jsonl"), *extra, "-o",
                 str(out_dir / name)]) == 0  # back to the old output
    # every line of the writers' critical part, and a spread of the rest
    atomic = sorted(set(counting.atomic))
    moments = sorted(set(atomic[::max(1, len(atomic) // 24)] + atomic[-12:]
                         + [counting.count * k // 10 for k in range(1, 10)]))
    capsys.readouterr()
    for at in moments:
        tracer = _Tracer(at)
        assert _traced(argv, tracer) == 128 + signal.SIGTERM, at
        assert tracer.fired
        err = capsys.readouterr().err
        assert err.endswith("corpus-miner: stopped by SIGTERM\n"), err
        state = snapshot(out_dir)
        assert state in (old, new), f"line {at}: {sorted(state)}"
        if state == new:  # done before the signal: back to the old output for the next moment
            assert main([*command.split(), str(tmp_path / "old.jsonl"), *extra, "-o",
                         str(out_dir / name)]) == 0
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "old.jsonl", "out", "reference"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_real_process_exits_128_plus_the_signal_and_cleans_up(tmp_path, signum):
    rows = [{"id": i, "text": f"{TEMPLATE} {i} " * 40} for i in range(3000)]
    _write(tmp_path / "in.jsonl", rows)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "d.jsonl").write_text("old output\n")
    process = subprocess.Popen([sys.executable, "-m", "corpus_miner", "dedup",
                                str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "out" / "d.jsonl"),
                                "--num-perm", "1024"], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(os.listdir(tmp_path / "out")) < 2 and process.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)  # until the temporary output exists: the run is writing
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signum
    assert err == f"corpus-miner: stopped by {signal.Signals(signum).name}\n"
    assert os.listdir(tmp_path / "out") == ["d.jsonl"]
    assert (tmp_path / "out" / "d.jsonl").read_text() == "old output\n"
