"""A progress bar on stderr for work that reads input files: bytes read out of the inputs'
total size. Only on a terminal; rich is imported only then."""
from __future__ import annotations

import contextlib
from pathlib import Path

from corpus_miner.errors import CorpusMinerError
from corpus_miner.io.locations import is_remote, local_path
from corpus_miner.io.readers import STDIN


def input_bytes(inputs) -> int | None:
    """Total size of the input files and folders (compressed, as stored): the bar's 100%. None
    when unknown (stdin, a path that does not exist)."""
    total = 0
    for item in inputs:
        if is_remote(item):
            from corpus_miner.io.remote import RemoteFolder, input_sources

            try:
                sources = input_sources(str(item))
            except CorpusMinerError:
                return None  # the reader names the problem
            total += sum(f.size for s in sources
                         for f in (s.files if isinstance(s, RemoteFolder) else [s]))
            continue
        path = Path(local_path(item))
        if str(item) == STDIN or not path.exists():
            return None
        with contextlib.suppress(OSError):
            files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
            total += sum(p.stat().st_size for p in files)
    return total


def byte_progress():
    """A transient rich Progress on stderr showing a description, a bar of bytes and the time
    left."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                    TimeRemainingColumn(), console=Console(stderr=True), transient=True)
