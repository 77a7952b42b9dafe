"""The index folder: every edit of metadata.json is refused, forged metadata is caught by the
derived checks, tampered arrays are one-line errors, and the version 1 format is still read."""

import hashlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.dedup import BloomFilter, LSHBloom
from corpus_miner.errors import FormatError, ParameterError
from corpus_miner.io.artefact import metadata_checksum

from .test_lshbloom import make_corpus

TEXTS = make_corpus(seed=11)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A growing lshbloom index (3 layers) and a minhash_lsh index, saved once."""
    root = tmp_path_factory.mktemp("indexes")
    bloom = LSHBloom(num_perm=64, expected_items=10)
    bloom.fit(iter(TEXTS))
    bloom.save(root / "bloom")
    ids = [f"d{i}" for i in range(len(TEXTS))]
    table = LSHBloom(mode="minhash_lsh", num_perm=64).fit(TEXTS, ids=ids)
    table.save(root / "table")
    # the tampering tests edit the generation folder, which loads on its own like a whole index
    return {"bloom": (root / "bloom" / "gen-000001", bloom),
            "table": (root / "table" / "gen-000001", table)}


def _copy(source, target):
    target.mkdir()
    for file in source.iterdir():
        (target / file.name).write_bytes(file.read_bytes())
    return target


def _meta(folder):
    return json.loads((folder / "metadata.json").read_text())


def _write(folder, meta, forge=True):
    if forge:
        meta["checksum"] = metadata_checksum(meta)
    (folder / "metadata.json").write_text(json.dumps(meta))


def _replace_array(folder, meta, name, array):
    raw = np.ascontiguousarray(array).tobytes()
    (folder / name).write_bytes(raw)
    meta["arrays"][name].update(dtype=array.dtype.str, shape=list(array.shape),
                                sha256=hashlib.sha256(raw).hexdigest())


def test_layered_index_round_trip(saved, tmp_path):
    folder, model = saved["bloom"]
    assert len(model.index_.layers) == 3 and model.index_.documents[:2] == [10, 20]
    loaded = LSHBloom.load(folder)
    assert loaded.index_ == model.index_ and loaded.metadata() == model.metadata()
    probe = make_corpus(seed=12) + TEXTS[:5]
    assert loaded.query(probe).is_duplicate.tolist() == model.query(probe).is_duplicate.tolist()
    assert sorted(p.name for p in folder.iterdir()) == [
        "bloom_0.bin", "bloom_1.bin", "bloom_2.bin", "metadata.json"]
    assert sorted(p.name for p in folder.parent.iterdir()) == ["gen-000001", "metadata.json"]
    assert LSHBloom.load(folder.parent).index_ == model.index_


@pytest.mark.parametrize("kind,edit", [
    ("bloom", lambda m: m["params"].update(seed=2)),
    ("bloom", lambda m: m["params"].update(shingle_size=4)),
    ("bloom", lambda m: m["params"].update(sketch="minhash")),
    ("bloom", lambda m: m["bloom"]["layers"][0].update(num_hashes=3)),
    ("bloom", lambda m: m.update(n_documents=m["n_documents"] + 1)),
    ("bloom", lambda m: m.pop("checksum")),
    ("table", lambda m: m.update(band_entries=1)),
    ("table", lambda m: m["params"].update(threshold=0.5)),
])
def test_any_edit_of_the_metadata_is_refused(saved, tmp_path, kind, edit):
    """Editing seed, shingle_size, sketch or num_hashes loaded fine and then found 0 of 50 true
    copies; an edited n_documents was printed as is."""
    folder = _copy(saved[kind][0], tmp_path / "i")
    meta = _meta(folder)
    edit(meta)
    _write(folder, meta, forge=False)
    with pytest.raises(FormatError, match="metadata (has no checksum|does not match its checksum)"):
        LSHBloom.load(folder)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_random_edits_of_any_value_are_refused(saved, tmp_path_factory, data):
    folder = _copy(saved[data.draw(st.sampled_from(["bloom", "table"]))][0],
                   tmp_path_factory.mktemp("edit") / "i")
    meta = _meta(folder)
    leaves = []

    def walk(node, path):
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            if isinstance(value, (dict, list)) and value:
                walk(value, path + [key])
            elif path + [key] != ["checksum"]:
                leaves.append(path + [key])

    walk(meta, [])
    path = data.draw(st.sampled_from(leaves))
    new = data.draw(st.one_of(st.integers(-3, 10**6), st.floats(allow_nan=False),
                              st.text(max_size=5), st.none(), st.booleans()))
    parent = meta
    for key in path[:-1]:
        parent = parent[key]
    if parent[path[-1]] == new and type(parent[path[-1]]) is type(new):
        return
    parent[path[-1]] = new
    _write(folder, meta, forge=False)
    with pytest.raises(FormatError):
        LSHBloom.load(folder)


@pytest.mark.parametrize("edit,message", [
    (lambda m: m.update(bands=m["bands"] + 1), "stored bands/rows .* do not follow"),
    (lambda m: m.update(n_documents=m["n_documents"] + 1), "the layers hold .* n_documents is"),
    (lambda m: m.update(n_documents=12.5), "'n_documents' must be int"),
    (lambda m: m["params"].update(fp_prob=1e-4), "filter was built for .* fp_prob 1e-05"),
    (lambda m: m["params"].update(fp_prob=1e-4) or m["bloom"].update(fp_prob=1e-4),
     "layer 0's rate 5e-06 is not the plan's 5e-05"),
    (lambda m: m["bloom"]["layers"][1].update(num_hashes=30), "layer 1 has"),
    (lambda m: m["bloom"]["layers"][0].update(documents=9) or m.update(
        n_documents=m["n_documents"] - 1), "a layer before the last is not full"),
    (lambda m: m["arrays"]["bloom_0.bin"].pop("shape"), "bloom_0.bin has no valid shape"),
    (lambda m: m["params"].update(colour="blue"), "bad parameters"),
    (lambda m: m.pop("bloom"), "lacks 'bloom'"),
])
def test_forged_metadata_fails_the_derived_checks(saved, tmp_path, edit, message):
    """A forger who also rewrites the checksum still meets the consistency checks."""
    folder = _copy(saved["bloom"][0], tmp_path / "i")
    meta = _meta(folder)
    edit(meta)
    _write(folder, meta)
    with pytest.raises(FormatError, match=message) as caught:
        LSHBloom.load(folder)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("tamper,message", [
    (lambda f, m, keys, docs: _replace_array(f, m, "first_doc.bin", np.full_like(docs, 10**12)),
     "first_doc names documents outside"),
    (lambda f, m, keys, docs: _replace_array(f, m, "first_doc.bin", docs[:-1]),
     "disagree in length"),
    (lambda f, m, keys, docs: _replace_array(f, m, "band_keys.bin", keys[::-1].copy()),
     "not sorted and unique"),
    (lambda f, m, keys, docs: _replace_array(f, m, "band_keys.bin", keys.astype("<i8")),
     "band_keys.bin has dtype <i8, expected <u8"),
    (lambda f, m, keys, docs: (f / "first_doc.bin").write_bytes(b"\0" * 8 * len(docs)),
     "first_doc.bin: checksum mismatch"),
])
def test_tampered_band_table_arrays_are_refused(saved, tmp_path, tamper, message):
    folder = _copy(saved["table"][0], tmp_path / "i")
    meta = _meta(folder)
    keys = np.fromfile(folder / "band_keys.bin", "<u8")
    docs = np.fromfile(folder / "first_doc.bin", "<i8")
    tamper(folder, meta, keys, docs)
    _write(folder, meta)
    with pytest.raises(FormatError, match=message):
        LSHBloom.load(folder)


def _version_1_folder(folder, model: LSHBloom, capacity: int):
    """An lshbloom index as corpus-miner wrote it before the layered format: one filter sized
    for `capacity` documents at the whole fp_prob, metadata without a checksum."""
    params = model.params_
    bands = model.bands_
    bloom = BloomFilter.for_documents(capacity, bands, params.fp_prob)
    bloom.add(model._band_keys(TEXTS))
    folder.mkdir()
    raw = bloom.bits.tobytes()
    (folder / "bits.bin").write_bytes(raw)
    expected = None if capacity == len(TEXTS) else capacity  # how the old fit sized it
    meta = {"format": "corpus-miner/lsh-index", "version": 1, "mode": "lshbloom",
            "params": dict(params.to_dict(), expected_items=expected), "bands": bands,
            "rows": model.rows_,
            "n_documents": len(TEXTS),
            "bloom": {"num_bits": bloom.num_bits, "num_hashes": bloom.num_hashes},
            "arrays": {"bits.bin": {"dtype": "|u1", "shape": [len(raw)],
                                    "sha256": hashlib.sha256(raw).hexdigest()}}}
    (folder / "metadata.json").write_text(json.dumps(meta))
    return bloom


def test_version_1_indexes_are_still_read(tmp_path):
    model = LSHBloom(num_perm=64).fit(TEXTS)
    bloom = _version_1_folder(tmp_path / "v1", model, len(TEXTS))
    old = LSHBloom.load(tmp_path / "v1")
    assert old.index_.layers == [bloom] and old.index_.rates == [model.params_.fp_prob]
    probe = make_corpus(seed=13) + TEXTS[:3]
    assert old.query(probe).is_duplicate.tolist() == model.query(probe).is_duplicate.tolist()
    with pytest.raises(ParameterError, match="no false-positive budget left to grow"):
        old.partial_fit(["one more document than it was sized for"])
    old = LSHBloom.load(tmp_path / "v1")
    old.save(tmp_path / "v3")  # saving again writes the current version, checksummed
    assert _meta(tmp_path / "v3")["version"] == 3
    assert _meta(tmp_path / "v3" / "gen-000001")["version"] == 3
    assert LSHBloom.load(tmp_path / "v3").index_ == old.index_


def test_version_1_indexes_are_checked_for_derived_values(tmp_path):
    model = LSHBloom(num_perm=64).fit(TEXTS)
    _version_1_folder(tmp_path / "over", model, 10)  # the overfilled filters of the old bug
    with pytest.raises(FormatError, match=r"holds \d+ documents in a Bloom filter sized for 10"):
        LSHBloom.load(tmp_path / "over")
    _version_1_folder(tmp_path / "edited", model, len(TEXTS))
    meta = _meta(tmp_path / "edited")
    meta["params"]["fp_prob"] = 1e-3  # no checksum in version 1, but the shape follows from it
    _write(tmp_path / "edited", meta, forge=False)
    with pytest.raises(FormatError, match="layer 0 has"):
        LSHBloom.load(tmp_path / "edited")
