"""Every public name is importable from `corpus_miner` (the engines from `corpus_miner.spark`),
documented, and loaded only when first used, so importing the package stays instant."""

from __future__ import annotations

import importlib

import pytest

import corpus_miner
from tests.helpers import run_python


def _public(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    return [name for name in module.__all__ if name != "__version__"]


@pytest.mark.parametrize("name", _public("corpus_miner"))
def test_every_name_imports_and_has_a_docstring(name):
    value = getattr(corpus_miner, name)
    assert (value.__doc__ or "").strip(), f"corpus_miner.{name} has no docstring"
    assert name in dir(corpus_miner)


def test_the_names_users_need_are_there():
    needed = {"BloomSpan", "LSHBloom", "read_documents", "TokenCorpus", "load_corpus",
              "PhraseTable", "Coverage", "CoverageReport", "Cleaner", "CorpusMinerError",
              "InputError", "OutputError", "ParameterError", "FormatError", "NotFittedError",
              "MissingExtraError"}
    assert needed <= set(corpus_miner.__all__)
    from corpus_miner import errors

    every_error = {name for name, value in vars(errors).items()
                   if isinstance(value, type) and issubclass(value, Exception)}
    assert every_error <= set(corpus_miner.__all__)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        corpus_miner.Nope  # noqa: B018


def test_the_spark_engines_import_from_corpus_miner_spark():
    pytest.importorskip("pyspark")
    pytest.importorskip("pandas")
    spark = importlib.import_module("corpus_miner.spark")
    for name in _public("corpus_miner.spark"):
        assert (getattr(spark, name).__doc__ or "").strip(), name


def test_importing_the_package_loads_no_numeric_library():
    out = run_python("""
        import sys
        import corpus_miner
        from corpus_miner import InputError, OutputError, __version__
        print(" ".join(m for m in ("numba", "pyarrow", "numpy", "pandas") if m in sys.modules))
    """)
    assert out.splitlines()[-1].split() == []
