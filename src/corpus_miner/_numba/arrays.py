"""Growable output buffers for kernels that do not know their output size in advance."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def grow(values):
    """A copy of `values` with twice the capacity (at least 16); the tail is uninitialised."""
    bigger = np.empty(max(2 * len(values), 16), dtype=values.dtype)
    bigger[:len(values)] = values
    return bigger
