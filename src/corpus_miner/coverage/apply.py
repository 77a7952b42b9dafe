"""A mined phrase table applied to documents: per-document coverage rows, the report and the
cleaned documents, from any documents `corpus_miner.sources` accepts. The local `BloomSpan`'s
`coverage`, `report` and `clean` methods are these functions; the `report` and `clean` commands
assemble the same objects.

The phrases may have been mined on other documents than the ones they are applied to: the
table's token ids are then mapped into the vocabulary of the documents at hand (a word those
documents never have gets an id no token has, so it matches nowhere), which gives exactly the
coverage that the texts of the phrases define.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pyarrow as pa

from corpus_miner.coverage.batches import BatchCoverage, junk_spans
from corpus_miner.coverage.clean import DEFAULT_MASK, Cleaner
from corpus_miner.coverage.coverage import Coverage
from corpus_miner.coverage.report import CoverageReport
from corpus_miner.errors import ParameterError
from corpus_miner.io.strings import StringList
from corpus_miner.phrases.result import PhraseTable
from corpus_miner.sources import Documents

SPANS = pa.list_(pa.list_(pa.int64()))


def in_vocabulary(table: PhraseTable, vocab: Sequence[str]) -> PhraseTable:
    """`table` with token ids of `vocab` (the module docstring says why and how)."""
    used = np.unique(table.tokens)
    if len(used) == 0 or (int(used[-1]) < len(vocab) and all(
            vocab[int(t)] == table.vocab[int(t)] for t in used)):
        return replace(table, vocab=vocab)
    index = {word: i for i, word in enumerate(vocab)}
    missing: dict[str, int] = {}
    new_id = np.empty(int(used[-1]) + 1, dtype=np.uint32)
    for t in used.tolist():
        word = table.vocab[t]
        if word not in index and word not in missing:
            missing[word] = len(vocab) + len(missing)
        new_id[t] = index.get(word, missing.get(word, 0))
    words = list(vocab) + list(missing)
    new_vocab = StringList.from_strings(words) if isinstance(vocab, StringList) else words
    return replace(table, tokens=new_id[table.tokens], vocab=new_vocab)


def coverage_of(table: PhraseTable, min_length: int, sigma: int | None, corpus,
                min_line_length: int | None = None,
                min_edge_length: int | None = None) -> Coverage:
    """The exact Coverage of `corpus` by the maximal phrases of a mining run at
    (sigma, min_length), and its whole-line and edge phrases (min_line_length,
    min_edge_length: the run's)."""
    return Coverage.from_phrases(corpus, in_vocabulary(table, corpus.vocab), min_length, sigma,
                                 min_line_length=min_line_length,
                                 min_edge_length=min_edge_length)


def _token_corpus(table: PhraseTable, docs: Documents):
    """The documents' TokenCorpus, with the sentence starts when `table` has edge phrases."""
    return docs.token_corpus(sentences=bool((table.edge_sides != 0).any()))


def coverage_rows(table: PhraseTable, min_length: int, docs: Documents) -> pa.Table:
    """Per document, in order: id, tokens, tokens_covered and junk_spans (the [start, end)
    character spans of its covered token runs); the rows SparkBloomSpan.coverage gives."""
    if table.line_anchored.any():  # BatchCoverage matches phrases anywhere, not by lines
        raise ParameterError("coverage() does not apply whole-line or edge phrases yet: "
                             "report() and clean(mode='annotate') do (or fit with "
                             "min_line_length=None, min_edge_length=None)")
    coverage = BatchCoverage(table, min_length)
    parts = []
    for batch in docs.batches():
        found = coverage.documents(batch.texts)
        spans = [junk_spans(text, runs)
                 for text, runs in zip(batch.texts.to_pylist(), found.runs, strict=True)]
        parts.append(pa.table({docs.id_col: batch.ids.cast(pa.string()),
                               "tokens": pa.array(found.tokens, pa.int64()),
                               "tokens_covered": pa.array(found.covered, pa.int64()),
                               "junk_spans": pa.array(spans, SPANS)}))
    if not parts:
        return pa.table({docs.id_col: pa.array([], pa.string()), "tokens": pa.array([], pa.int64()),
                         "tokens_covered": pa.array([], pa.int64()),
                         "junk_spans": pa.array([], SPANS)})
    return pa.concat_tables(parts)


def report_of(table: PhraseTable, min_length: int, sigma: int | None, docs: Documents, *,
              top: int = 25, examples: int = 3, template_share: float = 0.9,
              group_by: str | None = None, title: str = "Repeated text report",
              min_line_length: int | None = None,
              min_edge_length: int | None = None) -> CoverageReport:
    """The CoverageReport of the documents: figures from their tokens, then (when the texts
    can be read again) example contexts, template snippets and groups from their texts."""
    docs = docs.held()
    again = docs.rereadable
    if group_by and not again:
        raise ParameterError("group_by reads the documents' fields, which a TokenCorpus, a saved "
                             "corpus or stdin cannot give; pass the original documents")
    corpus = _token_corpus(table, docs)
    report = CoverageReport(coverage_of(table, min_length, sigma, corpus, min_line_length,
                                        min_edge_length),
                            top=top,
                            examples=examples, template_share=template_share, group_by=group_by,
                            title=title, inputs=[str(p) for p in docs.paths or ()])
    if again:
        report.collect(docs.batches(), corpus.doc_ids)
    return report


def cleaned(table: PhraseTable, min_length: int, sigma: int | None, docs: Documents, *,
            mode: str = "remove", mask_text: str | None = None, keep_first: bool = False,
            allow: Sequence[str] = (), drop_above: float | None = None, output=None,
            shards=None, min_line_length: int | None = None,
            min_edge_length: int | None = None) -> pa.Table | dict:
    """The documents with their covered text removed, masked or annotated (every field and
    record kept, in order): a Table, or with `output`, written there atomically and the
    cleaning figures returned (Cleaner.summary, documents_written, coverage, handled_share)."""
    if mask_text is not None and mode != "mask":
        raise ParameterError("mask_text only applies to mode='mask'")
    cleaner = Cleaner(mode, keep_first, allow, drop_above,
                      DEFAULT_MASK if mask_text is None else mask_text)
    cleaner.params.validate()  # before the (long) tokenization
    docs = docs.held()
    if not docs.rereadable:
        raise ParameterError("clean writes the documents' texts back, which a TokenCorpus, a "
                             "saved corpus or stdin cannot give (a second time); pass the "
                             "original documents")
    corpus = _token_corpus(table, docs)
    coverage = coverage_of(table, min_length, sigma, corpus, min_line_length, min_edge_length)
    cleaner.fit(corpus, coverage)
    if output is None:
        parts = list(cleaner.transform(docs.batches(), docs.text_col))
        return pa.concat_tables(parts) if parts else pa.table({docs.text_col: pa.array([],
                                                                                      pa.string())})
    if docs.kind == "paths":
        stats = cleaner.write(docs.paths, output, text_field=docs.text_col, id_field=docs.id_col,
                              skip_bad=docs.skip_bad, shards=shards)
    else:
        from corpus_miner.io.writers import write_records

        if shards is not None and shards.total_rows is None:
            shards = replace(shards, total_rows=len(cleaner.dropped_))
        rows = write_records(cleaner.transform(docs.batches(), docs.text_col), output,
                             shards=shards)
        stats = {**cleaner.summary(), "documents_written": int(rows)}
    stats["coverage"] = coverage.share
    stats["handled_share"] = stats["tokens_handled"] / stats["tokens"] if stats["tokens"] else 0.0
    return stats
