"""What the engines' Python functions share inside a Spark Python worker process: structures
built once per worker from a broadcast (`shared_value`, `cached`) and the garbage collector's
settling after the first task (`task`).
"""

from __future__ import annotations

import functools
import gc
import inspect
import uuid
from collections.abc import Callable
from typing import TypeVar, cast

F = TypeVar("F", bound=Callable)
_worker_cache: dict[tuple, object] = {}
_CACHE_ENTRIES = 16
_settled = False


def shared_value(spark, value):
    """A broadcast of `value` tagged with a unique token, for `cached`."""
    return spark.sparkContext.broadcast((uuid.uuid4().hex, value))


def cached(broadcast, make: Callable):
    """make(value) of a shared_value broadcast, built once per Python worker (workers are reused
    across tasks; the few most recent structures are kept)."""
    token, value = broadcast.value
    key = (token, make.__name__)
    if key not in _worker_cache:
        while len(_worker_cache) >= _CACHE_ENTRIES:
            _worker_cache.pop(next(iter(_worker_cache)))
        _worker_cache[key] = make(value)
    return _worker_cache[key]


def _settle() -> None:
    """Once per worker, after its first task: move every object then alive (modules, numba's
    dispatchers, pyarrow's and pandas' internals: ~165k objects) to the collector's permanent
    generation. pyspark runs gc.collect() after each task of a reused worker; each one walked
    them all (30-100 ms, 36 times in a fit of three stages)."""
    global _settled
    if not _settled:
        _settled = True
        gc.freeze()


def task(func: F) -> F:
    """func, a one-argument mapInArrow function (batches -> batches) or applyInArrow function
    (table -> table), settling the worker when it ends. (pyspark reads the wrapper's own
    argument list to tell the kinds of grouped functions apart.)"""
    if inspect.isgeneratorfunction(func):
        @functools.wraps(func)
        def generating(batches):
            yield from func(batches)
            _settle()
        return cast(F, generating)

    @functools.wraps(func)
    def returning(table):
        result = func(table)
        _settle()
        return result
    return cast(F, returning)
