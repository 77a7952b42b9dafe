"""Parameters of template mining, in one frozen dataclass validated at construction."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from corpus_miner.errors import ParameterError


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclass(frozen=True)
class TemplateParams:
    """sigma: a template occurs in at least sigma documents (>= 2).
    typed_min_length: shortest repeated run of the masked stream that seeds a template (>= 2).
    max_gap: longest free slot, in tokens (1 to 64).
    min_anchor_tokens: fewest literal (not typed) tokens in a template's anchors (>= 1).
    max_top_share: a slot is a constant when one filler fills more than this share of the
        occurrences (0.5 to 1).
    min_lift: an anchor token added across a free slot must follow (or precede) the template that
        many times more often than its corpus frequency predicts (>= 1).
    min_confidence: ... and in at least this share of the template's occurrences (0 to 1].
    max_anchors: most anchors per template (1 to 8).
    max_templates: most templates reported (>= 1).
    min_line_share: with line boundaries, a template is a whole line in at least this
        share of its occurrences (0 to 1; 0: no line test). Boilerplate with slots is laid out
        as lines of its own; the same words inside running text are language.
    max_per_doc: a template has at most this many occurrences per document that holds one, on
        average (>= 1). Boilerplate is laid out once per page (a byline, a counter, a copyright
        line); a pattern that repeats through the body of pages is a convention of the content
        ("New in version 3.11", traceback lines).
    min_count_share: a template occurs the same number of times (its commonest count) in at
        least this share of the documents that hold one (0 to 1; 0: no test). A page layout
        places boilerplate a fixed number of times on every page (once, or a header and a
        footer copy); a convention of the content recurs as often as the text needs it."""

    sigma: int = 20
    typed_min_length: int = 3
    max_gap: int = 5
    min_anchor_tokens: int = 2
    max_top_share: float = 0.9
    min_lift: float = 10.0
    min_confidence: float = 0.25
    max_anchors: int = 3
    max_templates: int = 10000
    min_line_share: float = 0.5
    max_per_doc: float = 2.0
    min_count_share: float = 0.9

    def __post_init__(self) -> None:
        checks = (
            ("sigma", _is_int(self.sigma) and self.sigma >= 2, "an integer >= 2"),
            ("typed_min_length", _is_int(self.typed_min_length) and self.typed_min_length >= 2,
             "an integer >= 2"),
            ("max_gap", _is_int(self.max_gap) and 1 <= self.max_gap <= 64,
             "an integer from 1 to 64"),
            ("min_anchor_tokens", _is_int(self.min_anchor_tokens) and self.min_anchor_tokens >= 1,
             "an integer >= 1"),
            ("max_top_share", isinstance(self.max_top_share, numbers.Real)
             and 0.5 <= self.max_top_share <= 1.0, "a share from 0.5 to 1"),
            ("min_lift", isinstance(self.min_lift, numbers.Real) and self.min_lift >= 1.0,
             "a number >= 1"),
            ("min_confidence", isinstance(self.min_confidence, numbers.Real)
             and 0.0 < self.min_confidence <= 1.0, "a share in (0, 1]"),
            ("max_anchors", _is_int(self.max_anchors) and 1 <= self.max_anchors <= 8,
             "an integer from 1 to 8"),
            ("max_templates", _is_int(self.max_templates) and self.max_templates >= 1,
             "an integer >= 1"),
            ("min_line_share", isinstance(self.min_line_share, numbers.Real)
             and 0.0 <= self.min_line_share <= 1.0, "a share from 0 to 1"),
            ("max_per_doc", isinstance(self.max_per_doc, numbers.Real)
             and self.max_per_doc >= 1.0, "a number >= 1"),
            ("min_count_share", isinstance(self.min_count_share, numbers.Real)
             and 0.0 <= self.min_count_share <= 1.0, "a share from 0 to 1"),
        )
        for name, ok, what in checks:
            if not ok:
                raise ParameterError(f"{name}={getattr(self, name)!r}: must be {what}")
