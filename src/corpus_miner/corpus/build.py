"""load_corpus: documents in, TokenCorpus out, one batch at a time."""

from __future__ import annotations

import os
import sys
from contextlib import nullcontext
from pathlib import Path

from corpus_miner.io.artefact import is_saved_corpus
from corpus_miner.io.readers import DEFAULT_BATCH_BYTES, STDIN, ReadStats, read_documents
from corpus_miner.io.strings import StringList
from corpus_miner.corpus.token_corpus import TokenCorpus
from corpus_miner.corpus.tokenizer import TokenIdAssigner


def load_corpus(inputs, *, text_field: str = "text", id_field: str = "id", skip_bad: bool = False,
                progress: bool = False, batch_size: int = DEFAULT_BATCH_BYTES) -> TokenCorpus:
    """Read and tokenize documents; a single saved corpus folder is loaded (memory-mapped) instead.

    Memory: 4 bytes per token (plus growth slack) + the vocabulary + one input batch.
    progress=True shows a progress bar on stderr when it is a terminal.
    """
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    inputs = list(inputs)
    if len(inputs) == 1 and str(inputs[0]) != STDIN and is_saved_corpus(inputs[0]):
        return TokenCorpus.load(inputs[0])
    stats = ReadStats()
    assigner = TokenIdAssigner()
    id_arrays = []
    bar = _progress_bar(inputs) if progress and sys.stderr.isatty() else None
    with bar or nullcontext():
        task = bar.add_task("tokenizing", total=_total_input_bytes(inputs)) if bar else None
        for batch in read_documents(inputs, text_field=text_field, id_field=id_field,
                                    skip_bad=skip_bad, stats=stats, batch_size=batch_size):
            assigner.add_texts(batch.texts)
            id_arrays.append(batch.ids)
            if bar is not None:
                bar.update(task, completed=stats.input_bytes,
                           description=f"{stats.documents:,} docs, {assigner.n_tokens:,} tokens")
    tokens, doc_offsets, vocab = assigner.finish()
    return TokenCorpus(tokens, doc_offsets, StringList.from_arrow(id_arrays), vocab, stats)


def _progress_bar(inputs):
    from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn,
                               TimeRemainingColumn)

    from rich.console import Console

    return Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                    TimeRemainingColumn(), console=Console(stderr=True), transient=True)


def _total_input_bytes(inputs) -> int | None:
    """Sum of input file sizes (compressed), None when unknown (stdin)."""
    total = 0
    for item in inputs:
        if str(item) == STDIN:
            return None
        path = Path(item)
        if path.is_file():
            total += path.stat().st_size
        elif path.is_dir():
            total += sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return total
