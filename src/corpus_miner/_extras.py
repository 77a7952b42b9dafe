"""Optional host libraries (datatrove, Ray): imported on demand, with the extra to install named."""

from __future__ import annotations

import importlib
from types import ModuleType

from corpus_miner.errors import MissingExtraError


def require(module: str, extra: str, what: str) -> ModuleType:
    """`module` imported, or MissingExtraError naming `extra` when it is not installed."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != module.split(".")[0]:
            raise  # the host library is there but broken: its own error says more
        raise MissingExtraError(f"{what} needs {module.split('.')[0]}, which is not installed; "
                                f'install the `{extra}` extra: pip install "corpus-miner[{extra}]"'
                                ) from None
