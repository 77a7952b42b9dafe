"""The index folder of a fitted LSHBloom (either engine), in corpus_miner.io.artefact's format.

The folder holds generations behind a pointer (dedup.generations, format version 3); each
generation is one artefact, metadata.json (format "corpus-miner/lsh-index", version 3,
checksummed): "generation", "params", "mode", "bands", "rows", "n_documents", "snapshots" (what
the index absorbed, oldest first), and
- mode lshbloom: "bloom": {"capacity", "fp_prob", "layers": [{"documents", "rate", "num_bits",
  "num_hashes"}, ...]} with one raw file per layer, bloom_<i>.bin (bit j = byte j // 8, bit j % 8);
- mode minhash_lsh: "band_entries" with band_keys.bin (uint64, strictly increasing),
  first_doc.bin (int64 ordinals) and ids.arrow (Arrow IPC stream of the ids in indexed order).

Loading checks more than the checksum: the parameters, bands and rows agree, every layer has the
shape its capacity and rate give, the layers' documents add up to n_documents, the band table's
keys are sorted and unique and name documents that exist. Version 2 folders (the same fields at
the top, no generations) and version 1 folders (no checksum, one filter sized for
expected_items or n_documents at the whole fp_prob) are still read, with the same derived
checks; a version 1 filter holding more documents than it was sized for is refused, since its
false-positive rate is above fp_prob. With mmap=True the Bloom layers are memory-mapped (their
sizes checked, their sha256 not computed, which would read them whole).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from corpus_miner.dedup.bandtable import BandTable
from corpus_miner.dedup.bloom import BloomFilter
from corpus_miner.dedup.generations import (
    INDEX_FORMAT,
    INDEX_VERSION,
    REMEDY,
    new_generation,
    read_consistently,
)
from corpus_miner.dedup.params import LSHBloomParams
from corpus_miner.dedup.scalable_bloom import ScalableBloomFilter
from corpus_miner.dedup.state import LSHBloomState
from corpus_miner.errors import ParameterError
from corpus_miner.io.artefact import Artefact

__all__ = ["INDEX_FORMAT", "INDEX_VERSION", "load_state", "save_state"]
_REMEDY = REMEDY


def _ids_blob(ids: pa.Array) -> bytes:
    sink = pa.BufferOutputStream()
    table = pa.table({"id": ids})
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _ids_from_blob(saved: Artefact) -> pa.Array:
    try:
        table = pa.ipc.open_stream(pa.py_buffer(saved.blob("ids.arrow"))).read_all()
        return table.column("id").combine_chunks()
    except (pa.ArrowInvalid, KeyError) as exc:
        raise saved.error(f"ids.arrow is not a valid id table ({exc})") from None


def save_state(path, state: LSHBloomState) -> None:
    """Write a fitted index as the next generation of the folder `path` (a new folder where
    there is none): readers see the previous index or this one, whole. Bloom layers that are
    unchanged since they were loaded from a saved file are hard-linked, not written again."""
    bands, rows = state.bands_rows
    fields = {"mode": state.params.mode, "params": state.params.to_dict(), "bands": bands,
              "rows": rows, "n_documents": int(state.n_documents),
              "snapshots": [dict(snapshot) for snapshot in state.snapshots]}
    with new_generation(path) as writer:
        writer.fields.update(fields)
        if state.params.mode == "lshbloom":
            bloom = state.bloom
            assert bloom is not None
            writer.fields["bloom"] = {
                "capacity": bloom.capacity, "fp_prob": bloom.fp_prob, "layers": [
                    {"documents": count, "rate": rate, "num_bits": layer.num_bits,
                     "num_hashes": layer.num_hashes}
                    for layer, count, rate in zip(bloom.layers, bloom.documents, bloom.rates)]}
            for i, layer in enumerate(bloom.layers):
                if layer.source is not None and layer.source[0].is_file():
                    writer.add_linked(f"bloom_{i}.bin", *layer.source)
                else:
                    writer.add_array(f"bloom_{i}.bin", layer.bits)
            return
        assert state.band_table is not None
        keys, docs = state.band_table.items()
        writer.fields["band_entries"] = int(len(keys))
        writer.add_array("band_keys.bin", keys)
        writer.add_array("first_doc.bin", docs)
        writer.add_blob("ids.arrow", _ids_blob(state.ids))


def load_state(path, mmap: bool = False) -> LSHBloomState:
    """The fitted index saved in `path` (its current generation), checked (FormatError naming
    what is wrong). mmap: memory-map the Bloom layers instead of reading them."""
    return read_consistently(path, lambda saved: _read(saved, mmap))


def _read(saved: Artefact, mmap: bool) -> LSHBloomState:
    try:
        params = LSHBloomParams.from_dict(saved.field("params", dict))
    except (TypeError, ParameterError) as exc:
        raise saved.error(f"metadata.json has bad parameters ({exc})") from None
    n_documents = saved.count("n_documents")
    bands, rows = saved.count("bands", minimum=1), saved.count("rows", minimum=1)
    saved.check((bands, rows) == params.bands_rows,
                f"stored bands/rows {bands}x{rows} do not follow from the parameters, which give "
                f"{params.bands_rows[0]}x{params.bands_rows[1]}")
    saved.check(saved.metadata.get("mode", params.mode) == params.mode,
                f"mode {saved.metadata.get('mode')!r} differs from params' {params.mode!r}")
    snapshots = _snapshots(saved)
    if params.mode == "lshbloom":
        bloom = _load_bloom(saved, params, n_documents, mmap) if saved.version > 1 \
            else _load_version_1_bloom(saved, params, n_documents)
        return _state(saved, params, n_documents, bloom=bloom, snapshots=snapshots)
    keys = saved.array("band_keys.bin", "<u8", ndim=1)
    docs = saved.array("first_doc.bin", "<i8", ndim=1)
    ids = _ids_from_blob(saved)
    saved.check(len(keys) == len(docs) == saved.count("band_entries"),
                "band_keys, first_doc and band_entries disagree in length")
    saved.check(len(ids) == n_documents, f"{len(ids)} ids for {n_documents} documents")
    saved.check(bool(np.all(keys[1:] > keys[:-1])), "band keys are not sorted and unique")
    saved.check(not len(docs) or (int(docs.min()) >= 0 and int(docs.max()) < n_documents),
                f"first_doc names documents outside 0..{n_documents - 1}")
    return _state(saved, params, n_documents, band_table=BandTable.from_items(keys, docs),
                  ids=ids, snapshots=snapshots)


def _snapshots(saved: Artefact) -> tuple:
    if saved.version < INDEX_VERSION:
        return ()
    snapshots = saved.field("snapshots", list)
    saved.check(all(isinstance(item, dict) for item in snapshots),
                "a snapshot record is not a table")
    return tuple(snapshots)


def _state(saved: Artefact, params, n_documents, **parts) -> LSHBloomState:
    try:
        return LSHBloomState(params, n_documents, **parts)
    except ParameterError as exc:
        raise saved.error(f"inconsistent index ({exc})") from None


def _load_bloom(saved: Artefact, params: LSHBloomParams, n_documents: int,
                mmap: bool) -> ScalableBloomFilter:
    plan = saved.field("bloom", dict)
    layers_meta = saved.field("layers", list, plan)
    saved.check(len(layers_meta) >= 1, "the filter has no layer")
    layers, documents, rates = [], [], []
    for i, layer in enumerate(layers_meta):
        saved.check(isinstance(layer, dict), f"layer {i} is not a table")
        layers.append(BloomFilter.from_artefact(saved, layer, f"bloom_{i}.bin", mmap=mmap))
        documents.append(saved.count("documents", layer))
        rates.append(saved.field("rate", float, layer))
    saved.check(sum(documents) == n_documents,
                f"the layers hold {sum(documents)} documents, n_documents is {n_documents}")
    try:
        return ScalableBloomFilter(saved.count("capacity", plan, 1),
                                   saved.field("fp_prob", float, plan), params.bands_rows[0],
                                   layers, documents, rates)
    except ParameterError as exc:
        raise saved.error(f"inconsistent Bloom filter ({exc})") from None


def _load_version_1_bloom(saved: Artefact, params: LSHBloomParams,
                          n_documents: int) -> ScalableBloomFilter:
    """A version 1 filter: one layer sized for expected_items (or the documents of the fit) at
    the whole fp_prob, so it cannot grow; its shape must be the one those values give."""
    layer = BloomFilter.from_artefact(saved, saved.field("bloom", dict), "bits.bin")
    capacity = max(params.expected_items or n_documents, 1)
    saved.check(n_documents <= capacity,
                f"this version 1 index holds {n_documents} documents in a Bloom filter sized for "
                f"{capacity}, so unique documents are flagged more often than fp_prob")
    try:
        return ScalableBloomFilter(capacity, params.fp_prob, params.bands_rows[0], [layer],
                                   [n_documents], [params.fp_prob])
    except ParameterError as exc:
        raise saved.error(f"inconsistent Bloom filter ({exc})") from None
