"""corpus-miner: find what is repeated in large text corpora, and remove it."""

__version__ = "0.1.0"

from corpus_miner.errors import (  # noqa: E402
    CorpusMinerError,
    FormatError,
    InputError,
    MissingExtraError,
    NotFittedError,
    ParameterError,
)

__all__ = [
    "__version__",
    "CorpusMinerError",
    "FormatError",
    "InputError",
    "MissingExtraError",
    "NotFittedError",
    "ParameterError",
]
