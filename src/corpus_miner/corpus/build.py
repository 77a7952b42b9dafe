"""load_corpus, save_corpus and count_corpus: documents in, tokens out, a block at a time.

All run the ParallelTokenizer over the readers' batches (read ahead on a thread of their own):
load_corpus gathers the ids in memory, save_corpus streams them into a saved corpus folder and
count_corpus only counts, so the memory of the last two does not grow with the corpus (only the
vocabulary and the read-ahead do).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

from corpus_miner.corpus.parallel import ParallelTokenizer, TokenizedBlock
from corpus_miner.corpus.token_corpus import TokenCorpus, corpus_writer
from corpus_miner.corpus.tokenizer import resized
from corpus_miner.io.artefact import is_saved_corpus
from corpus_miner.io.digest import OrderedDigest
from corpus_miner.io.locations import is_remote
from corpus_miner.io.progress import byte_progress, input_bytes
from corpus_miner.io.readers import (
    DEFAULT_BATCH_BYTES,
    STDIN,
    DocumentBatch,
    ReadStats,
    read_documents,
)
from corpus_miner.io.strings import StringList

_READ_AHEAD = 4  # batches; reading overlaps tokenizing


def load_corpus(inputs, *, text_field: str = "text", id_field: str = "id", skip_bad: bool = False,
                progress: bool = False, batch_size: int = DEFAULT_BATCH_BYTES,
                threads: int | None = None, lines: bool = True,
                digest: bool = True, sentences: bool = False) -> TokenCorpus:
    """Read and tokenize documents; a single saved corpus folder is loaded (memory-mapped) instead.

    Memory: 4 bytes per token (plus growth slack), 8 bytes per line and per paragraph (their
    starts; lines=False keeps none, and the corpus's line_starts is None) + the vocabulary + a
    few input batches.
    progress=True shows a progress bar on stderr when it is a terminal. threads: tokenizing
    threads (default: every core this process may use); the ids do not depend on it.
    digest=False keeps no texts_digest (a reader that never reads the inputs again needs none).
    sentences=True also keeps the sentence starts (8 bytes per sentence break; edge phrases).
    """
    inputs = _as_list(inputs)
    if _is_one_saved_corpus(inputs):
        return TokenCorpus.load(inputs[0])
    stats = ReadStats()
    batches = read_documents(inputs, stats=stats, prefetch=_READ_AHEAD, text_field=text_field,
                             id_field=id_field, skip_bad=skip_bad, batch_size=batch_size)
    return tokenize_batches(batches, stats, progress=progress, inputs=inputs, threads=threads,
                            lines=lines, digest=digest, sentences=sentences)


def tokenize_batches(batches: Iterable[DocumentBatch], stats: ReadStats | None = None, *,
                     progress: bool = False, inputs=(), threads: int | None = None,
                     lines: bool = True, digest: bool = True,
                     sentences: bool = False) -> TokenCorpus:
    """The TokenCorpus of a stream of DocumentBatches (what load_corpus builds from its
    readers). stats: the ReadStats the batches' reader counts into, kept as read_stats;
    inputs: the files the progress bar measures; lines: keep the line starts; digest: keep
    the texts_digest; sentences: keep the sentence starts (load_corpus)."""
    stats = stats if stats is not None else ReadStats()
    tokenizer = ParallelTokenizer(threads, sentences=sentences)
    tokens = np.zeros(1 << 16, dtype=np.uint32)
    doc_offsets = np.zeros(1 << 10, dtype=np.int64)
    n_tokens = n_docs = 0
    id_arrays = []
    texts = OrderedDigest() if digest else None
    line_parts: list[np.ndarray] = []
    paragraph_parts: list[np.ndarray] = []
    sentence_parts: list[np.ndarray] = []
    for block in _tokenized_batches(batches, tokenizer, stats, progress, inputs):
        if texts is not None:
            for batch in block.batches:
                texts.update(batch.texts, texts.documents)
        n, d = len(block.tokens), len(block.doc_offsets) - 1
        if lines:
            line_starts, paragraph_starts = block.line_starts(n_tokens)
            line_parts.append(line_starts)
            paragraph_parts.append(paragraph_starts)
        if sentences:
            sentence_parts.append(block.sentence_starts(n_tokens))
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
                       StringList.from_arrow(id_arrays), tokenizer.vocabulary.strings(), stats,
                       texts_digest=texts.state() if texts is not None else None,
                       line_starts=_joined(line_parts) if lines else None,
                       paragraph_starts=_joined(paragraph_parts) if lines else None,
                       sentence_starts=_joined(sentence_parts) if sentences else None)


def save_corpus(inputs, output, *, text_field: str = "text", id_field: str = "id",
                skip_bad: bool = False, progress: bool = False,
                batch_size: int = DEFAULT_BATCH_BYTES, threads: int | None = None,
                sentences: bool = False) -> TokenCorpus:
    """Read and tokenize documents straight into a saved corpus folder `output` (written
    atomically); returns the saved corpus, memory-mapped. Same folder as
    `load_corpus(..., sentences=sentences).save(output)`, but memory stays bounded by the
    vocabulary and a few batches instead of growing with the corpus. A single saved corpus
    folder is copied."""
    inputs = _as_list(inputs)
    if _is_one_saved_corpus(inputs):
        TokenCorpus.load(inputs[0]).save(output)
        return TokenCorpus.load(output)
    stats = ReadStats()
    tokenizer = ParallelTokenizer(threads, sentences=sentences)
    texts = OrderedDigest()  # kept in the folder: Cleaner.write checks the inputs against it
    with corpus_writer(output) as writer:
        for block in _tokenized(inputs, tokenizer, stats, progress, text_field=text_field,
                                id_field=id_field, skip_bad=skip_bad, batch_size=batch_size):
            for batch in block.batches:
                texts.update(batch.texts, texts.documents)
            writer.add_documents(block.tokens, block.doc_offsets,
                                 StringList.from_arrow(batch.ids for batch in block.batches),
                                 *block.line_starts(),
                                 block.sentence_starts() if sentences else None)
        writer.finish(tokenizer.vocabulary.strings(), stats, texts.state())
    return TokenCorpus.load(output)


@dataclass(frozen=True)
class CorpusCounts:
    """What `count_corpus` found; the same names as TokenCorpus' counts."""

    n_docs: int
    n_tokens: int
    n_vocab: int
    read_stats: ReadStats | None


def count_corpus(inputs, *, text_field: str = "text", id_field: str = "id",
                 skip_bad: bool = False, progress: bool = False,
                 batch_size: int = DEFAULT_BATCH_BYTES, threads: int | None = None) -> CorpusCounts:
    """Documents, tokens and vocabulary size of the inputs (or of one saved corpus folder),
    tokenized like load_corpus but without keeping the ids: memory holds the vocabulary and a
    few batches, whatever the corpus size."""
    inputs = _as_list(inputs)
    if _is_one_saved_corpus(inputs):
        corpus = TokenCorpus.load(inputs[0])
        return CorpusCounts(corpus.n_docs, corpus.n_tokens, corpus.n_vocab, corpus.read_stats)
    stats = ReadStats()
    tokenizer = ParallelTokenizer(threads)
    n_docs = n_tokens = 0
    for block in _tokenized(inputs, tokenizer, stats, progress, text_field=text_field,
                            id_field=id_field, skip_bad=skip_bad, batch_size=batch_size):
        n_docs += len(block.doc_offsets) - 1
        n_tokens += len(block.tokens)
    return CorpusCounts(n_docs, n_tokens, len(tokenizer.vocabulary), stats)


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _as_list(inputs) -> list:
    return [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)


def _is_one_saved_corpus(inputs: list) -> bool:
    if len(inputs) != 1 or str(inputs[0]) == STDIN:
        return False
    if is_remote(inputs[0]):
        from corpus_miner.io.artefact import TOKEN_CORPUS_FORMAT
        from corpus_miner.io.remote import RemoteFolder, input_sources, remote_artefact_format

        sources = input_sources(str(inputs[0]))
        return len(sources) == 1 and isinstance(sources[0], RemoteFolder) and \
            remote_artefact_format(sources[0]) == TOKEN_CORPUS_FORMAT
    return is_saved_corpus(inputs[0])


def _tokenized(inputs: list, tokenizer: ParallelTokenizer, stats: ReadStats, progress: bool,
               **read_options) -> Iterator[TokenizedBlock]:
    batches = read_documents(inputs, stats=stats, prefetch=_READ_AHEAD, **read_options)
    return _tokenized_batches(batches, tokenizer, stats, progress, inputs)


def _tokenized_batches(batches: Iterable[DocumentBatch], tokenizer: ParallelTokenizer,
                       stats: ReadStats, progress: bool, inputs) -> Iterator[TokenizedBlock]:
    bar = byte_progress() if progress and sys.stderr.isatty() else None
    with bar or nullcontext():
        task = bar.add_task("tokenizing", total=input_bytes(inputs)) if bar else None
        tokens = 0
        for block in tokenizer.run(batches):
            yield block
            tokens += len(block.tokens)
            if bar is not None:
                bar.update(task, completed=stats.input_bytes,
                           description=f"{stats.documents:,} docs, {tokens:,} tokens")
