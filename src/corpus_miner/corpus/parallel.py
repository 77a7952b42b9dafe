"""Tokenize a stream of document batches on several threads, ids as one scan would give them.

Consecutive batches are grouped into blocks of about `block_bytes` of text. Each block is
tokenized by its own TokenIdAssigner (the compiled scan releases the GIL), on one of `threads - 1`
worker threads or, when none has started it by its turn, on the merging thread itself; so its
hash table holds only the block's distinct tokens and stays in cache. Blocks are then merged
into the global Vocabulary strictly in input order, and their local ids replaced by global ones.
The result is the same for every thread count and block size: ids in order of first appearance
(tests check it against one TokenIdAssigner over everything).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from corpus_miner.corpus import kernels
from corpus_miner.corpus.tokenizer import TokenIdAssigner
from corpus_miner.corpus.vocabulary import Vocabulary
from corpus_miner.io.strings import arrow_string_buffers

# Bigger blocks scan slower (bigger local tables, out of L2, above all when other threads share
# the core) but leave fewer local entries to the serial merge. Measured in one process on three
# web-like parts (113M tokens), two threads, a shared machine, whole-process CPU ns per token:
# 1 MiB (in practice one ~2 MiB reader batch a block) 59-60, 2 MiB 62-63, 4 MiB 65-68, 16 MiB 82-85.
DEFAULT_BLOCK_BYTES = 1 << 20


@dataclass
class TokenizedBlock:
    """Consecutive batches, tokenized. Document i of the block is
    tokens[doc_offsets[i]:doc_offsets[i + 1]] (offsets relative to the block)."""

    batches: list
    tokens: np.ndarray  # uint32 global ids
    doc_offsets: np.ndarray  # int64, documents + 1, from 0
    line_flags: np.ndarray  # uint8 per token: see TokenIdAssigner.finish_with_lines

    def line_starts(self, first_token: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(line starts, paragraph starts) as int64 token indices, plus `first_token`."""
        line = self.line_flags & np.uint8(kernels.LINE_FLAGS)
        lines = np.flatnonzero(line).astype(np.int64)
        paragraphs = lines[line[lines] == kernels.PARAGRAPH_START]
        return lines + first_token, paragraphs + first_token

    def sentence_starts(self, first_token: int = 0) -> np.ndarray:
        """The tokens that follow a sentence break, as int64 token indices plus `first_token`
        (none unless the tokenizer was asked for them)."""
        return np.flatnonzero(self.line_flags & np.uint8(kernels.SENTENCE_BREAK)).astype(
            np.int64) + first_token


def default_threads() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _text_bytes(texts) -> int:
    offsets, _ = arrow_string_buffers(texts)
    return int(offsets[-1] - offsets[0])


def _blocks(batches: Iterable, block_bytes: int) -> Iterator[list]:
    block, size = [], 0
    for batch in batches:
        block.append(batch)
        size += _text_bytes(batch.texts)
        if size >= block_bytes:
            yield block
            block, size = [], 0
    if block:
        yield block


def _tokenize_local(block: list, vocab_hint: int, sentences: bool = False) -> TokenIdAssigner:
    """The block's tokens with local ids; `vocab_hint` (distinct tokens expected) sizes the
    table, so that it is not grown and rehashed several times per block."""
    size = sum(_text_bytes(batch.texts) for batch in block)
    vocab = 1 << max(10, (vocab_hint + vocab_hint // 4).bit_length())
    assigner = TokenIdAssigner(initial_vocab=vocab, initial_tokens=size // 5 + 1024,
                               sentences=sentences)
    for batch in block:
        assigner.add_texts(batch.texts)
    return assigner


class ParallelTokenizer:
    """`run(batches)` yields TokenizedBlocks in input order; `vocabulary` is the global one."""

    def __init__(self, threads: int | None = None, block_bytes: int = DEFAULT_BLOCK_BYTES,
                 sentences: bool = False):
        self.sentences = sentences  # record sentence breaks (TokenIdAssigner)
        self.threads = default_threads() if threads is None else int(threads)
        if self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.block_bytes = max(1, int(block_bytes))
        self.vocabulary = Vocabulary()
        self.special_docs = 0  # documents that needed the exact str.lower() path
        self._local_vocab = 0  # distinct tokens of the last merged block: the next one's hint

    def run(self, batches: Iterable) -> Iterator[TokenizedBlock]:
        blocks = _blocks(batches, self.block_bytes)
        if self.threads == 1:
            for block in blocks:
                yield self._merge(block, _tokenize_local(block, self._local_vocab, self.sentences))
            return
        # threads - 1 workers; this thread merges, and scans a block itself when no worker has
        # started it by the time it is next to merge, so `threads` threads scan in all
        with ThreadPoolExecutor(self.threads - 1, thread_name_prefix="tokenize") as pool:
            pending: deque = deque()
            for block in blocks:
                pending.append((block, pool.submit(_tokenize_local, block, self._local_vocab,
                                                      self.sentences)))
                if len(pending) >= self.threads:  # keeps every thread busy, memory bounded
                    yield self._merge_next(pending)
            while pending:
                yield self._merge_next(pending)

    def _merge_next(self, pending: deque) -> TokenizedBlock:
        block, future = pending.popleft()
        if future.cancel():  # no worker took it yet
            return self._merge(block, _tokenize_local(block, self._local_vocab, self.sentences))
        return self._merge(block, future.result())

    def _merge(self, block: list, assigner: TokenIdAssigner) -> TokenizedBlock:
        self.special_docs += assigner.special_docs
        self._local_vocab = assigner.n_vocab
        keys = assigner.vocab_keys()
        tokens, doc_offsets, local_vocab, line_flags = assigner.finish_with_lines()
        mapping = self.vocabulary.merge(keys, local_vocab)
        kernels.remap_ids(tokens, mapping, tokens)  # in place: each id read before written
        return TokenizedBlock(block, tokens, doc_offsets, line_flags)
