"""write_records: documents (all their fields) back to JSONL / JSONL.gz / Parquet, atomically.

JSONL output writes a record read from a JSONL input as it was read, byte for byte (only the
whitespace around it dropped, and the added fields of a Selection inserted before its closing
brace): no parse and no encoding, and exactly the user's values, spelling and field order.
Records from other inputs, and tables, are encoded with `json`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from corpus_miner.errors import InputError, ParameterError
from corpus_miner.io.atomic import atomic_path, binary_output, writing_stdout
from corpus_miner.io.formats import OUTPUT_SUFFIXES, ShardPlan
from corpus_miner.io.jsonl import JSON_TEXT, RecordLines, is_json_text, json_values, parse_chunk
from corpus_miner.io.locations import base_name, display
from corpus_miner.io.overlap import check_apart
from corpus_miner.io.readers import DocumentBatch, LineBatch
from corpus_miner.io.strings import bool_array


@dataclass
class Selection:
    """Records of one batch to write: the rows where `keep` is True (all when None), each with
    the `added` fields (columns over all rows of the batch): a field a record already has is
    replaced where it stands, others are appended; the `dropped` fields are removed (a stale
    field that the added ones make wrong). A LineBatch can only be written to JSONL, with
    fields its records do not have."""

    batch: DocumentBatch | LineBatch
    keep: np.ndarray | None = None
    added: dict[str, pa.Array] = dataclasses.field(default_factory=dict)
    dropped: tuple[str, ...] = ()

    def table(self) -> pa.Table:
        if not isinstance(self.batch, DocumentBatch):
            raise TypeError("records read as lines only can be written to JSONL only")
        records = _with_added(self.batch.records, self.added)
        records = records.drop_columns([n for n in self.dropped if n in records.column_names])
        return records if self.keep is None else records.filter(bool_array(self.keep))


def _with_added(records: pa.Table, added: dict[str, pa.Array]) -> pa.Table:
    for name, column in added.items():
        if name in records.column_names:  # e.g. a re-run on annotated output: replace
            records = records.set_column(records.column_names.index(name), name, column)
        else:
            records = records.append_column(name, column)
    return records


def write_records(batches_or_table, path, *, shards: ShardPlan | None = None) -> int:
    """Write records in order; the format follows the extension. Returns the number of rows.

    Accepts a pa.Table / pa.RecordBatch, or an iterable of them, of DocumentBatch or LineBatch
    (all their records) or of Selection. Field order and types are kept (JSON: records read
    from JSONL as they were, others as far as JSON can express them; Parquet: batches whose
    schemas differ are unified, missing fields become null). An output that is the input of
    one of the batches is refused (OutputError) and left as it was. `path` may be a URL
    (s3://, gs://, az://, hf://, memory://). A folder (a name ending in '/') or `shards` (a
    ShardPlan) writes part-00000.parquet ... and a manifest instead (io/shards.py).
    """
    if str(path) == "-":  # a pipe cannot be written atomically: records stream as they come
        with writing_stdout():
            return _write_jsonl(_items(batches_or_table), _stdout_bytes())
    sources: set[str] = set()  # inputs of the batches: never renamed over
    if shards is not None or os.fspath(path).endswith(("/", os.sep)):
        from corpus_miner.io.shards import write_shards

        return write_shards(_items(batches_or_table, sources), os.fspath(path),
                            shards or ShardPlan(), sources)
    name = base_name(path).lower()
    if not name.endswith(OUTPUT_SUFFIXES):
        raise ParameterError(f"{display(path)}: unknown output format; use one of "
                             f"{', '.join(OUTPUT_SUFFIXES)}, or - for JSONL on stdout")
    items = _items(batches_or_table, sources)
    with atomic_path(path) as tmp:
        rows = write_file(items, tmp, name)
        check_apart(sources, [path])  # before the rename: the input is still intact
    return rows


def write_file(items: Iterable, tmp: Path, name: str) -> int:
    """Records (Tables and Selections) into the file `tmp`, in the format of the file name
    `name`; the number of rows."""
    if name.endswith(".parquet"):
        return _write_parquet((_table(item) for item in items), tmp)
    with binary_output(tmp, compress=name.endswith(".gz")) as raw:
        out = _WriteInBackground(raw) if name.endswith(".gz") else raw
        try:
            return _write_jsonl(items, out)
        finally:
            if out is not raw:
                out.close()


def _stdout_bytes():
    """stdout as a binary stream (text written to it before comes first)."""
    sys.stdout.flush()
    return getattr(sys.stdout, "buffer", None) or _TextSink(sys.stdout)


class _TextSink:
    """Binary writes to a text stream without a buffer (one replaced by a test, say)."""

    def __init__(self, text):
        self._text = text

    def write(self, data: bytes) -> None:
        self._text.write(data.decode("utf-8", "replace"))

    def flush(self) -> None:
        self._text.flush()


def _write_jsonl(items: Iterable, out) -> int:
    """One JSON line per record, one write per batch or table."""
    rows = 0
    for item in items:
        if isinstance(item, Selection) and item.batch.lines is not None:
            data, n = _jsonl_as_read(item, item.batch.lines)
        else:
            data, n = _jsonl_encoded(_table(item))
        if n:
            out.write(data)
        rows += n
    out.flush()
    return rows


def _jsonl_encoded(table: pa.Table) -> tuple[bytes, int]:
    records = table.to_pylist()
    for field in table.schema:
        if is_json_text(field):  # a mixed-type field: give back the original values
            for record, value in zip(records, json_values(table, field.name)):
                record[field.name] = value
    try:
        lines = [_ENCODER.encode(record) for record in records]
    except ValueError:  # allow_nan=False: Infinity and NaN are not JSON
        raise InputError(_not_json(records)) from None
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b"", len(lines)


def _not_json(records: list) -> str:
    """The one-line message for records holding a float JSON cannot spell (a number such as
    1e400 that overflowed to infinity when it was read, or a NaN from Parquet)."""
    def bad(value) -> bool:
        if isinstance(value, float):
            return value != value or value in (float("inf"), float("-inf"))
        if isinstance(value, dict):
            return any(bad(v) for v in value.values())
        if isinstance(value, (list, tuple)):
            return any(bad(v) for v in value)
        return False

    for row, record in enumerate(records):
        for name, value in record.items():
            if bad(value):
                return (f"field {name!r} of record {row + 1:,} of a batch holds a number beyond "
                        "the range of a double (such as 1e400, read as infinity) or NaN; JSON "
                        "cannot spell it once parsed: write .parquet, or fix the input")
    return "a record holds a value JSON cannot spell"


def _jsonl_as_read(selection: Selection, record_lines: RecordLines) -> tuple[bytes, int]:
    """The selected records as their lines as read, the added fields inserted before the
    closing brace. A record that reading repaired, or that already has one of the added
    fields, is encoded again instead (with the new values in place)."""
    lines = record_lines.lines()
    rows = range(len(lines)) if selection.keep is None \
        else np.flatnonzero(selection.keep).tolist()
    added = selection.added
    records = getattr(selection.batch, "records", None)
    dropped = tuple(n for n in selection.dropped
                    if records is not None and n in records.column_names)
    present = records is not None and any(name in records.column_names
                                          for name in (*added, *dropped))
    if not added and not dropped and not record_lines.repaired:
        picked = lines if selection.keep is None else [lines[i] for i in rows]
        return (b"\n".join(picked) + b"\n" if picked else b""), len(picked)
    members = _members(added) if added else None
    parts: list = []
    for i in rows:
        line = lines[i]
        if present or i in record_lines.repaired:
            again = _encoded_again(line, added, i, always=i in record_lines.repaired,
                                   dropped=dropped)
            if again is not None:
                parts.append(again)
                continue
        if members is None:
            parts += (line, b"\n")
            continue
        end = len(line) - 1  # the closing brace
        inner = end
        while line[inner - 1] in b" \t\r\n":
            inner -= 1
        parts += (memoryview(line)[:end], b", " if line[inner - 1] != 0x7B else b"", members[i],
                  b"}\n")
    return b"".join(parts), len(rows)


def _members(added: dict[str, pa.Array]) -> list[bytes]:
    """Per row, the added fields as JSON object members: b'"name": value, ...'."""
    per_field = []
    for name, column in added.items():
        key = json.dumps(name, ensure_ascii=False).encode("utf-8") + b": "
        if pa.types.is_boolean(column.type):
            spelled = {True: key + b"true", False: key + b"false", None: key + b"null"}
            per_field.append([spelled[v] for v in column.to_pylist()])
        else:
            per_field.append([key + _ENCODER.encode(v).encode("utf-8")
                              for v in column.to_pylist()])
    return per_field[0] if len(per_field) == 1 else [b", ".join(row) for row in zip(*per_field)]


def _encoded_again(line: bytes, added: dict[str, pa.Array], row: int,
                   always: bool, dropped: tuple[str, ...] = ()) -> bytes | None:
    """The record of `line` as the reader gives it, with the added values of `row` and
    without the `dropped` fields, encoded like a table row; None when not `always` and the
    record has none of the added or dropped fields."""
    record = parse_chunk(line, 1, "", "", False).table
    if not always and not any(name in record.column_names for name in (*added, *dropped)):
        return None
    values = {name: column.slice(row, 1) for name, column in added.items()}
    record = _with_added(record, values)
    return _jsonl_encoded(record.drop_columns([n for n in dropped
                                               if n in record.column_names]))[0]


class _WriteInBackground:
    """Binary file API over a binary file written by a worker thread. zlib releases the GIL
    while it compresses, so gzip output overlaps the JSON encoding of the next table (at most
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

    def write(self, data: bytes) -> None:
        self._check()
        self._queue.put(data)

    def flush(self) -> None:
        self._check()

    def close(self) -> None:
        """Wait until everything queued is written; raise the worker's error if any."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self._check()


def _items(source, sources: set | None = None) -> Iterable:
    """Tables and Selections; batches become Selections of all their records."""
    if isinstance(source, (pa.Table, pa.RecordBatch)):
        source = [source]
    for item in source:
        if isinstance(item, (DocumentBatch, LineBatch)):
            item = Selection(item)
        if isinstance(item, Selection):
            if sources is not None:
                sources.add(item.batch.source)
        elif isinstance(item, pa.RecordBatch):
            item = pa.Table.from_batches([item])
        yield item


def _table(item) -> pa.Table:
    return item.table() if isinstance(item, Selection) else item


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
    import pyarrow.parquet as pq  # here: writing JSONL does not need it

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


def _parquet_writer(tmp: Path, schema: pa.Schema):
    import pyarrow.parquet as pq

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


# allow_nan=False: json's Infinity and NaN are not JSON (no other reader takes them back)
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_json_default, allow_nan=False)
