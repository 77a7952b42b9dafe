"""How many threads a mining run uses, and running kernels that release the GIL on that many.

Every stage runs its kernels on Python threads (`nogil=True` kernels over parts of the work),
none uses numba's parallel loops (prange): those compile in 2-3x the time of the same loop
without them (7.7 of the 27 CPU seconds a first `phrases` run spent compiling) and run no faster
on parts of milliseconds or more.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numba

# Below this many tokens every stage runs on one thread: a parallel loop costs more to start than
# the work it shares (and far more on a busy machine, where a second thread waits for a core).
PARALLEL_MIN_TOKENS = 1 << 20


def mining_threads(n_tokens: int) -> int:
    """numba's thread count (NUMBA_NUM_THREADS, numba.set_num_threads), or 1 for small corpora."""
    return numba.get_num_threads() if n_tokens >= PARALLEL_MIN_TOKENS else 1


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


def in_parts(function: Callable[[int, int], object], n_items: int, threads: int) -> None:
    """function(lo, hi) over [0, n_items) cut into `threads` contiguous parts of about equal
    size, one per thread (as a parallel loop's static schedule would); in the calling thread
    when threads is 1. The parts must write disjoint outputs, and must not call in_parts."""
    parts = [(i * n_items // threads, (i + 1) * n_items // threads) for i in range(threads)]
    parts = [(lo, hi) for lo, hi in parts if lo < hi]
    if len(parts) <= 1:
        for lo, hi in parts:
            function(lo, hi)
        return
    pool = _part_pool(threads)
    for done in [pool.submit(function, lo, hi) for lo, hi in parts]:
        done.result()


_part_pools: dict[tuple[int, int], ThreadPoolExecutor] = {}


def _part_pool(threads: int) -> ThreadPoolExecutor:
    """One pool per thread count, kept for the process (the filter passes call in_parts per chunk
    of positions: starting threads each time cost 50 ms of a 35 ms stage on the quick start).
    Keyed by process id too: a forked child gets pools of its own, not its parent's threads."""
    key = (os.getpid(), threads)
    if key not in _part_pools:
        _part_pools[key] = ThreadPoolExecutor(max_workers=threads,
                                              thread_name_prefix="corpus-miner-part")
    return _part_pools[key]
