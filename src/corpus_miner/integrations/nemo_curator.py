"""NeMo Curator stages: clean DocumentBatches with a phrase list, find near-duplicates on CPUs.

    from nemo_curator.pipeline import Pipeline
    from nemo_curator.stages.text.io.reader import JsonlReader
    from nemo_curator.stages.text.io.writer import JsonlWriter
    from corpus_miner.integrations.nemo_curator import CleanPhrasesStage

    Pipeline(name="clean", stages=[
        JsonlReader("pages/"),
        CleanPhrasesStage(phrases="phrases.tsv", mode="remove"),
        JsonlWriter("clean/"),
    ]).run()

`CleanPhrasesStage` gives each row the text `corpus-miner clean --phrases FILE` gives it (or,
in annotate mode, `junk_spans` and `junk_share` columns); it keeps no state between batches, so
it runs on any number of workers.

Near-duplicates take the shape of NeMo Curator's own fuzzy deduplication: identification writes
the ids to remove, and Curator's `TextDuplicatesRemovalWorkflow` (or `TextDuplicatesRemovalStage`)
removes them. `LSHBloomSignaturesStage` (any number of workers) writes each batch's band keys with
its ids; `identify_duplicates` (one process) deduplicates them in ascending id order, optionally
against a saved index that it extends, and writes the duplicate ids as Parquet with one `id`
column. The flags are those of `corpus-miner dedup` over the documents sorted by id, so with
Curator's generated ids (`_curator_dedup_id`, monotonically increasing over the input files) the
first copy of each cluster in reading order is kept. This is a CPU path: Curator's own fuzzy
deduplication needs GPUs.
"""

from __future__ import annotations

import json
import posixpath
import uuid

import numpy as np
import pyarrow as pa

from corpus_miner._extras import require

require("nemo_curator", "nemo", "corpus_miner.integrations.nemo_curator")

from nemo_curator.stages.base import ProcessingStage  # noqa: E402
from nemo_curator.tasks import DocumentBatch  # noqa: E402

from corpus_miner.coverage.clean import DEFAULT_MASK  # noqa: E402
from corpus_miner.coverage.phrase_cleaner import PhraseCleaner  # noqa: E402
from corpus_miner.dedup.params import refuse_other_params  # noqa: E402
from corpus_miner.errors import InputError, ParameterError  # noqa: E402

__all__ = ["CleanPhrasesStage", "LSHBloomSignaturesStage", "identify_duplicates",
           "CURATOR_DEDUP_ID", "DUPLICATE_IDS_SUBDIR"]

# Curator's generated document id (nemo_curator.stages.deduplication.id_generator)
CURATOR_DEDUP_ID = "_curator_dedup_id"
DUPLICATE_IDS_SUBDIR = "LSHBloomDuplicateIds"
_PARAMS_FILE = "params.json"


def _column(table: pa.Table, name: str, what: str) -> pa.ChunkedArray:
    if name not in table.column_names:
        raise InputError(f"the batch has no {what} column {name!r} (it has "
                         f"{', '.join(map(repr, table.column_names)) or 'none'})")
    return table.column(name)


class CleanPhrasesStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Apply a phrase list to the text column of DocumentBatches, as `corpus-miner clean
    --phrases PATH` does.

    Parameters
    ----------
    phrases : str, path or sequence of str
        A phrase file (output of `corpus-miner phrases`, possibly edited) or the phrases.
    mode : {"remove", "mask", "annotate"}
        remove / mask replace the text column; annotate keeps it and adds the columns
        `junk_spans` ([start, end) character offsets) and `junk_share`.
    text_field : str
        The column holding the texts.
    allow, drop_above, mask_text
        As `corpus-miner clean --allow / --drop-above / --mask-text`; rows over drop_above are
        left out of the batch.

    Example
    -------
    >>> import pyarrow as pa
    >>> from nemo_curator.tasks import DocumentBatch
    >>> stage = CleanPhrasesStage(["accept all cookies"])
    >>> batch = DocumentBatch(dataset_name="pages",
    ...                       data=pa.table({"text": ["Hi. Accept all cookies."]}))
    >>> stage.process(batch).to_pyarrow().column("text").to_pylist()
    ['Hi.']
    """

    name = "corpus_miner_clean_phrases"

    def __init__(self, phrases, mode: str = "remove", text_field: str = "text", allow=(),
                 drop_above: float | None = None, mask_text: str = DEFAULT_MASK):
        self.cleaner = PhraseCleaner(phrases, mode, allow, drop_above, mask_text)
        self.text_field = text_field

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [self.text_field]

    def outputs(self) -> tuple[list[str], list[str]]:
        if self.cleaner.params.mode == "annotate":
            return ["data"], [self.text_field, "junk_spans", "junk_share"]
        return ["data"], [self.text_field]

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.to_pyarrow()
        texts = _column(table, self.text_field, "text")
        result = self.cleaner.clean_arrow(texts)
        if self.cleaner.params.mode == "annotate":
            share = pa.array(result.junk_share, pa.float64(), mask=~_valid(texts))
            table = table.append_column("junk_spans", result.junk_spans) \
                         .append_column("junk_share", share)
        else:
            where = table.column_names.index(self.text_field)
            table = table.set_column(where, self.text_field, result.texts)
        if not result.keep.all():
            table = table.filter(pa.array(result.keep))
        self._log_metrics({"documents": float(len(result.keep)),
                           "documents_dropped": float((~result.keep).sum()),
                           "tokens": float(result.tokens.sum()),
                           "tokens_handled": float(result.handled.sum())})
        return DocumentBatch(dataset_name=task.dataset_name, data=table,
                             _metadata=task._metadata, _stage_perf=task._stage_perf)


def _valid(texts: pa.ChunkedArray) -> np.ndarray:
    import pyarrow.compute as pc

    return np.asarray(pc.is_valid(texts).to_numpy(zero_copy_only=False), dtype=bool)


def _model(params: dict):
    from corpus_miner.dedup import LSHBloom

    model = LSHBloom(**params)
    model.params.validated()  # a bad parameter fails when the pipeline is built
    return model


def _filesystem(path: str, storage_options: dict | None):
    from fsspec.core import url_to_fs

    return url_to_fs(path, **(storage_options or {}))


class LSHBloomSignaturesStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Stage 1 of near-duplicate identification (any number of workers): each batch's LSHBloom
    band keys and ids, written as one Parquet file under `output_path` (local or any fsspec
    URL). The batch passes on unchanged.

    Parameters
    ----------
    output_path : str
        Folder of the signature files (then read by `identify_duplicates`).
    text_field, id_field : str
        The text column and the id column (unique, sortable: ints or strings); the duplicates
        are decided in ascending id order.
    storage_options : dict, optional
        fsspec options for `output_path`.
    **params
        LSHBloom's parameters (threshold, num_perm, mode, num_bands, fp_prob, shingle_size,
        expected_items, seed, max_shingles, sketch, shingle_kind); `identify_duplicates` must
        get the same ones.
    """

    name = "corpus_miner_lshbloom_signatures"

    def __init__(self, output_path: str, text_field: str = "text",
                 id_field: str = CURATOR_DEDUP_ID, storage_options: dict | None = None,
                 **params):
        self.params_dict = _model(params).params.validated().to_dict()
        self.lshbloom_params = params
        self.output_path = output_path
        self.text_field = text_field
        self.id_field = id_field
        self.storage_options = storage_options

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [self.text_field, self.id_field]

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], [self.text_field, self.id_field]

    def setup(self, worker_metadata=None) -> None:
        fs, root = _filesystem(self.output_path, self.storage_options)
        fs.makedirs(root, exist_ok=True)
        with fs.open(posixpath.join(root, _PARAMS_FILE), "w") as f:
            json.dump(self.params_dict, f, sort_keys=True)

    def process(self, task: DocumentBatch) -> DocumentBatch:
        import pyarrow.parquet as pq

        table = task.to_pyarrow()
        texts = _column(table, self.text_field, "text").to_pylist()
        ids = _column(table, self.id_field, "id").combine_chunks()
        if ids.null_count:
            raise InputError(f"the id column {self.id_field!r} has nulls")
        keys = _model(self.lshbloom_params)._band_keys([t or "" for t in texts])
        bands = keys.shape[1]
        flat = pa.array(np.ascontiguousarray(keys).reshape(-1), pa.uint64())
        signatures = pa.table({"id": ids, "band_keys": pa.FixedSizeListArray.from_arrays(
            flat, bands)})
        fs, root = _filesystem(self.output_path, self.storage_options)
        name = posixpath.join(root, f"{uuid.uuid4().hex}.parquet")
        # written whole to a temporary name, then renamed: the merge never reads half a file
        with fs.open(name + ".tmp", "wb") as f:
            pq.write_table(signatures, f)
        fs.mv(name + ".tmp", name)
        self._log_metrics({"documents": float(len(ids))})
        return task


def identify_duplicates(signatures_path: str, output_path: str, index: str | None = None,
                        storage_options: dict | None = None, **params) -> int:
    """Stage 2 of near-duplicate identification (one process): every signature file under
    `signatures_path` deduplicated in ascending id order (and, with `index`, against the
    documents of an LSHBloom index saved there, which is then extended and saved back);
    the duplicate ids are written to `output_path/LSHBloomDuplicateIds/` as Parquet with one
    `id` column, the form Curator's `TextDuplicatesRemovalWorkflow(ids_to_remove_path=...,
    duplicate_id_field="id")` reads. Returns the number of duplicates.

    The flags are those of `corpus-miner dedup` (and `LSHBloom().deduplicate`) over the
    documents sorted by id with the same parameters; `params` must be those of the signature
    stage (ParameterError otherwise). Duplicate ids are refused (InputError).
    """
    import pyarrow.parquet as pq

    from corpus_miner.dedup import LSHBloom

    if index is not None and "://" in str(index):
        raise ParameterError(f"index={index!r}: the index is a local folder here (copy it from "
                             "the object store first, or use the datatrove steps, whose index "
                             "lives in a DataFolder)")
    model = _model(params)
    validated = model.params.validated()
    wanted, bands = validated.to_dict(), validated.bands_rows[0]
    fs, root = _filesystem(signatures_path, storage_options)
    params_file = posixpath.join(root, _PARAMS_FILE)
    if not fs.exists(params_file):
        raise InputError(f"{signatures_path}: no signatures here (no {_PARAMS_FILE}); run "
                         "LSHBloomSignaturesStage first")
    with fs.open(params_file, "r") as f:
        signed = json.load(f)
    refuse_other_params(wanted, signed, signatures_path, "the signatures were made",
                        "pass the same parameters")
    files = sorted(p for p in fs.find(root) if p.endswith(".parquet"))
    tables = []
    for path in files:
        with fs.open(path, "rb") as f:
            tables.append(pq.read_table(f))
    if tables:
        table = pa.concat_tables(tables, promote_options="permissive")
    else:
        table = pa.table({"id": pa.array([], pa.int64()),
                          "band_keys": pa.array([], pa.list_(pa.uint64(), bands))})
    table = table.sort_by("id")
    ids = table.column("id").combine_chunks()
    if len(ids) > 1:
        import pyarrow.compute as pc

        if pc.any(pc.equal(ids[1:], ids[:-1])).as_py():
            raise InputError(f"{signatures_path}: an id occurs more than once (ids must be "
                             "unique: the order of the duplicates is the order of the ids)")
    keys_column = table.column("band_keys").combine_chunks()
    width = keys_column.type.list_size
    keys = keys_column.flatten().to_numpy(zero_copy_only=False).reshape(-1, width) \
        if len(keys_column) else np.zeros((0, width), np.uint64)

    if index is not None and _index_exists(index):
        model = LSHBloom.load(index)
        refuse_other_params(wanted, model.params_.to_dict(), index, "the saved index was built",
                            "pass the same parameters or use another index folder")
    result = model._deduplicate_keys(keys, ids.to_pylist(), update=True)
    duplicates = ids.filter(pa.array(result.is_duplicate))
    out_fs, out_root = _filesystem(output_path, storage_options)
    folder = posixpath.join(out_root, DUPLICATE_IDS_SUBDIR)
    out_fs.makedirs(folder, exist_ok=True)
    target = posixpath.join(folder, "part-00000.parquet")
    with out_fs.open(target + ".tmp", "wb") as f:
        pq.write_table(pa.table({"id": duplicates}), f)
    out_fs.mv(target + ".tmp", target)
    if index is not None:
        model.save(index)
    return len(duplicates)


def _index_exists(index: str) -> bool:
    import os

    return os.path.exists(os.path.join(index, "metadata.json"))
