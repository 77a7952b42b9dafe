"""Save / load a fitted LSHBloom as one index folder, the format both engines read and write.

Folder: metadata.json {"format": "corpus-miner/lsh-index", "version": 1, "params": {...},
"bands", "rows", "n_documents", "mode", ...} plus, for lshbloom, bits.bin (the Bloom filter bytes,
bit i = byte i // 8, bit i % 8) with "bloom": {"num_bits", "num_hashes"}; for minhash_lsh,
band_keys.bin (uint64, sorted) + first_doc.bin (int64 ordinals) + ids.arrow (Arrow IPC stream of
the document ids in indexed order).
"""

from __future__ import annotations

import pyarrow as pa

from corpus_miner.dedup.bandtable import BandTable
from corpus_miner.dedup.bloom import BloomFilter
from corpus_miner.dedup.params import LSHBloomParams
from corpus_miner.io.artefact import read_array, read_blob, read_metadata, write_index_dir
from corpus_miner.errors import FormatError, ParameterError

INDEX_FORMAT = "corpus-miner/lsh-index"
INDEX_VERSION = 1


def _ids_blob(ids: pa.Array) -> bytes:
    sink = pa.BufferOutputStream()
    table = pa.table({"id": ids})
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _ids_from_blob(path, raw: bytes) -> pa.Array:
    try:
        table = pa.ipc.open_stream(pa.py_buffer(raw)).read_all()
        return table.column("id").combine_chunks()
    except (pa.ArrowInvalid, KeyError) as exc:
        raise FormatError(f"{path}: ids.arrow is not a valid id table ({exc}); rebuild the index") from None


def save_index(path, model) -> None:
    meta = {"format": INDEX_FORMAT, "version": INDEX_VERSION, "mode": model.params_.mode,
            "params": model.params_.to_dict(), "bands": model.bands_, "rows": model.rows_,
            "n_documents": model.n_documents_}
    if model.params_.mode == "lshbloom":
        meta["bloom"] = {"num_bits": model.index_.num_bits, "num_hashes": model.index_.num_hashes}
        write_index_dir(path, meta, {"bits.bin": model.index_.bits})
        return
    keys, docs = model.index_.items()
    ids = pa.chunked_array(model.ids_).combine_chunks() if model.ids_ else pa.array([], pa.int64())
    meta["band_entries"] = int(len(keys))
    write_index_dir(path, meta, {"band_keys.bin": keys, "first_doc.bin": docs},
                    {"ids.arrow": _ids_blob(ids)})


def load_index(cls, path):
    meta = read_metadata(path, INDEX_FORMAT, (INDEX_VERSION,))
    try:
        params = LSHBloomParams.from_dict(meta["params"])
        bands, rows = int(meta["bands"]), int(meta["rows"])
        n_documents = int(meta["n_documents"])
    except (KeyError, TypeError, ValueError, ParameterError) as exc:
        raise FormatError(f"{path}: metadata.json has bad or missing parameters ({exc}); "
                          "rebuild the index") from None
    if (bands, rows) != params.bands_rows:
        raise FormatError(f"{path}: stored bands/rows {bands}x{rows} do not follow from its "
                          f"parameters ({params.bands_rows}); the file was edited, rebuild it")
    if params.mode == "lshbloom":
        bloom_meta = meta.get("bloom") if isinstance(meta.get("bloom"), dict) else {}
        bloom = BloomFilter.from_metadata(path, {**bloom_meta, "arrays": meta["arrays"]})
        return cls.from_state(params, bloom, n_documents)
    keys = read_array(path, meta, "band_keys.bin")
    docs = read_array(path, meta, "first_doc.bin")
    ids = _ids_from_blob(path, read_blob(path, meta, "ids.arrow"))
    if len(keys) != len(docs) or len(ids) != n_documents:
        raise FormatError(f"{path}: band table arrays disagree in length; rebuild the index")
    return cls.from_state(params, BandTable.from_items(keys, docs), n_documents, ids)
