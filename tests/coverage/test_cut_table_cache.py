"""The cut kernels' character table: built once, cached next to the tokenizer's tables, then
memory-mapped with the same type and contents as a fresh build."""

import numpy as np

from corpus_miner.coverage import cut_kernels


def test_cut_table_is_cached_and_loads_as_built(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cut_kernels.cut_char_table.cache_clear()
    try:
        built = cut_kernels.cut_char_table()
        files = list((tmp_path / "corpus-miner").glob("cutchars-*-flags.npy"))
        assert len(files) == 1
        cut_kernels.cut_char_table.cache_clear()
        loaded = cut_kernels.cut_char_table()
        assert type(loaded) is np.ndarray and loaded.flags.writeable  # the kernels' one type
        assert loaded.dtype == np.uint8 and np.array_equal(loaded, built)
        assert np.array_equal(loaded, cut_kernels._build_cut_char_table())
        assert loaded[ord(" ")] & cut_kernels.SPACE and loaded[ord("。")] & cut_kernels.TERMINAL
        files[0].write_bytes(files[0].read_bytes()[:100])  # damaged: rebuilt
        cut_kernels.cut_char_table.cache_clear()
        assert np.array_equal(cut_kernels.cut_char_table(), built)
    finally:
        cut_kernels.cut_char_table.cache_clear()
