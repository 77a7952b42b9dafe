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
    "BloomSpan",
    "LSHBloom",
    "SlotTemplates",
    "CorpusMinerError",
    "FormatError",
    "InputError",
    "MissingExtraError",
    "NotFittedError",
    "ParameterError",
]


def __getattr__(name: str):
    # The estimators import numba; load them on first use so `corpus-miner --version` stays instant.
    if name == "BloomSpan":
        from corpus_miner.phrases import BloomSpan

        return BloomSpan
    if name == "SlotTemplates":
        from corpus_miner.templates import SlotTemplates

        return SlotTemplates
    if name == "LSHBloom":
        from corpus_miner.dedup import LSHBloom

        return LSHBloom
    raise AttributeError(f"module 'corpus_miner' has no attribute {name!r}")
