"""LSH banding: choose (bands, rows) and turn signatures into 64-bit band keys.

Two documents with Jaccard similarity s share at least one band key with probability
P(s) = 1 - (1 - s^rows)^bands. `choose_bands` picks the (bands, rows), bands * rows <= num_perm,
minimising  fp_weight * FP + fn_weight * FN  where FP = integral_0^t P(s) ds (pairs below the
threshold t that collide) and FN = integral_t^1 (1 - P(s)) ds (pairs above it that do not), the rule
of datasketch's MinHashLSH, integrated here with a fixed Simpson grid (no scipy).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from corpus_miner._numba.hashing import splitmix64
from corpus_miner.errors import ParameterError

_GRID_POINTS = 1001  # odd: Simpson's rule


def _simpson(values: np.ndarray, low: float, high: float) -> float:
    n = len(values) - 1
    step = (high - low) / n
    weights = np.ones(n + 1)
    weights[1:-1:2] = 4.0
    weights[2:-1:2] = 2.0
    return float(step / 3.0 * weights @ values)


def collision_probability(similarity, bands: int, rows: int):
    """P(at least one shared band key) for documents of Jaccard similarity `similarity`."""
    return 1.0 - (1.0 - np.asarray(similarity, dtype=float) ** rows) ** bands


def banding_errors(threshold: float, bands: int, rows: int) -> tuple[float, float]:
    """(false positive area, false negative area) of a (bands, rows) choice at `threshold`."""
    low = np.linspace(0.0, threshold, _GRID_POINTS)
    high = np.linspace(threshold, 1.0, _GRID_POINTS)
    fp = _simpson(collision_probability(low, bands, rows), 0.0, threshold)
    fn = _simpson(1.0 - collision_probability(high, bands, rows), threshold, 1.0)
    return fp, fn


@functools.lru_cache(maxsize=256)  # ~0.2 s per call at num_perm=256; pure, so cache it
def choose_bands(threshold: float, num_perm: int, fp_weight: float = 0.5,
                 fn_weight: float = 0.5) -> tuple[int, int]:
    """(bands, rows) with bands * rows <= num_perm minimising the weighted FP + FN areas."""
    if not 0.0 < threshold < 1.0:
        raise ParameterError(f"threshold must be in (0, 1), got {threshold}")
    if num_perm < 1:
        raise ParameterError(f"num_perm must be >= 1, got {num_perm}")
    if fp_weight < 0 or fn_weight < 0 or fp_weight + fn_weight <= 0:
        raise ParameterError(f"fp_weight and fn_weight must be >= 0 and not both 0, got "
                             f"{fp_weight}, {fn_weight}")
    best, best_error = (1, num_perm), float("inf")
    for bands in range(1, num_perm + 1):
        for rows in range(1, num_perm // bands + 1):
            fp, fn = banding_errors(threshold, bands, rows)
            error = fp_weight * fp + fn_weight * fn
            if error < best_error - 1e-15:
                best, best_error = (bands, rows), error
    return best


def bands_for(num_perm: int, threshold: float, num_bands: int | None) -> tuple[int, int]:
    """(bands, rows): explicit num_bands uses rows = num_perm // num_bands, else `choose_bands`."""
    if num_bands is None:
        return choose_bands(threshold, num_perm)
    if not 1 <= num_bands <= num_perm:
        raise ParameterError(f"num_bands must be between 1 and num_perm={num_perm}, got {num_bands}")
    return num_bands, num_perm // num_bands


@njit(cache=True)
def band_keys_kernel(signatures, bands, rows):
    """64-bit key of each (document, band): a SplitMix64 chain over (band index, the band's rows)."""
    n_docs = signatures.shape[0]
    keys = np.empty((n_docs, bands), np.uint64)
    for d in range(n_docs):
        for band in range(bands):
            h = splitmix64(np.uint64(band) + np.uint64(0x9E3779B97F4A7C15))
            for r in range(rows):
                h = splitmix64(h ^ signatures[d, band * rows + r])
            keys[d, band] = h
    return keys


def band_keys(signatures: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """uint64 (n_docs, bands) band keys of a signature matrix."""
    if bands * rows > signatures.shape[1]:
        raise ParameterError(f"{bands} bands x {rows} rows need {bands * rows} signature slots, "
                             f"signatures have {signatures.shape[1]}")
    return band_keys_kernel(np.ascontiguousarray(signatures, dtype=np.uint64), int(bands), int(rows))
