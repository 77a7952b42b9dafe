"""The index folder as generations behind one pointer, so that readers never see a mix of two.

    INDEX/metadata.json   the pointer: {"format": "corpus-miner/lsh-index", "version": 3,
                          "current": "gen-000007", "arrays": {}, "checksum": ...}
    INDEX/gen-000006/     the previous generation (kept for readers that opened it)
    INDEX/gen-000007/     the current one: a whole index artefact (metadata.json + layers)

A writer writes a new generation folder next to the others (a temporary name renamed into
place), flushes its files to disk, then replaces the pointer by one atomic rename, and only then
removes the generations older than the previous one. A reader opens the pointer once and reads
one whole generation; should the generation vanish under it (two switches during one read), it
reads the pointer again and starts over. Unchanged Bloom layers are hard-linked from the
previous generation, never written in place, so an `add` writes only the layers it changed.

The pointer is the top metadata.json on purpose: every tool that recognises our folders (the
output checks, the readers refusing an index as a corpus, the object-store upload that puts
metadata.json last) sees an index folder as before. Writers of one folder take an exclusive
lock (INDEX/.lock), so two `index add` runs cannot both build on the same generation; the lock
also makes leftovers of a killed writer (a temporary generation, a temporary pointer) safe to
remove. Indexes of the flat version 1 and 2 layouts are still read, and the first write into one
turns it into a generations folder in place.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from corpus_miner.errors import FormatError, OutputError
from corpus_miner.io.artefact import (
    METADATA_FILE,
    Artefact,
    ArtefactWriter,
    metadata_checksum,
    open_artefact,
    write_artefact,
)
from corpus_miner.io.atomic import atomic_dir, os_reason
from corpus_miner.io.locations import is_remote, join, local_path
from corpus_miner.io.signals import deferred

INDEX_FORMAT = "corpus-miner/lsh-index"
INDEX_VERSION = 3  # generations behind a pointer; 2 and 1 are flat folders
FLAT_VERSIONS = (2,)
UNCHECKED_VERSIONS = (1,)
REMEDY = "rebuild the index (`corpus-miner index build` or fit(...).save(...))"
LOCK_FILE = ".lock"
_GENERATION = re.compile(r"gen-(\d{6,12})")
_READ_ATTEMPTS = 8


def generation_name(number: int) -> str:
    return f"gen-{number:06d}"


def generation_number(name: str) -> int | None:
    found = _GENERATION.fullmatch(name)
    return int(found.group(1)) if found else None


def open_top(root: Path) -> Artefact:
    """The top metadata.json of an index folder: a pointer (version 3) or a flat index."""
    return open_artefact(root, INDEX_FORMAT, (INDEX_VERSION, *FLAT_VERSIONS),
                         unchecked_versions=UNCHECKED_VERSIONS, kind="index", remedy=REMEDY)


def current_generation(top: Artefact) -> str | None:
    """The generation a pointer names (checked), or None for a flat index (or a generation
    folder opened directly)."""
    if top.version != INDEX_VERSION or "generation" in top.metadata:
        return None
    name = top.field("current", str)
    if generation_number(name) is None:
        raise top.error(f"the pointer names {name!r}, which is not a generation folder")
    return name


def open_generation(root: Path, name: str) -> Artefact:
    saved = open_artefact(root / name, INDEX_FORMAT, (INDEX_VERSION,), kind="index",
                          remedy=REMEDY)
    if saved.metadata.get("generation") != name:
        raise saved.error(f"the folder {name} holds generation "
                          f"{saved.metadata.get('generation')!r}")
    return saved


def _pointer_bytes(root: Path) -> bytes | None:
    try:
        return (root / METADATA_FILE).read_bytes()
    except OSError:
        return None


def read_consistently(root, read):
    """read(artefact) on the generation the pointer names now; when it fails because a writer
    switched the pointer (and removed what this reader had opened) meanwhile, again on the new
    one. A failure with the pointer unchanged is the index's own: raised as it is."""
    root = Path(root)
    for attempt in range(_READ_ATTEMPTS):
        before = _pointer_bytes(root)
        try:
            top = open_top(root)
            name = current_generation(top)
            saved = top if name is None else open_generation(root, name)
            return read(saved)
        except (FormatError, OSError):
            if attempt + 1 == _READ_ATTEMPTS or _pointer_bytes(root) == before:
                raise
    raise AssertionError("unreachable")


def _fsync(path: Path, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(folder: Path) -> None:
    for item in folder.iterdir():
        _fsync(item)
    _fsync(folder, directory=True)


def pointer_metadata(name: str) -> dict:
    metadata = {"format": INDEX_FORMAT, "version": INDEX_VERSION, "layout": "generations",
                "current": name, "arrays": {}}
    metadata["checksum"] = metadata_checksum(metadata)
    return metadata


def _pointer_text(name: str) -> str:
    return json.dumps(pointer_metadata(name), indent=2, sort_keys=True) + "\n"


def _switch_pointer(root: Path, name: str) -> None:
    """Replace the pointer by one naming `name`: a temporary file flushed to disk, renamed over
    the old pointer (atomic), then the folder flushed so the rename survives a crash."""
    tmp = root / f".{METADATA_FILE}.{os.getpid()}.tmp"
    with deferred():
        try:
            with open(tmp, "w", encoding="utf-8") as out:
                out.write(_pointer_text(name))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, root / METADATA_FILE)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise OutputError(f"{root}: cannot write the index pointer ({os_reason(exc)})") \
                from None
    _fsync(root, directory=True)


_HELD: set[str] = set()  # index folders whose lock this process holds


@contextlib.contextmanager
def writing(path) -> Iterator[None]:
    """Hold an existing local index folder's writer lock for a whole read-modify-write (what
    `index add` does from loading the index to switching to the new generation), so that two
    runs take turns instead of both building on one generation; saves inside the block do not
    lock again. A URL or a folder that does not exist yet is not locked."""
    if is_remote(path) or not (Path(local_path(path)) / METADATA_FILE).is_file():
        yield
        return
    with _writer_lock(Path(local_path(path))):
        yield


@contextlib.contextmanager
def _writer_lock(root: Path) -> Iterator[None]:
    import fcntl

    key = os.path.realpath(root)
    if key in _HELD:
        yield
        return
    try:
        fd = os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise OutputError(f"{root}: cannot lock the index for writing ({os_reason(exc)})") \
            from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _HELD.add(key)
        yield
    finally:
        _HELD.discard(key)
        os.close(fd)  # releases the lock; a killed writer's lock goes with its process


def _leftovers(root: Path) -> list[Path]:
    """Temporary files and folders of writers that were killed (only called under the lock)."""
    return [item for item in root.iterdir()
            if item.name.startswith(".") and item.name.endswith(".tmp")]


def _remove(path: Path) -> None:
    with deferred(), contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def generations(root: Path) -> list[str]:
    """The generation folders of an index folder, oldest first."""
    names = [item.name for item in root.iterdir()
             if item.is_dir() and generation_number(item.name) is not None]
    return sorted(names, key=lambda name: generation_number(name) or 0)


@contextlib.contextmanager
def new_generation(path) -> Iterator[ArtefactWriter]:
    """Write the next generation of the index at `path` (a new index where there is none):
    fill the yielded writer; when the block ends without an exception the generation becomes
    the current one (see the module doc). A folder that is not an index is replaced whole, as
    any output folder (only an empty one or one corpus-miner wrote)."""
    if is_remote(path):
        with _remote_generation(str(path)) as writer:
            yield writer
        return
    root = Path(local_path(path))
    top = _existing_index(root)
    if top is None:
        with atomic_dir(root) as tmp:
            name = generation_name(1)
            with write_artefact(tmp / name, INDEX_FORMAT, INDEX_VERSION) as writer:
                writer.fields["generation"] = name
                yield writer
            (tmp / METADATA_FILE).write_text(_pointer_text(name), encoding="utf-8")
        return
    if "generation" in top.metadata:
        raise OutputError(f"{root}: is one generation of the index folder {root.parent}; "
                          "save to the index folder itself")
    with _writer_lock(root):
        for item in _leftovers(root):
            _remove(item)
        top = open_top(root)  # again, under the lock: another writer may have switched it
        previous = current_generation(top)
        flat_files = [] if previous is not None else [*top.names(), *_v1_files(top)]
        numbers = [generation_number(name) or 0 for name in generations(root)]
        name = generation_name(max(numbers, default=0) + 1)
        with write_artefact(root / name, INDEX_FORMAT, INDEX_VERSION) as writer:
            writer.fields["generation"] = name
            yield writer
        _fsync_tree(root / name)
        _switch_pointer(root, name)
        keep = {name, previous}
        for old in generations(root):
            if old not in keep:
                _remove(root / old)
        for file in flat_files:  # the arrays of a flat index, now that the pointer replaced it
            if "/" not in file and generation_number(file) is None:
                _remove(root / file)


def _v1_files(top: Artefact) -> list[str]:
    return ["bits.bin"] if top.version == 1 else []


def _existing_index(root: Path) -> Artefact | None:
    """The top of the index at `root`, or None when there is none (nothing there, an empty
    folder, another kind of output: written from scratch)."""
    if not root.is_dir() or not (root / METADATA_FILE).is_file():
        return None
    try:
        return open_top(root)
    except FormatError:
        try:
            head = (root / METADATA_FILE).read_text(encoding="utf-8")[:4096]
        except (OSError, UnicodeDecodeError):
            return None
        if f'"{INDEX_FORMAT}"' in head:
            raise  # a damaged index is not silently replaced
        return None


@contextlib.contextmanager
def _remote_generation(url: str) -> Iterator[ArtefactWriter]:
    """At a URL: the generation's objects are uploaded (its metadata.json last), then the
    pointer object is put in one request, which an object store makes visible whole; older
    generations than the previous one are deleted after. No lock: object stores have none, so
    two writers of one index at a URL must be kept apart by the user."""
    from corpus_miner.io.remote_output import atomic_remote_file, remove
    from corpus_miner.io.storage import filesystem

    fs, prefix = filesystem(url)
    prefix = prefix.rstrip("/")
    try:
        listed = [os.path.basename(p.rstrip("/")) for p in fs.ls(prefix, detail=False)]
    except (FileNotFoundError, OSError):
        listed = []
    names = sorted((n for n in listed if generation_number(n) is not None),
                   key=lambda n: generation_number(n) or 0)
    previous = None
    if METADATA_FILE in listed:
        with fs.open(f"{prefix}/{METADATA_FILE}", "rb") as fh:
            head = json.loads(fh.read().decode("utf-8"))
        previous = head.get("current") if isinstance(head, dict) else None
    name = generation_name(max((generation_number(n) or 0 for n in names), default=0) + 1)
    with write_artefact(join(url, name), INDEX_FORMAT, INDEX_VERSION) as writer:
        writer.fields["generation"] = name
        yield writer
    with atomic_remote_file(join(url, METADATA_FILE)) as tmp:
        Path(tmp).write_text(_pointer_text(name), encoding="utf-8")
    scheme = url.split("://", 1)[0]
    for old in names:
        if old not in (name, previous):
            remove(f"{scheme}://{p}" for p in fs.find(f"{prefix}/{old}"))
