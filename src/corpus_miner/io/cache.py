"""corpus-miner's folder in the user cache: files it can always rebuild (code-point tables,
Spark's class archives), so losing them costs time, never data."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/corpus-miner, or ~/.cache/corpus-miner."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "corpus-miner"
