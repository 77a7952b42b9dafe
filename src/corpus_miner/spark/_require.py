"""The Spark engine's optional dependencies: fail with the name of the extra to install."""

from __future__ import annotations

from corpus_miner.errors import MissingExtraError

INSTALL_HINT = 'pip install "corpus-miner[spark]"'


def require_spark() -> None:
    """Import pyspark and pandas or raise MissingExtraError naming the `spark` extra."""
    missing = []
    for module in ("pyspark", "pandas"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise MissingExtraError(f"the Spark engine needs {' and '.join(missing)}, which "
                                f"{'is' if len(missing) == 1 else 'are'} not installed; "
                                f"install the `spark` extra: {INSTALL_HINT} (and Java 17+)")
