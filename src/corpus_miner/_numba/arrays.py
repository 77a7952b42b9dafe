"""Growable output buffers for kernels that do not know their output size in advance.

Kernels copy arrays element by element, never by array slice assignment (`a[i:j] = b`,
`a[d] = row`): numba checks the two shapes there and compiles its error message (string
formatting: 2-3 s on a command's first run, once per process, plus ~0.2 s in every kernel that
does it). tests/test_one_type_per_kernel.py checks that no command compiles it.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def grow(values):
    """A copy of `values` with twice the capacity (at least 16); the tail is uninitialised."""
    bigger = np.empty(max(2 * len(values), 16), dtype=values.dtype)
    for i in range(len(values)):  # not an array slice assignment: see the module docstring
        bigger[i] = values[i]
    return bigger
