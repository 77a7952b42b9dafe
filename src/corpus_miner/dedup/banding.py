"""LSH banding: choose (bands, rows) and turn signatures into 64-bit band keys.

Two documents with Jaccard similarity s share at least one band key with probability
P(s) = 1 - (1 - s^rows)^bands. `choose_bands` picks the (bands, rows), bands * rows <= num_perm,
minimising  fp_weight * FP + fn_weight * FN  where FP = integral_0^t P(s) ds (pairs below the
threshold t that collide) and FN = integral_t^1 (1 - P(s)) ds (pairs above it that do not), the rule
of datasketch's MinHashLSH, integrated here with a fixed Simpson grid (no scipy).
"""

from __future__ import annotations

import functools
import math

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


@njit(cache=True)
def _pair_error(low, high, grid, bands, rows):
    """fp_weight * FP + fn_weight * FN of (bands, rows) on the Simpson grids of banding_errors;
    grid = (low step, high step, fp weight, fn weight)."""
    n = len(low) - 1
    fp = 0.0
    fn = 0.0
    for i in range(n + 1):
        weight = 1.0 if i == 0 or i == n else (4.0 if i % 2 == 1 else 2.0)
        fp += weight * (1.0 - (1.0 - low[i] ** rows) ** bands)
        fn += weight * (1.0 - high[i] ** rows) ** bands
    return grid[2] * (grid[0] / 3.0 * fp) + grid[3] * (grid[1] / 3.0 * fn)


@njit(cache=True)
def _line_error(low, high, grid, fixed, vary_bands, value):
    if vary_bands:
        return _pair_error(low, high, grid, float(value), float(fixed))
    return _pair_error(low, high, grid, float(fixed), float(value))


@njit(cache=True)
def _line_minimum(low, high, grid, fixed, vary_bands, lo, hi, guess):
    """argmin over value in [lo, hi] of the error along a line (rows fixed and bands varying, or
    the reverse), where it is unimodal: the smallest value whose successor is not lower. Gallops
    from `guess` (the neighbouring line's answer is usually close), then bisects."""
    def descends(value):
        return _line_error(low, high, grid, fixed, vary_bands, value + 1) \
            < _line_error(low, high, grid, fixed, vary_bands, value)

    value = min(max(guess, lo), hi)
    step = 1
    if value < hi and descends(value):
        low_end = value + 1  # the answer is in [low_end, hi]
        while low_end + step <= hi and descends(low_end + step - 1):
            low_end += step
            step *= 2
        lo, hi = low_end, min(low_end + step, hi)
    else:
        high_end = value  # the answer is in [lo, high_end]
        while high_end - step >= lo and not descends(high_end - step):
            high_end -= step
            step *= 2
        lo, hi = max(high_end - step, lo), high_end
    while lo < hi:
        mid = (lo + hi) // 2
        if descends(mid):
            lo = mid + 1
        else:
            hi = mid
    return lo


# Errors within this of the minimum count as ties (the brute force's tolerance).
_TIE = 1e-15


@njit(cache=True)
def _first_within(low, high, grid, fixed, vary_bands, lo, center, limit):
    """Smallest value in [lo, center] whose error is <= limit, the error decreasing on it."""
    while lo < center:
        mid = (lo + center) // 2
        if _line_error(low, high, grid, fixed, vary_bands, mid) <= limit:
            center = mid
        else:
            lo = mid + 1
    return lo


def _search_bands(threshold: float, num_perm: int, fp_weight: float,
                  fn_weight: float) -> tuple[int, int]:
    """choose_bands' answer from ~2 sqrt(num_perm) line searches instead of all
    ~num_perm ln(num_perm) pairs (num_perm=65536: 720k pairs, minutes).

    On the fixed grid the error is unimodal along each line: with rows fixed, E(b+1) - E(b) =
    w_fp A(b) - w_fn B(b) where A and B are positive sums of (1 - s^r)^b s^r over the low and high
    grids, and A/B never decreases with b (every low-grid factor 1 - s^r is >= every high-grid
    one), so the difference changes sign once, from - to +; with bands fixed, the same holds in
    rows because (1 - s^r')/(1 - s^r) * s^(r' - r) grows with s for r' > r. Every pair lies on
    exactly one line searched: rows <= sqrt(num_perm) by rows, the others (bands < sqrt) by
    bands. On a line the pairs within _TIE of the minimum form an interval around the line's
    minimum, so its first pair is found by bisection on the falling side."""
    low = np.linspace(0.0, threshold, _GRID_POINTS)
    high = np.linspace(threshold, 1.0, _GRID_POINTS)
    grid = np.array([threshold / (_GRID_POINTS - 1), (1.0 - threshold) / (_GRID_POINTS - 1),
                     float(fp_weight), float(fn_weight)])
    root = math.isqrt(num_perm)
    rows_lines = [(rows, True, 1, num_perm // rows) for rows in range(1, root + 1)]
    bands_lines = [(bands, False, root + 1, num_perm // bands)
                   for bands in range(1, num_perm // (root + 1) + 1)]
    minima = []
    for family in (rows_lines, bands_lines):
        guess = num_perm  # each line starts from its neighbour's answer
        for line in family:
            fixed, vary_bands, lo, hi = line
            guess = _line_minimum(low, high, grid, fixed, vary_bands, lo, hi, guess)
            minima.append((line, guess, _line_error(low, high, grid, fixed, vary_bands, guess)))
    limit = min(error for _, _, error in minima) + _TIE
    firsts = []
    for (fixed, vary_bands, lo, _hi), center, error in minima:
        if error <= limit:
            value = _first_within(low, high, grid, fixed, vary_bands, lo, center, limit)
            firsts.append((value, fixed) if vary_bands else (fixed, value))
    return min(firsts)


@functools.lru_cache(maxsize=256)
def choose_bands(threshold: float, num_perm: int, fp_weight: float = 0.5,
                 fn_weight: float = 0.5) -> tuple[int, int]:
    """(bands, rows) with bands * rows <= num_perm minimising the weighted FP + FN areas; among
    pairs within 1e-15 of the minimum, the first in (bands, rows) order (see _search_bands)."""
    if not 0.0 < threshold < 1.0:
        raise ParameterError(f"threshold must be in (0, 1), got {threshold}")
    if num_perm < 1:
        raise ParameterError(f"num_perm must be >= 1, got {num_perm}")
    if fp_weight < 0 or fn_weight < 0 or fp_weight + fn_weight <= 0:
        raise ParameterError(f"fp_weight and fn_weight must be >= 0 and not both 0, got "
                             f"{fp_weight}, {fn_weight}")
    return _search_bands(threshold, num_perm, fp_weight, fn_weight)


def bands_for(num_perm: int, threshold: float, num_bands: int | None) -> tuple[int, int]:
    """(bands, rows): explicit num_bands uses rows = num_perm // num_bands, else `choose_bands`."""
    if num_bands is None:
        return choose_bands(threshold, num_perm)
    if not 1 <= num_bands <= num_perm:
        raise ParameterError(f"num_bands must be between 1 and num_perm={num_perm}, "
                             f"got {num_bands}")
    return num_bands, num_perm // num_bands


@njit(cache=True)
def band_keys_kernel(signatures, bands, rows):
    """64-bit key of each (document, band): a SplitMix64 chain over (band index, the band's
    rows)."""
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
    return band_keys_kernel(np.ascontiguousarray(signatures, dtype=np.uint64), int(bands),
                            int(rows))
