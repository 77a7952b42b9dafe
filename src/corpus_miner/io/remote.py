"""Reading inputs at URLs: listing (globs in sorted order, prefixes as folders), streaming in
bounded memory with retries, and the check that an object read twice did not change.

`input_sources(url)` turns one input into `RemoteFile`s and `RemoteFolder`s, sorted, the way the
local reader sees a path. `RemoteFile.open()` is a seekable binary stream that fetches the object
in blocks of `BLOCK_BYTES` (never the whole object first); a dropped connection is retried with
backoff `retries()` times, reopening at the byte it had reached, then fails naming the object and
that byte. Inside `consistent_reads()` (every command runs in one) each object's identity (size
and ETag, version or generation) is pinned when it is first listed: an object that differs when
it is listed or opened again, as commands that read their inputs twice do, is refused
(InputError) instead of giving an output that mixes two versions.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from corpus_miner.errors import InputError
from corpus_miner.io.atomic import remember_temporary
from corpus_miner.io.locations import display, has_glob, protocol_of
from corpus_miner.io.storage import describe, filesystem, one_line, storage_error

BLOCK_BYTES = 4 << 20  # read-ahead per open object: bounds memory, amortises request latency
_MAX_WAIT = 8.0


def retries() -> int:
    """How many times a failed request is made again (CORPUS_MINER_RETRIES, default 4)."""
    return max(0, int(os.environ.get("CORPUS_MINER_RETRIES", "4")))


def _wait(attempt: int) -> None:
    """Backoff before retry `attempt`: CORPUS_MINER_RETRY_WAIT seconds (0.5), doubling."""
    first = float(os.environ.get("CORPUS_MINER_RETRY_WAIT", "0.5"))
    time.sleep(min(first * 2 ** attempt, _MAX_WAIT))
# What tells versions of an object apart: a version or an ETag when the store has one (the same
# in a listing and in a HEAD), else a modification time (which listings and HEADs may give at
# different precisions, so only as the last resort).
_VERSION_FIELDS = ("VersionId", "generation", "version_id", "ETag", "etag", "md5Hash")
_TIME_FIELDS = ("LastModified", "last_modified", "mtime", "created")

_pinned: dict[str, tuple] | None = None  # url -> identity, inside consistent_reads()


@contextlib.contextmanager
def consistent_reads(pinned: dict[str, tuple] | None = None) -> Iterator[dict[str, tuple]]:
    """Inside the block, an object listed or opened again must be the one seen first (size,
    ETag/version): otherwise InputError. `pinned`: identities seen elsewhere (on the driver,
    for Spark's executors). Yields the table of pinned identities."""
    global _pinned
    previous = _pinned
    _pinned = dict(previous or {}) if pinned is None else dict(pinned)
    try:
        yield _pinned
    finally:
        _pinned = previous


def pinned_identities() -> dict[str, tuple]:
    """The identities pinned so far (to send to Spark's executors)."""
    return dict(_pinned or {})


def reading_as_on_driver(options: dict, pinned: dict[str, tuple], batches: Iterator
                         ) -> Iterator:
    """The items of `batches` (a generator that reads), produced with the driver's storage
    options and pinned identities in force: an executor reads the objects the driver listed."""
    from corpus_miner.io.storage import using_storage_options

    with using_storage_options(options), consistent_reads(pinned):
        yield from batches


def identity(info: dict) -> tuple:
    """What tells two versions of an object apart: its size and its version and ETag fields,
    or its modification time where it has neither."""
    versions = tuple(str(info[name]) for name in _VERSION_FIELDS
                     if info.get(name) not in (None, ""))
    times = tuple(str(info[name]) for name in _TIME_FIELDS if info.get(name) not in (None, ""))
    return (int(info.get("size") or 0),) + (versions or times)


def _pin(url: str, info: dict) -> None:
    if _pinned is None:
        return
    seen, now = _pinned.get(url), identity(info)
    if seen is None:
        _pinned[url] = now
    elif seen != now:
        raise InputError(f"{display(url)}: the object changed while this command read it "
                         f"(size {seen[0]:,} then {now[0]:,} bytes, other ETag or version); "
                         "nothing was written: run again once it is no longer being replaced")


@dataclass
class RemoteFile:
    """One object: its URL (as the user spelled the protocol), its path in the filesystem,
    its listing entry; `root`: the folder URL it was listed under (for relative names)."""

    url: str
    fs: object = field(repr=False)
    path: str
    info: dict = field(repr=False)
    root: str | None = None

    def __str__(self) -> str:
        return display(self.url)

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    @property
    def size(self) -> int:
        return int(self.info.get("size") or 0)

    def relative_to(self, root) -> PurePosixPath:
        base = self.root_path or ""
        return PurePosixPath(self.path[len(base):].lstrip("/") if base else self.name)

    @property
    def root_path(self) -> str | None:
        return None if self.root is None else filesystem(self.root)[1].rstrip("/")

    def open(self) -> RetryingReader:
        _pin(self.url, self.info)
        return RetryingReader(self)

    def read_bytes(self) -> bytes:
        with self.open() as stream:
            return stream.read()


@dataclass
class RemoteFolder:
    """A prefix read as a folder: its objects, sorted by key, hidden ones left out."""

    url: str
    files: list[RemoteFile]
    hidden: int = 0

    def __str__(self) -> str:
        return display(self.url)


def listing_errors() -> tuple[type[BaseException], ...]:
    """What a storage backend raises when it cannot list or stat an object: OSError and
    ValueError, and the HTTP clients' own errors, which are neither (the Hub's client raises a
    ConnectError when the machine is offline). Evaluated where an except clause matches, so
    only clients already imported are looked at."""
    found: list[type[BaseException]] = [OSError, ValueError]
    for module, names in (("httpx", ("HTTPError",)), ("httpx2", ("HTTPError",)),
                          ("aiohttp", ("ClientError",))):
        loaded = sys.modules.get(module)
        for name in names:
            error = getattr(loaded, name, None)
            if isinstance(error, type) and issubclass(error, Exception):
                found.append(error)
    return tuple(found)


def input_sources(url: str) -> list[RemoteFile | RemoteFolder]:
    """The objects and folders one input URL names: a glob's matches in sorted order, an
    object, or a prefix (a URL ending in '/', or any prefix that holds objects)."""
    fs, path = filesystem(url)
    with contextlib.suppress(Exception):  # list what is there now, not a cached listing
        fs.invalidate_cache()
    protocol = protocol_of(url)
    if protocol in ("http", "https"):
        return [_http_file(fs, url)]
    prefix = url[:len(url) - len(url.split("://", 1)[1])]
    if has_glob(path):
        try:
            matches = _retried(lambda: fs.glob(path, detail=True), url)
        except listing_errors() as exc:
            raise _listing_error(fs, url, path, exc) from None
        if not matches:
            raise InputError(f"{display(url)}: no object matches this pattern")
        found: list[RemoteFile | RemoteFolder] = []
        for name in sorted(matches):
            entry = matches[name]
            full = prefix + fs._strip_protocol(name)
            if entry.get("type") == "directory":
                found.append(_folder(fs, full))
            else:
                found.append(_file(fs, full, entry))
        return found
    try:
        info = _retried(lambda: fs.info(path), url)
    except listing_errors() as exc:
        raise _listing_error(fs, url, path, exc) from None
    if info.get("type") == "directory":
        return [_folder(fs, url)]
    return [_file(fs, url, info)]


def _file(fs, url: str, info: dict, root: str | None = None) -> RemoteFile:
    file = RemoteFile(url, fs, fs._strip_protocol(url), info, root)
    _pin(url, info)
    return file


def _http_file(fs, url: str) -> RemoteFile:
    try:
        info = _retried(lambda: fs.info(url), url)
    except listing_errors() as exc:
        raise storage_error(InputError, url, exc) from None
    file = RemoteFile(url, fs, url, info)
    _pin(url, info)
    return file


def _folder(fs, url: str) -> RemoteFolder:
    path = fs._strip_protocol(url).rstrip("/")
    try:
        listed = _retried(lambda: fs.find(path, detail=True), url)
    except listing_errors() as exc:
        raise _listing_error(fs, url, path, exc) from None
    prefix = url.split("://", 1)[0] + "://"
    files, hidden = [], 0
    for name in sorted(listed, key=lambda n: n[len(path):]):
        relative = name[len(path):].lstrip("/")
        if not relative or name.endswith("/"):
            continue
        if any(part.startswith(".") for part in relative.split("/")):
            hidden += 1
            continue
        files.append(_file(fs, prefix + name, listed[name], url))
    return RemoteFolder(url, files, hidden)


def _listing_error(fs, url: str, path: str, exc: BaseException):
    """InputError for a failed listing; a missing object tells a missing bucket apart."""
    if isinstance(exc, FileNotFoundError):
        bucket = path.split("/", 1)[0]
        try:
            bucket_there = bool(fs.exists(bucket)) if "/" in path else False
        except (OSError, ValueError):
            bucket_there = True
        what = "no such object or prefix" if bucket_there else "no such bucket"
        return InputError(f"{display(url)}: {what}")
    return storage_error(InputError, url, exc)


def transient(exc: BaseException) -> bool:
    """Whether an error of a storage backend may pass if the request is made again (a
    dropped connection, a timeout, a server restarting), not a refusal or a missing object."""
    if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError,
                        NotADirectoryError, InputError)):
        return False
    name = type(exc).__name__
    if name in ("FileExpired", "NoCredentialsError", "PartialCredentialsError") or \
            "pre-conditions" in str(exc) or "PreconditionFailed" in str(exc):
        return False  # the object changed, or no credentials: asking again will not help
    if isinstance(exc, (OSError, TimeoutError, EOFError, ConnectionError)):
        return True
    module = type(exc).__module__ or ""
    return module.split(".")[0] in ("aiohttp", "botocore", "urllib3", "requests", "http") \
        or name in ("ServiceRequestError", "ServiceResponseError", "TransportError")


def _retried(call, url: str):
    """call(), made again after a transient error up to retries() times (with backoff)."""
    tries = retries()
    for attempt in range(tries + 1):
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - only transient errors are retried
            if attempt == tries or not transient(exc):
                raise
            _wait(attempt)
    raise AssertionError("unreachable")


class RetryingReader(io.RawIOBase):
    """A binary, seekable stream of one object, fetched in blocks; a transient error reopens
    the object at the current position (its pinned identity checked again) and carries on."""

    def __init__(self, file: RemoteFile):
        self.file = file
        self.position = 0
        self._handle: Any = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.position, 2: self.file.size}[whence]
        self.position = max(0, base + offset)
        if self._handle is not None:
            self._handle.seek(self.position)
        return self.position

    def size(self) -> int:
        return self.file.size

    def _open(self):
        file = self.file
        if self.position:  # reopening after an error: still the object being read?
            now = _retried(lambda: file.fs.info(file.path), file.url)
            if identity(now) != identity(file.info):
                raise InputError(f"{file}: the object changed while it was read (at byte "
                                 f"{self.position:,}); nothing was written: run again once it "
                                 "is no longer being replaced")
        try:
            handle = file.fs.open(file.path, "rb", block_size=BLOCK_BYTES,
                                  cache_type="readahead")
        except TypeError:  # a filesystem without block options
            handle = file.fs.open(file.path, "rb")
        if self.position:
            handle.seek(self.position)
        return handle

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        tries = retries()
        for attempt in range(tries + 1):
            try:
                handle = self._handle if self._handle is not None else self._open()
                self._handle = handle
                data = handle.read(len(view))
                break
            except Exception as exc:  # noqa: BLE001 - only transient errors are retried
                self._drop()
                if not transient(exc):
                    raise self._error(exc) from None
                if attempt == tries:
                    raise InputError(
                        f"{self.file}: the connection failed at byte {self.position:,} of "
                        f"{self.file.size:,}, {tries + 1} tries ({describe(exc)}); run "
                        "again when the storage can be reached") from None
                _wait(attempt)
        n = len(data)
        view[:n] = data
        self.position += n
        return n

    def _error(self, exc: BaseException):
        name = type(exc).__name__
        if name == "FileExpired" or "pre-conditions" in one_line(exc) \
                or "PreconditionFailed" in one_line(exc):
            return InputError(f"{self.file}: the object changed while it was read (at byte "
                              f"{self.position:,}); nothing was written: run again once it is "
                              "no longer being replaced")
        return storage_error(InputError, self.file.url, exc)

    def _drop(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            with contextlib.suppress(Exception):
                handle.close()

    def close(self) -> None:
        self._drop()
        super().close()


def remote_artefact_format(folder: RemoteFolder) -> str | None:
    """The corpus-miner format of a saved folder at a prefix (its top metadata.json), or None."""
    from corpus_miner.io.artefact import artefact_format_in

    for file in folder.files:
        if file.relative_to(folder.url).as_posix() == METADATA_FILE:
            stream = file.open()
            try:
                return artefact_format_in(stream.read(4096))
            finally:
                stream.close()
    return None


METADATA_FILE = "metadata.json"


@contextlib.contextmanager
def local_copy(url: str) -> Iterator[Path]:
    """A local temporary copy of the object or folder (prefix) at `url`, for the few small
    inputs that are read whole (a phrase list, an index): the object's name, or the folder."""
    import shutil
    import tempfile

    sources = input_sources(url)
    folder = Path(remember_temporary(tempfile.mkdtemp(prefix=".corpus-miner-copy-")))
    try:
        if len(sources) == 1 and isinstance(sources[0], RemoteFile):
            target = folder / (sources[0].name or "object")
            target.write_bytes(sources[0].read_bytes())
            yield target
            return
        for source in sources:
            for file in source.files if isinstance(source, RemoteFolder) else [source]:
                target = folder / file.relative_to(None).as_posix()
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(file.read_bytes())
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
