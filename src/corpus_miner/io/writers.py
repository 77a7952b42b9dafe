"""write_records: documents (all their fields) back to JSONL / JSONL.gz / Parquet, atomically."""

from __future__ import annotations

import gzip
import json
import os
import queue
import sys
import threading
from pathlib import Path
from typing import Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from corpus_miner.io.atomic import atomic_path
from corpus_miner.io.jsonl import is_json_text, json_values
from corpus_miner.io.readers import DocumentBatch
from corpus_miner.errors import ParameterError

OUTPUT_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")


def write_records(batches_or_table, path) -> int:
    """Write records in order; the format follows the extension. Returns the number of rows.

    Accepts a pa.Table / pa.RecordBatch, or an iterable of them or of DocumentBatch (their
    `records`). Field order and types are kept (JSON: as far as JSON can express them; Parquet:
    batches whose schemas differ are unified, missing fields become null).
    """
    if str(path) == "-":  # a pipe cannot be written atomically: records stream as they come
        return _write_jsonl(_tables(batches_or_table), sys.stdout)
    path = Path(path)
    name = path.name.lower()
    if not name.endswith(OUTPUT_SUFFIXES):
        raise ParameterError(f"{path}: unknown output format; use one of "
                             f"{', '.join(OUTPUT_SUFFIXES)}, or - for JSONL on stdout")
    tables = _tables(batches_or_table)
    with atomic_path(path) as tmp:
        if name.endswith(".parquet"):
            return _write_parquet(tables, tmp)
        if not name.endswith(".gz"):
            with open(tmp, "w", encoding="utf-8", newline="\n") as out:
                return _write_jsonl(tables, out)
        # gzip level 6: level 9 (the default) cost 1.6x the write time for ~2% smaller files.
        with gzip.open(tmp, "wb", compresslevel=6) as raw:
            out = _WriteInBackground(raw)
            try:
                return _write_jsonl(tables, out)
            finally:
                out.close()


def _write_jsonl(tables: Iterable[pa.Table], out) -> int:
    """One JSON line per record, one write per table."""
    rows = 0
    for table in tables:
        records = table.to_pylist()
        for field in table.schema:
            if is_json_text(field):  # a mixed-type field: give back the original values
                for record, value in zip(records, json_values(table, field.name)):
                    record[field.name] = value
        lines = [json.dumps(record, ensure_ascii=False, default=_json_default)
                 for record in records]
        if lines:
            out.write("\n".join(lines) + "\n")
        rows += len(lines)
    out.flush()
    return rows


class _WriteInBackground:
    """Text file API over a binary file written by a worker thread. zlib releases the GIL while
    it compresses, so gzip output overlaps the JSON encoding of the next table (at most
    `pending` encoded tables wait in memory)."""

    def __init__(self, raw, pending: int = 4):
        self._raw = raw
        self._queue: queue.Queue = queue.Queue(maxsize=pending)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while (chunk := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self._raw.write(chunk)
                except BaseException as exc:  # re-raised in the writing thread
                    self._error = exc

    def _check(self) -> None:
        if self._error is not None:
            raise self._error

    def write(self, text: str) -> None:
        self._check()
        self._queue.put(text.encode("utf-8"))

    def flush(self) -> None:
        self._check()

    def close(self) -> None:
        """Wait until everything queued is written; raise the worker's error if any."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self._check()


def _tables(source) -> Iterable[pa.Table]:
    if isinstance(source, (pa.Table, pa.RecordBatch)):
        source = [source]
    for item in source:
        if isinstance(item, DocumentBatch):
            item = item.records
        if isinstance(item, pa.RecordBatch):
            item = pa.Table.from_batches([item])
        yield item


def _write_parquet(tables: Iterable[pa.Table], tmp: Path) -> int:
    """Stream tables into one Parquet file of one schema.

    JSON chunks are typed independently (a field may be all-null in one chunk, or appear only
    later), so when a table does not fit the schema written so far, the schemas are unified and
    the rows already written are copied once into a new file with the wider schema: memory stays
    bounded by a batch, and the rare rewrite costs one pass over the output.
    """
    writer, schema, rows = None, None, 0
    spare = tmp.with_name(tmp.name + ".widen")
    try:
        for table in tables:
            if writer is None:
                schema = _widen_nulls(table.schema)
                writer = pq.ParquetWriter(tmp, schema)
            conformed = _conform(table, schema)
            if conformed is None:  # rewrite what we have with the unified schema
                writer.close()
                schema = _unified(schema, table.schema)
                os.replace(tmp, spare)
                writer = pq.ParquetWriter(tmp, schema)
                for old in pq.ParquetFile(spare).iter_batches():
                    writer.write_table(_conform(pa.Table.from_batches([old]), schema))
                spare.unlink()
                conformed = _conform(table, schema)
                if conformed is None:
                    raise ParameterError(f"{tmp.name}: fields with incompatible types across "
                                         "batches cannot share one Parquet schema; write .jsonl")
            writer.write_table(conformed)
            rows += table.num_rows
        if writer is None:
            pq.write_table(pa.table({}), tmp)
    finally:
        if writer is not None:
            writer.close()
        spare.unlink(missing_ok=True)
    return rows


def _unified(schema: pa.Schema, other: pa.Schema) -> pa.Schema:
    """Field order of `schema` then new fields; conflicting types fall back to string."""
    try:
        return _widen_nulls(pa.unify_schemas([schema, other], promote_options="permissive"))
    except (pa.ArrowException, TypeError):
        pass
    fields = {f.name: f for f in schema}
    for f in other:
        old = fields.get(f.name)
        if old is None:
            fields[f.name] = f
        elif not old.type.equals(f.type):
            fields[f.name] = old.with_type(pa.string())
    return _widen_nulls(pa.schema(list(fields.values())))


def _widen_nulls(schema: pa.Schema) -> pa.Schema:
    """A column null in every row so far has type null; let it take strings later."""
    return pa.schema([f.with_type(pa.string()) if pa.types.is_null(f.type) else f
                      for f in schema], metadata=schema.metadata)


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table | None:
    """`table` with exactly `schema` (missing fields null), or None if it cannot fit."""
    if table.schema.equals(schema):
        return table
    if any(name not in schema.names for name in table.column_names):
        return None
    try:
        columns = [table.column(f.name).cast(f.type) if f.name in table.column_names
                   else pa.nulls(table.num_rows, f.type) for f in schema]
    except (pa.ArrowException, NotImplementedError):
        return None
    return pa.table(columns, schema=schema)


def _json_default(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)
