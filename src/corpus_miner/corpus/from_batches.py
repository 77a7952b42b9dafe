"""A TokenCorpus from batches of records held in memory, for mining data that is not in files:
a Hugging Face `Dataset` or `IterableDataset` (`ds.iter(batch_size=...)`), Arrow tables, lists.

    from corpus_miner import BloomSpan
    from corpus_miner.corpus.from_batches import corpus_from_batches

    corpus = corpus_from_batches(ds.iter(batch_size=10_000))
    miner = BloomSpan(sigma=20, min_length=10).fit(corpus)

Each batch goes through the file readers' own rules (a null or non-string text is an empty
document, counted in read_stats; an id that is not a string is written as one; a record without
an id gets its 0-based row number), so the corpus, and what is mined from it, is the one
`load_corpus` gives for the same records written to a JSONL file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa

from corpus_miner.corpus.parallel import ParallelTokenizer
from corpus_miner.corpus.token_corpus import TokenCorpus
from corpus_miner.corpus.tokenizer import resized
from corpus_miner.errors import InputError
from corpus_miner.io.readers import DEFAULT_BATCH_BYTES, ReadStats, _Reader
from corpus_miner.io.strings import StringList


def _as_table(batch, text_field: str) -> pa.Table:
    """One batch as an Arrow table: a dict of columns, a pa.Table / RecordBatch, or a list of
    texts."""
    if isinstance(batch, pa.Table):
        return batch
    if isinstance(batch, pa.RecordBatch):
        return pa.Table.from_batches([batch])
    if isinstance(batch, dict):
        try:
            return pa.table(batch)
        except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError) as exc:
            raise InputError(f"a batch's columns cannot be read as a table ({exc})") from None
    if isinstance(batch, (list, tuple)):
        return pa.table({text_field: pa.array(list(batch), pa.string())})
    raise InputError(f"batches are dicts of columns, Arrow tables or lists of texts, got "
                     f"{type(batch).__name__}")


def document_batches(batches: Iterable, text_field: str = "text",
                     id_field: str = "id", stats: ReadStats | None = None) -> Iterator:
    """The readers' DocumentBatches of in-memory batches (see the module docstring)."""
    reader = _Reader(text_field, id_field, False, stats or ReadStats(), DEFAULT_BATCH_BYTES)
    for batch in batches:
        table = _as_table(batch, text_field)
        if table.num_rows:
            yield reader._batch(table, "batch", require_field=True)


def corpus_from_batches(batches: Iterable, *, text_field: str = "text", id_field: str = "id",
                        threads: int | None = None) -> TokenCorpus:
    """Tokenize batches of records held in memory into a TokenCorpus.

    Parameters
    ----------
    batches : iterable
        Dicts of columns (what `datasets` yields from `ds.iter(batch_size=...)`), pyarrow
        Tables or RecordBatches, or lists of texts; read once, in order.
    text_field, id_field : str
        The columns holding the text and the id.
    threads : int, optional
        Tokenizing threads (default: every core this process may use); the ids do not depend
        on it.

    Returns
    -------
    TokenCorpus
        The corpus `load_corpus` gives for the same records in a JSONL file.

    Raises
    ------
    InputError
        A batch without the text column, or one that is no table.

    Examples
    --------
    >>> corpus = corpus_from_batches([{"text": ["Hello world", "hello again"]}])
    >>> corpus.n_docs, corpus.n_tokens, list(corpus.vocab)
    (2, 4, ['hello', 'world', 'again'])
    """
    stats = ReadStats()
    tokenizer = ParallelTokenizer(threads)
    tokens = np.zeros(1 << 16, dtype=np.uint32)
    doc_offsets = np.zeros(1 << 10, dtype=np.int64)
    n_tokens = n_docs = 0
    id_arrays = []
    for block in tokenizer.run(document_batches(batches, text_field, id_field, stats)):
        n, d = len(block.tokens), len(block.doc_offsets) - 1
        if n_tokens + n > len(tokens):
            tokens = resized(tokens, max(n_tokens + n, len(tokens) * 3 // 2))
        if n_docs + d + 1 > len(doc_offsets):
            doc_offsets = resized(doc_offsets, max(n_docs + d + 1, len(doc_offsets) * 3 // 2))
        tokens[n_tokens:n_tokens + n] = block.tokens
        doc_offsets[n_docs + 1:n_docs + d + 1] = block.doc_offsets[1:] + n_tokens
        n_tokens += n
        n_docs += d
        id_arrays += [batch.ids for batch in block.batches]
    return TokenCorpus(resized(tokens, n_tokens), resized(doc_offsets, n_docs + 1),
                       StringList.from_arrow(id_arrays), tokenizer.vocabulary.strings(), stats)
