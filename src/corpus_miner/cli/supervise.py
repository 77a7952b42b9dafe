"""A command under an address-space limit (`ulimit -v`) runs in a child process watched by a
small parent, so that running out of memory anywhere ends in the one-line message.

Out of memory inside Python is a MemoryError, and the command line turns it into one line. But
numba compiles (and loads cached) kernels with LLVM, and LLVM ends the process with abort() when
it cannot map memory ("LLVM ERROR: Unable to allocate section memory!"); other allocations fail
inside the interpreter's C code and surface as a SystemError traceback. Neither can be caught in
the process where it happens. The parent imports nothing heavy: it holds the child's tracebacks
and fatal errors back, and when the child crashes it prints the out-of-memory line, exits 2 and
removes the temporary files the child had not committed (every temporary output the child
creates is listed in a file the parent names, see io/atomic.py). Without a limit nothing of this
runs: an ordinary command is one process.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

from corpus_miner.io.atomic import TEMPORARIES_ENV

CHILD = "CORPUS_MINER_SUPERVISED"

_HELD_FROM = (b"Traceback (most recent call last)", b"LLVM ERROR", b"Fatal Python error",
              b"terminate called", b"Allocation failed")
_FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
# What a child that ran out of memory leaves in its held stderr; any other uncaught error is a
# bug or a bad input of its own and is passed through as it is.
_OUT_OF_MEMORY = ("MemoryError", "SystemError", "LLVM ERROR", "Allocation failed",
                  "terminate called", "Cannot allocate memory", "can't start new thread",
                  "std::bad_alloc")


def address_space_limit() -> int | None:
    """The soft RLIMIT_AS in bytes, or None when there is none."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def needs_supervision() -> bool:
    return address_space_limit() is not None and os.environ.get(CHILD) != "1"


def run_supervised(argv: list[str]) -> int:
    """Run `corpus-miner argv` in a child process; its exit code, or 2 with one line when it
    ran out of memory (a signal, or an error that names a failed allocation)."""
    fd, listing = tempfile.mkstemp(prefix="corpus-miner-", suffix=".temporaries")
    os.close(fd)
    env = dict(os.environ, **{CHILD: "1", TEMPORARIES_ENV: listing})
    # Handlers go in before the child starts, so that a SIGTERM arriving in between is not lost
    # (it would kill this parent and orphan the child): one that comes before the child exists
    # is kept and passed on as soon as it does.
    # Ctrl-C reaches the child from the terminal's process group; a second SIGINT from here
    # would interrupt its clean-up. Signals sent to this process alone are passed on.
    started: list[subprocess.Popen] = []
    early: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        if started:
            started[0].send_signal(signum)
        else:
            early.append(signum)

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for forwarded in _FORWARDED:
        signal.signal(forwarded, forward)
    try:
        child = subprocess.Popen([sys.executable, "-m", "corpus_miner", *argv], env=env,
                                 stderr=subprocess.PIPE)
    except OSError:  # no memory for the child itself
        _remove(listing)
        print(f"corpus-miner: error: {out_of_memory()}", file=sys.stderr)
        return 2
    started.append(child)
    for pending in early:
        child.send_signal(pending)
    with child.stderr:  # type: ignore[union-attr]
        held = _relay(child)
    code = child.wait()
    try:
        if code in (0, 2) or not _crashed(code, held):
            sys.stderr.write(held)
            sys.stderr.flush()
            return code
        _remove_temporaries(listing)
        print(f"corpus-miner: error: {out_of_memory()}", file=sys.stderr)
        return 2
    finally:
        _remove(listing)


def _relay(child: subprocess.Popen) -> str:
    """Copy the child's stderr to ours as it comes (progress lines included), up to the first
    traceback or fatal error, which is returned instead."""
    assert child.stderr is not None
    out = sys.stderr.buffer
    pending = b""
    held: list[bytes] = []
    while True:
        chunk = os.read(child.stderr.fileno(), 65536)
        pending += chunk
        # whole lines (a progress line ends in a carriage return), or the rest at the end
        pieces = re.split(rb"(?<=[\r\n])", pending)
        pending = pieces.pop() if chunk else b""
        for piece in pieces + ([pending] if not chunk and pending else []):
            if held or piece.lstrip().startswith(_HELD_FROM):
                held.append(piece)
            else:
                out.write(piece)
                out.flush()
        if not chunk:
            return b"".join(held).decode("utf-8", "replace")


def _crashed(code: int, held: str) -> bool:
    """Out of memory: a signal (abort, kill), or held text that names a failed allocation."""
    return code < 0 or any(marker in held for marker in _OUT_OF_MEMORY)


def _remove_temporaries(listing: str) -> None:
    try:
        with open(listing, encoding="utf-8") as f:
            paths = [line.rstrip("\n") for line in f if line.strip()]
    except OSError:
        return
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            _remove(path)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def out_of_memory() -> str:
    """The one-line reason, with the limit when there is one."""
    limit = address_space_limit()
    if limit is None:
        return "out of memory; use smaller inputs or parameters, or a machine with more memory"
    return (f"out of memory (address-space limit of {limit >> 20} MiB); use smaller inputs or "
            "parameters, a higher limit, or a machine with more memory")
