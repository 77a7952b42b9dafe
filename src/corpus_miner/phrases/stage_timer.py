"""Wall and CPU seconds per named stage of a mining run."""

from __future__ import annotations

import time
from collections.abc import Callable


class StageTimer:
    """`start(name)` ends the running stage (if any) and starts `name`; `stop()` ends it.
    A stage started twice adds up. CPU seconds are process time (all threads): on a busy shared
    machine they vary less than wall seconds, and their ratio to wall seconds shows how many
    cores a stage kept busy."""

    def __init__(self, progress: Callable[[str], None] | None = None) -> None:
        self.progress = progress
        self.seconds: dict[str, float] = {}
        self.cpu_seconds: dict[str, float] = {}
        self._began = time.perf_counter()
        self._cpu_began = time.process_time()
        self._stage: str | None = None
        self._stage_began = self._began
        self._stage_cpu_began = self._cpu_began

    def start(self, name: str) -> None:
        self.stop()
        self._stage = name
        self._stage_began, self._stage_cpu_began = time.perf_counter(), time.process_time()
        if self.progress is not None:
            self.progress(name)

    def stop(self) -> None:
        if self._stage is None:
            return
        now, cpu_now = time.perf_counter(), time.process_time()
        name = self._stage
        self.seconds[name] = self.seconds.get(name, 0.0) + now - self._stage_began
        self.cpu_seconds[name] = self.cpu_seconds.get(name, 0.0) + cpu_now - self._stage_cpu_began
        self._stage = None

    def totals(self) -> dict:
        """The stats entries: seconds and cpu_seconds per stage and in total."""
        self.stop()
        return {"seconds": dict(self.seconds), "cpu_seconds": dict(self.cpu_seconds),
                "seconds_total": time.perf_counter() - self._began,
                "cpu_seconds_total": time.process_time() - self._cpu_began}
