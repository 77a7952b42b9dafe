"""Without NeMo Curator installed (as in CI), importing the stages names the extra to install."""

from __future__ import annotations

from corpus_miner.errors import MissingExtraError
from tests.helpers import run_python


def test_a_missing_nemo_curator_names_the_extra():
    out = run_python("""
        import sys
        sys.modules["nemo_curator"] = None  # as if it were not installed
        try:
            import corpus_miner.integrations.nemo_curator
        except Exception as exc:
            print(type(exc).__name__, exc)
    """)
    assert "MissingExtraError" in out and 'pip install "corpus-miner[nemo]"' in out
    assert issubclass(MissingExtraError, ImportError)
