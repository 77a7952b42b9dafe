"""Input files as Ray blocks, read in the workers by corpus-miner's own reader: one streaming
task per input (file, folder, glob or URL as given) yields one Arrow table of texts per reader
batch, so texts and bad-input handling are the local engine's and the driver reads nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import ray

from corpus_miner.errors import CorpusMinerError, InputError
from corpus_miner.io.readers import STDIN


@ray.remote(num_returns="streaming")
def _read_input(item: str, text_field: str, id_field: str, skip_bad: bool, storage):
    import pyarrow as pa

    from corpus_miner.io import read_documents
    from corpus_miner.io.storage import using_storage_options

    with using_storage_options(storage):
        for batch in read_documents([item], text_field=text_field, id_field=id_field,
                                    skip_bad=skip_bad):
            yield pa.table({"text": batch.texts})


def input_blocks(inputs, text_field: str = "text", id_field: str = "id",
                 skip_bad: bool = False, storage=None) -> list:
    """Object refs of Arrow tables (a `text` column) of the documents of `inputs`, read by Ray
    tasks; a reader's error (missing file, malformed line) surfaces where a task uses the
    block (see one_line_errors)."""
    from corpus_miner.corpus import is_saved_corpus

    for item in inputs:
        if str(item) == STDIN:
            raise InputError("--engine ray reads the inputs in its workers; stdin ('-') cannot "
                             "be read there: save it to a file first")
        if is_saved_corpus(item):
            raise InputError(f"{item}: --engine ray reads documents (JSONL, Parquet, text "
                             "folders), not a saved corpus folder; use the local engine")
    streams: list[Any] = [_read_input.remote(str(item), text_field, id_field, skip_bad, storage)
               for item in inputs]
    return [ref for stream in streams for ref in stream]  # refs only: no text on the driver


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
