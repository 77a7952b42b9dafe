"""Whether an output would overwrite an input: the same file (same path, a symlink or a hard
link: same device and inode), a file or folder inside an input folder, or a folder output that
holds an input. Locations are physical: a folder reached through a symlink, or a ".." after one,
is the folder the kernel would write into. "-" stands for stdin among inputs and for stdout
among outputs.
"""

from __future__ import annotations

import glob
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

from corpus_miner.errors import OutputError
from corpus_miner.io.locations import has_glob, is_remote, local_path, url_conflict

STDIO = "-"


def _identity(path: str, stream_fd: int) -> tuple[int, int] | None:
    """(device, inode) of an existing file or folder ("-": the file behind `stream_fd`), else
    None. Devices and pipes hold no data that writing could destroy: None too."""
    try:
        info = os.fstat(stream_fd) if path == STDIO else os.stat(path)
    except (OSError, ValueError):
        return None
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        return None
    return info.st_dev, info.st_ino


def _chain(path: str, stream_fd: int) -> list[tuple[int, int]]:
    """Identities of `path` and of every existing folder above it (for "-": just the stream)."""
    if path == STDIO:
        own = _identity(path, stream_fd)
        return [own] if own else []
    absolute = physical(path)
    found = []
    for item in (absolute, *absolute.parents):
        own = _identity(str(item), stream_fd)
        if own is not None:
            found.append(own)
    return found


def physical(path: str) -> Path:
    """Where `path` lands on disk: its folder with every symlink and ".." resolved in order (a
    ".." after a symlinked folder climbs out of the link's target, not out of the folder that
    holds the link, as the kernel does when it opens the path), then its name. The name itself
    is kept: a symlink named as the output is compared by what it points to (_identity)."""
    head, name = os.path.split(path)
    if name in ("", ".", ".."):
        return Path(os.path.realpath(path))
    return Path(os.path.realpath(head or ".")) / name


def overlapping_input(output: str | os.PathLike, inputs: Iterable) -> str | None:
    """The first input that `output` would overwrite or sit inside, or that sits inside an
    output folder; None when they are apart."""
    output = os.fspath(output)
    out_chain = _chain(output, _fd(sys.stdout))
    out_self = _identity(output, _fd(sys.stdout))
    for item in inputs:
        item = os.fspath(item)
        own = _identity(item, _fd(sys.stdin))
        if own is None:
            continue
        if own in out_chain:  # the input itself, or a folder holding the output
            return item
        if out_self is not None and output != STDIO and out_self in _chain(item, _fd(sys.stdin)):
            return item  # the input is inside the output folder
    return None


def check_apart(inputs: Iterable, outputs: Iterable) -> None:
    """OutputError naming the first output that would overwrite an input (see module doc).
    URLs are compared with URLs of the same store (io/locations.url_conflict), local glob
    patterns by what they match."""
    inputs = [os.fspath(item) for item in inputs]
    remote_inputs = [item for item in inputs if is_remote(item)]
    local_inputs = [local_path(item) for item in inputs if not is_remote(item)]
    local_inputs += [match for item in local_inputs if has_glob(item) and not os.path.lexists(item)
                     for match in glob.glob(item, recursive=True)]
    for output in outputs:
        if output is None:
            continue
        if is_remote(output):
            message = url_conflict(os.fspath(output), remote_inputs)
            if message is not None:
                raise OutputError(message)
            continue
        output = local_path(output)
        hit = overlapping_input(output, local_inputs)
        if hit is not None:
            raise OutputError(conflict_message(os.fspath(output), hit))


def conflict_message(output: str, hit: str) -> str:
    where = "stdout" if output == STDIO else output
    what = "stdin" if hit == STDIO else hit
    if output != STDIO and hit != STDIO and Path(hit).is_dir() and not _same(output, hit):
        return (f"{where}: is inside the input folder {what}; writing there would change the "
                "input; name an output outside it")
    if output != STDIO and Path(output).is_dir() and not _same(output, hit):
        return (f"{where}: the output folder holds the input {what} and would replace it; "
                "name another output folder")
    return (f"{where}: is the same file as the input {what}; writing it would destroy the "
            "input; name another output")


def _same(a: str, b: str) -> bool:
    return _identity(a, -1) == _identity(b, -1)


def _fd(stream) -> int:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return -1
