"""One numba type per corpus array, whatever its origin.

numba compiles a kernel once per argument type, and a read-only array is another type than a
writable one: the tokens of a saved corpus folder are memory-mapped read-only, those tokenized in
the same process are writable, so every kernel that reads them was compiled twice (15 s of a
first run). TokenCorpus and the miners' checks hand out read-only views instead, always.
"""

from __future__ import annotations

import numpy as np


def read_only(array: np.ndarray) -> np.ndarray:
    """`array` itself when it is read-only, else a read-only view of it (no copy)."""
    if not array.flags.writeable:
        return array
    view = array.view()
    view.flags.writeable = False
    return view
