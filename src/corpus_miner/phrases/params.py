"""Parameters of phrase mining, in one frozen dataclass validated at construction."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from corpus_miner.errors import ParameterError

ALGORITHMS = ("auto", "bloomspan", "fhk")
MIN_FILTER_BYTES = 64
MAX_FILTER_BYTES = 1 << 32  # counters are addressed by a 32-bit multiply-shift
MAX_HASHES = 8
DEFAULT_NUM_HASHES = 1  # one counter per window; see default_filter_bytes for sizing
MAX_COUNT = 2**62  # sigma and min_length: kernels add positions to them in int64
# `report` and `clean` mine whole-line phrases of this many tokens or more unless told otherwise
# (docs/benchmarks/cleaning-quality.md has the figures that chose it); `phrases` and BloomSpan
# mine none unless asked: their answer stays the BloomSpan article's.
CLEAN_MIN_LINE_LENGTH = 2
# and edge phrases of this many tokens or more (the same page: 4 finds no more of the planted
# glued snippets, 1 finds more but also takes paragraph-opening words such as "Note")
CLEAN_MIN_EDGE_LENGTH = 5


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclass(frozen=True)
class PhraseParams:
    """sigma: minimum number of documents a phrase must occur in (>= 2).
    min_length: minimum phrase length in tokens (>= 2).
    algorithm: "bloomspan" (filtered seeds + growth), "fhk" (exact suffix-array baseline) or
        "auto" (one of the two, chosen from the data: see phrases/auto.py).
    filter_bytes: size of the window counting filter (bloomspan only); None = sized from the
        corpus (see bloomspan.default_filter_bytes). Any size gives the exact answer: a smaller
        filter only lets more false-positive windows through to the exact seed step.
    num_hashes: counters per bigram in the filter (1 = the article's single row).
    min_line_length: also find whole-line phrases (phrases/lines.py): lines of at least this
        many tokens (and fewer than min_length) that are a whole line in >= sigma documents
        (>= 1); None: none (the maximal phrases alone, as the BloomSpan article defines them).
    min_edge_length: also find edge phrases (phrases/edges.py): sequences of at least this many
        tokens (and fewer than min_length) glued at a sentence break to the start or the end of
        a paragraph in >= sigma documents (>= 1); None: none."""

    sigma: int = 20
    min_length: int = 10
    algorithm: str = "auto"
    filter_bytes: int | None = None
    num_hashes: int = DEFAULT_NUM_HASHES
    min_line_length: int | None = None
    min_edge_length: int | None = None

    def __post_init__(self) -> None:
        if not _is_int(self.sigma) or not 2 <= self.sigma <= MAX_COUNT:
            raise ParameterError(f"sigma={self.sigma!r}: the minimum number of documents must be "
                                 "an integer from 2 (a phrase in one document is not a repeat "
                                 "across documents) to 2^62")
        if not _is_int(self.min_length) or not 2 <= self.min_length <= MAX_COUNT:
            raise ParameterError(f"min_length={self.min_length!r}: the minimum phrase length must "
                                 "be an integer from 2 to 2^62 tokens")
        if self.algorithm not in ALGORITHMS:
            raise ParameterError(f"algorithm={self.algorithm!r}: choose one of "
                                 f"{', '.join(ALGORITHMS)}")
        if self.filter_bytes is not None and (
                not _is_int(self.filter_bytes)
                or not MIN_FILTER_BYTES <= self.filter_bytes <= MAX_FILTER_BYTES):
            raise ParameterError(f"filter_bytes={self.filter_bytes!r}: the counting filter size "
                                 f"must be an integer between {MIN_FILTER_BYTES} and "
                                 f"{MAX_FILTER_BYTES} (4 GiB), or None to size it from the corpus")
        if not _is_int(self.num_hashes) or not 1 <= self.num_hashes <= MAX_HASHES:
            raise ParameterError(f"num_hashes={self.num_hashes!r}: use an integer from 1 to "
                                 f"{MAX_HASHES}")
        if self.min_line_length is not None and (
                not _is_int(self.min_line_length) or not 1 <= self.min_line_length <= MAX_COUNT):
            raise ParameterError(f"min_line_length={self.min_line_length!r}: the minimum length "
                                 "of a whole-line phrase must be an integer from 1 to 2^62 tokens "
                                 "(or None for no whole-line phrases)")
        if self.min_edge_length is not None and (
                not _is_int(self.min_edge_length) or not 1 <= self.min_edge_length <= MAX_COUNT):
            raise ParameterError(f"min_edge_length={self.min_edge_length!r}: the minimum length "
                                 "of an edge phrase must be an integer from 1 to 2^62 tokens "
                                 "(or None for no edge phrases)")
        if self.algorithm == "fhk" and self.filter_bytes is not None:
            raise ParameterError("filter_bytes only applies to algorithm='bloomspan' (or 'auto' "
                                 "when it picks bloomspan); drop it for 'fhk'")
        # normalise numpy integers so that stats and JSON see plain ints
        for name in ("sigma", "min_length", "num_hashes"):
            object.__setattr__(self, name, int(getattr(self, name)))
        if self.filter_bytes is not None:
            object.__setattr__(self, "filter_bytes", int(self.filter_bytes))
        for name in ("min_line_length", "min_edge_length"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, int(getattr(self, name)))
