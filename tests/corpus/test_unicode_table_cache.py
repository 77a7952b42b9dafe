"""The code-point tables' disk cache: built once, then memory-mapped; a damaged file is rebuilt."""

import numpy as np
import pytest

from corpus_miner.corpus import unicode_table


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    unicode_table.code_point_tables.cache_clear()
    yield tmp_path / "corpus-miner"
    unicode_table.code_point_tables.cache_clear()  # later tests use the usual cache again


def _fresh():
    unicode_table.code_point_tables.cache_clear()
    return unicode_table.code_point_tables()


def test_tables_load_from_the_cache_as_built(cache_home):
    built_info, built_lower = _fresh()
    files = sorted(p.name for p in cache_home.iterdir())
    assert len(files) == 2 and files[0].endswith("-info.npy") and files[1].endswith("-lower.npy")
    info, lower = _fresh()
    assert type(info) is np.ndarray and type(lower) is np.ndarray  # not np.memmap
    assert info.flags.writeable and lower.flags.writeable  # the kernels' one argument type
    assert info.dtype == np.uint8 and lower.dtype == np.int32
    assert np.array_equal(info, built_info) and np.array_equal(lower, built_lower)
    assert lower[ord("A")] == ord("a") and info[ord("a")] & unicode_table.SELF_RUN


def test_a_damaged_cache_is_rebuilt(cache_home):
    expected_info, _ = _fresh()
    info_file = next(cache_home.glob("*-info.npy"))
    info_file.write_bytes(info_file.read_bytes()[:1000])  # truncated
    info, _ = _fresh()
    assert np.array_equal(info, expected_info)
    assert info_file.stat().st_size > 1_000_000  # written again
