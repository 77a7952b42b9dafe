"""`SlotTemplates`: templates with slots, the estimator (the house convention: __init__ stores,
fit validates, learns and returns self; learned state ends in `_`).

    >>> found = SlotTemplates(sigma=20).fit(corpus)            # doctest: +SKIP
    >>> found.templates_.rows[0]["pattern"]                     # doctest: +SKIP
    'updated on <month> <num> <num> by'

fit: mask the corpus (masking), seed candidates from the masked stream's frequent phrases,
extend them across free slots (candidates), verify every candidate exactly (matching.bind),
keep the valid ones and absorb variants (select), then describe each template (slots, examples,
subsumed phrases: result).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from corpus_miner.errors import InputError
from corpus_miner.estimator import Estimator
from corpus_miner.memory import PeakRss
from corpus_miner.phrases.stage_timer import StageTimer
from corpus_miner.templates import candidates, select
from corpus_miner.templates import lines as line_forms
from corpus_miner.templates.masking import MaskedVocab, mask_tokens, slot_classes
from corpus_miner.templates.matching import TemplateOccurrences, bind
from corpus_miner.templates.params import TemplateParams
from corpus_miner.templates.pattern import Pattern
from corpus_miner.templates.result import TemplateTable, describe


def masked_corpus(corpus) -> tuple[np.ndarray, MaskedVocab]:
    """(masked stream, its vocabulary) of a TokenCorpus."""
    vocab = MaskedVocab(corpus.vocab)
    return mask_tokens(np.asarray(corpus.tokens), slot_classes(corpus.vocab)), vocab


def _merge(parts: list[TemplateOccurrences], width: int) -> TemplateOccurrences:
    def widen(a: np.ndarray) -> np.ndarray:
        if a.shape[1] == width:
            return a
        out = np.full((a.shape[0], width), -1, dtype=np.int64)
        out[:, :a.shape[1]] = a
        return out

    template, doc, start, end = (np.concatenate([getattr(p, f) for p in parts])
                                 for f in ("template", "doc", "start", "end"))
    return TemplateOccurrences(template, doc, start, end,
                               np.concatenate([widen(p.anchor_starts) for p in parts]))


def _offset(occ: TemplateOccurrences, by: int) -> TemplateOccurrences:
    return TemplateOccurrences(occ.template + by, occ.doc, occ.start, occ.end, occ.anchor_starts)


class SlotTemplates(Estimator):
    """Templates with slots: anchors with typed slots (numbers, month names) and free slots of 1
    to max_gap tokens between them, each in at least sigma documents, every slot varying
    (definition: docs/how-it-works/templates.md).

    Parameters
    ----------
    sigma, typed_min_length, max_gap, min_anchor_tokens, max_top_share, min_lift,
    min_confidence, max_anchors, max_templates, min_line_share, max_per_doc,
    min_count_share
        See TemplateParams (validated by fit).
    progress : callable, optional
        Called with the name of each stage as it starts.

    Attributes
    ----------
    templates_ : TemplateTable
        rows (one dict per template, the JSONL fields), patterns (every pattern applied: the
        templates and the variants they absorbed) and root (the row of each pattern).
    occurrences_ : TemplateOccurrences
        Every occurrence of templates_.patterns, sorted by (pattern, start).
    stats_ : dict
        Counts, seconds per stage and peak RSS.

    Raises
    ------
    ParameterError
        From fit, on a parameter out of range.
    InputError
        From fit, when given something that is not a TokenCorpus.

    Examples
    --------
    >>> from corpus_miner.corpus import load_corpus              # doctest: +SKIP
    >>> found = SlotTemplates(sigma=20).fit(load_corpus("pages.jsonl"))  # doctest: +SKIP
    >>> found.templates_.rows[0]["pattern"]                      # doctest: +SKIP
    'updated on <month> <num> <num> by'
    """

    _fit_hint = "fit(corpus)"

    def __init__(self, sigma: int = 20, typed_min_length: int = 3, max_gap: int = 5,
                 min_anchor_tokens: int = 2, max_top_share: float = 0.9,
                 min_lift: float = 10.0, min_confidence: float = 0.25, max_anchors: int = 3,
                 max_templates: int = 10000, min_line_share: float = 0.5,
                 max_per_doc: float = 2.0, min_count_share: float = 0.9,
                 progress: Callable[[str], None] | None = None) -> None:
        self.sigma = sigma
        self.typed_min_length = typed_min_length
        self.max_gap = max_gap
        self.min_anchor_tokens = min_anchor_tokens
        self.max_top_share = max_top_share
        self.min_lift = min_lift
        self.min_confidence = min_confidence
        self.max_anchors = max_anchors
        self.max_templates = max_templates
        self.min_line_share = min_line_share
        self.max_per_doc = max_per_doc
        self.min_count_share = min_count_share
        self.progress = progress

    @property
    def params(self) -> TemplateParams:
        return TemplateParams(self.sigma, self.typed_min_length, self.max_gap,
                              self.min_anchor_tokens, self.max_top_share, self.min_lift,
                              self.min_confidence, self.max_anchors, self.max_templates,
                              self.min_line_share, self.max_per_doc, self.min_count_share)

    def fit(self, corpus, phrases=None) -> SlotTemplates:
        """Mine the templates of `corpus` (a TokenCorpus). phrases: an optional Coverage of the
        same corpus (exact phrases) whose phrases are listed in `subsumes` where they lie
        inside a template's occurrences."""
        params = self.params
        missing = [n for n in ("tokens", "doc_offsets", "vocab", "doc_ids")
                   if not hasattr(corpus, n)]
        if missing:
            raise InputError(f"fit() needs a TokenCorpus; got {type(corpus).__name__} without "
                             f"{', '.join(missing)}")
        self._forget_fitted()
        timer, rss = StageTimer(self.progress), PeakRss()
        doc_offsets = np.ascontiguousarray(corpus.doc_offsets, dtype=np.int64)
        timer.start("templates_mask")
        masked, vocab = masked_corpus(corpus)
        timer.start("templates_seeds")
        patterns, stats = candidates.typed_seeds(masked, doc_offsets, vocab, params)
        timer.start("templates_verify")
        line_starts = getattr(corpus, "line_starts", None)
        occ = bind(patterns, masked, doc_offsets, vocab, line_starts)
        keep = candidates.prune_trims(patterns, select.support(occ, len(patterns))[1])
        patterns = [p for p, k in zip(patterns, keep) if k]
        occ = _subset(occ, np.flatnonzero(keep))
        stats["seeds"] = len(patterns)
        merges = candidates.slot_merges(patterns, vocab.n_vocab, params.max_gap)
        if merges:
            occ_new = bind(merges, masked, doc_offsets, vocab, line_starts)
            width = max(occ.anchor_starts.shape[1], occ_new.anchor_starts.shape[1])
            occ = _merge([occ, _offset(occ_new, len(patterns))], width)
            patterns = patterns + merges
        stats["merges"] = len(merges)
        share = np.bincount(masked, minlength=len(vocab)) / max(1, len(masked))
        seen = set(patterns)
        fresh = np.ones(len(patterns), dtype=bool)
        for _ in range(params.max_anchors - 1):
            df, _n = select.support(occ, len(patterns))
            allowed = fresh & (df >= params.sigma) & np.array(
                [len(p.pieces) < params.max_anchors for p in patterns], dtype=bool)
            new = [p for p in candidates.extensions(patterns, occ, masked, doc_offsets, share,
                                                    params, allowed) if p not in seen]
            if not new:
                break
            seen.update(new)
            occ_new = bind(new, masked, doc_offsets, vocab, line_starts)
            width = max(occ.anchor_starts.shape[1], occ_new.anchor_starts.shape[1])
            occ = _merge([occ, _offset(occ_new, len(patterns))], width)
            fresh = np.concatenate([np.zeros(len(patterns), bool), np.ones(len(new), bool)])
            patterns = patterns + new
        if line_starts is not None:
            df, _n = select.support(occ, len(patterns))
            new = [p for p in candidates.line_end_slots(patterns, occ, doc_offsets, line_starts,
                                                        params, df >= params.sigma)
                   if p not in seen]
            if new:
                occ_new = bind(new, masked, doc_offsets, vocab, line_starts)
                width = max(occ.anchor_starts.shape[1], occ_new.anchor_starts.shape[1])
                occ = _merge([occ, _offset(occ_new, len(patterns))], width)
                patterns = patterns + new
        timer.start("templates_lines")
        index = line_forms.line_index(corpus, params.max_gap)
        if index is not None:
            new = [Pattern((anchor,), params.max_gap, False, form)
                   for form, anchor in line_forms.candidates(
                       index, params.sigma, params.min_confidence,
                       np.asarray(corpus.paragraph_starts, dtype=np.int64))]
            stats["line_candidates"] = len(new)
            if new:
                occ_new = bind(new, masked, doc_offsets, vocab, line_starts, index)
                width = max(occ.anchor_starts.shape[1], occ_new.anchor_starts.shape[1])
                occ = _merge([occ, _offset(occ_new, len(patterns))], width)
                patterns = patterns + new
        timer.start("templates_select")
        self.templates_, self.occurrences_ = self._select(patterns, occ, corpus, masked, vocab,
                                                          params, phrases)
        stats.update({"candidates": len(patterns), "templates": len(self.templates_),
                      "patterns_applied": len(self.templates_.patterns),
                      "tokens": int(len(masked)), "documents": len(doc_offsets) - 1})
        stats.update(timer.totals())
        stats.update(rss.report())
        self.stats_ = stats
        return self

    @staticmethod
    def _select(patterns: list[Pattern], occ: TemplateOccurrences, corpus, masked, vocab,
                params: TemplateParams, phrases) -> tuple[TemplateTable, TemplateOccurrences]:
        n_tokens = len(masked)
        df, n_occ = select.support(occ, len(patterns))
        literal = np.array([p.literal_tokens(vocab.n_vocab) for p in patterns], dtype=np.int64)
        # a line form's evidence is its filler of known lines: one literal anchor token is enough
        need = np.array([1 if p.form else params.min_anchor_tokens for p in patterns],
                        dtype=np.int64)
        valid = ((df >= params.sigma) & (literal >= need)
                 & (n_occ <= params.max_per_doc * np.maximum(df, 1))
                 & (select.count_share(occ, len(patterns)) >= params.min_count_share))
        line_starts = getattr(corpus, "line_starts", None)
        if line_starts is not None and params.min_line_share > 0:
            valid &= select.line_share(occ, len(patterns), line_starts,
                                       np.asarray(corpus.doc_offsets)) >= params.min_line_share
        valid[valid] = select.slots_vary([patterns[i] for i in np.flatnonzero(valid)],
                                         _subset(occ, np.flatnonzero(valid)),
                                         np.asarray(corpus.tokens), vocab.n_vocab,
                                         params.max_top_share)
        covered = select.tokens_covered(occ, len(patterns), n_tokens)
        texts = [p.text(vocab) for p in patterns]
        anchor = np.array([p.n_anchor_tokens for p in patterns], dtype=np.int64)
        idx = np.flatnonzero(valid)
        text_rank = np.empty(len(idx), dtype=np.int64)
        text_rank[sorted(range(len(idx)), key=lambda i: texts[idx[i]])] = np.arange(len(idx))
        order = idx[np.lexsort((text_rank, -anchor[idx], -covered[idx]))]
        root, label = select.absorb(order, occ, n_tokens, params.max_top_share,
                                    params.max_templates)
        applied = [int(t) for t in order if root[t] >= 0]
        roots = [t for t in applied if root[t] == t]
        table = describe(corpus, patterns, texts, occ, root, label, roots, applied, df, n_occ,
                         vocab, phrases)
        # the occurrences of the applied patterns, renumbered as in table.patterns
        new_index = np.full(len(patterns), -1, dtype=np.int64)
        new_index[applied] = np.arange(len(applied))
        keep = np.flatnonzero(new_index[occ.template] >= 0)
        sub = TemplateOccurrences(new_index[occ.template[keep]], occ.doc[keep], occ.start[keep],
                                  occ.end[keep], occ.anchor_starts[keep])
        order_rows = np.lexsort((sub.start, sub.template))
        return table, TemplateOccurrences(*(getattr(sub, f)[order_rows] for f in
                                            ("template", "doc", "start", "end",
                                             "anchor_starts")))


def _subset(occ: TemplateOccurrences, chosen: np.ndarray) -> TemplateOccurrences:
    """The rows of the chosen patterns, renumbered 0..len(chosen)-1 (sorted by template)."""
    new_index = np.full(max(int(occ.template.max(initial=-1)), int(chosen.max(initial=-1))) + 1,
                        -1, dtype=np.int64)
    new_index[chosen] = np.arange(len(chosen))
    keep = np.flatnonzero(new_index[occ.template] >= 0) if len(occ) else np.empty(0, np.int64)
    t = new_index[occ.template[keep]]
    order = np.lexsort((occ.start[keep], t))
    keep = keep[order]
    return TemplateOccurrences(t[order], occ.doc[keep], occ.start[keep], occ.end[keep],
                               occ.anchor_starts[keep])


def apply_patterns(corpus, patterns: list[Pattern], root: list[int]) -> TemplateOccurrences:
    """Occurrences of listed patterns (a templates file) in `corpus`, sorted by template."""
    masked, vocab = masked_corpus(corpus)
    index = (line_forms.line_index(corpus, max(p.max_gap for p in patterns))
             if any(p.form for p in patterns) else None)
    occ = bind(patterns, masked, np.ascontiguousarray(corpus.doc_offsets, dtype=np.int64), vocab,
               getattr(corpus, "line_starts", None), index)
    order = np.lexsort((occ.start, occ.template))
    return TemplateOccurrences(*(getattr(occ, f)[order] for f in
                                 ("template", "doc", "start", "end", "anchor_starts")))
