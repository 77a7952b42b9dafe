"""write_records: documents (all their fields) back to JSONL / JSONL.gz / Parquet, atomically."""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
from pathlib import Path
from typing import Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from corpus_miner.io.atomic import atomic_path, text_output, writing_stdout
from corpus_miner.io.jsonl import JSON_TEXT, is_json_text, json_values
from corpus_miner.io.overlap import check_apart
from corpus_miner.io.readers import DocumentBatch
from corpus_miner.errors import ParameterError

OUTPUT_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")


def write_records(batches_or_table, path) -> int:
    """Write records in order; the format follows the extension. Returns the number of rows.

    Accepts a pa.Table / pa.RecordBatch, or an iterable of them or of DocumentBatch (their
    `records`). Field order and types are kept (JSON: as far as JSON can express them; Parquet:
    batches whose schemas differ are unified, missing fields become null). An output that is
    the input of one of the DocumentBatches is refused (OutputError) and left as it was.
    """
    if str(path) == "-":  # a pipe cannot be written atomically: records stream as they come
        with writing_stdout():
            return _write_jsonl(_tables(batches_or_table), sys.stdout)
    path = Path(path)
    name = path.name.lower()
    if not name.endswith(OUTPUT_SUFFIXES):
        raise ParameterError(f"{path}: unknown output format; use one of "
                             f"{', '.join(OUTPUT_SUFFIXES)}, or - for JSONL on stdout")
    sources: set[str] = set()  # inputs of DocumentBatches: never renamed over
    tables = _tables(batches_or_table, sources)
    with atomic_path(path) as tmp:
        if name.endswith(".parquet"):
            rows = _write_parquet(tables, tmp)
        elif not name.endswith(".gz"):
            with text_output(tmp, compress=False) as out:
                rows = _write_jsonl(tables, out)
        else:
            with text_output(tmp, compress=True) as text:
                out = _WriteInBackground(text.buffer)
                try:
                    rows = _write_jsonl(tables, out)
                finally:
                    out.close()
        check_apart(sources, [path])  # before the rename: the input is still intact
    return rows


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


def _tables(source, sources: set | None = None) -> Iterable[pa.Table]:
    if isinstance(source, (pa.Table, pa.RecordBatch)):
        source = [source]
    for item in source:
        if isinstance(item, DocumentBatch):
            if sources is not None:
                sources.add(item.source)
            item = item.records
        if isinstance(item, pa.RecordBatch):
            item = pa.Table.from_batches([item])
        yield item


def _write_parquet(tables: Iterable[pa.Table], tmp: Path) -> int:
    """Stream tables into one Parquet file of one schema.

    JSON chunks are typed independently (a field may be all-null in one chunk, integers in one
    and floats in the next, or appear only later), so when a table does not fit the schema
    written so far, the schemas are unified and the rows already written are copied once into a
    new file with the wider schema: memory stays bounded by a batch, and the rare rewrite costs
    one pass over the output. Unifying never changes a value: a field whose types cannot widen
    exactly (int64 and double, int64 and uint64) becomes a JSON-text field, like a field of
    mixed types inside one chunk.
    """
    writer, schema, rows = None, None, 0
    fieldless = 0  # leading records without any field: Parquet keeps no rows without columns
    spare = tmp.with_name(tmp.name + ".widen")
    try:
        for table in tables:
            if writer is None:
                if table.num_columns == 0:
                    fieldless += table.num_rows
                    continue
                schema = _storable(table.schema)
                writer = _parquet_writer(tmp, schema)
                if fieldless:
                    writer.write_table(_conform(pa.Table.from_struct_array(
                        pa.array([{}] * fieldless, pa.struct([]))), schema))
                    rows += fieldless
            conformed = _conform(table, schema)
            if conformed is None:  # rewrite what we have with the unified schema
                writer.close()
                schema = _storable(_unified(schema, table.schema))
                os.replace(tmp, spare)
                writer = _parquet_writer(tmp, schema)
                for old in pq.ParquetFile(spare).iter_batches():
                    writer.write_table(_conform(pa.Table.from_batches([old]), schema))
                spare.unlink()
                conformed = _conform(table, schema)
            writer.write_table(conformed)
            rows += table.num_rows
        if writer is None:
            if fieldless:
                raise ParameterError(f"{fieldless:,} records without any field cannot be "
                                     "written to Parquet; write .jsonl")
            pq.write_table(pa.table({}), tmp)
    finally:
        if writer is not None:
            writer.close()
        spare.unlink(missing_ok=True)
    return rows


def _parquet_writer(tmp: Path, schema: pa.Schema) -> pq.ParquetWriter:
    try:
        return pq.ParquetWriter(tmp, schema)
    except (pa.ArrowException, NotImplementedError) as exc:
        raise ParameterError(f"these records cannot be written to Parquet ({exc}); write "
                             ".jsonl") from None


def _storable(schema: pa.Schema) -> pa.Schema:
    """`schema` with every field Parquet cannot store (an empty object, `{}`, at any depth)
    turned into a JSON-text field, which holds the same values exactly."""
    fields = []
    for field in schema:
        if not is_json_text(field) and _has_empty_struct(field.type):
            field = pa.field(field.name, pa.string(), metadata={JSON_TEXT: b"1"})
        fields.append(field)
    return pa.schema(fields, metadata=schema.metadata)


def _has_empty_struct(data_type: pa.DataType) -> bool:
    if pa.types.is_struct(data_type) and data_type.num_fields == 0:
        return True
    return any(_has_empty_struct(data_type.field(i).type) for i in range(data_type.num_fields))


def _unified(schema: pa.Schema, other: pa.Schema) -> pa.Schema:
    """Field order of `schema` then new fields; each shared field takes a type both widen to
    exactly, else JSON text."""
    fields = {f.name: f for f in schema}
    for f in other:
        old = fields.get(f.name)
        fields[f.name] = f if old is None else _merged_field(old, f)
    return pa.schema(list(fields.values()), metadata=schema.metadata)


def _merged_field(a: pa.Field, b: pa.Field) -> pa.Field:
    if is_json_text(a) == is_json_text(b) and a.type.equals(b.type):
        return a
    if not (is_json_text(a) or is_json_text(b)):
        if pa.types.is_null(a.type):
            return b
        if pa.types.is_null(b.type):
            return a
        try:
            wide = pa.unify_schemas([pa.schema([a.with_metadata(None)]),
                                     pa.schema([b.with_metadata(None)])],
                                    promote_options="permissive").field(0)
        except (pa.ArrowException, TypeError):
            wide = None
        if wide is not None and _widens_exactly(a.type, wide.type) \
                and _widens_exactly(b.type, wide.type):
            return wide
    for field in (a, b):
        if not is_json_text(field) and not _json_expressible(field.type):
            raise ParameterError(f"field '{a.name}' is {a.type} in some records and {b.type} "
                                 "in others, which one Parquet column cannot hold exactly; "
                                 "make the inputs agree or write .jsonl")
    return pa.field(a.name, pa.string(), metadata={JSON_TEXT: b"1"})


_EXACT_SCALARS = {  # type -> types that hold all its values exactly
    pa.int8(): "int8 int16 int32 int64", pa.int16(): "int16 int32 int64",
    pa.int32(): "int32 int64", pa.uint8(): "uint8 uint16 uint32 uint64 int16 int32 int64",
    pa.uint16(): "uint16 uint32 uint64 int32 int64", pa.uint32(): "uint32 uint64 int64",
    pa.float16(): "float16 float32 float64", pa.float32(): "float32 float64",
    pa.string(): "string large_string", pa.binary(): "binary large_binary",
}


def _widens_exactly(source: pa.DataType, target: pa.DataType) -> bool:
    """Casting `source` to `target` keeps every value (a struct may gain fields: nulls)."""
    if source.equals(target) or pa.types.is_null(source):
        return True
    if pa.types.is_struct(source) and pa.types.is_struct(target):
        names = [target.field(i).name for i in range(target.num_fields)]
        return all(source.field(i).name in names and _widens_exactly(
            source.field(i).type, target.field(source.field(i).name).type)
            for i in range(source.num_fields))
    if _is_list(source) and _is_list(target):
        return _widens_exactly(source.value_type, target.value_type)
    return str(target) in _EXACT_SCALARS.get(source, "").split()


def _is_list(data_type: pa.DataType) -> bool:
    return pa.types.is_list(data_type) or pa.types.is_large_list(data_type)


def _json_expressible(data_type: pa.DataType) -> bool:
    """Values of this type survive json.dumps/json.loads unchanged."""
    if (pa.types.is_null(data_type) or pa.types.is_boolean(data_type)
            or pa.types.is_integer(data_type) or pa.types.is_floating(data_type)
            or pa.types.is_string(data_type) or pa.types.is_large_string(data_type)):
        return True
    if pa.types.is_struct(data_type) or _is_list(data_type):
        return all(_json_expressible(data_type.field(i).type)
                   for i in range(data_type.num_fields))
    return False


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table | None:
    """`table` with exactly `schema` (missing fields null), or None if it cannot fit exactly."""
    if table.schema.equals(schema, check_metadata=True):
        return table
    if any(name not in schema.names for name in table.column_names):
        return None
    columns = []
    for field in schema:
        if field.name not in table.column_names:
            columns.append(pa.nulls(table.num_rows, field.type))
            continue
        source = table.schema.field(field.name)
        if is_json_text(field) and not is_json_text(source):
            columns.append(pa.array([None if v is None else json.dumps(v, ensure_ascii=False)
                                     for v in table.column(field.name).to_pylist()], pa.string()))
        elif is_json_text(field) == is_json_text(source) \
                and _widens_exactly(source.type, field.type):
            try:
                columns.append(table.column(field.name).cast(field.type))
            except (pa.ArrowException, NotImplementedError):
                return None
        else:
            return None
    return pa.table(columns, schema=schema)


def _json_default(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)
