"""The Spark engine's optional dependencies: fail with the name of the extra to install."""

from __future__ import annotations

from corpus_miner.errors import MissingExtraError

INSTALL_HINT = 'pip install "corpus-miner[spark]"'


def require_spark() -> None:
    """Raise MissingExtraError naming the `spark` extra unless pyspark and pandas are installed
    (found, not imported: importing pandas costs ~0.5 s, which a BloomSpan task never needs)."""
    from importlib.util import find_spec

    missing = [module for module in ("pyspark", "pandas") if find_spec(module) is None]
    if missing:
        raise MissingExtraError(f"the Spark engine needs {' and '.join(missing)}, which "
                                f"{'is' if len(missing) == 1 else 'are'} not installed; "
                                f"install the `spark` extra: {INSTALL_HINT} (and Java 17+)")
