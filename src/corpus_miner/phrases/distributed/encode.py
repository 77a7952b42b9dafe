"""Stage 0 of the distributed miner: text batches -> token batches with global word ids.

A batch is a slice of whole documents (`tokens` uint32, `doc_offsets` int64), so every count made
over one batch or one partition is over whole documents, and per-partition document counts add up
to the exact corpus df.

1. `tokenize_batch`: the public tokenizer (corpus.TokenIdAssigner) with ids local to the batch,
   and the number of documents of the batch containing each local word.
2. The words' df are summed over all batches (one aggregation keyed by the word); words in at
   least sigma documents get global ids in the order of their UTF-8 bytes (`frequent_vocabulary`).
3. `global_batch`: local ids -> global ids; every other word becomes BREAK, which no frequent
   phrase contains (its df is below sigma) and which is no left neighbour either.
4. `compact_runs` keeps only runs of >= min_length tokens whose adjacent pairs pass a test (both
   words frequent and the bigram in the frequent-bigram set, stages.encode_batch) and separates
   the runs by one BREAK. A frequent phrase of length >= min_length has only frequent words and
   frequent bigrams, so each of its occurrences lies inside one kept run; its left neighbour is
   dropped only when the pair (left, first word) fails the test, and then no left extension of it
   can be frequent either.
   Positions are renumbered, which the miner never looks at (coverage re-reads the texts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from corpus_miner.corpus import TokenIdAssigner
from corpus_miner.io.strings import StringList
from corpus_miner.phrases.distributed.word_table import WordIndex

BREAK = np.uint32(0xFFFFFFFF)
"""Token of every word below sigma documents and the separator of kept runs."""


@dataclass(frozen=True)
class TokenBatch:
    """Whole documents: tokens[doc_offsets[d]:doc_offsets[d + 1]] is document d."""

    tokens: np.ndarray
    doc_offsets: np.ndarray

    @property
    def n_docs(self) -> int:
        return len(self.doc_offsets) - 1


@dataclass(frozen=True)
class LocalBatch:
    """A tokenized text batch: ids local to it, its vocabulary and each word's document count
    (None in a stored batch: stages.local_from_blob)."""

    batch: TokenBatch
    vocab: StringList
    word_df: np.ndarray | None


def texts_without_nulls(texts: pa.Array) -> pa.Array:
    """Null texts are empty documents, as in the local engine's readers."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    return pc.fill_null(texts, "") if texts.null_count else texts


@njit(cache=True, nogil=True)
def word_doc_counts(tokens, doc_offsets, n_vocab):
    """Per word id: number of documents containing it (last-seen-document trick)."""
    count = np.zeros(n_vocab, dtype=np.int64)
    last_doc = np.full(n_vocab, -1, dtype=np.int64)
    for d in range(len(doc_offsets) - 1):
        for i in range(doc_offsets[d], doc_offsets[d + 1]):
            t = tokens[i]
            if last_doc[t] != d:
                last_doc[t] = d
                count[t] += 1
    return count


def tokenize_batch(texts: pa.Array) -> LocalBatch:
    """Tokens of a string array (one document per element) with batch-local ids."""
    assigner = TokenIdAssigner()
    assigner.add_texts(texts_without_nulls(texts))
    tokens, doc_offsets, vocab = assigner.finish()
    return LocalBatch(TokenBatch(tokens, doc_offsets), vocab,
                      word_doc_counts(tokens, doc_offsets, len(vocab)))


def frequent_vocabulary(words: pa.Array, df: np.ndarray, sigma: int) -> StringList:
    """The words in >= sigma documents, sorted by UTF-8 bytes (= code points): index = global id."""
    keep = np.flatnonzero(np.asarray(df) >= sigma)
    chosen = words.take(pa.array(keep, pa.int64())) if len(keep) else pa.array([], pa.string())
    chosen = chosen.cast(pa.large_string())
    return StringList.from_arrow([pc.take(chosen, pc.sort_indices(chosen))])


@njit(cache=True, nogil=True)
def _gather(ids, tokens):
    """ids[tokens] (numpy's gather first widens the uint16/uint32 indices to a new int64 array,
    then reads: 7 ns a token instead of 1)."""
    out = np.empty(len(tokens), dtype=np.uint32)
    for i in range(len(tokens)):
        out[i] = ids[tokens[i]]
    return out


def global_batch(local: LocalBatch, index: WordIndex, hashes: np.ndarray | None = None
                 ) -> TokenBatch:
    """The batch with global ids (BREAK for words below sigma documents), uncompacted; hashes:
    word_table.word_hashes of its vocabulary, when the caller has them."""
    return TokenBatch(_gather(index.ids(local.vocab, hashes), local.batch.tokens),
                      local.batch.doc_offsets)


@njit(cache=True, nogil=True)
def compact_runs(tokens, doc_offsets, pair_ok, min_length):
    """Keep, per document, the maximal runs of positions joined by pairs with pair_ok[i] (pair
    i, i + 1) that hold >= min_length tokens; runs are separated by one BREAK. Returns (tokens,
    doc_offsets) of the compacted batch."""
    # a kept run of >= min_length >= 2 tokens adds at most one separator
    out = np.empty(len(tokens) + len(tokens) // 2 + 1, dtype=np.uint32)
    offsets = np.zeros(len(doc_offsets), dtype=np.int64)
    n = 0
    for d in range(len(doc_offsets) - 1):
        a = doc_offsets[d]
        b = doc_offsets[d + 1]
        doc_start = n
        i = a
        while i < b:
            j = i
            while j + 1 < b and pair_ok[j]:
                j += 1
            if j + 1 - i >= min_length:  # run [i, j]
                if n > doc_start:
                    out[n] = 0xFFFFFFFF
                    n += 1
                for k in range(i, j + 1):
                    out[n] = tokens[k]
                    n += 1
            i = j + 1
        offsets[d + 1] = n
    return out[:n].copy(), offsets
