"""Input files as Ray blocks, read in the workers by corpus-miner's own reader: one streaming
task per input (file, folder, glob or URL as given) yields one Arrow table per reader batch, so
texts, ids and bad-input handling are the local engine's and the driver reads no text.

A block is a table of DOCUMENT_COLUMNS: `id` (null where the local engine numbers the record:
the driver knows the global row numbers once the blocks' sizes are in), `text` (never null) and
`grp` (the --group-by value by the report's rule, null when the record has no such field). The
blocks are in input order, so a document's global index is its block's offset plus its row.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import ray

from corpus_miner.errors import CorpusMinerError, InputError
from corpus_miner.io.readers import STDIN, ReadStats

DOCUMENT_COLUMNS = ("id", "text", "grp")


def document_rows(batch, id_field: str, group_by: tuple[str, bool] | None) -> pa.Table:
    """A DocumentBatch as a block (module docstring)."""
    from corpus_miner.coverage.report import _group_values  # the report's own rule

    n = len(batch)
    records = batch.records
    ids = pa.nulls(n, pa.string())
    if id_field in records.column_names:  # records without an id are numbered on the driver
        ids = pc.if_else(pc.is_null(records.column(id_field).combine_chunks()),
                         pa.nulls(n, pa.string()), batch.ids.cast(pa.string()))
    group = pa.nulls(n, pa.string())
    if group_by is not None and group_by[0] in records.column_names:
        group = pa.array(_group_values(records, *group_by), pa.string())
    return pa.table({"id": ids, "text": batch.texts.cast(pa.string()), "grp": group})


@ray.remote(num_returns="streaming")
def _read_input(item: str, text_field: str, id_field: str, skip_bad: bool, storage,
                group_by):
    """The blocks of one input, then (last) what its reader tolerated (ReadStats.as_dict) and
    the io.digest.TextsDigest of each file it read (source, value, documents)."""
    from corpus_miner.io import read_documents
    from corpus_miner.io.digest import TextsDigest
    from corpus_miner.io.storage import using_storage_options

    stats = ReadStats()
    digests: dict[str, TextsDigest] = {}
    with using_storage_options(storage):
        for batch in read_documents([item], text_field=text_field, id_field=id_field,
                                    skip_bad=skip_bad, stats=stats):
            # per file read, over the reader's own batches: the digest `index` records
            digests.setdefault(batch.source, TextsDigest()).update_batch(batch)
            yield document_rows(batch, id_field, group_by)
    yield {"stats": stats.as_dict(),
           "digests": [(source, d.value, d.documents) for source, d in digests.items()]}


@dataclass
class InputBlocks:
    """Object refs of the blocks of some inputs, in input order, what their readers tolerated
    (summed over the inputs), and the TextsDigest (source, value, documents) of each file read,
    in order."""

    refs: list
    stats: ReadStats
    digests: list


def input_blocks(inputs, text_field: str = "text", id_field: str = "id",
                 skip_bad: bool = False, storage=None,
                 group_by: tuple[str, bool] | None = None) -> InputBlocks:
    """The documents of `inputs` as blocks read by Ray tasks. A reader's error (missing file,
    malformed line) is raised here (see one_line_errors)."""
    from corpus_miner.corpus import is_saved_corpus

    for item in inputs:
        if str(item) == STDIN:
            raise InputError("--engine ray reads the inputs in its workers; stdin ('-') cannot "
                             "be read there: save it to a file first")
        if is_saved_corpus(item):
            raise InputError(f"{item}: --engine ray reads documents (JSONL, Parquet, text "
                             "folders), not a saved corpus folder; use the local engine")
    streams: list[Any] = [_read_input.remote(str(item), text_field, id_field, skip_bad,
                                             storage, group_by) for item in inputs]
    refs, stats, digests = [], ReadStats(), []
    for stream in streams:
        found = list(stream)  # refs only: the texts stay in the object store
        refs += found[:-1]
        last = ray.get(found[-1])
        for name, value in last["stats"].items():
            setattr(stats, name, getattr(stats, name) + value)
        digests += last["digests"]
    return InputBlocks(refs, stats, digests)


def input_paths(data) -> list[str] | None:
    """The input paths of `data` when it names files (corpus_miner.sources), else None."""
    if isinstance(data, (str, os.PathLike)) or (
            isinstance(data, (list, tuple)) and data
            and all(isinstance(p, os.PathLike) for p in data)):
        from corpus_miner.sources import documents

        source = documents(data, where="RayBloomSpan")
        if source.kind == "paths":
            return [str(p) for p in source.paths or ()]
    return None


def blocks_of(data, text_col: str, id_col: str | None, where: str,
              group_by: tuple[str, bool] | None = None, keep_ids: bool = False
              ) -> tuple[list, str, str | None]:
    """(object refs of Arrow tables, one per partition; their text column; their id column or
    None). Paths are read in the workers into document blocks (ray.documents)."""
    if isinstance(data, ray.data.Dataset):
        columns = data.columns()
        if text_col not in columns:
            raise InputError(f"{where}: no column {text_col!r} (columns: {', '.join(columns)})")
        return list(data.to_arrow_refs()), text_col, \
            id_col if keep_ids and id_col in columns else None
    if isinstance(data, (list, tuple)) and data and all(
            isinstance(p, (ray.ObjectRef, pa.Array, pa.ChunkedArray)) for p in data):
        refs = [p if isinstance(p, ray.ObjectRef) else ray.put(pa.table({text_col: p}))
                for p in data]  # an object ref: a block already in the object store
        return refs, text_col, None
    if isinstance(data, (list, tuple)) and data and any(
            isinstance(p, (ray.ObjectRef, pa.Array, pa.ChunkedArray)) for p in data):
        raise InputError(f"{where} takes a list of pyarrow string arrays or of object refs, "
                         "not a mix with other values")
    from corpus_miner.sources import documents

    source = documents(data, text_col=text_col, id_col=id_col or "id", where=where)
    if source.kind == "corpus":
        raise InputError(f"{where}: a TokenCorpus keeps no text for Ray to read; pass the "
                         "documents (a ray.data.Dataset, paths, Arrow data or texts)")
    if source.kind == "paths":
        from corpus_miner.io.storage import current_storage_options
        from corpus_miner.ray.documents import input_blocks

        read = input_blocks(source.paths, source.text_col, source.id_col, False,
                            current_storage_options(), group_by)
        return read.refs, "text", "id"
    table = source.held().table
    assert table is not None  # Arrow data, or texts as a table
    if text_col not in table.column_names:
        raise InputError(f"{where}: no column {text_col!r} (columns: "
                         f"{', '.join(table.column_names)})")
    return [ray.put(table)], text_col, \
        id_col if keep_ids and id_col in table.column_names else None


@ray.remote
def _shaped(table: pa.Table, text_col: str, id_col: str | None,
            group_by: tuple[str, bool] | None) -> pa.Table:
    from corpus_miner.coverage.report import _group_values

    n = table.num_rows
    texts = table.column(text_col).combine_chunks()
    if pa.types.is_null(texts.type):
        texts = texts.cast(pa.string())
    ids = table.column(id_col).combine_chunks().cast(pa.string()) if id_col is not None \
        else pa.nulls(n, pa.string())
    group = pa.array(_group_values(table, *group_by), pa.string()) \
        if group_by is not None and group_by[0] in table.column_names \
        else pa.nulls(n, pa.string())
    return pa.table({"id": ids, "text": pc.fill_null(texts, ""), "grp": group})


def shaped_blocks(refs: list, text_col: str, id_col: str | None,
                  group_by: tuple[str, bool] | None = None) -> list:
    """Blocks of a Ray Dataset (or of Arrow tables) as document blocks: a null text is an empty
    document; ids are the id column as text (None: the row numbers)."""
    return [_shaped.remote(ref, text_col, id_col, group_by) for ref in refs]


@ray.remote
def _size(table: pa.Table) -> int:
    return table.num_rows


def block_offsets(refs: list) -> np.ndarray:
    """The global index of every block's first document, and the total at the end."""
    sizes = np.array(ray.get([_size.remote(ref) for ref in refs]), np.int64)
    return np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)


@contextmanager
def one_line_errors() -> Iterator[None]:
    """A corpus-miner error raised in a Ray task (a malformed line, a missing file) raised again
    here as itself, so the command prints its one line."""
    try:
        yield
    except ray.exceptions.RayTaskError as exc:
        cause = exc.as_instanceof_cause()
        if isinstance(cause, CorpusMinerError):
            for kind in type(cause).__mro__:
                if kind.__module__ == "corpus_miner.errors":
                    # the message is one line; Ray appends the worker's traceback to it
                    message = str(exc.cause if exc.cause is not None else cause)
                    raise kind(message.splitlines()[0] if message else kind.__name__) from None
        raise
