"""Peak resident memory of one step of work, for run statistics and benchmarks."""

from __future__ import annotations

import resource


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


class PeakRss:
    """Peak resident memory of one step. On Linux the kernel's high-water mark (VmHWM) is reset
    at the start (writing 5 to /proc/self/clear_refs), so the peak is that of this step, not of
    whatever the process did before; elsewhere it falls back to the process-lifetime peak."""

    def __init__(self) -> None:
        self.before_kib = _status_kib("VmRSS")
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.scope = "step"
        except OSError:
            self.scope = "process"

    def report(self) -> dict:
        peak = _status_kib("VmHWM") if self.scope == "step" else None
        if peak is None:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
        out = {"peak_rss_mb": peak / 1024.0, "peak_rss_scope": self.scope}
        if self.before_kib is not None:
            out["rss_before_mb"] = self.before_kib / 1024.0
            out["peak_rss_increase_mb"] = max(peak - self.before_kib, 0) / 1024.0
        return out
