"""datatrove pipeline steps: clean Documents with a phrase list, drop near-duplicates.

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter
    from corpus_miner.integrations.datatrove import CleanPhrases, LSHBloomFilter

    LocalPipelineExecutor(pipeline=[
        JsonlReader("pages/"),
        CleanPhrases(phrases="phrases.tsv", mode="remove"),
        LSHBloomFilter(index="dedup-index/", threshold=0.85),
        JsonlWriter("clean/"),
    ], tasks=1).run()

`CleanPhrases` gives each Document the text `corpus-miner clean --phrases FILE` gives it (or,
in annotate mode, `junk_spans` and `junk_share` in its metadata); it keeps no state between
documents, so it runs on any number of tasks. `LSHBloomFilter` is one filter holding one index,
so it runs on one task (tasks=1; the reader before it may still read many files): it flags
exactly what `corpus-miner dedup --expected-items N` flags on the same documents in the same
order, and keeps its index in a DataFolder (local or any fsspec URL) that the next run loads and
extends, so documents of later runs are matched against those of earlier ones. On many tasks,
`LSHBloomSignatures` (band keys per rank) -> `LSHBloomMerge` (one task) -> `LSHBloomRemove` give
the same flags over the ranks' documents in rank order.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from corpus_miner._extras import require

require("datatrove", "datatrove", "corpus_miner.integrations.datatrove")

from datatrove.data import DocumentsPipeline  # noqa: E402
from datatrove.io import DataFolderLike, get_datafolder  # noqa: E402
from datatrove.pipeline.base import PipelineStep  # noqa: E402
from datatrove.pipeline.filters.base_filter import BaseFilter  # noqa: E402
from datatrove.pipeline.writers.disk_base import DiskWriter  # noqa: E402
from datatrove.utils.batching import batched  # noqa: E402

from corpus_miner.coverage.clean import DEFAULT_MASK  # noqa: E402
from corpus_miner.coverage.phrase_cleaner import PhraseCleaner  # noqa: E402
from corpus_miner.errors import InputError, ParameterError  # noqa: E402

__all__ = ["CleanPhrases", "LSHBloomFilter", "LSHBloomMerge", "LSHBloomRemove",
           "LSHBloomSignatures"]

_INDEX_METADATA = "metadata.json"


class CleanPhrases(PipelineStep):
    """Apply a phrase list to Documents, as `corpus-miner clean --phrases PATH` does.

    Parameters
    ----------
    phrases : str, path or sequence of str
        A phrase file (output of `corpus-miner phrases`, possibly edited) or the phrases.
    mode : {"remove", "mask", "annotate"}
        remove / mask change `Document.text`; annotate leaves it and adds `junk_spans`
        ([start, end) character offsets) and `junk_share` to `Document.metadata`.
    allow, drop_above, mask_text
        As `corpus-miner clean --allow / --drop-above / --mask-text`.
    batch_size : int
        Documents cleaned in one kernel call.

    Counters (stat_update): `total`, `forwarded`, `changed`, `dropped` (over drop_above)
    documents; `tokens` and `tokens_handled` per document.
    """

    name = "✂️ corpus-miner clean"
    type = "✂️ - FORMAT"

    def __init__(self, phrases, mode: str = "remove", allow=(), drop_above: float | None = None,
                 mask_text: str = DEFAULT_MASK, batch_size: int = 1000):
        super().__init__()
        if batch_size < 1:
            raise ParameterError(f"batch_size must be >= 1, got {batch_size}")
        self.cleaner = PhraseCleaner(phrases, mode, allow, drop_above, mask_text)
        self.batch_size = batch_size

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1
            ) -> DocumentsPipeline:
        annotate = self.cleaner.params.mode == "annotate"
        for batch in batched(data or (), self.batch_size):
            with self.track_time("batch"):
                result = self.cleaner.clean_arrow([doc.text for doc in batch])
                texts = None if annotate else result.texts.to_pylist()
                spans = result.junk_spans.to_pylist() if annotate else None
            for i, doc in enumerate(batch):
                self.stat_update("total")
                self.stat_update("tokens", value=int(result.tokens[i]))
                self.stat_update("tokens_handled", value=int(result.handled[i]))
                if not result.keep[i]:
                    self.stat_update("dropped")
                    continue
                if result.handled[i]:
                    self.stat_update("changed")
                if annotate:
                    assert spans is not None
                    doc.metadata["junk_spans"] = spans[i]
                    doc.metadata["junk_share"] = float(result.junk_share[i])
                else:
                    assert texts is not None
                    doc.text = texts[i]
                self.stat_update("forwarded")
                yield doc


def _is_local(folder) -> bool:
    from fsspec.implementations.local import LocalFileSystem

    fs = folder.fs
    while hasattr(fs, "fs") and not isinstance(fs, LocalFileSystem):  # wrappers (dirfs, cache)
        fs = fs.fs
    return isinstance(fs, LocalFileSystem)


class LSHBloomFilter(BaseFilter):
    """Drop (or, with annotate, flag) Documents that are near-duplicates of an earlier one, with
    an LSHBloom index kept in a DataFolder.

    Parameters
    ----------
    index : DataFolderLike, optional
        Where the index lives (a path, a URL, (URL, storage options) or a DataFolder). An index
        found there is loaded and extended: documents are matched against every document of
        earlier runs too; the extended index is written back when the step has seen its last
        document. None: no index is kept.
    annotate : bool
        Keep every document and set `metadata["is_duplicate"]` (and, in mode minhash_lsh,
        `metadata["duplicate_of"]`, the id of the earliest match) instead of dropping.
    exclusion_writer : DiskWriter, optional
        Where dropped documents go (datatrove's filters' convention).
    batch_size : int
        Documents hashed in one kernel call.
    **params
        LSHBloom's parameters (threshold, num_perm, mode, num_bands, fp_prob, shingle_size,
        expected_items, seed, max_shingles, sketch, shingle_kind). With a saved index they must
        be those it was built with (expected_items aside).

    Runs on one task: the index is one filter over the documents in order. The answers are
    those of `corpus-miner dedup --expected-items N` over the same documents (same order, same
    parameters). Counters: datatrove's `total`, `forwarded`, `dropped`, and `duplicates`.
    """

    name = "🌸 corpus-miner LSHBloom"

    def __init__(self, index: DataFolderLike | None = None, annotate: bool = False,
                 exclusion_writer: DiskWriter | None = None, batch_size: int = 1000, **params):
        super().__init__(exclusion_writer, batch_size)
        from corpus_miner.dedup import LSHBloom

        self.index = None if index is None else get_datafolder(index)
        self.annotate = annotate
        LSHBloom(**params).params.validated()  # a bad parameter fails here, not in a worker
        self.lshbloom_params = params
        self.model = None

    def _open(self):
        """The LSHBloom to continue from: the saved index, or a new one."""
        from corpus_miner.dedup import LSHBloom

        fresh = LSHBloom(**self.lshbloom_params)
        if self.index is None or not self.index.exists(_INDEX_METADATA):
            return fresh
        if _is_local(self.index):
            model = LSHBloom.load(self.index.path)
        else:
            workdir = tempfile.mkdtemp(prefix="corpus-miner-index-")
            try:
                for name in self.index.list_files():
                    target = os.path.join(workdir, *name.split("/"))
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    self.index.get_file(name, target)
                model = LSHBloom.load(workdir)
            finally:
                shutil.rmtree(workdir, ignore_errors=True)
        wanted = fresh.params.validated().to_dict()
        saved = model.params_.to_dict()
        differ = sorted(k for k in wanted if k != "expected_items" and wanted[k] != saved.get(k))
        if differ:
            raise ParameterError(f"{self.index.path}: the saved index was built with "
                                 + ", ".join(f"{k}={saved.get(k)!r}" for k in differ)
                                 + "; pass the same parameters or use another index folder")
        return model

    def _save(self) -> None:
        assert self.model is not None and self.index is not None
        if _is_local(self.index):
            self.model.save(self.index.path)
            return
        workdir = tempfile.mkdtemp(prefix="corpus-miner-index-")
        try:
            root = os.path.join(workdir, "index")
            self.model.save(root)
            names = [os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
                     for folder, _, files in os.walk(root) for name in files
                     if not name.startswith(".")]  # the writer's lock stays behind
            # the top metadata.json last: a reader that finds it finds what it names
            for name in sorted(names, key=lambda n: (n == _INDEX_METADATA, n)):
                self.index.put_file(os.path.join(root, *name.split("/")), name)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def filter_batch(self, batch: list) -> list:
        assert self.model is not None
        result = self.model.deduplicate([doc.text or "" for doc in batch],
                                         [doc.id for doc in batch], update=True)
        for i, doc in enumerate(batch):
            if result.is_duplicate[i]:
                self.stat_update("duplicates")
            if self.annotate:
                doc.metadata["is_duplicate"] = bool(result.is_duplicate[i])
                if result.duplicate_of_id is not None:
                    doc.metadata["duplicate_of"] = result.duplicate_of_id[i]
        if self.annotate:
            return [True] * len(batch)
        return [not dup for dup in result.is_duplicate]

    def filter(self, doc) -> bool:
        return bool(self.filter_batch([doc])[0])

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1
            ) -> DocumentsPipeline:
        if world_size != 1:
            raise ParameterError(f"LSHBloomFilter holds one index over the documents in order, "
                                 f"so it runs on one task (tasks=1), not {world_size}")
        model = self.model = self._open()
        yield from super().run(data, rank, world_size)
        if self.index is not None and model.is_fitted():
            self._save()


# ------------------------------------------------------------- LSHBloom on many tasks

_KEYS, _IDS, _FLAGS, _PARAMS = "{:05d}.band_keys.npy", "{:05d}.ids.json", \
    "{:05d}.duplicates.json", "{:05d}.params.json"


def _model(params: dict):
    from corpus_miner.dedup import LSHBloom

    model = LSHBloom(**params)
    model.params.validated()  # a bad parameter fails when the pipeline is built
    return model


class LSHBloomSignatures(PipelineStep):
    """Stage 1 of 3 (any number of tasks): the band keys of each task's documents, written to
    `output_folder` as `RANK.band_keys.npy` with the ids (and the parameters) beside them.
    Nothing is yielded: stage 3 reads the documents again. **params: LSHBloom's."""

    name = "🌸 corpus-miner LSHBloom signatures"
    type = "🫂 - DEDUP"

    def __init__(self, output_folder: DataFolderLike, batch_size: int = 1000, **params):
        super().__init__()
        _model(params)
        self.output_folder = get_datafolder(output_folder)
        self.batch_size = batch_size
        self.lshbloom_params = params

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1
            ) -> DocumentsPipeline:
        import json

        import numpy as np

        model = _model(self.lshbloom_params)
        keys, ids = [], []
        for batch in batched(data or (), self.batch_size):
            with self.track_time("batch"):
                keys.append(model._band_keys([doc.text or "" for doc in batch]))
            ids += [doc.id for doc in batch]
            self.stat_update("total", value=len(batch))
        bands = model.params.validated().bands_rows[0]
        with self.output_folder.open(_KEYS.format(rank), "wb") as f:
            np.save(f, np.concatenate(keys) if keys else np.zeros((0, bands), np.uint64))
        with self.output_folder.open(_IDS.format(rank), "wt") as f:
            json.dump(ids, f)
        with self.output_folder.open(_PARAMS.format(rank), "wt") as f:  # last: the rank is done
            json.dump(model.params.validated().to_dict(), f, sort_keys=True)
        return
        yield  # a generator that yields nothing


class LSHBloomMerge(PipelineStep):
    """Stage 2 of 3 (one task): the documents of all ranks in rank order (rank 0's first, each
    rank's in its reading order) deduplicated against each other and, with `index`, against
    every document of earlier runs; writes `RANK.duplicates.json` per rank to `output_folder`
    and the extended index back to `index`. The answers are those of `corpus-miner dedup
    --expected-items N` over the ranks' inputs in that order."""

    name = "🌸 corpus-miner LSHBloom merge"
    type = "🫂 - DEDUP"

    def __init__(self, input_folder: DataFolderLike, output_folder: DataFolderLike,
                 index: DataFolderLike | None = None, **params):
        super().__init__()
        _model(params)
        self.input_folder = get_datafolder(input_folder)
        self.output_folder = get_datafolder(output_folder)
        self.index = index
        self.lshbloom_params = params

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1
            ) -> DocumentsPipeline:
        import json

        import numpy as np

        if world_size != 1:
            raise ParameterError(f"LSHBloomMerge joins every rank's band keys in one index, so "
                                 f"it runs on one task (tasks=1), not {world_size}")
        holder = LSHBloomFilter(self.index, **self.lshbloom_params)
        model = holder.model = holder._open()
        wanted = json.dumps(_model(self.lshbloom_params).params.validated().to_dict(),
                            sort_keys=True)
        ranks = sorted(int(name.split(".")[0]) for name in self.input_folder.list_files()
                       if name.endswith(".params.json"))
        if ranks != list(range(len(ranks))):
            raise InputError(f"{self.input_folder.path}: signatures of ranks {ranks}; every rank "
                             "of stage 1 must have finished (0, 1, 2, ...)")
        for r in ranks:
            with self.input_folder.open(_PARAMS.format(r), "rt") as f:
                if json.dumps(json.load(f), sort_keys=True) != wanted:
                    raise ParameterError(f"{self.input_folder.path}: rank {r}'s band keys were "
                                         "made with other LSHBloom parameters than this merge's")
            with self.input_folder.open(_KEYS.format(r), "rb") as f:
                keys = np.load(f)
            with self.input_folder.open(_IDS.format(r), "rt") as f:
                ids = json.load(f)
            result = model._deduplicate_keys(keys, ids, update=True)
            flags = {"is_duplicate": result.is_duplicate.tolist()}
            if result.duplicate_of_id is not None:
                flags["duplicate_of"] = result.duplicate_of_id
            with self.output_folder.open(_FLAGS.format(r), "wt") as f:
                json.dump(flags, f)
            self.stat_update("total", value=len(ids))
            self.stat_update("duplicates", value=int(result.is_duplicate.sum()))
        if holder.index is not None and model.is_fitted():
            holder._save()
        return
        yield  # a generator that yields nothing


class LSHBloomRemove(BaseFilter):
    """Stage 3 of 3 (the tasks of stage 1, reading the same inputs): drop the documents stage 2
    flagged (annotate: keep them with `metadata["is_duplicate"]`, and `duplicate_of` in mode
    minhash_lsh). A rank that reads more or fewer documents than it signed is refused."""

    name = "🌸 corpus-miner LSHBloom remove"

    def __init__(self, input_folder: DataFolderLike, annotate: bool = False,
                 exclusion_writer: DiskWriter | None = None):
        super().__init__(exclusion_writer)
        self.input_folder = get_datafolder(input_folder)
        self.annotate = annotate

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1
            ) -> DocumentsPipeline:
        import json

        with self.input_folder.open(_FLAGS.format(rank), "rt") as f:
            self._flags = json.load(f)
        self._seen = 0
        yield from super().run(data, rank, world_size)
        if self._seen != len(self._flags["is_duplicate"]):
            raise InputError(f"rank {rank} read {self._seen} documents but signed "
                             f"{len(self._flags['is_duplicate'])}; the inputs changed since "
                             "stage 1, run it again")

    def filter(self, doc) -> bool:
        i = self._seen
        if i >= len(self._flags["is_duplicate"]):
            raise InputError("this rank reads more documents than it signed in stage 1; the "
                             "inputs changed, run it again")
        self._seen += 1
        duplicate = bool(self._flags["is_duplicate"][i])
        if self.annotate:
            doc.metadata["is_duplicate"] = duplicate
            if "duplicate_of" in self._flags:
                doc.metadata["duplicate_of"] = self._flags["duplicate_of"][i]
            return True
        return not duplicate
