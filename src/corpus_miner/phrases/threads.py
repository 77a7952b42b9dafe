"""How many threads a mining run uses, and running numba's parallel loops on that many."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numba

# OpenMP threads wait for the next parallel loop asleep, not spinning: mining starts a few thousand
# loops of milliseconds each, so waking costs nothing measurable, while spinning threads burned
# ~30% more CPU in the filter passes and took cores from other work on a shared machine. Only
# takes effect if no parallel loop ran in this process before, and never overrides a user's value.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Below this many tokens every stage runs on one thread: a parallel loop costs more to start than
# the work it shares (and far more on a busy machine, where a second thread waits for a core).
PARALLEL_MIN_TOKENS = 1 << 20


def mining_threads(n_tokens: int) -> int:
    """numba's thread count (NUMBA_NUM_THREADS, numba.set_num_threads), or 1 for small corpora."""
    return numba.get_num_threads() if n_tokens >= PARALLEL_MIN_TOKENS else 1


@contextmanager
def numba_threads(threads: int):
    """numba's parallel loops on `threads` threads in this block (the setting is per thread)."""
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(before)


@contextmanager
def ordered_map(threads: int):
    """A map(function, items) -> list that runs on `threads` Python threads (for kernels that
    release the GIL) and returns the results in the items' order; in the calling thread when
    threads is 1."""
    if threads <= 1:
        yield lambda function, items: [function(item) for item in items]
        return
    with ThreadPoolExecutor(max_workers=threads) as pool:
        yield lambda function, items: list(pool.map(function, items))
