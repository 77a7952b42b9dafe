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
extends, so documents of later runs are matched against those of earlier ones.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from corpus_miner.integrations._require import require

require("datatrove", "datatrove", "corpus_miner.integrations.datatrove")

from datatrove.data import DocumentsPipeline  # noqa: E402
from datatrove.io import DataFolderLike, get_datafolder  # noqa: E402
from datatrove.pipeline.base import PipelineStep  # noqa: E402
from datatrove.pipeline.filters.base_filter import BaseFilter  # noqa: E402
from datatrove.pipeline.writers.disk_base import DiskWriter  # noqa: E402
from datatrove.utils.batching import batched  # noqa: E402

from corpus_miner.coverage.clean import DEFAULT_MASK  # noqa: E402
from corpus_miner.coverage.phrase_cleaner import PhraseCleaner  # noqa: E402
from corpus_miner.errors import ParameterError  # noqa: E402

__all__ = ["CleanPhrases", "LSHBloomFilter"]

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
                    self.index.get_file(name, os.path.join(workdir, name))
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
            self.model.save(os.path.join(workdir, "index"))
            names = sorted(os.listdir(os.path.join(workdir, "index")))
            # metadata.json last: a reader that finds it finds the arrays it names
            for name in sorted(names, key=lambda n: n == _INDEX_METADATA):
                self.index.put_file(os.path.join(workdir, "index", name), name)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def filter_batch(self, batch: list) -> list:
        assert self.model is not None
        result = self.model.partial_deduplicate([doc.text or "" for doc in batch],
                                                [doc.id for doc in batch])
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
