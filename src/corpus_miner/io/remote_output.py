"""Outputs at URLs, with the Safety promises in their object-store form.

A file output is written to a local temporary file, then uploaded in one request (small files)
or as a multipart upload completed last: the object appears at its key only when it is whole,
and an error or a signal (SIGINT, SIGTERM) aborts the upload, so no partial object and no
temporary key is left (the local temporary file goes too). A folder output (an index, a
sharded corpus) uploads its files one by one with the file that makes it whole (metadata.json,
_manifest.json) last; on failure the files it uploaded are deleted. Before any work,
`check_remote_output` makes sure the backend is installed, the protocol can be written, the
bucket exists and takes a new object (a probe key written and deleted).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from corpus_miner.errors import OutputError
from corpus_miner.io.atomic import remember_temporary
from corpus_miner.io.locations import READ_ONLY, base_name, display, join, protocol_of
from corpus_miner.io.remote import _retried
from corpus_miner.io.signals import deferred
from corpus_miner.io.storage import filesystem, storage_error

# Multipart part size: S3 allows 10,000 parts of at least 5 MiB, so 32 MiB parts reach 320 GB
# per object; the backend buffers one part in memory.
PART_BYTES = max(5 << 20, int(os.environ.get("CORPUS_MINER_UPLOAD_PART", 32 << 20)))
LAST = ("metadata.json", "_manifest.json")  # the files that make a folder output whole


def _fs(url: str):
    if protocol_of(url) in READ_ONLY:
        raise OutputError(f"{display(url)}: {protocol_of(url)}:// is read-only; write to a "
                          "file, or to s3://, gs://, az:// or hf://")
    return filesystem(url)


def _listing(fs, path: str) -> dict:
    """Objects under a prefix, {path: info} (empty when there are none)."""
    try:
        return fs.find(path.rstrip("/"), detail=True)
    except FileNotFoundError:
        return {}


def check_remote_output(url: str, folder: bool = False,
                        replaceable: Callable[[dict], bool] | None = None) -> None:
    """OutputError unless `url` can be written: a file output must not be a prefix holding
    objects, a folder output may replace only what `replaceable` accepts ({name: info} of the
    objects under it; default: our own output or nothing)."""
    fs, path = _fs(url)
    try:
        below = _retried(lambda: _listing(fs, path), url)
        if folder:
            names = {p[len(path.rstrip("/")):].lstrip("/"): info for p, info in below.items()}
            if names and not (replaceable or own_output)(names):
                raise OutputError(f"{display(url)}: prefix holds objects that are not a "
                                  "corpus-miner output; remove them or name another prefix")
        elif any(p.rstrip("/") != path.rstrip("/") for p in below):
            raise OutputError(f"{display(url)}: is a prefix holding objects; name an output "
                              "object")
        probe = join(url.rstrip("/") if folder else _parent(url),
                     f".corpus-miner-probe-{uuid.uuid4().hex[:12]}.tmp")
        probe_path = filesystem(probe)[1]
        _retried(lambda: fs.pipe_file(probe_path, b""), url)
        _retried(lambda: fs.rm_file(probe_path), url)
    except OutputError:
        raise
    except Exception as exc:  # noqa: BLE001 - every backend error becomes one line
        raise storage_error(OutputError, url, exc, "cannot write") from None


def own_output(names: dict) -> bool:
    """A prefix that an output may replace: one holding a corpus-miner folder (metadata.json
    or _manifest.json at its top) or only Parquet parts."""
    top = {name for name in names if "/" not in name}
    return bool(top & set(LAST)) or all(
        name.startswith("part-") and "/" not in name for name in names)


def _parent(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[0]


def upload(local: Path, url: str) -> None:
    """Put the local file at `url`: one request, or a multipart upload completed last and
    aborted on any error or signal."""
    fs, path = _fs(url)
    size = os.path.getsize(local)
    try:
        if size <= PART_BYTES or protocol_of(url) == "memory":
            data = local.read_bytes()
            _retried(lambda: fs.pipe_file(path, data), url)
            return
        handle = fs.open(path, "wb", block_size=PART_BYTES)
        try:
            with open(local, "rb") as source:
                while chunk := source.read(PART_BYTES):
                    handle.write(chunk)
            with deferred():  # completing is what makes the object appear: all or nothing
                handle.close()
        except BaseException:
            _abandon(handle)
            raise
    except (OutputError, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - every backend error becomes one line
        raise storage_error(OutputError, url, exc, "cannot write") from None


def _abandon(handle) -> None:
    """Abort an unfinished upload (nothing appears), and make sure that closing the handle
    later, as its finaliser does, cannot complete it."""
    with deferred(), contextlib.suppress(Exception):
        handle.discard()
    with contextlib.suppress(Exception):
        handle.closed = True


def remove(urls) -> None:
    """Delete objects (those that exist), quietly: cleanup after an error."""
    with deferred():
        for url in urls:
            with contextlib.suppress(Exception):
                fs, path = filesystem(url)
                fs.rm_file(path)


@contextlib.contextmanager
def local_temporary(name: str) -> Iterator[Path]:
    """A local temporary file named after the output (the format follows its suffix),
    removed at the end whatever happens."""
    with deferred():
        fd, made = tempfile.mkstemp(prefix=".corpus-miner-", suffix="-" + name)
        os.close(fd)
        remember_temporary(made)
    tmp = Path(made)
    try:
        yield tmp
    finally:
        with deferred():
            tmp.unlink(missing_ok=True)
            for spare in tmp.parent.glob(tmp.name + ".*"):
                spare.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_remote_file(url: str) -> Iterator[Path]:
    """Yield a local temporary path; uploaded to `url` when the block succeeds."""
    check_remote_output(url)
    with local_temporary(base_name(url) or "output") as tmp:
        yield tmp
        upload(tmp, url)


@contextlib.contextmanager
def atomic_remote_folder(url: str, replaceable: Callable[[dict], bool] | None = None
                         ) -> Iterator[Path]:
    """Yield a local temporary folder; when the block succeeds its files are uploaded under
    `url` (the ones in LAST last), and objects of an older output there that the new one does
    not have are deleted; on failure the uploaded ones are deleted again."""
    check_remote_output(url, folder=True, replaceable=replaceable)
    with deferred():
        tmp = Path(remember_temporary(tempfile.mkdtemp(prefix=".corpus-miner-")))
    try:
        yield tmp
        publish_folder(tmp, url)
    finally:
        with deferred():
            shutil.rmtree(tmp, ignore_errors=True)


def publish_folder(local: Path, url: str) -> None:
    """Upload a local folder's files under `url` (see atomic_remote_folder)."""
    files = sorted(p.relative_to(local).as_posix() for p in local.rglob("*") if p.is_file())
    files.sort(key=lambda name: name in LAST)  # stable: the finishing files last
    old = retire_manifest(url)
    uploaded: list[str] = []
    try:
        for name in files:
            target = join(url, name)
            upload(local / name, target)
            uploaded.append(target)
    except BaseException:
        remove(uploaded)
        raise
    delete_stale(url, old, set(files))


def retire_manifest(url: str) -> dict:
    """Before a folder output is replaced: delete the older output's finishing files (so it
    stops being whole before any of its files changes); its listing, for delete_stale."""
    fs, path = _fs(url)
    old = _retried(lambda: _listing(fs, path), url)
    root = path.rstrip("/")
    for name in LAST:
        if f"{root}/{name}" in old:
            _retried(lambda name=name: fs.rm_file(f"{root}/{name}"), url)
    return old


def delete_stale(url: str, old: dict, kept: set[str]) -> None:
    """Delete the objects of an older output that the new one (`kept` names) does not have."""
    root = filesystem(url)[1].rstrip("/")
    prefix = url.split("://", 1)[0] + "://"
    remove(prefix + p for p in old if p[len(root):].lstrip("/") not in kept)
