"""Termination signals as exceptions, so that outputs clean up after SIGTERM and SIGHUP exactly
as after Ctrl-C (temporary files removed, the old output left in place).

Python's default SIGTERM and SIGHUP end the process at once, skipping every `finally`. Inside
`raising_signals()` (the CLI's main) they raise `Terminated` instead, SIGINT raises
KeyboardInterrupt as usual, and `deferred()` holds any of them back while an output is being
swapped into place, so that an interruption leaves either the old output or the new one.
Only the first signal is raised; later ones are ignored while the cleanup runs.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                if hasattr(signal, name))


class Terminated(BaseException):
    """The process received a termination signal; the exit code is 128 + its number."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


_state: dict[str, Any] = {"depth": 0, "pending": None, "raised": False}


def _raise(signum: int) -> None:
    _state["raised"] = True
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def _handler(signum, frame) -> None:
    if _state["raised"]:  # already stopping: let the cleanup finish
        return
    if _state["depth"]:
        _state["pending"] = signum
        return
    _raise(signum)


@contextlib.contextmanager
def raising_signals() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise inside this block (main thread only; elsewhere, and in
    a thread, it does nothing). Previous handlers come back at the end. A signal arriving while
    the handlers are being installed is raised on entry, once they all are."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    _state.update(depth=1, pending=None, raised=False)  # held until every handler is in place
    try:
        for signum in SIGNALS:
            previous[signum] = signal.signal(signum, _handler)
        _release()
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _state.update(depth=0, pending=None, raised=False)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A signal arriving inside this block is raised when it ends (blocks nest)."""
    _state["depth"] += 1
    try:
        yield
    finally:
        _release()


def _release() -> None:
    _state["depth"] -= 1
    pending = _state["pending"]
    if not _state["depth"] and pending is not None:
        _state["pending"] = None
        _raise(pending)
