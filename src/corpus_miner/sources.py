"""What the estimators accept as documents, for every engine: one dispatch.

`documents(X)` names the kind of `X` once, for `fit`, `coverage`, `report` and `clean` of the
local and the Spark engines alike:

- paths: a `str` or `os.PathLike` (a file, a folder, a glob, a URL, `-` for stdin, or one saved
  corpus folder), or a list or tuple of `os.PathLike` (`pathlib.Path`): read by the command line's
  readers (JSONL, Parquet, text folders), with the text and id fields named by the caller;
- a pyarrow `Table`, `RecordBatch` or `RecordBatchReader`, or a pandas `DataFrame`: one document
  per row, the text in the column `text_col`, the id in `id_col` (else the row number);
- a `TokenCorpus` (or any object with `tokens`, `doc_offsets` and `vocab`): already tokenized;
- any other iterable of texts (`str`, or None for an empty document): a list, a generator, a
  pyarrow string array.

A list of `str` is a list of texts, as for `LSHBloom.fit`; several paths are given as `Path`
objects or one glob. A list of `str` that all name existing files or URLs is refused rather than
mined as texts, since that is almost always a mistake.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Union

import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute

from corpus_miner.errors import InputError

DocumentsLike = Union[str, "os.PathLike[str]", Iterable[Any], pa.Table, pa.RecordBatch,
                      pa.RecordBatchReader]
"""What `documents()` accepts (the module docstring lists the kinds)."""

KINDS = ("paths", "arrow", "corpus", "texts")
ACCEPTED = ("a path (str or pathlib.Path), a list of pathlib.Path, a pyarrow Table, RecordBatch "
            "or RecordBatchReader, a TokenCorpus, or an iterable of texts")


@dataclass
class Documents:
    """The documents of one input, by kind (module docstring). `batches()` streams them as the
    readers' DocumentBatches; `token_corpus()` tokenizes them as `load_corpus` does."""

    kind: str
    text_col: str = "text"
    id_col: str = "id"
    skip_bad: bool = False
    paths: list | None = None
    table: pa.Table | None = None
    reader: pa.RecordBatchReader | None = None
    corpus: Any = None
    read_stats: Any = field(default=None, repr=False)

    @property
    def rereadable(self) -> bool:
        """Whether the original texts can be read (again) after tokenizing: not from a
        TokenCorpus or a saved corpus folder, nor from stdin or a pipe."""
        if self.kind == "corpus":
            return False
        if self.kind == "paths":
            from corpus_miner.io.artefact import is_saved_corpus
            from corpus_miner.io.locations import rereadable

            assert self.paths is not None
            one_corpus = len(self.paths) == 1 and str(self.paths[0]) != "-" \
                and is_saved_corpus(self.paths[0])
            return not one_corpus and rereadable(self.paths)
        return True  # Arrow data is held in memory (a reader is read into a Table first)

    def held(self) -> Documents:
        """The same documents, readable more than once: a RecordBatchReader is read into a
        Table (in memory) here, every other kind is already."""
        if self.kind == "arrow" and self.reader is not None:
            self.table, self.reader = self.reader.read_all(), None
        return self

    def batches(self) -> Iterator:
        """The documents as DocumentBatches, in order (a RecordBatchReader only once)."""
        from corpus_miner.io.readers import read_arrow, read_documents

        if self.kind == "paths":
            return read_documents(self.paths, text_field=self.text_col, id_field=self.id_col,
                                  skip_bad=self.skip_bad, stats=self.read_stats, prefetch=2)
        if self.kind == "arrow":
            if self.table is None and self.reader is None:
                raise InputError("the RecordBatchReader was read already; pass a Table to use "
                                 "the documents twice")
            source, self.reader = (self.table if self.table is not None else self.reader), None
            return read_arrow(source, text_field=self.text_col, id_field=self.id_col,
                              stats=self.read_stats)
        raise InputError("a TokenCorpus keeps no text; pass the documents it was loaded from")

    def token_corpus(self, progress: bool = False, sentences: bool = False):
        """The TokenCorpus of the documents (a TokenCorpus given is returned as it is);
        sentences=True keeps the sentence starts (edge phrases need them)."""
        if self.kind == "corpus":
            return self.corpus
        from corpus_miner.corpus.build import load_corpus, tokenize_batches
        from corpus_miner.io.readers import ReadStats

        if self.kind == "paths":
            return load_corpus(self.paths, text_field=self.text_col, id_field=self.id_col,
                               skip_bad=self.skip_bad, progress=progress, sentences=sentences)
        self.read_stats = ReadStats()
        corpus = tokenize_batches(self.batches(), self.read_stats, sentences=sentences)
        self.read_stats = None  # a second read counts afresh
        return corpus


def documents(X: DocumentsLike, *, text_col: str = "text", id_col: str = "id",
              skip_bad: bool = False, where: str = "fit") -> Documents:
    """The kind of `X` (module docstring), or InputError naming what is accepted. `where`
    names the caller in messages."""
    options: dict[str, Any] = {"text_col": text_col, "id_col": id_col, "skip_bad": skip_bad}
    if isinstance(X, (str, os.PathLike)):
        return Documents("paths", paths=[X], **options)
    if isinstance(X, (list, tuple)) and X and all(isinstance(x, os.PathLike) for x in X):
        return Documents("paths", paths=list(X), **options)
    if isinstance(X, (pa.Table, pa.RecordBatch)):
        table = pa.Table.from_batches([X]) if isinstance(X, pa.RecordBatch) else X
        return Documents("arrow", table=table, **options)
    if isinstance(X, pa.RecordBatchReader):
        return Documents("arrow", reader=X, **options)
    if _is_pandas_frame(X):
        return Documents("arrow", table=pandas_table(X, text_col, where), **options)
    if all(hasattr(X, name) for name in ("tokens", "doc_offsets", "vocab")):
        return Documents("corpus", corpus=X, **options)
    if isinstance(X, (pa.Array, pa.ChunkedArray)):
        if not (pa.types.is_string(X.type) or pa.types.is_large_string(X.type)):
            raise InputError(f"{where}: a pyarrow array of texts must hold strings, got {X.type}")
        return Documents("arrow", table=pa.table({text_col: X}), **options)
    if isinstance(X, (bytes, bytearray, dict)) or not isinstance(X, Iterable) \
            or _is_frame(X):
        raise InputError(f"{where}: cannot read documents from {type(X).__name__}; pass "
                         f"{ACCEPTED}")
    texts = list(X)
    if any(isinstance(x, os.PathLike) for x in texts):
        raise InputError(f"{where}: a list mixing paths and other values; pass only "
                         "pathlib.Path objects (paths) or only strings (texts)")
    bad = next((x for x in texts if x is not None and not isinstance(x, str)), None)
    if bad is not None:
        raise InputError(f"{where}: an iterable of texts holds a {type(bad).__name__} "
                         f"({bad!r:.40}); every item must be a str (or None); token ids go in a "
                         "TokenCorpus")
    if texts and all(isinstance(x, str) and _names_a_file(x) for x in texts):
        raise InputError(f"{where}: every string names an existing file or a URL "
                         f"({texts[0]!r}...), but a list of str is a list of texts; pass "
                         "pathlib.Path objects (or one str or glob) to read files")
    return Documents("arrow", table=pa.table({text_col: pa.array(texts, pa.string())}),
                     **options)


def _is_frame(X) -> bool:
    """A DataFrame not read here (Spark's): iterable (over column names), not documents."""
    return type(X).__name__ == "DataFrame"


def _is_pandas_frame(X) -> bool:
    return type(X).__name__ == "DataFrame" and type(X).__module__.startswith("pandas")


def pandas_table(frame, text_col: str, where: str) -> pa.Table:
    """A pandas DataFrame as a pyarrow Table (its index left out), its text column checked."""
    if text_col not in frame.columns:
        raise InputError(f"{where}: text_col={text_col!r} is not a column of the DataFrame "
                         f"(columns: {list(frame.columns)}); pass text_col= with the right name")
    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputError(f"{where}: the DataFrame does not convert to Arrow ({exc})") from None
    text_type = table.schema.field(text_col).type
    if not (pa.types.is_string(text_type) or pa.types.is_large_string(text_type)
            or pa.types.is_null(text_type)):
        raise InputError(f"{where}: column {text_col!r} has type {text_type}, expected strings")
    return table


def texts_of_table(X, text_col: str, where: str):
    """The text column of a pandas DataFrame or a pyarrow Table / RecordBatch (null texts are
    empty documents), or None when X is neither (then X is the texts themselves)."""
    if _is_pandas_frame(X):
        X = pandas_table(X, text_col, where)
    if not isinstance(X, (pa.Table, pa.RecordBatch)):
        return None
    if text_col not in X.schema.names:
        raise InputError(f"{where}: text_col={text_col!r} is not a column (columns: "
                         f"{X.schema.names}); pass text_col= with the right name")
    column = X.column(text_col)
    if pa.types.is_null(column.type):
        column = column.cast(pa.string())
    return pa.compute.fill_null(column, "")


def _names_a_file(text: str) -> bool:
    if "\n" in text or len(text) > 4096:
        return False
    if "://" in text.split(" ", 1)[0] and " " not in text:
        return True
    try:
        return os.path.exists(text)
    except (OSError, ValueError):
        return False
