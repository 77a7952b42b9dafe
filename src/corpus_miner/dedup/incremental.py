"""What an index that grows with every snapshot needs beyond fit and query: merging indexes
built apart, the record of what an index absorbed, and a description of an index as it is now.

Merging. Two band tables (mode minhash_lsh) concatenate exactly: the second index's documents
follow the first's (their ordinals shifted), a band key in both keeps the first's document, so
the merged table answers like one table built on the concatenation. Bloom filters (mode
lshbloom) merge layer by layer with OR: the layers are kept, never re-laid (that would need the
band keys, which a Bloom filter does not keep). A merged layer holding no more documents than its
capacity keeps its rate, so the merged filter keeps the fp_prob promise; one that would hold more
is refused, with the remedy (build the parts for the merged total with --expected-items: then
every part fills the first layer, and the merge is bit for bit the filter of one build on the
union). Parameters that change band keys or the filter's plan must be identical; a mismatch is
refused naming the parameter and both values.
"""

from __future__ import annotations

import datetime
import math

import numpy as np
import pyarrow as pa

from corpus_miner.dedup.bandtable import BandTable
from corpus_miner.dedup.scalable_bloom import ScalableBloomFilter
from corpus_miner.dedup.state import LSHBloomState
from corpus_miner.errors import InputError, ParameterError

_SKETCH_FIELDS = ("mode", "seed", "shingle_size", "shingle_kind", "max_shingles", "sketch",
                  "num_perm")


def _plan(state: LSHBloomState) -> list[tuple[str, object]]:
    """(name, value) of everything two indexes must share to be merged."""
    params = state.params
    bands, rows = params.bands_rows
    plan = [(name, getattr(params, name)) for name in _SKETCH_FIELDS]
    plan += [("bands", bands), ("rows", rows)]
    if params.mode == "lshbloom":
        assert state.bloom is not None
        plan += [("fp_prob", params.fp_prob),
                 ("first layer capacity (expected_items)", state.bloom.capacity)]
    return plan


def check_mergeable(first: LSHBloomState, other: LSHBloomState,
                    names: tuple[str, str] = ("the first index", "the other")) -> None:
    """ParameterError naming the first parameter that differs, with both values."""
    for (name, mine), (_, theirs) in zip(_plan(first), _plan(other)):
        if mine != theirs:
            raise ParameterError(f"cannot merge indexes built with other parameters: {name} is "
                                 f"{mine!r} in {names[0]} and {theirs!r} in {names[1]}")
    mine_digests = input_digests(first)
    shared = sorted(d for d in input_digests(other) if d in mine_digests)
    if shared:
        raise ParameterError(f"{names[0]} and {names[1]} both absorbed the input "
                             f"{mine_digests[shared[0]]!r} (digest {shared[0]}): its documents "
                             "would count twice")


def merge_states(first: LSHBloomState, other: LSHBloomState,
                 names: tuple[str, str] = ("the first index", "the other")) -> LSHBloomState:
    """The union of two indexes, `other`'s documents after `first`'s (see the module doc)."""
    check_mergeable(first, other, names)
    n_documents = first.n_documents + other.n_documents
    snapshots = tuple(first.snapshots) + tuple(other.snapshots)
    if first.params.mode == "lshbloom":
        assert first.bloom is not None and other.bloom is not None
        return LSHBloomState(first.params, n_documents, bloom=_merge_blooms(
            first.bloom, other.bloom), snapshots=snapshots)
    assert first.band_table is not None and other.band_table is not None
    assert first.ids is not None and other.ids is not None
    keys_a, docs_a = first.band_table.items()
    keys_b, docs_b = other.band_table.items()
    keys = np.concatenate([keys_a, keys_b])
    docs = np.concatenate([docs_a, docs_b + first.n_documents])
    order = np.argsort(keys, kind="stable")  # a key in both: the first index's document first
    keys, docs = keys[order], docs[order]
    first_of_key = np.ones(len(keys), bool)
    first_of_key[1:] = keys[1:] != keys[:-1]
    ids_b = other.ids
    if ids_b.type != first.ids.type:
        try:
            ids_b = ids_b.cast(first.ids.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise ParameterError(f"the ids of {names[1]} are {other.ids.type}, those of "
                                 f"{names[0]} {first.ids.type}; they cannot share one id "
                                 "column") from None
    ids = pa.concat_arrays([first.ids, ids_b])
    return LSHBloomState(first.params, n_documents,
                         band_table=BandTable.from_items(keys[first_of_key], docs[first_of_key]),
                         ids=ids, snapshots=snapshots)


def _merge_blooms(first: ScalableBloomFilter, other: ScalableBloomFilter) -> ScalableBloomFilter:
    total = first.n_documents + other.n_documents
    for index in range(max(len(first.layers), len(other.layers))):
        count = sum(bloom.documents[index] for bloom in (first, other)
                    if index < len(bloom.layers))
        if count > first.layer_capacity(index):
            raise ParameterError(
                f"the merged Bloom filter would hold {count:,} documents in layer {index}, "
                f"sized for {first.layer_capacity(index):,}, so unique documents would be "
                f"flagged more often than fp_prob; build the parts with --expected-items "
                f"{total:,} (or more) to merge them")
    return first.merge(other)


# -- what an index absorbed ------------------------------------------------------------------------
def snapshot_record(inputs: list[dict], documents: int, duplicates: int, added: int) -> dict:
    """One entry of an index's `snapshots`: when, the inputs ({"name", "digest", "documents"}),
    the documents read, those flagged, those whose band keys were added."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    return {"time": now.isoformat().replace("+00:00", "Z"), "inputs": inputs,
            "documents": int(documents), "duplicates": int(duplicates), "added": int(added)}


def input_digests(state_or_snapshots) -> dict[str, str]:
    """digest -> input name of every input an index absorbed."""
    snapshots = getattr(state_or_snapshots, "snapshots", state_or_snapshots)
    found: dict[str, str] = {}
    for snapshot in snapshots:
        for item in snapshot.get("inputs", ()):
            if isinstance(item, dict) and isinstance(item.get("digest"), str):
                found.setdefault(item["digest"], str(item.get("name")))
    return found


def refuse_absorbed(snapshots, inputs: list[dict]) -> None:
    """InputError when an input (by digest) was added to the index before."""
    known = input_digests(snapshots)
    for item in inputs:
        if item["digest"] in known and item["documents"]:
            raise InputError(f"{item['name']}: this input was added to the index before (as "
                             f"{known[item['digest']]}, digest {item['digest']}); adding it again "
                             "would flag every document of it: pass --force to add it anyway")


# -- describing an index ---------------------------------------------------------------------------
def describe(state: LSHBloomState) -> dict:
    """Parameters, documents, snapshots and, for a Bloom filter, its layers with their fill and
    the false-positive rate a unique document meets now (estimated from the bits set: per layer
    (bits set / bits)^hashes per key, over every band key of the document and every layer), next
    to the bound the layers' plan promises (the sum of their rates, below fp_prob)."""
    bands, rows = state.bands_rows
    info: dict = {"mode": state.params.mode, "params": state.params.to_dict(), "bands": bands,
                  "rows": rows, "documents": int(state.n_documents),
                  "snapshots": [dict(s) for s in state.snapshots]}
    if state.params.mode == "minhash_lsh":
        assert state.band_table is not None
        info["band_entries"] = int(state.band_table.num_keys)
        info["bytes"] = int(state.band_table.num_keys) * 16
        return info
    bloom = state.bloom
    assert bloom is not None
    layers, clear = [], 1.0
    for i, (layer, count, rate) in enumerate(zip(bloom.layers, bloom.documents, bloom.rates)):
        fill = layer.bits_set() / layer.num_bits
        key_fp = fill ** layer.num_hashes
        clear *= (1.0 - key_fp) ** bands
        layers.append({"documents": int(count), "capacity": bloom.layer_capacity(i),
                       "rate": rate, "num_bits": layer.num_bits, "num_hashes": layer.num_hashes,
                       "bytes": int(layer.bits.nbytes), "fill": fill})
    info.update(bytes=bloom.size_bytes, fp_prob=bloom.fp_prob, fp_bound=math.fsum(bloom.rates),
                fp_now=1.0 - clear, layers=layers)
    return info
