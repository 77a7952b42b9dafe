"""The "compiling kernels (first run only)" notice, on a terminal.

A command's first run compiles its numba kernels (seconds to tens of seconds, before any output);
later runs load them from numba's cache. numba announces each compile (event "numba:compile",
never sent for a kernel loaded from the cache), so the notice appears exactly when compiling
happens, whatever the cache's state or location, and costs nothing otherwise. When stderr is a
terminal: while kernels compile, one line that counts them and the seconds spent, erased when the
command goes on (or a plain line while the command draws a progress bar), and at the end one
line with the totals. Pipes and CI logs get nothing: what a command writes to stderr there stays
the same on every run, and nobody is watching the pause.
numba is not imported for this: the listener is registered when the command imports numba.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import time
from contextlib import contextmanager

NOTICE = "corpus-miner: compiling kernels (first run only)"


class _Counter:
    """Counts and shows the kernels compiled in this block (numba's listener calls it)."""

    def __init__(self, on_first_compile=None) -> None:
        self.on_first_compile = on_first_compile  # called as the first compile starts
        self.kernels = 0  # corpus-miner's own, not numba's helpers compiled inside them
        self.depth = 0  # kernels compile the kernels they call inside their own compile
        self.started: float | None = None
        self.line_shown = False

    def start(self, dispatcher) -> None:
        if self.started is None:
            self.started = time.perf_counter()
            if self.on_first_compile is not None:
                self.on_first_compile()
            if _is_terminal(sys.stderr) and not _live(sys.stderr):  # a progress bar is drawn
                print(f"{NOTICE}...", file=sys.stderr, flush=True)
        self.depth += 1
        self._show()

    def end(self, dispatcher) -> None:
        self.depth -= 1
        py_func = getattr(dispatcher, "py_func", None)
        if py_func is not None and py_func.__module__.startswith("corpus_miner."):
            self.kernels += 1
        self._show()

    def _show(self) -> None:
        stream = sys.stderr
        if not _live(stream):
            return
        if self.depth > 0:
            seconds = time.perf_counter() - (self.started or 0.0)
            stream.write(f"\r{NOTICE}: {self.kernels} compiled, {seconds:.0f} s")
            self.line_shown = True
        elif self.line_shown:  # the command goes on: its own output gets a clean line
            stream.write("\r\x1b[K")
            self.line_shown = False
        stream.flush()

    def finish(self) -> None:
        if self.started is None or not _is_terminal(sys.stderr):
            return
        print(f"\r\x1b[Kcorpus-miner: compiled {self.kernels} kernels in "
              f"{time.perf_counter() - self.started:.1f} s (first run only: later runs load them "
              "from the cache)", file=sys.stderr, flush=True)


def _is_terminal(stream) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


def _live(stream) -> bool:
    """Whether a line may be rewritten in place: a terminal not taken by a progress bar (rich
    replaces sys.stderr while it draws one)."""
    return stream is sys.__stderr__ and _is_terminal(stream)


def _register(counter: _Counter):
    """Listen to numba's compile events; returns the listener (to unregister)."""
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev):
            counter.start(ev.data.get("dispatcher") if ev.data else None)

        def on_end(self, ev):
            counter.end(ev.data.get("dispatcher") if ev.data else None)

    listener = Listener()
    event.register("numba:compile", listener)
    return listener


class _AfterNumbaImport(importlib.abc.MetaPathFinder):
    """Calls `then()` once the command has imported numba (an import hook that steps aside)."""

    def __init__(self, then) -> None:
        self.then = then

    def find_spec(self, name, path=None, target=None):
        if name != "numba":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then(module):
            exec_module(module)
            self.then()

        spec.loader.exec_module = exec_then  # type: ignore[method-assign]
        return spec


@contextmanager
def compile_notice(on_first_compile=None):
    """Show the notice for kernels compiled inside this block; call `on_first_compile()` when
    the first starts compiling (the kernel cache is cold)."""
    counter = _Counter(on_first_compile)
    listeners = []

    def register() -> None:
        listeners.append(_register(counter))

    hook = None
    if "numba" in sys.modules:
        register()
    else:
        hook = _AfterNumbaImport(register)
        sys.meta_path.insert(0, hook)
    try:
        yield counter
    finally:
        if hook is not None and hook in sys.meta_path:
            sys.meta_path.remove(hook)
        if listeners:
            from numba.core import event

            event.unregister("numba:compile", listeners[0])
        counter.finish()
