"""Checks of the arrays the miners are given: both check doc_offsets alike (InputError)."""

from __future__ import annotations

import numpy as np

from corpus_miner._numba.readonly import read_only
from corpus_miner.errors import InputError


def checked_doc_offsets(tokens: np.ndarray, doc_offsets) -> np.ndarray:
    """doc_offsets as contiguous read-only int64 (one type for the kernels), or InputError if they
    do not cut `tokens` into documents."""
    doc_offsets = read_only(np.ascontiguousarray(doc_offsets, dtype=np.int64))
    if doc_offsets.ndim != 1 or len(doc_offsets) < 1 or doc_offsets[0] != 0 \
            or doc_offsets[-1] != len(tokens) or np.any(np.diff(doc_offsets) < 0):
        raise InputError("doc_offsets must start at 0, never decrease and end at len(tokens) "
                         f"({len(tokens)}); pass a TokenCorpus's arrays unchanged")
    return doc_offsets


def validate_corpus_arrays(tokens, doc_offsets, vocab) -> tuple[np.ndarray, np.ndarray, int]:
    """(uint32 tokens, int64 offsets, vocabulary size covering every id) or InputError: what
    BloomSpan needs (dense ids below 2^32 - 1, a vocabulary list covering them). Both arrays
    read-only, as a TokenCorpus holds them (one type for the kernels)."""
    tokens = np.ascontiguousarray(tokens)
    if tokens.ndim != 1 or not np.issubdtype(tokens.dtype, np.integer):
        raise InputError(f"tokens must be a 1-D integer array (got {tokens.dtype}, ndim "
                         f"{tokens.ndim}); pass TokenCorpus.tokens")
    largest = int(tokens.max()) if len(tokens) else -1
    if tokens.dtype != np.uint32:
        if len(tokens) and (int(tokens.min()) < 0 or largest >= 0xFFFFFFFF):
            raise InputError("token ids must lie in [0, 2^32 - 1); pass TokenCorpus.tokens")
        tokens = tokens.astype(np.uint32)
    doc_offsets = checked_doc_offsets(tokens, doc_offsets)
    if len(vocab) and largest >= len(vocab):
        raise InputError(f"token id {largest} is outside the vocabulary of {len(vocab)} "
                         "words; tokens and vocab must come from the same TokenCorpus")
    if largest == 0xFFFFFFFF:
        raise InputError("token id 2^32 - 1 is reserved as the document-boundary marker")
    return read_only(tokens), doc_offsets, max(len(vocab), largest + 1)
