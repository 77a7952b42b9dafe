"""Parameters of LSHBloom in one frozen dataclass, with their validation and mode aliases."""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass

from corpus_miner.errors import ParameterError

MODE_ALIASES = {
    "lshbloom": "lshbloom", "bloom": "lshbloom", "bloom_filter": "lshbloom",
    "minhash_lsh": "minhash_lsh", "banding": "minhash_lsh",
}
MODES = ("lshbloom", "minhash_lsh")
DEFAULT_FP_PROB = 1e-5  # per document, the LSHBloom paper's effective rate
MIN_FP_PROB = 1e-15  # one false removal in 10^15 documents; stricter only makes the filter huge
DEFAULT_CAPACITY = 1 << 16  # documents of a growing filter's first layer when none is given
SKETCHES = ("minhash", "oph")
SHINGLE_KINDS = ("char", "word")
DEFAULT_SKETCH = "oph"  # as accurate as classic MinHash and faster: docs/benchmarks/dedup.md


def canonical_mode(mode: str) -> str:
    try:
        return MODE_ALIASES[mode]
    except (KeyError, TypeError):
        raise ParameterError(f"mode must be one of {sorted(MODE_ALIASES)}, got {mode!r}") from None


def _check_optional_int(name: str, value, low: int, high: int | None = None) -> int | None:
    """None, or the value checked by _check_int."""
    return None if value is None else _check_int(name, value, low, high)


def _check_int(name: str, value, low: int, high: int | None = None) -> int:
    """The value as a Python int (numpy integers welcome: they come from parameter grids)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        upper = f" and <= {high}" if high is not None else ""
        raise ParameterError(f"{name} must be >= {low}{upper}, got {value}")
    return value


def _is_real(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Real)


@dataclass(frozen=True)
class LSHBloomParams:
    """Everything that determines signatures, band keys and the index (see LSHBloom)."""

    threshold: float = 0.85
    num_perm: int = 256
    mode: str = "lshbloom"
    num_bands: int | None = None
    fp_prob: float = DEFAULT_FP_PROB
    shingle_size: int = 5
    shingle_kind: str = "char"
    expected_items: int | None = None
    seed: int = 1
    max_shingles: int | None = None
    sketch: str = DEFAULT_SKETCH

    def validated(self) -> LSHBloomParams:
        """A copy with the mode alias resolved; ParameterError naming the first bad parameter."""
        if not _is_real(self.threshold) or not 0.0 < self.threshold < 1.0 \
                or math.isnan(self.threshold):
            raise ParameterError(f"threshold must be a number in (0, 1), got {self.threshold!r}")
        num_perm = _check_int("num_perm", self.num_perm, 1, 1 << 16)
        num_bands = _check_optional_int("num_bands", self.num_bands, 1, num_perm)
        if not _is_real(self.fp_prob) or not MIN_FP_PROB <= self.fp_prob < 1.0:
            raise ParameterError(f"fp_prob (per document) must be in [{MIN_FP_PROB:g}, 1), got "
                                 f"{self.fp_prob!r}")
        shingle_size = _check_int("shingle_size", self.shingle_size, 1)
        if self.shingle_kind not in SHINGLE_KINDS:
            raise ParameterError(f"shingle_kind must be one of {SHINGLE_KINDS}, "
                                 f"got {self.shingle_kind!r}")
        expected_items = _check_optional_int("expected_items", self.expected_items, 1)
        seed = _check_int("seed", self.seed, 0, (1 << 63) - 1)
        max_shingles = _check_optional_int("max_shingles", self.max_shingles, 1)
        if self.sketch not in SKETCHES:
            raise ParameterError(f"sketch must be one of {SKETCHES}, got {self.sketch!r}")
        # plain Python numbers from here on: they go into metadata.json and hashing seeds
        return dataclasses.replace(
            self, mode=canonical_mode(self.mode), threshold=float(self.threshold),
            fp_prob=float(self.fp_prob), num_perm=num_perm, num_bands=num_bands,
            shingle_size=shingle_size, expected_items=expected_items, seed=seed,
            max_shingles=max_shingles)

    @property
    def bands_rows(self) -> tuple[int, int]:
        """(bands, rows) actually used: explicit num_bands, else the FP/FN-optimal choice."""
        from corpus_miner.dedup.banding import bands_for  # the kernels' module: imported on use

        return bands_for(self.num_perm, self.threshold, self.num_bands)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> LSHBloomParams:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ParameterError(f"unknown LSHBloom parameters {unknown}")
        return cls(**values).validated()

    def signature_fields(self) -> dict:
        """The parameters that determine band keys (must match to query or merge indexes)."""
        bands, rows = self.bands_rows
        return {"num_perm": self.num_perm, "shingle_size": self.shingle_size,
                "shingle_kind": self.shingle_kind, "seed": self.seed,
                "max_shingles": self.max_shingles, "sketch": self.sketch,
                "bands": bands, "rows": rows}


def refuse_other_params(wanted: dict, saved: dict, where: str, made: str, hint: str) -> None:
    """ParameterError when the parameters `saved` with an index or signatures (`made`: "the
    saved index was built", "the signatures were made") differ from `wanted` in anything but
    expected_items (which only sizes a new filter), naming each saved value."""
    differ = sorted(k for k in wanted if k != "expected_items" and wanted[k] != saved.get(k))
    if differ:
        raise ParameterError(f"{where}: {made} with "
                             + ", ".join(f"{k}={saved.get(k)!r}" for k in differ) + f"; {hint}")
