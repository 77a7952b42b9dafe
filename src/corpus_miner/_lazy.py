"""Package attributes imported on first use (PEP 562), so that importing one light module of a
package (say corpus_miner.io.atomic) does not import its heavy siblings (pyarrow, numba): every
command's start-up pays only for what it uses."""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_attributes(namespace: dict, where: dict[str, str]) -> tuple[Callable, Callable]:
    """(__getattr__, __dir__) for the package whose globals() are `namespace`: the names in
    where[MODULE] (separated by spaces) are MODULE's attributes, imported when first asked for."""
    module_of = {name: module for module, names in where.items() for name in names.split()}

    def __getattr__(name: str):
        if name not in module_of:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module_of[name]), name)
        namespace[name] = value  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(module_of))

    return __getattr__, __dir__
