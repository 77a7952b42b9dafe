"""JSON Lines reading in chunks of whole lines: pyarrow's C++ parser first, exact Python second.

pyarrow parses a chunk at ~1 GB/s but is lenient in ways our rules are not (several objects on one
line, timestamp inference, no line numbers). We accept its table only when it has exactly one row
per non-blank line and no inferred timestamps; otherwise the chunk is parsed line by line with
`json`, which gives exact line numbers for errors, `--skip-bad`, and replacement of invalid UTF-8.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import BinaryIO, Iterator

import pyarrow as pa
import pyarrow.json as pa_json

from corpus_miner.errors import InputError

_UTF8_BOM = b"\xef\xbb\xbf"


@dataclass
class ParsedChunk:
    """One chunk of lines as a table, with the per-row text when it had to be computed in Python."""

    table: pa.Table
    python_texts: list | None  # row values of the text field (Python path) or None
    invalid_utf8: int  # lines whose bytes were not valid UTF-8 (replaced with U+FFFD)
    bad_lines: int  # lines skipped with skip_bad


def iter_line_chunks(stream: BinaryIO, chunk_bytes: int, name: str) -> Iterator[tuple[bytes, int]]:
    """(chunk of whole lines, 1-based line number of its first line) from a binary stream."""
    pending = b""
    line = 1
    while True:
        try:
            block = stream.read(chunk_bytes)
        except (OSError, pa.ArrowException, EOFError) as exc:
            raise InputError(f"{name}: cannot read or decompress ({_one_line(exc)})") from None
        if not block:
            break
        if line == 1 and not pending and block.startswith(_UTF8_BOM):  # editors add one
            block = block[len(_UTF8_BOM):]
        block = pending + block if pending else block
        cut = block.rfind(b"\n")
        if cut < 0:  # a line longer than one chunk: keep reading until it ends
            pending = block
            continue
        chunk, pending = block[:cut + 1], block[cut + 1:]
        yield chunk, line
        line += chunk.count(b"\n")
    if pending:
        yield pending, line


def parse_chunk(chunk: bytes, first_line: int, name: str, text_field: str,
                skip_bad: bool) -> ParsedChunk:
    """Parse one chunk of JSON lines into a table with all fields, in line order."""
    table = _parse_with_arrow(chunk)
    if table is not None:
        return ParsedChunk(table, None, 0, 0)
    return _parse_with_python(chunk, first_line, name, text_field, skip_bad)


def _parse_with_arrow(chunk: bytes) -> pa.Table | None:
    options = pa_json.ReadOptions(use_threads=False, block_size=len(chunk) + 1)
    try:
        table = pa_json.read_json(pa.BufferReader(chunk), read_options=options)
    except (pa.ArrowException, UnicodeDecodeError, ValueError):
        return None
    n_lines = chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
    if table.num_rows != n_lines or any(_has_timestamp(f.type) for f in table.schema):
        return None  # blank lines, several objects on a line, or inferred timestamps
    try:  # the parser copies invalid UTF-8 bytes into string columns unchecked
        table.validate(full=True)
    except pa.ArrowInvalid:
        return None  # the Python path replaces and counts them
    return table


def _has_timestamp(data_type: pa.DataType) -> bool:
    if pa.types.is_timestamp(data_type) or pa.types.is_date(data_type):
        return True
    return any(_has_timestamp(data_type.field(i).type) for i in range(data_type.num_fields))


def _parse_with_python(chunk: bytes, first_line: int, name: str, text_field: str,
                       skip_bad: bool) -> ParsedChunk:
    rows: list[dict] = []
    invalid_utf8 = bad_lines = 0
    for offset, raw in enumerate(chunk.split(b"\n")):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
            replaced = False
        except UnicodeDecodeError:
            line = raw.decode("utf-8", "replace")
            replaced = True
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError(f"expected a JSON object, got {type(row).__name__}")
        except ValueError as exc:  # JSONDecodeError is a ValueError
            if skip_bad:
                bad_lines += 1
                continue
            raise InputError(f"{name}: line {first_line + offset}: malformed JSON "
                             f"({_one_line(exc)}); fix the line or pass --skip-bad") from None
        text = row.get(text_field)
        if isinstance(text, str) and _has_surrogates(text):  # from escapes like "\ud800"
            row[text_field] = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
            replaced = True
        invalid_utf8 += replaced
        rows.append(row)
    return ParsedChunk(_rows_to_table(rows, text_field), [row.get(text_field) for row in rows],
                       invalid_utf8, bad_lines)


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _rows_to_table(rows: list[dict], text_field: str) -> pa.Table:
    """Columns in order of first appearance. A column of mixed JSON types (1 here, "a" there)
    holds each value's JSON text, marked with JSON_TEXT in its field metadata, so writers can
    give every value back exactly as it was (`json_values`)."""
    names: dict[str, None] = {}
    for row in rows:
        for key in row:
            names.setdefault(key, None)
    fields, columns = [], []
    for key in names:
        values = [row.get(key) for row in rows]
        try:
            column = pa.array(values)
            fields.append(pa.field(key, column.type))
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            column = pa.array([None if v is None else json.dumps(v, ensure_ascii=False)
                               for v in values], type=pa.string())
            fields.append(pa.field(key, pa.string(), metadata={JSON_TEXT: b"1"}))
        columns.append(column)
    if not columns:  # only `{}` lines: keep the row count visible
        return pa.table({text_field: pa.nulls(len(rows), type=pa.string())})
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


JSON_TEXT = b"corpus_miner.json_text"
"""Field metadata key: the string column holds one JSON text per value (a mixed-type field)."""


def is_json_text(field: pa.Field) -> bool:
    return bool(field.metadata) and field.metadata.get(JSON_TEXT) == b"1"


def json_values(table: pa.Table, name: str) -> list:
    """A column's values as Python objects, JSON-text columns decoded to their original values."""
    values = table.column(name).to_pylist()
    if is_json_text(table.schema.field(name)):
        return [None if v is None else json.loads(v) for v in values]
    return values


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
