"""On-disk format shared by the dedup indexes: a folder with metadata.json and raw arrays.

metadata.json holds {"format": <name>, "version": <int>, ..., "arrays": {file: {"dtype", "shape",
"sha256"}}}. Arrays are raw little-endian bytes (no pickle, no .npy object arrays). Writes go
through corpus_miner.io.atomic.atomic_dir; reads verify format name, version, sizes and checksums and
raise FormatError with what is wrong and what to do.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np

from corpus_miner.io.atomic import atomic_dir
from corpus_miner.errors import FormatError

METADATA_FILE = "metadata.json"
TOKEN_CORPUS_FORMAT = "corpus-miner/token-corpus"


def is_saved_corpus(path) -> bool:
    """True when `path` is a folder written by TokenCorpus.save.

    A folder with tokens.npy next to its metadata.json counts too, so that a damaged
    metadata.json is reported by the loader instead of the arrays being read as text files.
    """
    folder = Path(path)
    if not (folder / METADATA_FILE).is_file():
        return False
    return (folder / "tokens.npy").is_file() or saved_artefact_format(folder) == TOKEN_CORPUS_FORMAT


def saved_artefact_format(folder) -> str | None:
    """The format name of the corpus-miner artefact saved in `folder`, or None."""
    try:
        with open(Path(folder) / METADATA_FILE, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return None
    found = re.search(rb'"format"\s*:\s*"(corpus-miner/[^"]{1,100})"', head)
    return found.group(1).decode("utf-8", "replace") if found else None


def _sha256(data: bytes | memoryview) -> str:
    return hashlib.sha256(data).hexdigest()


def write_index_dir(path, metadata: dict, arrays: dict[str, np.ndarray],
                    blobs: dict[str, bytes] | None = None) -> None:
    """Atomically write metadata + arrays (+ opaque blobs, e.g. Arrow IPC id tables) to `path`."""
    entries = {}
    with atomic_dir(path) as tmp:
        for name, array in arrays.items():
            array = np.ascontiguousarray(array)
            raw = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
            (tmp / name).write_bytes(raw)
            entries[name] = {"dtype": array.dtype.newbyteorder("<").str, "shape": list(array.shape),
                             "sha256": _sha256(raw)}
        for name, raw in (blobs or {}).items():
            (tmp / name).write_bytes(raw)
            entries[name] = {"dtype": None, "shape": [len(raw)], "sha256": _sha256(raw)}
        meta = dict(metadata, arrays=entries)
        (tmp / METADATA_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


def read_metadata(path, expected_format: str, supported_versions: tuple[int, ...]) -> dict:
    """metadata.json of an index folder, checked for format name and version."""
    path = Path(path)
    meta_path = path / METADATA_FILE
    if not meta_path.is_file():
        raise FormatError(f"{path}: not a corpus-miner index folder (no {METADATA_FILE}); "
                          "pass the folder written by save() / `corpus-miner index build`")
    try:
        meta = json.loads(meta_path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FormatError(f"{meta_path}: corrupt metadata ({exc}); rebuild the index") from None
    if not isinstance(meta, dict) or meta.get("format") != expected_format:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise FormatError(f"{path}: format {found!r} is not {expected_format!r}; "
                          "this folder holds another kind of artefact")
    if meta.get("version") not in supported_versions:
        raise FormatError(f"{path}: {expected_format} version {meta.get('version')!r} is not "
                          f"supported (this corpus-miner reads {list(supported_versions)}); "
                          "rebuild the index with this version")
    if not isinstance(meta.get("arrays"), dict):
        raise FormatError(f"{meta_path}: no 'arrays' table; the file is corrupt, rebuild the index")
    return meta


def _read_checked(path: Path, name: str, entry: dict) -> bytes:
    file = path / name
    if not file.is_file():
        raise FormatError(f"{path}: missing {name}; the index is incomplete, rebuild it")
    raw = file.read_bytes()
    if _sha256(raw) != entry.get("sha256"):
        raise FormatError(f"{file}: checksum mismatch (truncated or modified); rebuild the index")
    return raw


def read_array(path, meta: dict, name: str) -> np.ndarray:
    """A raw array listed in metadata, verified against its checksum, dtype and shape."""
    path = Path(path)
    entry = meta["arrays"].get(name)
    if not isinstance(entry, dict) or entry.get("dtype") is None:
        raise FormatError(f"{path}: metadata does not list array {name}; rebuild the index")
    raw = _read_checked(path, name, entry)
    try:
        dtype = np.dtype(entry["dtype"])
        shape = tuple(int(s) for s in entry["shape"])
        return np.frombuffer(raw, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))
    except (TypeError, ValueError) as exc:
        raise FormatError(f"{path / name}: bytes do not match dtype/shape in metadata ({exc}); "
                          "rebuild the index") from None


def read_blob(path, meta: dict, name: str) -> bytes:
    """An opaque file listed in metadata, verified against its checksum."""
    path = Path(path)
    entry = meta["arrays"].get(name)
    if not isinstance(entry, dict):
        raise FormatError(f"{path}: metadata does not list {name}; rebuild the index")
    return _read_checked(path, name, entry)
