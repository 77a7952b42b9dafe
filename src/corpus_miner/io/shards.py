"""Sharded record outputs: a folder (or prefix) of part-00000.parquet, part-00001.parquet, ...
and `_manifest.json`, so a cleaned 10^11-token corpus is not one object.

The manifest is written last and makes the output whole:

    {"format": "corpus-miner/shards", "version": 1, "part_format": "parquet", "rows": <int>,
     "parts": [{"name": "part-00000.parquet", "rows": <int>, "bytes": <int>,
                "sha256": "<hex>"}, ...],
     "checksum": "sha256:<hex of the canonical JSON of everything but this key>"}

Records keep their order: part k holds the records after those of part k - 1. A reader lists
the folder, reads `_manifest.json`, checks its checksum and that every part it lists is there
with exactly its size, and reads the parts in the listed order (corpus-miner's readers do so
for any folder that holds a manifest; tools that read a folder of Parquet parts in name order
get the same records, since names sort in part order). On a local disk the folder is renamed
into place whole; on an object store each part is uploaded when it is complete and the manifest
last, and the parts of a failed or interrupted run are deleted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path

from corpus_miner.errors import InputError, ParameterError
from corpus_miner.io.artefact import metadata_checksum
from corpus_miner.io.atomic import atomic_dir, is_own_output
from corpus_miner.io.formats import PART_SUFFIXES, ShardPlan
from corpus_miner.io.locations import display, is_remote, join, local_path
from corpus_miner.io.overlap import check_apart

MANIFEST = "_manifest.json"
SHARDS_FORMAT = "corpus-miner/shards"
SHARDS_VERSION = 1


def is_shards_folder(folder: Path) -> bool:
    """A local folder a sharded output may replace: empty, ours, or only parts."""
    return is_own_output(folder) or (folder / MANIFEST).is_file() or all(
        p.name.startswith("part-") for p in folder.iterdir())


class _Items:
    """The records to write, one at a time, with a look at whether more are coming."""

    def __init__(self, items: Iterable):
        self._items = iter(items)
        self._next: list = []

    def more(self) -> bool:
        if not self._next:
            self._next = [item for item in (next(self._items, _END),) if item is not _END]
        return bool(self._next)

    def take(self):
        self.more()
        return self._next.pop()


_END = object()


def _input_rows(item) -> int:
    batch = getattr(item, "batch", None)
    return len(batch) if batch is not None else item.num_rows


def write_shards(items: Iterable, folder: str, plan: ShardPlan, sources: set[str]) -> int:
    """Write the records as parts and a manifest under `folder` (module doc); rows written."""
    from corpus_miner.io.writers import write_file

    plan.validate()
    suffix = PART_SUFFIXES[plan.part_format]
    queue = _Items(items)
    parts: list[dict] = []
    state: dict = {"rows_in": 0, "total": None}

    def boundary(k: int) -> float:
        """Input rows after which part k ends (--shards)."""
        if plan.shards is None or k >= plan.shards - 1:
            return math.inf
        if state["total"] is None:
            total = plan.total_rows() if callable(plan.total_rows) else plan.total_rows
            if total is None:
                raise ParameterError("--shards N needs the number of documents before writing; "
                                     "this command streams: use --shard-size")
            state["total"] = int(total)
        return math.ceil((k + 1) * state["total"] / plan.shards)

    def part_items(k: int, tmp: Path) -> Iterator:
        first = True
        while queue.more():
            if not first and (state["rows_in"] >= boundary(k) or (
                    plan.shard_bytes is not None and tmp.stat().st_size >= plan.shard_bytes)):
                return
            item = queue.take()
            state["rows_in"] += _input_rows(item)
            first = False
            yield item

    with _sink(folder) as sink:
        k = 0
        while k == 0 or queue.more() or (plan.shards is not None and k < plan.shards):
            name = f"part-{k:05d}{suffix}"
            with sink.part(name) as tmp:
                rows = write_file(part_items(k, tmp), tmp, name)
                parts.append({"name": name, "rows": rows, "bytes": tmp.stat().st_size,
                              "sha256": _sha256(tmp)})
            k += 1
        check_apart(sources, [folder])
        manifest = {"format": SHARDS_FORMAT, "version": SHARDS_VERSION,
                    "part_format": plan.part_format, "rows": sum(p["rows"] for p in parts),
                    "parts": parts}
        manifest["checksum"] = metadata_checksum(manifest)
        sink.finish(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest["rows"]


def _sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class _LocalSink:
    def __init__(self, tmp: Path):
        self.tmp = tmp

    @contextlib.contextmanager
    def part(self, name: str) -> Iterator[Path]:
        yield self.tmp / name

    def finish(self, manifest: str) -> None:
        (self.tmp / MANIFEST).write_text(manifest, encoding="utf-8")


class _RemoteSink:
    """Parts uploaded as they are complete; deleted again if the output fails."""

    def __init__(self, folder: str):
        self.folder = folder
        self.uploaded: list[str] = []

    @contextlib.contextmanager
    def part(self, name: str) -> Iterator[Path]:
        from corpus_miner.io.remote_output import local_temporary, upload

        with local_temporary(name) as tmp:
            yield tmp
            target = join(self.folder, name)
            upload(tmp, target)
            self.uploaded.append(target)

    def finish(self, manifest: str) -> None:
        from corpus_miner.io.remote_output import local_temporary, upload

        with local_temporary(MANIFEST) as tmp:
            tmp.write_text(manifest, encoding="utf-8")
            upload(tmp, join(self.folder, MANIFEST))


@contextlib.contextmanager
def _sink(folder: str) -> Iterator:
    if not is_remote(folder):
        with atomic_dir(local_path(folder).rstrip("/") or "/", replaceable=is_shards_folder) \
                as tmp:
            yield _LocalSink(tmp)
        return
    from corpus_miner.io.remote_output import (
        check_remote_output,
        delete_stale,
        remove,
        retire_manifest,
    )

    check_remote_output(folder, folder=True)
    old = retire_manifest(folder)
    sink = _RemoteSink(folder)
    try:
        yield sink
    except BaseException:
        remove(sink.uploaded)
        raise
    delete_stale(folder, old, {u.rsplit("/", 1)[-1] for u in sink.uploaded} | {MANIFEST})


def manifest_parts(root, files: list) -> list | None:
    """The parts a folder's `_manifest.json` lists, in order (checked: format, checksum, every
    part there with its size), or None when the folder holds no manifest. `files` are the
    folder's files as the reader listed them (local paths or remote objects)."""
    by_name = {f.relative_to(root).as_posix(): f for f in files}
    manifest_file = by_name.get(MANIFEST)
    if manifest_file is None:
        return None
    where = f"{display(str(root))}/{MANIFEST}"
    try:
        manifest = json.loads(manifest_file.read_bytes())
    except (OSError, ValueError) as exc:
        raise InputError(f"{where}: unreadable ({' '.join(str(exc).split())}); the sharded "
                         "output is damaged: write it again") from None
    if not isinstance(manifest, dict) or manifest.get("format") != SHARDS_FORMAT:
        raise InputError(f"{where}: not a corpus-miner shards manifest")
    if manifest.get("version") != SHARDS_VERSION:
        raise InputError(f"{where}: version {manifest.get('version')!r} is not supported "
                         f"(this corpus-miner reads {SHARDS_VERSION}); upgrade corpus-miner")
    if manifest.get("checksum") != metadata_checksum(manifest):
        raise InputError(f"{where}: does not match its checksum (edited or damaged); write "
                         "the output again")
    listed = []
    for part in manifest["parts"]:
        file = by_name.get(part["name"])
        if file is None:
            raise InputError(f"{display(str(root))}: part {part['name']} listed in {MANIFEST} "
                             "is missing; the output is incomplete: write it again")
        size = file.size if hasattr(file, "size") and not isinstance(file, Path) \
            else file.stat().st_size
        if size != part["bytes"]:
            raise InputError(f"{display(str(root))}: part {part['name']} is {size:,} bytes, its "
                             f"manifest says {part['bytes']:,}; it was changed after it was "
                             "written: write the output again")
        listed.append(file)
    return listed
