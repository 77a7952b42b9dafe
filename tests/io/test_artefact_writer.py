"""Writing an artefact array in pieces: the same folder as writing it whole, still atomic."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.io.artefact import open_artefact, save_artefact, write_artefact

FORMAT = "corpus-miner/test-artefact"


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**32 - 1), max_size=20), max_size=6))
def test_pieces_give_the_same_folder_as_the_whole_array(tmp_path_factory, pieces):
    root = tmp_path_factory.mktemp("a")
    whole = np.array(sum(pieces, []), dtype=np.uint32)
    save_artefact(root / "whole", FORMAT, 1, {"n": len(whole)}, {"x.bin": whole},
                  blobs={"b": b"blob"})
    with write_artefact(root / "pieces", FORMAT, 1) as writer:
        array = writer.array_writer("x.bin", np.uint32)
        for piece in pieces:
            array.write(np.array(piece, dtype=np.int64))  # converted to the array's dtype
        writer.add_blob("b", b"blob")
        writer.fields["n"] = len(whole)
    for name in ("x.bin", "b", "metadata.json"):
        assert (root / "whole" / name).read_bytes() == (root / "pieces" / name).read_bytes()
    saved = open_artefact(root / "pieces", FORMAT, (1,), kind="test", remedy="redo it")
    assert saved.array("x.bin", np.uint32, verify=True).tolist() == whole.tolist()


def test_a_failure_inside_the_block_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError):
        with write_artefact(tmp_path / "out", FORMAT, 1) as writer:
            writer.array_writer("x.bin", np.int64).write(np.arange(10))
            raise RuntimeError("stopped halfway")
    assert list(tmp_path.iterdir()) == []


def test_a_failure_keeps_the_previous_folder(tmp_path):
    save_artefact(tmp_path / "out", FORMAT, 1, {"n": 1}, {"x.bin": np.arange(3)})
    before = (tmp_path / "out" / "metadata.json").read_text()
    with pytest.raises(RuntimeError):
        with write_artefact(tmp_path / "out", FORMAT, 1) as writer:
            writer.array_writer("x.bin", np.int64).write(np.arange(10))
            raise RuntimeError("stopped halfway")
    assert (tmp_path / "out" / "metadata.json").read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_names_and_fields_are_checked(tmp_path):
    with pytest.raises(ValueError, match="twice"):
        with write_artefact(tmp_path / "a", FORMAT, 1) as writer:
            writer.array_writer("x.bin", np.int64)
            writer.add_array("x.bin", np.arange(2))
    with pytest.raises(ValueError, match="reserved"):
        with write_artefact(tmp_path / "b", FORMAT, 1) as writer:
            writer.fields["checksum"] = "forged"
    assert list(tmp_path.iterdir()) == []


def test_metadata_lists_the_streamed_length_and_hash(tmp_path):
    with write_artefact(tmp_path / "a", FORMAT, 1) as writer:
        array = writer.array_writer("x.bin", ">i8")  # stored little-endian whatever was asked
        array.write(np.arange(5))
        array.write(np.arange(5, 7))
    entry = json.loads((tmp_path / "a" / "metadata.json").read_text())["arrays"]["x.bin"]
    assert entry["dtype"] == "<i8" and entry["shape"] == [7]
    assert np.fromfile(tmp_path / "a" / "x.bin", "<i8").tolist() == list(range(7))
