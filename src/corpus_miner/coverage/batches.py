"""Coverage of batches of texts by a mined phrase table: per document, without the whole corpus.

A token is covered when it lies inside an occurrence of a frequent min_length-gram, i.e. inside an
L-window of a maximal phrase (coverage.py explains why); whether a window occurs at a position
depends on the document alone, so any engine can compute coverage batch by batch (Spark calls this
per Arrow batch) and get exactly Coverage.from_phrases's mask. The phrase table holds ids of a
vocabulary (a StringList); texts are tokenized by the public tokenizer and their words looked up
in that vocabulary (every other word can be in no phrase).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from corpus_miner.coverage import kernels
from corpus_miner.coverage.clean import mask_runs, remove_runs, run_char_spans
from corpus_miner.coverage.coverage import Occurrences, PhraseTables
from corpus_miner.io.strings import StringList
from corpus_miner.phrases.distributed.encode import (
    WordIndex,
    global_batch,
    tokenize_batch,
)
from corpus_miner.phrases.result import PhraseTable


@dataclass(frozen=True)
class DocumentCoverage:
    """A batch's coverage: per document its tokens, covered tokens and covered runs ([first,
    end) token indices in the document); covered tokens attributed to each phrase; every full
    occurrence of every phrase (document index in the batch, global start in the batch)."""

    tokens: np.ndarray
    covered: np.ndarray
    runs: list[np.ndarray]
    tokens_by_phrase: np.ndarray
    occurrences: Occurrences
    doc_offsets: np.ndarray


class BatchCoverage:
    """The lookup tables of `table` (canonical order; ids of the StringList table.vocab), built
    once and applied batch by batch."""

    def __init__(self, table: PhraseTable, min_length: int) -> None:
        self.index = WordIndex(StringList.from_strings(table.vocab)
                               if not isinstance(table.vocab, StringList) else table.vocab)
        self.tables = PhraseTables(table, int(min_length))

    def documents(self, texts: pa.Array) -> DocumentCoverage:
        """Coverage of each text (a null text is an empty document)."""
        batch = global_batch(tokenize_batch(texts), self.index)
        offsets = batch.doc_offsets
        covered, by_phrase, occ = self.tables.mined(batch.tokens, offsets)
        per_doc = kernels.count_per_document(covered, offsets)
        runs = [kernels.covered_runs(covered, offsets[d], offsets[d + 1]) if per_doc[d] else
                np.zeros((0, 2), np.int64) for d in range(len(offsets) - 1)]
        return DocumentCoverage(np.diff(offsets), per_doc, runs, by_phrase, occ, offsets)


def junk_spans(text: str, runs: np.ndarray) -> list[list[int]]:
    """[start, end) character spans of the covered token runs of `text`."""
    if len(runs) == 0:
        return []
    from corpus_miner.corpus import token_spans

    starts, ends = token_spans(text)
    return run_char_spans(starts, ends, runs)


def cleaned_text(text: str, runs: np.ndarray, mode: str, mask_text: str) -> str:
    """`text` with its covered runs removed (mode "remove") or masked (mode "mask")."""
    if len(runs) == 0:
        return text
    from corpus_miner.corpus import token_spans

    starts, ends = token_spans(text)
    if mode == "remove":
        return remove_runs(text, starts, ends, runs)
    return mask_runs(text, starts, ends, runs, mask_text)
