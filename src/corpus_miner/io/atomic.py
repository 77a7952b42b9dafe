"""Atomic output: write to a temporary sibling, then rename over the final name.

An interrupted run therefore never leaves a partial file (or folder) under the final name, and
the temporary sibling is removed on any error or signal (see io/signals.py). Special files are
never renamed over: a file output that is a device or pipe (`-o /dev/stdout`, `--json
/dev/null`) is written in place, and a folder output refuses an existing non-folder. OS errors
while writing (disk full, file too large, permission denied) become one OutputError naming the
output. `check_file_output` / `check_folder_output` make the same checks before any work.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from corpus_miner.errors import OutputError
from corpus_miner.io.locations import is_remote, local_path
from corpus_miner.io.signals import deferred


def _default_mode(base: int) -> int:
    umask = os.umask(0)
    os.umask(umask)
    return base & ~umask


def os_reason(exc: OSError) -> str:
    """'no space left on device' from an OSError, for one-line messages."""
    return (exc.strerror or str(exc) or type(exc).__name__).lower()


def _check_parent(final: Path) -> None:
    """The folder of `final` must take a new file (tried: permissions, read-only mounts and
    pseudo file systems all show); a folder still to be created must have a writable nearest
    existing ancestor."""
    parent = final.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"{final}: cannot write ({parent} is not a folder)")
    if parent != final.parent:
        if not os.access(parent, os.W_OK | os.X_OK):
            raise OutputError(f"{final}: cannot write (permission denied on {parent})")
        return
    try:
        with deferred():
            os.unlink(_make_temporary(final, folder=False))
    except OSError as exc:
        raise OutputError(f"{final}: cannot write ({os_reason(exc)})") from None


def check_file_output(final: str | os.PathLike) -> None:
    """OutputError unless a file can be written (atomically) at `final`."""
    if is_remote(final):
        from corpus_miner.io.remote_output import check_remote_output

        check_remote_output(os.fspath(final))
        return
    final = Path(local_path(final))
    if final.is_dir():
        raise OutputError(f"{final}: is a folder; name an output file")
    if final.exists() and not final.is_file():
        if not os.access(final, os.W_OK):
            raise OutputError(f"{final}: cannot write (permission denied)")
        return  # a device or pipe, written in place
    _check_parent(final)


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


def check_folder_output(final: str | os.PathLike,
                        replaceable: Callable[[Path], bool] = is_own_output) -> None:
    """OutputError unless `final` may be written as a folder, replacing only a folder that
    `replaceable` accepts (by default: empty or written by corpus-miner)."""
    if is_remote(final):
        from corpus_miner.io.remote_output import check_remote_output

        check_remote_output(os.fspath(final), folder=True)
        return
    final = Path(local_path(final))
    if final.exists() and not final.is_dir():
        raise OutputError(f"{final}: exists and is not a folder; remove it or name another "
                          "folder")
    try:
        if final.is_dir() and not replaceable(final):
            raise OutputError(f"{final}: folder exists and is not a corpus-miner output; "
                              "remove it or name another folder")
    except OSError as exc:
        raise OutputError(f"{final}: cannot inspect the existing folder ({os_reason(exc)})") \
            from None
    _check_parent(final)


def _is_ours(exc: OSError, final: Path) -> bool:
    """Whether an OSError comes from writing the output: no file name (a write or flush), the
    output, one of its folders, or a temporary sibling (named after the output)."""
    if exc.filename is None:
        return True
    name = Path(os.fsdecode(exc.filename))
    if name in (final, *final.parents):
        return True
    return name.parent == final.parent and name.name.startswith(_temporary_prefix(final))


@contextlib.contextmanager
def _output_errors(final: Path) -> Iterator[None]:
    """An OSError of writing `final` (not of reading an input) becomes one OutputError."""
    try:
        yield
    except OSError as exc:
        if not _is_ours(exc, final):
            raise
        raise OutputError(f"{final}: cannot write ({os_reason(exc)})") from None


@contextlib.contextmanager
def _temporary_sibling(final: Path, folder: bool) -> Iterator[Path]:
    """A new temporary file or folder next to `final`, named after it and with the usual umask
    mode (mkstemp makes 0600), removed if the block fails for any reason, a signal included."""
    made = None
    try:
        with _output_errors(final):
            with deferred():  # a signal between creating and remembering it would leak it
                final.parent.mkdir(parents=True, exist_ok=True)
                made = Path(_make_temporary(final, folder))
            os.chmod(made, _default_mode(0o777 if folder else 0o666))
            yield made
    except BaseException:
        _remove(made)
        raise


def _make_temporary(final: Path, folder: bool) -> str:
    prefix = _temporary_prefix(final)
    # tempfile collapses ".." lexically; the kernel resolves it after symlinks. The physical
    # folder is where the rename lands, so the temporary sibling goes there (same file system).
    parent = os.path.realpath(final.parent)
    if folder:
        return remember_temporary(tempfile.mkdtemp(prefix=prefix, suffix=".tmp", dir=parent))
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=parent)
    os.close(fd)
    return remember_temporary(name)


TEMPORARIES_ENV = "CORPUS_MINER_TEMPORARIES"


def remember_temporary(path: str) -> str:
    """List `path` in the file named by $CORPUS_MINER_TEMPORARIES, when set: the supervising
    parent of a command under a memory limit (cli/supervise.py) removes what is listed if this
    process crashes before it can remove it itself."""
    listing = os.environ.get(TEMPORARIES_ENV)
    if listing:
        with open(listing, "a", encoding="utf-8") as f:
            f.write(path + "\n")
    return path


def _temporary_prefix(final: Path) -> str:
    """`.NAME.` for the temporary sibling, shortened so that a legal NAME of up to 255
    bytes still gives a legal temporary name (the random part and .tmp add 13)."""
    return f".{os.fsdecode(os.fsencode(final.name)[:200])}."


def _remove(path: Path | None) -> None:
    if path is None:
        return
    with deferred(), contextlib.suppress(OSError):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_path(final: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary file path next to `final`; rename it onto `final` on success. At a
    URL: a local temporary file, uploaded on success (io/remote_output.py)."""
    if is_remote(final):
        from corpus_miner.io.remote_output import atomic_remote_file

        with atomic_remote_file(os.fspath(final)) as tmp:
            yield tmp
        return
    final = Path(local_path(final))
    check_file_output(final)
    if final.exists() and not final.is_file():
        # a device or pipe: renaming over it would replace e.g. /dev/null by a regular file
        with _output_errors(final):
            yield final
        return
    with _temporary_sibling(final, folder=False) as tmp:
        yield tmp
        os.replace(tmp, final)


@contextlib.contextmanager
def atomic_dir(final: str | os.PathLike,
               replaceable: Callable[[Path], bool] = is_own_output) -> Iterator[Path]:
    """Yield a temporary folder next to `final`; on success it replaces `final` (old one removed).

    An existing folder is replaced only when `replaceable(folder)` says so (by default: empty or
    written by corpus-miner), so `-o ~/Documents` is an error instead of a deleted folder.
    At a URL: a local temporary folder, uploaded on success (io/remote_output.py)."""
    if is_remote(final):
        from corpus_miner.io.remote_output import atomic_remote_folder

        with atomic_remote_folder(os.fspath(final)) as tmp:
            yield tmp
        return
    final = Path(local_path(final))
    check_folder_output(final, replaceable)
    with _temporary_sibling(final, folder=True) as tmp:
        yield tmp
        with deferred():  # never leave neither the old folder nor the new one under `final`
            if not final.exists():
                os.replace(tmp, final)
                return
            old = final.with_name(f"{_temporary_prefix(final)}old-{os.getpid()}")
            os.replace(final, old)
            try:
                os.replace(tmp, final)
            except OSError:
                os.replace(old, final)
                raise
            shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def writing_stdout() -> Iterator[None]:
    """Writes to stdout inside this block: a full or closed stdout becomes one OutputError; a
    pipe closed by the reader (`| head`) stays a BrokenPipeError, which ends a run quietly.
    Either way stdout then points at /dev/null, so that the interpreter's last flush of what
    is still buffered does not fail again at exit."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None:
            raise
        discard_stdout()
        if isinstance(exc, BrokenPipeError):
            raise
        raise OutputError(f"stdout: cannot write ({os_reason(exc)})") from None


def discard_stdout() -> None:
    """Point the stdout descriptor at /dev/null (after a write to it failed)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):  # no stdout, or one without a descriptor
        pass


def write_text(path, text: str) -> None:
    """`text` as UTF-8 to the file `path`, atomically, or to stdout when path is "-"."""
    if str(path) == "-":
        with writing_stdout():
            sys.stdout.write(text)
            sys.stdout.flush()
        return
    with atomic_path(path) as tmp, text_output(tmp, compress=False) as out:
        out.write(text)


@contextlib.contextmanager
def text_output(tmp: Path, compress: bool) -> Iterator:
    """A UTF-8 text file at `tmp` (an atomic_path temporary), gzip-compressed if asked
    (see binary_output)."""
    with binary_output(tmp, compress) as raw, \
            io.TextIOWrapper(raw, encoding="utf-8", newline="\n") as out:
        yield out


@contextlib.contextmanager
def binary_output(tmp: Path, compress: bool) -> Iterator:
    """A binary file at `tmp` (an atomic_path temporary), gzip-compressed if asked: level 6
    (level 9 cost 1.6x the write time for ~2% smaller files) and no name or time in the gzip
    header, which would make outputs differ run to run (and leak the temporary name)."""
    if not compress:
        with open(tmp, "wb") as out:
            yield out
        return
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                compresslevel=6, mtime=0) as packed:
        yield packed
