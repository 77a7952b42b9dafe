"""Streaming document readers: JSONL (plain/.gz/.zst/stdin), Parquet (file or folder), text folders.

Every reader yields `DocumentBatch`es of about `batch_size` bytes of input, so memory is bounded by
a batch, never by a file. In text folders, hidden files are skipped and so are binary files (a NUL
byte in the first 8 KiB, git's rule), counted. All bad-input rules live here: malformed JSON lines,
invalid UTF-8, missing or non-string text fields, missing or unreadable files (see `ReadStats`).
"""

from __future__ import annotations

import glob
import io
import json
import os
import queue
import sys
import threading
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal, overload

import numpy as np
import pyarrow as pa

from corpus_miner.errors import InputError
from corpus_miner.io.artefact import is_saved_corpus, saved_artefact_format
from corpus_miner.io.jsonl import (
    RecordLines,
    is_json_text,
    iter_line_chunks,
    json_values,
    parse_chunk,
)
from corpus_miner.io.locations import has_glob, is_remote, local_path
from corpus_miner.io.strings import arrow_string_buffers

DEFAULT_BATCH_BYTES = 2 << 20  # measured: larger batches cost RAM and gain no speed
STDIN = "-"
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
PARQUET_SUFFIXES = (".parquet", ".parq")
_PARQUET_BUFFER = 1 << 20
# git's rule for binary files: a NUL byte near the start (text never has one there in practice)
_BINARY_MARK = b"\x00"
_BINARY_SNIFF_BYTES = 8192


@dataclass
class ReadStats:
    """What the readers saw; bad input is counted here, never silently dropped."""

    documents: int = 0
    bytes: int = 0  # UTF-8 bytes of all document texts
    bad_lines_skipped: int = 0  # malformed JSON lines skipped with skip_bad
    invalid_utf8_replaced: int = 0  # lines/documents whose invalid UTF-8 was replaced by U+FFFD
    null_texts: int = 0  # null, missing or non-string texts read as empty documents
    binary_texts_decoded: int = 0  # Parquet texts stored as bytes, decoded as UTF-8
    binary_files_skipped: int = 0  # text-folder files with a NUL byte in their first 8 KiB
    files_skipped: int = 0  # in input folders: pipes, devices, other files beside Parquet parts
    unreadable_folders_skipped: int = 0  # subfolders of input folders that cannot be listed
    files: int = 0
    input_bytes: int = 0  # raw (possibly compressed) bytes consumed, for progress

    PROBLEMS = ("bad_lines_skipped", "invalid_utf8_replaced", "null_texts", "binary_texts_decoded",
                "binary_files_skipped", "files_skipped", "unreadable_folders_skipped")

    def as_dict(self) -> dict:
        return asdict(self)

    def problems(self) -> dict:
        """The tolerated bad input that was seen: {counter: count} of the non-zero ones."""
        return {name: getattr(self, name) for name in self.PROBLEMS if getattr(self, name)}


@dataclass
class DocumentBatch:
    """A batch of documents in input order.

    ids:     pa.StringArray, one id per document (the id field as text, else the 0-based row
             number over all inputs)
    texts:   string array without nulls (null or non-string texts are "")
    records: pa.Table with all original fields, for writers that must keep them
    source:  the input path ("-" for stdin)
    first_row: 0-based index of the first document of this batch over all inputs
    lines:   from JSONL inputs, each record's JSON text as read (JSONL output writes it back)
    """

    ids: pa.Array
    texts: pa.Array
    records: pa.Table
    source: str
    first_row: int
    lines: RecordLines | None = None

    def __len__(self) -> int:
        return len(self.texts)


@dataclass
class LineBatch:
    """Records of a JSONL input as their lines only, not parsed (`read_documents(...,
    jsonl_lines=True)`): for a second read of an input whose first read found every non-blank
    line a valid record that needed no repair."""

    lines: RecordLines
    source: str
    first_row: int

    def __len__(self) -> int:
        return len(self.lines)


@overload
def read_documents(inputs, *, text_field: str = ..., id_field: str = ..., skip_bad: bool = ...,
                   stats: ReadStats | None = ..., batch_size: int = ..., prefetch: int = ...,
                   jsonl_lines: Literal[False] = ...) -> Iterator[DocumentBatch]: ...
@overload
def read_documents(inputs, *, text_field: str = ..., id_field: str = ..., skip_bad: bool = ...,
                   stats: ReadStats | None = ..., batch_size: int = ..., prefetch: int = ...,
                   jsonl_lines: bool) -> Iterator[DocumentBatch | LineBatch]: ...
def read_documents(inputs, *, text_field: str = "text", id_field: str = "id",
                   skip_bad: bool = False, stats: ReadStats | None = None,
                   batch_size: int = DEFAULT_BATCH_BYTES, prefetch: int = 0,
                   jsonl_lines: bool = False) -> Iterator[DocumentBatch | LineBatch]:
    """Stream documents from one or more inputs, in order (see module doc for formats).

    jsonl_lines: JSONL inputs give LineBatches, their non-blank lines unparsed (other inputs
    DocumentBatches as always); only for inputs known to hold no malformed line and none
    whose UTF-8 or surrogates needed repair (a first read found none).

    prefetch > 0: a background thread reads up to that many batches ahead (pyarrow parses and
    decompresses without the GIL, so reading overlaps the caller's work on the previous batch);
    errors are raised in the caller at the batch where they happened. `stats` then runs ahead of
    the batches received by up to `prefetch` batches."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    stats = stats if stats is not None else ReadStats()
    reader = _Reader(text_field, id_field, skip_bad, stats, max(1, int(batch_size)), jsonl_lines)
    batches: Iterator[DocumentBatch | LineBatch] = (batch for item in inputs
                                                    for batch in reader.read(item))
    if prefetch > 0:
        batches = read_ahead(batches, prefetch)
    yield from batches


def read_arrow(records, *, text_field: str = "text", id_field: str = "id",
               stats: ReadStats | None = None, batch_size: int = DEFAULT_BATCH_BYTES,
               source: str = "<arrow>") -> Iterator[DocumentBatch]:
    """Stream the documents of a pyarrow Table, RecordBatch or RecordBatchReader (one per row)
    as DocumentBatches, by the rules of the file readers: the text field must be a column,
    null or non-string texts are empty documents (counted), bytes are decoded as UTF-8, ids
    are the id column as text, else the 0-based row number."""
    if isinstance(records, pa.RecordBatch):
        records = pa.Table.from_batches([records])
    stats = stats if stats is not None else ReadStats()
    reader = _Reader(text_field, id_field, False, stats, max(1, int(batch_size)))
    pieces = [records] if isinstance(records, pa.Table) else records
    for piece in pieces:
        table = piece if isinstance(piece, pa.Table) else pa.Table.from_batches([piece])
        names = table.schema.names
        if text_field not in names:
            raise InputError(f"{source}: no column {text_field!r} (columns: "
                             f"{', '.join(names) or 'none'}); name the text column")
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise InputError(f"{source}: more than one column named {', '.join(twice)}; rename "
                             "them apart")
        rows = max(1, reader.batch_size // max(1, table.nbytes // max(1, table.num_rows)))
        for start in range(0, table.num_rows, rows):
            part = table.slice(start, rows)
            stats.input_bytes += part.nbytes
            yield reader._batch(part, source, require_field=True, validate_utf8=True)


_DONE = object()


def read_ahead(batches: Iterator, depth: int) -> Iterator:
    """The items of `batches`, produced by a worker thread at most `depth` items ahead."""
    ahead: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(item) -> bool:  # False when the consumer has gone away
        while not stop.is_set():
            try:
                ahead.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for batch in batches:
                if not offer(batch):
                    return
            offer(_DONE)
        except BaseException as exc:  # handed to the consumer, raised there
            offer(exc)

    worker = threading.Thread(target=work, name="read-ahead", daemon=True)
    worker.start()
    try:
        while (item := ahead.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:  # the worker ends at its next batch (not joined: it may be waiting on stdin)
        stop.set()


class _Reader:
    def __init__(self, text_field, id_field, skip_bad, stats, batch_size, jsonl_lines=False):
        self.jsonl_lines = jsonl_lines
        self.text_field = text_field
        self.id_field = id_field
        self.skip_bad = skip_bad
        self.stats = stats
        self.batch_size = batch_size
        self.row = 0  # documents yielded so far over all inputs

    def read(self, item) -> Iterator[DocumentBatch | LineBatch]:
        if str(item) == STDIN:
            if sys.stdin is None:
                raise InputError("stdin: closed; give an input file or pipe documents in")
            self.stats.files += 1
            yield from self._jsonl(sys.stdin.buffer, STDIN)
            return
        if not str(item):  # Path("") is the current folder
            raise InputError("an input name is empty")
        if is_remote(item) or has_glob(item) and not os.path.lexists(local_path(item)):
            yield from self._located(item)
            return
        path = Path(local_path(item))
        if not path.exists():
            raise InputError(f"{path}: no such file or directory")
        if path.is_dir():
            if is_saved_corpus(path):
                raise InputError(f"{path}: is a saved token corpus, not documents; "
                                 "pass it alone to commands that accept a corpus")
            artefact = saved_artefact_format(path)
            if artefact is not None:  # its binary arrays are no text documents
                raise InputError(f"{path}: is a saved {artefact} folder, not documents; "
                                 "pass the documents it was built from")
            yield from self._folder(path, self._folder_files(path))
        elif path.name.lower().endswith(PARQUET_SUFFIXES):
            yield from self._parquet(path)
        else:
            yield from self._jsonl_file(path)

    def _folder(self, root, files: list) -> Iterator[DocumentBatch | LineBatch]:
        """A folder's documents: its Parquet parts (a manifest of sharded output lists them
        in order), else one document per file."""
        from corpus_miner.io.shards import manifest_parts

        listed = manifest_parts(root, files)
        if listed is not None:
            for file in listed:
                yield from self._parquet(file) if file.name.lower().endswith(PARQUET_SUFFIXES) \
                    else self._jsonl_file(file)
            return
        parquet_files = [f for f in files if f.name.lower().endswith(PARQUET_SUFFIXES)]
        if parquet_files:
            # beside Parquet parts, other files are not documents; markers such as Spark's
            # _SUCCESS are expected, anything else is counted so it does not go unnoticed
            self.stats.files_skipped += sum(
                1 for f in files if f not in parquet_files and not f.name.startswith("_"))
            for file in parquet_files:
                yield from self._parquet(file)
        else:
            yield from self._text_folder(root, files)

    def _located(self, item) -> Iterator[DocumentBatch | LineBatch]:
        """A URL or a glob pattern: its objects, files and folders in sorted order."""
        if not is_remote(item):
            matches = sorted(glob.glob(local_path(item), recursive=True))
            if not matches:
                raise InputError(f"{item}: no file matches this pattern")
            for match in matches:
                yield from self.read(match)
            return
        from corpus_miner.io.remote import RemoteFolder, input_sources, remote_artefact_format

        for source in input_sources(str(item)):
            if isinstance(source, RemoteFolder):
                artefact = remote_artefact_format(source)
                if artefact is not None:
                    raise InputError(f"{source}: is a saved {artefact} folder, not documents; "
                                     "pass the documents it was built from")
                if not source.files:
                    raise InputError(f"{source}: no objects under this prefix")
                yield from self._folder(source, source.files)
            elif source.name.lower().endswith(PARQUET_SUFFIXES):
                yield from self._parquet(source)
            else:
                yield from self._jsonl_file(source)

    def _jsonl_file(self, file) -> Iterator[DocumentBatch | LineBatch]:
        """A JSONL file or object, opened here and closed when read."""
        try:  # Python's file, not pa.OSFile, which seeks and so fails on pipes
            raw = file.open() if not isinstance(file, Path) else open(file, "rb")  # noqa: SIM115
        except OSError as exc:
            raise InputError(f"{file}: cannot read ({_reason(exc)})") from None
        self.stats.files += 1
        try:
            yield from self._jsonl(raw, str(file))
        finally:
            raw.close()

    # -- JSONL -------------------------------------------------------------------------------
    def _jsonl(self, raw, name: str) -> Iterator[DocumentBatch | LineBatch]:
        """JSON lines from a binary stream, plain or compressed (told by its first bytes). The
        stream is read once from where it stands, never rewound, so stdin, pipes and
        `<(zcat ...)` work like files."""
        label = "stdin" if name == STDIN else name  # how messages name the input
        source = _Counted(raw)
        try:
            magic = source.peek(4)
        except (OSError, pa.ArrowException) as exc:
            raise InputError(f"{label}: cannot read ({_reason(exc)})") from None
        if magic.startswith(_GZIP_MAGIC):
            stream = pa.CompressedInputStream(source, "gzip")
        elif magic.startswith(_ZSTD_MAGIC):
            stream = _zstd_stream(source)
        else:
            stream = source
        consumed = 0
        first = True
        first_line = 1  # of the chunk, for messages
        for chunk in iter_line_chunks(stream, self.batch_size, label):
            self.stats.input_bytes += source.consumed - consumed
            consumed = source.consumed
            if self.jsonl_lines:
                lines = RecordLines.every_line(chunk)
                if len(lines):
                    yield LineBatch(lines, name, self.row)
                    self.row += len(lines)
                    self.stats.documents += len(lines)
                continue
            parsed = parse_chunk(chunk, first_line, label, self.text_field, self.skip_bad)
            first_line += parsed.lines
            self.stats.bad_lines_skipped += parsed.bad_lines
            self.stats.invalid_utf8_replaced += parsed.invalid_utf8
            if parsed.table.num_rows == 0:
                continue
            batch = self._batch(parsed.table, name, require_field=first,
                                python_texts=parsed.python_texts)
            batch.lines = parsed.record_lines(chunk)
            yield batch
            first = False

    # -- Parquet -----------------------------------------------------------------------------
    def _parquet(self, path) -> Iterator[DocumentBatch]:
        try:
            # Column chunks are read in 1 MiB pieces as they are decoded, not whole (a web part's
            # text chunk is ~150 MB): measured on two 150 MB parts, peak RSS 297 -> 156 MB and
            # system CPU (faulting in fresh buffers) 0.37 -> 0.16 s.
            import pyarrow.parquet as pq  # here: a JSONL run does not need it

            source = str(path) if isinstance(path, Path) else path.open()
            parquet = pq.ParquetFile(source, pre_buffer=False, buffer_size=_PARQUET_BUFFER)
        except (OSError, pa.ArrowException) as exc:
            raise InputError(f"{path}: cannot read as Parquet ({_reason(exc)})") from None
        self.stats.files += 1
        names = parquet.schema_arrow.names
        meta = parquet.metadata
        if meta.num_rows == 0:  # e.g. our own empty output, written without columns: no documents
            return
        if self.text_field not in names:
            raise _missing_field(path, self.text_field, names)
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:  # a record cannot hold two values under one name (JSON keeps the last)
            raise InputError(f"{path}: more than one column named {', '.join(twice)}; rename "
                             "them apart")
        total_bytes = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        bytes_per_row = max(1, total_bytes // max(1, meta.num_rows))
        rows = max(1, self.batch_size // bytes_per_row)
        try:
            # one decoding thread: reading runs ahead on a thread of its own already (prefetch);
            # Arrow's pool only added hand-offs (two parts: 1.08 -> 0.78 CPU s without it)
            for record_batch in parquet.iter_batches(batch_size=rows, use_threads=False):
                table = pa.Table.from_batches([record_batch])
                self.stats.input_bytes += record_batch.nbytes
                yield self._batch(table, str(path), require_field=False, validate_utf8=True)
        except (OSError, pa.ArrowException) as exc:
            raise InputError(f"{path}: cannot read as Parquet ({_reason(exc)})") from None

    # -- folders ---------------------------------------------------------------------------
    def _folder_files(self, root: Path) -> list[Path]:
        """Regular files under root, recursively, sorted by relative path; hidden ones
        skipped; pipes, devices and dangling links counted (files_skipped), and so are
        subfolders that cannot be listed (unreadable_folders_skipped)."""
        def unreadable(exc: OSError) -> None:
            self.stats.unreadable_folders_skipped += 1

        found = []
        for folder, subfolders, files in os.walk(root, onerror=unreadable):
            subfolders[:] = [d for d in subfolders if not d.startswith(".")]
            for name in files:
                if name.startswith("."):
                    continue
                file = Path(folder, name)
                if file.is_file():  # follows symlinks
                    found.append(file)
                else:  # a pipe would block the read forever, a device never end
                    self.stats.files_skipped += 1
        return sorted(found, key=lambda p: p.relative_to(root).as_posix())

    def _text_folder(self, root: Path, files: list[Path]) -> Iterator[DocumentBatch]:
        ids: list[str] = []
        texts: list[str] = []
        size = 0
        for file in files:
            try:
                data = file.read_bytes()
            except OSError as exc:
                raise InputError(f"{file}: cannot read ({_reason(exc)})") from None
            self.stats.input_bytes += len(data)
            if _BINARY_MARK in data[:_BINARY_SNIFF_BYTES]:  # images, archives, .pyc: no text
                self.stats.binary_files_skipped += 1
                continue
            self.stats.files += 1
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = data.decode("utf-8", "replace")
                self.stats.invalid_utf8_replaced += 1
            # a file name that is not UTF-8 (a lone surrogate in Python) cannot be an Arrow id
            ids.append(os.fsencode(file.relative_to(root).as_posix()).decode("utf-8", "replace"))
            texts.append(text)
            size += len(data)
            if size >= self.batch_size:
                yield self._folder_batch(ids, texts, root)
                ids, texts, size = [], [], 0
        if ids:
            yield self._folder_batch(ids, texts, root)

    def _folder_batch(self, ids, texts, root) -> DocumentBatch:
        table = pa.table({self.id_field: pa.array(ids, pa.string()),
                          self.text_field: pa.array(texts, pa.string())})
        return self._batch(table, str(root), require_field=False)

    # -- common ------------------------------------------------------------------------------
    def _batch(self, table: pa.Table, source: str, *, require_field: bool,
               python_texts: list | None = None, validate_utf8: bool = False) -> DocumentBatch:
        n = table.num_rows
        if self.text_field not in table.column_names:
            if require_field:
                raise _missing_field(source, self.text_field, table.column_names)
            texts, null_texts = _empty_strings(n), n
        else:
            if python_texts is None and is_json_text(table.schema.field(self.text_field)):
                # a mixed-type field we wrote: its strings are JSON texts, decoded like the ids
                python_texts = json_values(table, self.text_field)
            if python_texts is not None:
                null_texts = sum(1 for t in python_texts if not isinstance(t, str))
                texts = pa.array([t if isinstance(t, str) else "" for t in python_texts],
                                 pa.string())
            else:
                texts, null_texts = self._arrow_texts(
                    _one_array(table.column(self.text_field)), validate_utf8)
        ids = self._ids(table, n)
        offsets, _ = arrow_string_buffers(texts)
        self.stats.documents += n
        self.stats.bytes += int(offsets[-1] - offsets[0])
        self.stats.null_texts += null_texts
        batch = DocumentBatch(ids, texts, table, source, self.row)
        self.row += n
        return batch

    def _arrow_texts(self, column: pa.Array, validate: bool) -> tuple[pa.Array, int]:
        """(texts without nulls, how many were null or not text). Texts stored as bytes are
        decoded as UTF-8 (counted); numbers, lists and other types are no text: empty
        documents. Strings are checked for UTF-8 when `validate` (Parquet does not check)."""
        if pa.types.is_dictionary(column.type):
            column = column.dictionary_decode()
        kind = column.type
        if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) \
                or pa.types.is_binary_view(kind):
            self.stats.binary_texts_decoded += len(column) - column.null_count
            column = self._utf8(column)
        elif pa.types.is_string_view(kind):
            column = column.cast(pa.string())
        elif validate and (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            column = self._utf8(column)
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            return _empty_strings(len(column)), len(column)  # numbers, objects, all-null
        nulls = column.null_count
        if not nulls:
            return column, nulls
        import pyarrow.compute as pc  # here: 30-40 ms to import, and most inputs have no null

        return pc.fill_null(column, ""), nulls

    def _utf8(self, column: pa.Array) -> pa.Array:
        """Valid UTF-8 strings from unchecked strings or bytes: invalid bytes are replaced by
        U+FFFD and counted (invalid_utf8_replaced), like everywhere else."""
        large = pa.types.is_large_string(column.type) or pa.types.is_large_binary(column.type)
        try:  # validating a string array, or casting bytes to strings, checks the UTF-8
            if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
                column.validate(full=True)
                return column
            return column.cast(pa.large_string() if large else pa.string())
        except pa.ArrowInvalid:
            pass
        texts: list[str | None] = []
        for raw in column.cast(pa.large_binary()).to_pylist():
            if raw is None:
                texts.append(None)
                continue
            try:
                texts.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                texts.append(raw.decode("utf-8", "replace"))
                self.stats.invalid_utf8_replaced += 1
        return pa.array(texts, pa.large_string() if large else pa.string())

    def _ids(self, table: pa.Table, n: int) -> pa.Array:
        if self.id_field not in table.column_names:
            return self._row_numbers(n)
        column = _one_array(table.column(self.id_field))
        try:
            if is_json_text(table.schema.field(self.id_field)):  # ids of mixed types
                ids = pa.array([v if v is None or isinstance(v, str) else json.dumps(v)
                                for v in json_values(table, self.id_field)], pa.string())
            elif pa.types.is_string(column.type):
                ids = column  # a cast would import pyarrow.compute for nothing
            else:
                ids = column.cast(pa.string())
        except (pa.ArrowException, NotImplementedError):
            ids = pa.array([None if v is None else str(v) for v in column.to_pylist()], pa.string())
        if ids.null_count:
            import pyarrow.compute as pc

            ids = pc.if_else(pc.is_null(ids), self._row_numbers(n), ids)
        return ids

    def _row_numbers(self, n: int) -> pa.Array:
        """The batch's row numbers in the input as strings: the ids of records without one.
        From the buffer, not pa.array, which imports pandas where it is installed."""
        numbers = np.arange(self.row, self.row + n, dtype=np.int64)
        return pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(numbers)]).cast(
            pa.string())


class _Counted(io.RawIOBase):
    """A binary stream read forward only, counting the bytes it gives (for progress), with a
    `peek` that does not consume: the compression is told from the first bytes without
    seeking, which pipes cannot do."""

    def __init__(self, raw):
        self._raw = raw
        self._head = b""
        self.consumed = 0

    def readable(self) -> bool:
        return True

    def peek(self, size: int) -> bytes:
        while len(self._head) < size:
            more = self._raw.read(size - len(self._head))
            if not more:
                break
            self._head += more
        return self._head[:size]

    def readinto(self, buffer) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
        else:
            data = self._raw.read(len(buffer))
            n = len(data)
            buffer[:n] = data
        self.consumed += n
        return n

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            head, self._head = self._head, b""
            data = head + self._raw.read()
            self.consumed += len(data)
            return data
        head, self._head = self._head[:size], self._head[size:]
        data = head + self._raw.read(size - len(head)) if len(head) < size else head
        self.consumed += len(data)
        return bytes(data)


def _zstd_stream(raw):
    if pa.Codec.is_available("zstd"):
        return pa.CompressedInputStream(raw, "zstd")
    import zstandard  # pyarrow built without zstd: the pure-Python binding is a dependency

    return zstandard.ZstdDecompressor().stream_reader(raw)


def _one_array(column: pa.ChunkedArray) -> pa.Array:
    """The column as one array; a single chunk as it is (combine_chunks would copy it)."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _empty_strings(n: int) -> pa.Array:
    return pa.StringArray.from_buffers(n, pa.py_buffer(np.zeros(n + 1, dtype=np.int32)),
                                       pa.py_buffer(b""))


def _missing_field(source, field: str, names: Iterable[str]) -> InputError:
    listed = ", ".join(names) or "none"
    return InputError(f"{source}: no field '{field}' (fields: {listed}); "
                      f"choose one with --text-field")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return " ".join(str(exc).split()) or type(exc).__name__
