"""Templates into cleaning: the handled-token mask (the exact phrases' coverage, or nothing, plus
every occurrence span of every applied pattern: anchors and fillers) and, in annotate mode, the
pattern each handled run is on the account of (`junk_patterns`: [start, end, pattern] character
spans; a template's own pattern for its spans and its absorbed variants', a phrase's text for
tokens inside a full occurrence of a phrase, the run's text for the rest).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator

import numpy as np

from corpus_miner.coverage.clean import Cleaner
from corpus_miner.templates.matching import TemplateOccurrences
from corpus_miner.templates.select import _span_indices

_NONE = np.iinfo(np.int32).max


def template_mask(n_tokens: int, occ: TemplateOccurrences) -> np.ndarray:
    """uint8 per token: 1 inside an occurrence span."""
    mask = np.zeros(n_tokens, dtype=np.uint8)
    if len(occ):
        mask[_span_indices(occ.start, occ.end)] = 1
    return mask


def handled_mask(n_tokens: int, occ: TemplateOccurrences, coverage=None) -> np.ndarray:
    """The template spans, or'ed with the coverage mask of the exact phrases when given."""
    mask = template_mask(n_tokens, occ)
    if coverage is not None:
        mask |= coverage.covered
    return mask


def token_labels(n_tokens: int, occ: TemplateOccurrences, roots: list[int], names: list[str],
                 coverage=None) -> tuple[np.ndarray, list[str]]:
    """(int32 per token: index into the returned names, _NONE where no pattern holds it).
    roots: the row of each pattern of occ; names: the pattern text of each row.
    Templates come first (in their order), then phrases (canonical order); the first wins."""
    label = np.full(n_tokens, _NONE, dtype=np.int32)
    all_names = list(names)
    if coverage is not None and len(coverage.phrases):
        table, p_occ = coverage.phrases, coverage.occurrences
        lengths = table.lengths[p_occ.phrase]
        index = np.repeat(p_occ.start, lengths) + _within(lengths)
        np.minimum.at(label, index, np.repeat(p_occ.phrase + len(names), lengths).astype(
            np.int32))
        all_names += [table.text(i) for i in range(len(table))]
    if len(occ):
        lengths = occ.end - occ.start
        index = np.repeat(occ.start, lengths) + _within(lengths)
        root = np.asarray(roots, dtype=np.int32)[occ.template]
        np.minimum.at(label, index, np.repeat(root, lengths))
    return label, all_names


def _within(lengths: np.ndarray) -> np.ndarray:
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    return np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(starts, lengths)


class TemplateCleaner(Cleaner):
    """A Cleaner that, in annotate mode, also writes junk_patterns (module docstring); call
    `set_labels` after fit."""

    def set_labels(self, label: np.ndarray, names: list[str]) -> TemplateCleaner:
        self.label_ = label
        self.label_names_ = names
        return self

    def transform(self, batches: Iterable, text_field: str = "text") -> Iterator:
        if self.params_.mode != "annotate" or not hasattr(self, "label_"):
            yield from super().transform(batches, text_field)
            return
        import pyarrow as pa

        sizes: deque = deque()

        def counted():
            for batch in batches:
                sizes.append(batch.records.num_rows)
                yield batch

        doc = 0
        for table in super().transform(counted(), text_field):
            n = sizes.popleft()
            kept = np.flatnonzero(~self.dropped_[doc:doc + n] | self.not_text_[doc:doc + n])
            texts = table.column(text_field).to_pylist() if text_field in table.schema.names \
                else [None] * table.num_rows
            patterns = [self._patterns(doc + int(k), text)
                        for k, text in zip(kept.tolist(), texts)]
            column = pa.array(patterns, type=pa.list_(pa.list_(pa.string())))
            if "junk_patterns" in table.schema.names:
                table = table.remove_column(table.schema.get_field_index("junk_patterns"))
            yield table.append_column("junk_patterns", column)
            doc += n

    def _patterns(self, doc: int, text) -> list | None:
        """[[start, end, pattern]] of one document (numbers as strings: one Arrow type)."""
        if not isinstance(text, str):
            return None
        from corpus_miner.corpus import token_spans

        lo, hi = int(self.doc_offsets_[doc]), int(self.doc_offsets_[doc + 1])
        mask = self.mask_[lo:hi]
        if not mask.any():
            return []
        starts, ends = token_spans(text)
        label = self.label_[lo:hi]
        on = mask.astype(bool)
        begin = on.copy()
        begin[1:] &= ~on[:-1] | (label[1:] != label[:-1])
        finish = on.copy()
        finish[:-1] &= ~on[1:] | (label[1:] != label[:-1])
        out = []
        for k, j in zip(np.flatnonzero(begin).tolist(), np.flatnonzero(finish).tolist()):
            s, e = int(starts[k]), int(ends[j])
            name = (self.label_names_[label[k]] if label[k] != _NONE
                    else " ".join(text[s:e].split()))
            out.append([str(s), str(e), name])
        return out


def add_templates(cleaner: Cleaner, corpus, coverage, table, occ: TemplateOccurrences) -> None:
    """Add the template spans to a cleaner fitted on the exact phrases, with the same
    protections: no token of a full occurrence of an `allow` phrase, and with keep_first, no
    occurrence in the first document (input order) holding an occurrence of that template."""
    params = cleaner.params_
    rows = np.ones(len(occ), dtype=bool)
    if params.keep_first and len(occ):
        root = np.asarray(table.root, dtype=np.int64)[occ.template]
        first = np.full(len(table.rows), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, root, occ.doc)
        rows = occ.doc != first[root]
    kept = TemplateOccurrences(occ.template[rows], occ.doc[rows], occ.start[rows],
                               occ.end[rows], occ.anchor_starts[rows])
    spans = template_mask(len(cleaner.mask_), kept)
    if params.allow:
        from corpus_miner.corpus import tokenize
        from corpus_miner.coverage import kernels
        from corpus_miner.coverage.coverage import find_occurrences, phrases_from_texts

        allowed, _ = phrases_from_texts(params.allow, corpus.vocab, tokenize)
        found = find_occurrences(corpus, allowed)
        protected = kernels.mark_intervals(len(spans), found.start,
                                           allowed.lengths[found.phrase].astype(np.int64))
        spans &= protected ^ 1
    mask = np.bitwise_or(cleaner.mask_, spans)
    covered = cleaner.tokens_covered_ + int((spans & (cleaner.mask_ ^ 1)).sum())
    label, names = token_labels(len(mask), kept, list(table.root),
                                [row["pattern"] for row in table.rows], coverage)
    cleaner.fit_mask(mask, cleaner.doc_offsets_, cleaner.doc_ids_, covered)
    if isinstance(cleaner, TemplateCleaner):
        cleaner.set_labels(label, names)
