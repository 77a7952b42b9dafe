"""JSON Lines reading in chunks of whole lines: pyarrow's C++ parser first, exact Python second.

pyarrow parses a chunk at ~1 GB/s but is lenient in ways our rules are not (several objects on one
line, timestamp inference, no line numbers). We accept its table only when it has exactly one row
per non-blank line and no inferred timestamps; otherwise the chunk is parsed line by line with
`json`, which gives exact line numbers for errors, `--skip-bad`, and replacement of invalid UTF-8.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
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
    lines: int  # lines in the chunk (the next chunk starts at first_line + lines)
    row_lines: list[int] | None = None  # which lines (0-based) hold the rows; None: every line
    repaired: frozenset[int] = frozenset()  # rows with U+FFFD for invalid UTF-8 or surrogates

    def record_lines(self, chunk: bytes) -> RecordLines:
        return RecordLines(chunk, self.table.num_rows, self.row_lines, self.repaired)


class RecordLines:
    """The JSON text of each record of a chunk, byte for byte as read (without the whitespace
    around it, such as the CR of CRLF line ends): what JSONL output writes for a record that
    passes through unchanged. Kept as the chunk; split into lines when first asked.
    `repaired`: the records that reading changed (U+FFFD for invalid UTF-8 or a lone
    surrogate): their lines are not what the reader gave, so writers encode them again."""

    def __init__(self, chunk: bytes, count: int, row_lines: list[int] | None = None,
                 repaired: frozenset[int] = frozenset()):
        self.chunk = chunk
        self.count = count  # records
        self.repaired = repaired
        self._row_lines = row_lines  # indices among chunk.split(b"\n"); None: all
        self._lines: list[bytes] | None = None

    @classmethod
    def every_line(cls, chunk: bytes) -> RecordLines:
        """Every line that is not blank is a record (for a chunk known to hold no bad line and
        nothing to repair)."""
        lines = [line for part in chunk.split(b"\n") if (line := part.strip())]
        records = cls(chunk, len(lines))
        records._lines = lines
        return records

    def __len__(self) -> int:
        return self.count

    def lines(self) -> list[bytes]:
        if self._lines is None:
            parts = self.chunk.split(b"\n")
            picked = parts[:self.count] if self._row_lines is None \
                else [parts[i] for i in self._row_lines]
            self._lines = [part.strip() for part in picked]
        return self._lines


def iter_line_chunks(stream: BinaryIO, chunk_bytes: int, name: str) -> Iterator[bytes]:
    """Chunks of whole lines from a binary stream (the last one may lack its newline).

    A line longer than a chunk is gathered as a list of blocks and joined once when it ends, so
    assembling it costs its length, not its length times the number of blocks."""
    def read() -> bytes:
        try:
            return stream.read(chunk_bytes)
        except (OSError, pa.ArrowException, EOFError) as exc:
            raise InputError(f"{name}: cannot read or decompress ({_one_line(exc)})") from None

    def blocks() -> Iterator[bytes]:
        head = read()  # editors add a byte order mark; a pipe may deliver it in pieces
        while head and len(head) < len(_UTF8_BOM) and _UTF8_BOM.startswith(head):
            more = read()
            if not more:
                break
            head += more
        head = head.removeprefix(_UTF8_BOM)
        if head:
            yield head
        while block := read():
            yield block

    pending: list[bytes] = []  # blocks of the unfinished last line, none with a newline
    for block in blocks():
        cut = block.rfind(b"\n")
        if cut < 0:  # still inside a long line: keep reading until it ends
            pending.append(block)
            continue
        if pending:  # one copy of the line's blocks (a memoryview is no copy)
            chunk = b"".join((*pending, memoryview(block)[:cut + 1]))
        else:
            chunk = block if cut + 1 == len(block) else block[:cut + 1]
        pending = [block[cut + 1:]] if cut + 1 < len(block) else []
        yield chunk
    if pending:
        yield b"".join(pending)


def parse_chunk(chunk: bytes, first_line: int, name: str, text_field: str,
                skip_bad: bool) -> ParsedChunk:
    """Parse one chunk of JSON lines into a table with all fields, in line order."""
    data = np.frombuffer(chunk, np.uint8)
    ends = np.flatnonzero(data == 10)  # numpy finds them 3x faster than bytes.count counts them
    n_lines = len(ends) + (0 if chunk.endswith(b"\n") else 1)
    # Arrow's parser is fast on many lines but slow on huge strings (one 200 MB line: 3.2 s,
    # json.loads 0.84 s, bench_long_line.py): lines that average megabytes go to Python. It
    # also reads a line `null` as a record (and crashes, pyarrow 26, when one comes first):
    # it only gets chunks whose every line starts with "{" (no blank, indented or other line).
    starts = ends[:n_lines - 1] + 1
    if len(chunk) < _LONG_LINE_BYTES * n_lines and chunk[:1] == b"{" \
            and bool(np.all(data[starts] == 0x7B)):
        table = _parse_with_arrow(chunk, n_lines)
        if table is not None:
            return ParsedChunk(table, None, 0, 0, n_lines)
    return _parse_with_python(chunk, first_line, name, text_field, skip_bad, n_lines)


_LONG_LINE_BYTES = 1 << 20


def _parse_with_arrow(chunk: bytes, n_lines: int) -> pa.Table | None:
    options = pa_json.ReadOptions(use_threads=False, block_size=len(chunk) + 1)
    try:
        table = pa_json.read_json(pa.BufferReader(chunk), read_options=options)
        if _depth(pa.struct(table.schema)) > MAX_DEPTH:
            return None  # the Python path refuses such lines
        _decode_names(pa.struct(table.schema))  # the parser does not check names for UTF-8
    except (pa.ArrowException, UnicodeDecodeError, ValueError):
        return None
    if table.num_rows != n_lines or any(_has_timestamp(f.type) for f in table.schema):
        return None  # blank lines, several objects on a line, or inferred timestamps
    try:  # the parser copies invalid UTF-8 bytes into string columns unchecked
        table.validate(full=True)
    except pa.ArrowInvalid:
        return None  # the Python path replaces and counts them
    if any(_may_hold_integers(column) for column in table.columns):
        return None  # 1 or 2**64 - 1 read as a float: only the Python path keeps them exact
    return table


def _may_hold_integers(column) -> bool:
    """True when a float column (at any depth) has an integral value: the parser reads a field
    mixing 1 and 1.5, and integers beyond int64, as doubles, and an integral double may have
    been an integer literal. Non-integral doubles can only come from float literals."""
    if isinstance(column, pa.ChunkedArray):
        return any(_may_hold_integers(chunk) for chunk in column.chunks)
    kind = column.type
    if pa.types.is_floating(kind):
        import pyarrow.compute as pc  # here: 30-40 ms to import, and few inputs have floats

        return bool(pc.any(pc.equal(pc.floor(column), column)).as_py())
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _may_hold_integers(column.flatten())
    if pa.types.is_struct(kind):
        return any(_may_hold_integers(column.field(i)) for i in range(kind.num_fields))
    return False


def _decode_names(data_type: pa.DataType) -> None:
    """UnicodeDecodeError unless every field name, at any depth, is UTF-8."""
    for i in range(data_type.num_fields):
        field = data_type.field(i)
        field.name  # noqa: B018 - decoding is the check
        _decode_names(field.type)


def _has_timestamp(data_type: pa.DataType) -> bool:
    if pa.types.is_timestamp(data_type) or pa.types.is_date(data_type):
        return True
    return any(_has_timestamp(data_type.field(i).type) for i in range(data_type.num_fields))


def _parse_with_python(chunk: bytes, first_line: int, name: str, text_field: str,
                       skip_bad: bool, n_lines: int) -> ParsedChunk:
    rows: list[dict] = []
    row_lines: list[int] = []
    repaired: list[int] = []
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
            if line.count("[") + line.count("{") > MAX_DEPTH and _depth(row) > MAX_DEPTH:
                raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
        except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
            if skip_bad:
                bad_lines += 1
                continue
            raise InputError(f"{name}: line {first_line + offset}: malformed JSON "
                             f"({_one_line(exc)}); fix the line or pass --skip-bad") from None
        if _SURROGATE_ESCAPE.search(line):  # "\ud800" alone decodes to a str UTF-8 cannot hold
            row, lone = _without_surrogates(row)
            replaced = replaced or lone
        if replaced:
            invalid_utf8 += 1
            repaired.append(len(rows))
        rows.append(row)
        row_lines.append(offset)
    return ParsedChunk(_rows_to_table(rows), [row.get(text_field) for row in rows],
                       invalid_utf8, bad_lines, n_lines, row_lines, frozenset(repaired))


MAX_DEPTH = 100
"""Objects and lists inside each other, at most; a deeper line is malformed input. Every step
after parsing walks values recursively; real records nest a few levels."""


def _depth(value) -> int:
    """How many objects and lists nest inside each other in a JSON value (or fields in an
    Arrow type), counted without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, outer = stack.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        elif isinstance(item, pa.DataType) and item.num_fields:
            children = [item.field(i).type for i in range(item.num_fields)]
        else:
            continue
        deepest = max(deepest, outer + 1)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, outer + 1) for child in children)
    return deepest


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(value):
    """(value with every lone surrogate, in keys and strings at any depth, replaced by U+FFFD,
    whether any was)."""
    if isinstance(value, str):
        fixed = _LONE_SURROGATE.sub("\ufffd", value)
        return fixed, fixed != value
    if isinstance(value, list):
        pairs = [_without_surrogates(v) for v in value]
        return [v for v, _ in pairs], any(r for _, r in pairs)
    if isinstance(value, dict):
        out, replaced = {}, False
        for key, item in value.items():
            key, r1 = _without_surrogates(key)
            out[key], r2 = _without_surrogates(item)
            replaced = replaced or r1 or r2
        return out, replaced
    return value, False


def _rows_to_table(rows: list[dict]) -> pa.Table:
    """Columns in order of first appearance, each value exactly as parsed. A column Arrow cannot
    type exactly (1 here and "a" or 1.5 there, integers beyond int64) holds each value's JSON
    text, marked with JSON_TEXT in its field metadata, so writers can give every value back
    exactly as it was (`json_values`)."""
    names: dict[str, None] = {}
    for row in rows:
        for key in row:
            names.setdefault(key, None)
    fields, columns = [], []
    for key in names:
        values = [row.get(key) for row in rows]
        column = _exact_array(values)
        if column is None:
            column = pa.array([None if v is None else json.dumps(v, ensure_ascii=False)
                               for v in values], type=pa.string())
            fields.append(pa.field(key, pa.string(), metadata={JSON_TEXT: b"1"}))
        else:
            fields.append(pa.field(key, column.type))
        columns.append(column)
    if not columns:  # only `{}` lines: rows without fields, as Arrow's parser gives them
        return pa.Table.from_struct_array(pa.array([{}] * len(rows), pa.struct([])))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def _exact_array(values: list) -> pa.Array | None:
    """An Arrow array of the values that gives each one back unchanged, or None. pa.array turns
    [1, 1.5] into doubles and fails beyond int64; integers up to 2**64 - 1 fit uint64."""
    try:
        column = pa.array(values)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        if all(v is None or type(v) is int and 0 <= v < 1 << 64 for v in values):
            return pa.array(values, pa.uint64())
        return None
    if _has_float(column.type) and json.dumps(values) != json.dumps(column.to_pylist()):
        return None  # an integer became a float (or a missing key a null) somewhere inside
    return column


def _has_float(data_type: pa.DataType) -> bool:
    if pa.types.is_floating(data_type):
        return True
    return any(_has_float(data_type.field(i).type) for i in range(data_type.num_fields))


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
