"""The one saved-folder format of corpus-miner: token corpora, near-duplicate indexes, filters.

A folder holds `metadata.json` and one raw file per array:

    {"format": "corpus-miner/<kind>", "version": <int>, <the artefact's own fields>,
     "arrays": {"<file>": {"dtype": "<u4", "shape": [n], "sha256": "<hex>"}, ...},
     "checksum": "sha256:<hex of the canonical JSON of everything but this key>"}

Arrays are raw little-endian bytes (no pickle, memory-mappable); an opaque blob (e.g. an Arrow IPC
id table) has dtype null and shape [its size]. The folder is written atomically (a temporary
sibling renamed into place); `write_artefact` can also write an array in pieces (its sha256
computed as it streams), so an array larger than memory is saved without holding it.
`open_artefact` checks the format name, the version, the metadata checksum (so an edited
parameter or count is refused, not trusted), and that every listed file is there with exactly
the size its dtype and shape give (so truncation is caught); reading an array
also checks its sha256 unless `verify=False` (hashing reads every byte: a token corpus of 4 GB
would take seconds, so `TokenCorpus.load` asks for it only on request). Every failure is one
FormatError naming the folder, what is wrong and what to do.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from corpus_miner.errors import FormatError
from corpus_miner.io.atomic import atomic_dir
from corpus_miner.io.locations import is_remote, local_path

METADATA_FILE = "metadata.json"
TOKEN_CORPUS_FORMAT = "corpus-miner/token-corpus"
_RESERVED = ("format", "version", "arrays", "checksum")
_HASH_BLOCK = 1 << 24


def is_saved_corpus(path) -> bool:
    """True when `path` is a folder written by TokenCorpus.save.

    A folder with its tokens file next to a metadata.json counts too, so that a damaged
    metadata.json is reported by the loader instead of the arrays being read as text files.
    """
    folder = Path(path)
    if not (folder / METADATA_FILE).is_file():
        return False
    return any((folder / name).is_file() for name in ("tokens.bin", "tokens.npy")) \
        or saved_artefact_format(folder) == TOKEN_CORPUS_FORMAT


def saved_artefact_format(folder) -> str | None:
    """The format name of the corpus-miner artefact saved in `folder`, or None."""
    try:
        with open(Path(folder) / METADATA_FILE, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return None
    return artefact_format_in(head)


def artefact_format_in(head: bytes) -> str | None:
    """The corpus-miner format named in the first bytes of a metadata.json, or None."""
    found = re.search(rb'"format"\s*:\s*"(corpus-miner/[^"]{1,100})"', head)
    return found.group(1).decode("utf-8", "replace") if found else None


def _canonical(metadata: dict) -> bytes:
    body = {key: value for key, value in metadata.items() if key != "checksum"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def metadata_checksum(metadata: dict) -> str:
    """"sha256:<hex>" of the canonical JSON (sorted keys, no spaces) of all but "checksum"."""
    return "sha256:" + hashlib.sha256(_canonical(metadata)).hexdigest()


def _file_sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as fh:
        while block := fh.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _little_endian(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    return dtype if dtype.byteorder == "|" else dtype.newbyteorder("<")


class ArrayWriter:
    """One 1-D array of an artefact written in pieces: its file grows by each `write`, its sha256
    and length are computed as it streams, so the whole array never has to be in memory."""

    def __init__(self, file: Path, dtype):
        self.dtype = _little_endian(dtype)
        self.length = 0
        self._digest = hashlib.sha256()
        self._fh = open(file, "wb")

    def write(self, values) -> None:
        """Append `values` (converted to the array's dtype; 1-D)."""
        piece = np.ascontiguousarray(values, dtype=self.dtype).reshape(-1)
        raw = piece.view(np.uint8).data
        self._digest.update(raw)  # hashlib releases the GIL on large buffers
        self._fh.write(raw)
        self.length += len(piece)

    def close(self) -> dict:
        """Close the file; its metadata entry."""
        self._fh.close()
        return {"dtype": self.dtype.str, "shape": [self.length],
                "sha256": self._digest.hexdigest()}


class ArtefactWriter:
    """The files of an artefact being written into a temporary folder (see `write_artefact`)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.fields: dict = {}  # the artefact's own metadata fields, set before the end
        self._entries: dict[str, dict] = {}
        self._open: dict[str, ArrayWriter] = {}

    def _claim(self, name: str) -> Path:
        if name in self._entries or name in self._open or name == METADATA_FILE:
            raise ValueError(f"{name} is written twice")
        return self.folder / name

    def array_writer(self, name: str, dtype) -> ArrayWriter:
        """A 1-D array written in pieces; its entry is recorded when the artefact is finished."""
        writer = ArrayWriter(self._claim(name), dtype)
        self._open[name] = writer
        return writer

    def add_array(self, name: str, array: np.ndarray) -> None:
        """A whole array (any shape) at once."""
        array = np.asarray(array)
        little = _little_endian(array.dtype)
        array = np.ascontiguousarray(array, dtype=little)
        array.tofile(self._claim(name))
        self._entries[name] = {
            "dtype": little.str, "shape": list(array.shape),
            "sha256": hashlib.sha256(array.reshape(-1).view(np.uint8).data).hexdigest()}

    def add_blob(self, name: str, raw: bytes) -> None:
        """An opaque file (dtype null, shape [its size])."""
        self._claim(name).write_bytes(raw)
        self._entries[name] = {"dtype": None, "shape": [len(raw)],
                               "sha256": hashlib.sha256(raw).hexdigest()}

    def add_linked(self, name: str, source: Path, entry: dict) -> None:
        """An array already saved in another folder and unchanged since (a Bloom layer of an
        earlier index generation): hard-linked, or copied where the file system has no links;
        its metadata entry (dtype, shape, sha256) is taken over, not recomputed. Saved files
        are never written in place, so sharing one between folders is safe."""
        target = self._claim(name)
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
        self._entries[name] = {key: entry[key] for key in ("dtype", "shape", "sha256")}

    def _close_arrays(self) -> None:
        for name, writer in self._open.items():
            self._entries[name] = writer.close()
        self._open.clear()

    def _finish(self, format_name: str, version: int) -> None:
        clash = sorted(set(self.fields) & set(_RESERVED))
        if clash:
            raise ValueError(f"fields may not use the reserved names {clash}")
        self._close_arrays()
        metadata = {"format": format_name, "version": int(version), **self.fields,
                    "arrays": dict(self._entries)}
        metadata["checksum"] = metadata_checksum(metadata)
        text = json.dumps(metadata, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
        (self.folder / METADATA_FILE).write_text(text + "\n", encoding="utf-8")


@contextlib.contextmanager
def write_artefact(path, format_name: str, version: int) -> Iterator[ArtefactWriter]:
    """Write an artefact folder atomically: add arrays (whole or in pieces) and blobs to the
    writer, set `writer.fields`; the metadata is written and the folder renamed into place when
    the block ends without an exception (otherwise nothing appears under `path`). `path` may
    be a URL (s3://...): the folder is uploaded when it is complete (io/remote_output.py)."""
    path = path if is_remote(path) else Path(local_path(path))
    with atomic_dir(path) as tmp:
        writer = ArtefactWriter(tmp)
        try:
            yield writer
        finally:
            writer._close_arrays()  # files closed even when the block failed
        writer._finish(format_name, version)


def save_artefact(path, format_name: str, version: int, fields: dict,
                  arrays: dict[str, np.ndarray], blobs: dict[str, bytes] | None = None
                  ) -> Path | str:
    """Atomically write `fields` + arrays (+ opaque blobs) as a folder of this format."""
    clash = sorted(set(fields) & set(_RESERVED))
    if clash:  # before anything is written
        raise ValueError(f"fields may not use the reserved names {clash}")
    with write_artefact(path, format_name, version) as writer:
        for name, array in arrays.items():
            writer.add_array(name, array)
        for name, raw in (blobs or {}).items():
            writer.add_blob(name, raw)
        writer.fields.update(fields)
    return path if is_remote(path) else Path(path)


@dataclass(frozen=True)
class _Entry:
    file: Path
    dtype: np.dtype | None
    shape: tuple[int, ...]
    sha256: str


@dataclass(frozen=True)
class Artefact:
    """An opened, checked folder: its metadata and access to its arrays."""

    path: Path
    metadata: dict
    remedy: str  # what to do about a damaged folder, e.g. "rebuild the index"

    @property
    def version(self) -> int:
        return self.metadata["version"]

    def error(self, what: str) -> FormatError:
        return FormatError(f"{self.path}: {what}; {self.remedy}")

    # -- fields --------------------------------------------------------------------------------
    def field(self, name: str, kinds: type | tuple[type, ...], where: dict | None = None):
        """A metadata field (of `where`, a nested table, else the top level) of the given JSON
        type(s); JSON true/false is never taken for a number."""
        source = self.metadata if where is None else where
        if name not in source:
            raise self.error(f"metadata.json lacks '{name}'")
        value = source[name]
        kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            wanted = " or ".join(kind.__name__ for kind in kinds)
            raise self.error(f"metadata field '{name}' must be {wanted}, got {value!r}")
        return value

    def count(self, name: str, where: dict | None = None, minimum: int = 0) -> int:
        """An integer metadata field >= minimum (counts, sizes)."""
        value = self.field(name, int, where)
        if value < minimum:
            raise self.error(f"metadata field '{name}' must be >= {minimum}, got {value}")
        return value

    def check(self, ok: bool, what: str) -> None:
        """FormatError unless `ok`: derived values that must agree with each other."""
        if not ok:
            raise self.error(f"inconsistent metadata ({what})")

    # -- arrays --------------------------------------------------------------------------------
    def names(self) -> list[str]:
        return sorted(self.metadata["arrays"])

    def entry(self, name: str) -> dict:
        """The metadata entry of a listed array (dtype, shape, sha256), checked."""
        self._entry(name)
        return dict(self.metadata["arrays"][name])

    def _entry(self, name: str) -> _Entry:
        entry = self.metadata["arrays"].get(name)
        if not isinstance(entry, dict):
            raise self.error(f"metadata does not list {name}")
        dtype_text, shape, sha = entry.get("dtype"), entry.get("shape"), entry.get("sha256")
        if not isinstance(shape, list) or not all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
            raise self.error(f"metadata entry of {name} has no valid shape ({shape!r})")
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
            raise self.error(f"metadata entry of {name} has no valid sha256")
        dtype = None
        if dtype_text is not None:
            try:
                dtype = np.dtype(dtype_text)
            except (TypeError, ValueError):
                dtype = None
            if dtype is None or dtype.hasobject or dtype.byteorder == ">" or not isinstance(
                    dtype_text, str):
                raise self.error(f"metadata entry of {name} has an unusable dtype ({dtype_text!r})")
        return _Entry(self.path / name, dtype, tuple(shape), sha)

    def _check_file(self, entry: _Entry) -> None:
        if not entry.file.is_file():
            raise self.error(f"missing {entry.file.name}")
        expected = math.prod(entry.shape) * (entry.dtype.itemsize if entry.dtype else 1)
        size = entry.file.stat().st_size
        if size != expected:
            how = "truncated" if size < expected else "longer than its metadata says"
            raise self.error(f"{entry.file.name} is {how} ({size} bytes, expected {expected})")

    def array(self, name: str, dtype: str | np.dtype | None = None, ndim: int | None = None,
              mmap: bool | str = False, verify: bool = True) -> np.ndarray:
        """A listed array: its file size always checked, its sha256 when verify; memory-mapped
        read-only when mmap (mmap="c": copy-on-write, writes stay in this process's memory and
        never reach the file). dtype / ndim: what the caller expects (else FormatError)."""
        entry = self._entry(name)
        if entry.dtype is None:
            raise self.error(f"{name} is listed as an opaque file, not an array")
        if dtype is not None and entry.dtype != np.dtype(dtype):
            raise self.error(f"{name} has dtype {entry.dtype.str}, expected {np.dtype(dtype).str}")
        if ndim is not None and len(entry.shape) != ndim:
            raise self.error(f"{name} has shape {list(entry.shape)}, expected {ndim} dimension(s)")
        self._check_file(entry)
        if verify and _file_sha256(entry.file) != entry.sha256:
            raise self.error(f"{name}: checksum mismatch (the file was modified or damaged)")
        if mmap and math.prod(entry.shape) > 0:
            if mmap == "c":
                return np.memmap(entry.file, dtype=entry.dtype, mode="c", shape=entry.shape)
            return np.memmap(entry.file, dtype=entry.dtype, mode="r", shape=entry.shape)
        return np.fromfile(entry.file, dtype=entry.dtype).reshape(entry.shape)

    def blob(self, name: str) -> bytes:
        """A listed opaque file, checked against its size and sha256."""
        entry = self._entry(name)
        self._check_file(entry)
        raw = entry.file.read_bytes()
        if hashlib.sha256(raw).hexdigest() != entry.sha256:
            raise self.error(f"{name}: checksum mismatch (the file was modified or damaged)")
        return raw


def open_artefact(path, format_name: str, versions: tuple[int, ...], *, kind: str, remedy: str,
                  unchecked_versions: tuple[int, ...] = ()) -> Artefact:
    """Open a folder of `format_name` in one of `versions`, its metadata checked.

    kind: what the folder is, for messages ("index"); remedy: what to do when it is damaged.
    unchecked_versions: older versions of the format, written before metadata had a checksum,
    still read (their loaders check the derived values instead)."""
    path = Path(path)
    meta_path = path / METADATA_FILE
    if not meta_path.is_file():
        raise FormatError(f"{path}: not a corpus-miner {kind} folder (no {METADATA_FILE}); "
                          f"{remedy}")
    try:
        metadata = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise FormatError(f"{meta_path}: unreadable or corrupt ({' '.join(str(exc).split())}); "
                          f"{remedy}") from None
    if not isinstance(metadata, dict) or metadata.get("format") != format_name:
        found = metadata.get("format") if isinstance(metadata, dict) else None
        raise FormatError(f"{path}: format {found!r} is not {format_name!r}; this folder holds "
                          "another kind of artefact")
    version = metadata.get("version")
    readable = tuple(versions) + tuple(unchecked_versions)
    if not isinstance(version, int) or isinstance(version, bool) or version not in readable:
        newest = max(readable)
        if isinstance(version, int) and not isinstance(version, bool) and version > newest:
            advice = "it was written by a newer corpus-miner: upgrade corpus-miner"
        else:
            advice = f"it was written by an older corpus-miner; {remedy}"
        raise FormatError(f"{path}: {format_name} version {version!r} is not supported (this "
                          f"corpus-miner reads {sorted(readable)}); {advice}")
    if version not in unchecked_versions:
        checksum = metadata.get("checksum")
        try:
            expected = metadata_checksum(metadata)
        except ValueError:  # NaN or Infinity written into the file
            expected = None
        if checksum != expected:
            what = "has no checksum" if checksum is None else "does not match its checksum"
            raise FormatError(f"{meta_path}: metadata {what} (edited or damaged); {remedy}")
    if not isinstance(metadata.get("arrays"), dict):
        raise FormatError(f"{meta_path}: no 'arrays' table; {remedy}")
    return Artefact(path, metadata, remedy)
