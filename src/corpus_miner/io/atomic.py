"""Atomic output: write to a temporary sibling, then rename over the final name.

An interrupted run therefore never leaves a partial file (or folder) under the final name.
Special files are never renamed over: a file output that is a device or pipe (`-o /dev/stdout`,
`--json /dev/null`) is written in place, and a folder output refuses an existing non-folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterator

from corpus_miner.errors import InputError


def _default_mode(base: int) -> int:
    umask = os.umask(0)
    os.umask(umask)
    return base & ~umask


@contextlib.contextmanager
def atomic_path(final: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary file path next to `final`; rename it onto `final` on success."""
    final = Path(final)
    if final.is_dir():
        raise InputError(f"{final}: is a folder; name an output file")
    if final.exists() and not final.is_file():
        # a device or pipe: renaming over it would replace e.g. /dev/null by a regular file
        yield final
        return
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
    os.close(fd)
    os.chmod(tmp, _default_mode(0o666))  # mkstemp makes 0600; outputs get the usual umask mode
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, final)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def is_own_output(folder: Path) -> bool:
    """True for an empty folder or one that corpus-miner wrote (metadata.json of one of our
    formats): the only folders an output may replace."""
    if not any(folder.iterdir()):
        return True
    try:
        with open(folder / "metadata.json", encoding="utf-8") as f:
            fmt = json.load(f).get("format", "")
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(fmt, str) and fmt.startswith("corpus-miner/")


@contextlib.contextmanager
def atomic_dir(final: str | os.PathLike,
               replaceable: Callable[[Path], bool] = is_own_output) -> Iterator[Path]:
    """Yield a temporary folder next to `final`; on success it replaces `final` (old one removed).

    An existing folder is replaced only when `replaceable(folder)` says so (by default: empty or
    written by corpus-miner), so `-o ~/Documents` is an error instead of a deleted folder."""
    final = Path(final)
    if final.exists() and not final.is_dir():
        raise InputError(f"{final}: exists and is not a folder; remove it or name another folder")
    if final.is_dir() and not replaceable(final):
        raise InputError(f"{final}: folder exists and is not a corpus-miner output; remove it "
                         "or name another folder")
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    os.chmod(tmp_path, _default_mode(0o777))
    try:
        yield tmp_path
        if final.exists():
            old = final.with_name(f".{final.name}.old-{os.getpid()}")
            os.replace(final, old)
            os.replace(tmp_path, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp_path, final)
    except BaseException:
        shutil.rmtree(tmp_path, ignore_errors=True)
        raise
