"""The index folder's generations: a reader racing a rebuild sees the old index or the new one,
whole; old generations are removed (the previous one kept); unchanged layers are hard-linked;
a flat (version 2) folder turns into generations in place; leftovers of a killed writer go."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from corpus_miner.dedup import LSHBloom
from corpus_miner.errors import FormatError, OutputError
from corpus_miner.io.artefact import save_artefact
from tests.helpers import ROOT

from .test_lshbloom import make_corpus

TEXTS = make_corpus(n_base=60, seed=21)
SIZES = (20, 35, 50, 65)  # documents of the indexes the writer alternates between

WRITER = """
    import sys
    from corpus_miner.dedup import LSHBloom
    from tests.dedup.test_index_generations import SIZES, TEXTS, model_of
    folder, rounds, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    for i in range(rounds):
        model_of(SIZES[i % len(SIZES)], mode).save(folder)
    print("done")
"""


def model_of(size: int, mode: str) -> LSHBloom:
    ids = [f"d{i}" for i in range(size)] if mode == "minhash_lsh" else None
    return LSHBloom(num_perm=64, mode=mode, expected_items=16).fit(TEXTS[:size], ids=ids)


def _same(a: LSHBloom, b: LSHBloom) -> bool:
    if a.n_documents_ != b.n_documents_:
        return False
    if a.mode_ == "lshbloom":
        return a.index_ == b.index_
    keys_a, docs_a = a.index_.items()
    keys_b, docs_b = b.index_.items()
    return (np.array_equal(keys_a, keys_b) and np.array_equal(docs_a, docs_b)
            and a.ids_.equals(b.ids_))


@pytest.mark.parametrize("mode,mmap", [("lshbloom", False), ("lshbloom", True),
                                       ("minhash_lsh", False)])
def test_a_reader_racing_rebuilds_sees_one_whole_index(tmp_path, mode, mmap):
    """Before generations, `index query` during `index build` of the same folder failed 20-45%
    of the time (old metadata with new arrays, or no folder between two renames)."""
    folder = tmp_path / "index"
    expected = {size: model_of(size, mode) for size in SIZES}
    expected[SIZES[0]].save(folder)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER), str(folder), "30",
                               mode], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    loads, seen = 0, set()
    try:
        while writer.poll() is None or loads < 20:
            loaded = LSHBloom.load(folder, mmap=mmap)  # any failure fails the test
            assert _same(loaded, expected[loaded.n_documents_])
            seen.add(loaded.n_documents_)
            loads += 1
    finally:
        out, err = writer.communicate(timeout=120)
    assert writer.returncode == 0 and out.strip() == "done", err[-2000:]
    assert len(seen) >= 2, f"the reader saw only {seen} in {loads} loads: no race was run"
    names = sorted(p.name for p in folder.iterdir())
    assert names == [".lock", "gen-000030", "gen-000031", "metadata.json"]


def test_old_generations_go_and_unchanged_layers_are_linked(tmp_path):
    folder = tmp_path / "index"
    model = LSHBloom(num_perm=64, expected_items=10).partial_fit(TEXTS[:40])
    assert len(model.index_.layers) == 3  # 10 + 20 + (10 of 40)
    model.save(folder)
    for round_ in range(3):
        loaded = LSHBloom.load(folder, mmap=True)
        loaded.partial_fit([f"one more document, number {round_} of the rounds"] * 2)
        loaded.save(folder)
        model.partial_fit([f"one more document, number {round_} of the rounds"] * 2)
    current = json.loads((folder / "metadata.json").read_text())["current"]
    assert current == "gen-000004"
    assert sorted(p.name for p in folder.iterdir()) == [
        ".lock", "gen-000003", "gen-000004", "metadata.json"]
    for layer in ("bloom_0.bin", "bloom_1.bin"):  # full layers: the same file in both
        assert os.stat(folder / "gen-000004" / layer).st_ino == \
            os.stat(folder / "gen-000003" / layer).st_ino
    assert os.stat(folder / "gen-000004" / "bloom_2.bin").st_ino != \
        os.stat(folder / "gen-000003" / "bloom_2.bin").st_ino
    reloaded = LSHBloom.load(folder)  # mmap=False: every layer's sha256 checked
    assert reloaded.index_ == model.index_


def test_a_flat_version_2_index_turns_into_generations(tmp_path):
    model = LSHBloom(num_perm=64, expected_items=10).fit(iter(TEXTS[:30]))
    state = model.to_state()
    bloom = state.bloom
    fields = {"mode": "lshbloom", "params": state.params.to_dict(), "bands": model.bands_,
              "rows": model.rows_, "n_documents": model.n_documents_,
              "bloom": {"capacity": bloom.capacity, "fp_prob": bloom.fp_prob, "layers": [
                  {"documents": c, "rate": r, "num_bits": layer.num_bits,
                   "num_hashes": layer.num_hashes}
                  for layer, c, r in zip(bloom.layers, bloom.documents, bloom.rates)]}}
    folder = tmp_path / "flat"
    save_artefact(folder, "corpus-miner/lsh-index", 2, fields,
                  {f"bloom_{i}.bin": layer.bits for i, layer in enumerate(bloom.layers)})
    old = LSHBloom.load(folder)
    assert old.index_ == model.index_ and old.snapshots_ == []
    old.partial_fit(TEXTS[30:40])
    old.save(folder)
    assert sorted(p.name for p in folder.iterdir()) == [".lock", "gen-000001", "metadata.json"]
    assert LSHBloom.load(folder).index_ == model.partial_fit(TEXTS[30:40]).index_


def test_leftovers_of_a_killed_writer_are_removed_by_the_next(tmp_path):
    folder = tmp_path / "index"
    model_of(20, "lshbloom").save(folder)
    (folder / ".gen-000002.abc123.tmp").mkdir()  # what a writer killed mid-generation leaves
    (folder / ".gen-000002.abc123.tmp" / "bloom_0.bin").write_bytes(b"\0" * 10)
    (folder / ".metadata.json.999.tmp").write_text("{")
    assert LSHBloom.load(folder).n_documents_ == 20  # readers ignore them
    model_of(35, "lshbloom").save(folder)
    assert sorted(p.name for p in folder.iterdir()) == [
        ".lock", "gen-000001", "gen-000002", "metadata.json"]


def test_pointer_errors_are_one_line(tmp_path):
    folder = tmp_path / "index"
    model_of(20, "lshbloom").save(folder)
    with pytest.raises(OutputError, match="is one generation of the index folder"):
        model_of(20, "lshbloom").save(folder / "gen-000001")
    meta = json.loads((folder / "metadata.json").read_text())
    meta["current"] = "gen-000009"
    (folder / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(FormatError, match="does not match its checksum"):
        LSHBloom.load(folder)
    from corpus_miner.dedup.generations import pointer_metadata

    (folder / "metadata.json").write_text(json.dumps(pointer_metadata("gen-000009")))
    with pytest.raises(FormatError, match="gen-000009: not a corpus-miner index folder"):
        LSHBloom.load(folder)
    (folder / "metadata.json").write_text(json.dumps(pointer_metadata("../elsewhere")))
    with pytest.raises(FormatError, match="not a generation folder"):
        LSHBloom.load(folder)
    meta = pointer_metadata("gen-000001")
    meta["version"] = 7
    (folder / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(FormatError, match="version 7 is not supported.*upgrade corpus-miner"):
        LSHBloom.load(folder)


def _resident_bytes(file) -> int:
    """Bytes of `file` resident in this process's mappings (/proc/self/smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()
            if "-" in head[0] and len(head) >= 5:
                inside = line.rstrip().endswith(str(file))
            elif inside and head[0] == "Rss:":
                total += int(head[1]) * 1024
    return total


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="needs Linux /proc")
def test_a_query_reads_only_the_pages_it_probes(tmp_path):
    """An index far larger than memory stays usable: mmap=True maps the layers, and a query
    touches a few pages per probe, not the whole layer (here a 57 MB layer, one query)."""
    model = LSHBloom(num_perm=64, expected_items=4_000_000).fit(TEXTS[:20])
    model.save(tmp_path / "big")
    layer = tmp_path / "big" / "gen-000001" / "bloom_0.bin"
    size = layer.stat().st_size
    assert size > 40 << 20
    del model
    loaded = LSHBloom.load(tmp_path / "big", mmap=True)
    assert isinstance(loaded.index_.layers[0].bits, np.memmap)
    assert loaded.query(TEXTS[:1]).is_duplicate.tolist() == [True]
    assert _resident_bytes(layer) < size // 2
