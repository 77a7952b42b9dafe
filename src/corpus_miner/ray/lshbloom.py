"""RayLSHBloom: the local LSHBloom's near-duplicate detection on Ray, with its index format.

The costly part of a deduplication, shingling and MinHash, runs in Ray tasks with the local
kernels (dedup.pipeline), one task per block. What needs no order runs in the tasks too: fit and
partial_fit (mode lshbloom) fill one Bloom filter per block in the shape of the layer its rows
fall in, OR-ed into that layer on the driver (Bloom bits do not depend on the order of the
inserts); query ships the index to the tasks once (object store) and asks it there.

deduplicate decides row by row: a row is a duplicate when it shares a band key with any EARLIER
row, so the driver takes the blocks' band keys in block order and decides with the local
LSHBloom, at most `in_flight` blocks' keys waiting for it (its memory: the index and those keys,
whatever the number of rows). The flags, and the index, are therefore the local engine's, byte
for byte, including Bloom false positives between rows of one block. minhash_lsh keeps its band
table on the driver (the index it saves), filled the same way.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from corpus_miner._extras import require
from corpus_miner.dedup.bandtable import BandTable
from corpus_miner.dedup.lshbloom import LSHBloom
from corpus_miner.dedup.params import (
    DEFAULT_FP_PROB,
    DEFAULT_SKETCH,
    LSHBloomParams,
)
from corpus_miner.dedup.persist import load_state, save_state
from corpus_miner.dedup.result import DedupResult
from corpus_miner.dedup.scalable_bloom import ScalableBloomFilter
from corpus_miner.dedup.state import LSHBloomState
from corpus_miner.errors import ParameterError
from corpus_miner.estimator import Estimator

ray = require("ray", "ray", "the Ray engine")

from corpus_miner.ray.dedup import block_texts, ordered_keys  # noqa: E402
from corpus_miner.ray.documents import (  # noqa: E402
    block_offsets,
    blocks_of,
    input_paths,
    one_line_errors,
)


@ray.remote
def _block_filters(block: pa.Table, params: LSHBloomParams, text_col: str, first: int,
                   runs: list[tuple[int, int, int, int, int]]) -> list:
    """[(layer, BloomFilter)] of the block's rows: rows first..first+n-1 of the documents added,
    each run (start, stop, layer, num_bits, num_hashes) of them filling a filter of its layer's
    shape (ScalableBloomFilter.reserve's runs)."""
    from corpus_miner.dedup.bloom import BloomFilter
    from corpus_miner.dedup.pipeline import band_keys_for_texts

    keys = band_keys_for_texts(block_texts(block, text_col), params)
    filled = []
    for start, stop, layer, num_bits, num_hashes in runs:
        lo, hi = max(start - first, 0), min(stop - first, len(keys))
        if lo < hi:
            bloom = BloomFilter(num_bits, num_hashes)
            bloom.add(keys[lo:hi].ravel())
            filled.append((layer, bloom))
    return filled


@ray.remote(num_returns=2)
def _block_query(block: pa.Table, state: LSHBloomState, text_col: str, return_band_keys: bool,
                 first: int) -> tuple[DedupResult, tuple[int, int]]:
    """The local LSHBloom.query of the block's texts against the shipped index, and the digest
    (documents, value) of the texts at their global indexes (first: the block's first)."""
    from corpus_miner.io.digest import OrderedDigest

    texts = block_texts(block, text_col)
    digest = OrderedDigest()
    digest.update(texts, first)
    index = LSHBloom.from_state(state, copy=False)  # read-only: the object store's arrays
    return index.query(texts, return_band_keys=return_band_keys), digest.state()


@ray.remote
def _with_flags(block: pa.Table, found: DedupResult, annotate: bool, id_type: pa.DataType | None,
                internal: tuple[str, ...]) -> pa.Table:
    """The block's unique rows, or all of them with is_duplicate (and duplicate_of, of id_type,
    unless None; band_keys when found has them); internal: the block's own columns to drop."""
    flags = pa.array(found.is_duplicate, pa.bool_())
    block = block.drop_columns([n for n in internal if n in block.column_names])
    if not annotate:
        return block.filter(pc.invert(flags))
    out = block.drop_columns([n for n in ("is_duplicate", "duplicate_of", "band_keys")
                              if n in block.column_names]).append_column("is_duplicate", flags)
    if id_type is not None:
        out = out.append_column("duplicate_of", pa.array(found.duplicate_of_id, id_type))
    if found.band_keys is not None:
        keys = np.ascontiguousarray(found.band_keys).view(np.int64)  # Spark's array<bigint>
        offsets = pa.array(np.arange(0, keys.size + 1, max(keys.shape[1], 1))[:len(keys) + 1],
                           pa.int32())
        out = out.append_column("band_keys", pa.ListArray.from_arrays(offsets, keys.ravel()))
    return out


class RayLSHBloom(Estimator):
    """Near-duplicate detection on Ray with the parameters of corpus_miner's LSHBloom: the same
    flags and, byte for byte, the same index as the local engine on the same documents in the
    same order (module docstring: what runs where).

    in_flight: blocks whose band keys are computed ahead of the driver's row-by-row decisions
        (default: twice the cluster's CPUs); it bounds the driver's memory, not the answer.
    Other parameters: see corpus_miner.dedup.LSHBloom. Learned: params_, bands_, rows_,
    n_documents_, snapshots_, and bloom_ (lshbloom) or band_entries_ (minhash_lsh).

    Documents (every method): a ray.data.Dataset with a string column text_col (its blocks in
    order), a list of pyarrow string arrays or of object refs of Arrow tables, or any kind the
    local LSHBloom takes but a TokenCorpus (paths are read in the workers by corpus-miner's
    readers; a record without an id is named by its row number, as the local readers name it).
    A null text is an empty document. Ids come from id_col where the blocks have it, else the
    rows' ordinals (as the local engine's ids=None).
    """

    _fit_hint = "fit(), deduplicate() or RayLSHBloom.load()"

    def __init__(self, threshold: float = 0.85, num_perm: int = 256, mode: str = "lshbloom",
                 num_bands: int | None = None, fp_prob: float = DEFAULT_FP_PROB,
                 shingle_size: int = 5, expected_items: int | None = None, seed: int = 1,
                 max_shingles: int | None = None, sketch: str = DEFAULT_SKETCH,
                 shingle_kind: str = "char", in_flight: int | None = None):
        self.threshold = threshold
        self.num_perm = num_perm
        self.mode = mode
        self.num_bands = num_bands
        self.fp_prob = fp_prob
        self.shingle_size = shingle_size
        self.expected_items = expected_items
        self.seed = seed
        self.max_shingles = max_shingles
        self.sketch = sketch
        self.shingle_kind = shingle_kind
        self.in_flight = in_flight

    @property
    def params(self) -> LSHBloomParams:
        """The LSHBloom parameters as given, in the frozen LSHBloomParams (not validated)."""
        return LSHBloomParams(**{name: value for name, value in self.get_params().items()
                                 if name != "in_flight"})

    @property
    def mode_(self) -> str:
        """The canonical mode of the fitted index ("lshbloom" or "minhash_lsh")."""
        self.check_is_fitted()
        return self.params_.mode

    @property
    def bloom(self) -> ScalableBloomFilter:
        """The fitted Bloom filter (mode lshbloom): num_bits, num_hashes, layers, metadata()."""
        self.check_is_fitted()
        if self.params_.mode != "lshbloom":
            raise ParameterError("bloom exists only in mode='lshbloom'; this index is minhash_lsh")
        return self.bloom_

    # -- validation, documents and state -------------------------------------------------------
    def _validated(self) -> LSHBloomParams:
        params = self.params.validated()
        n = self.in_flight
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise ParameterError(f"in_flight must be an integer >= 1 or None, got {n!r}")
        return params

    @staticmethod
    def _documents(data, text_col: str, id_col: str | None, where: str):
        """(blocks, their text column, their id column or None, number null ids? (document
        blocks of input files, whose `grp` column is internal))."""
        if not ray.is_initialized():
            ray.init()
        blocks, column, _ = blocks_of(data, text_col, id_col, f"RayLSHBloom.{where}")
        if input_paths(data) is not None:  # document blocks: `id`, null where a record has none
            return blocks, column, None if id_col is None else "id", True
        return blocks, column, id_col, False  # a block without that column: ordinals

    def _local(self) -> LSHBloom:
        """The fitted index as a local LSHBloom sharing its filter / table (decides on it)."""
        return LSHBloom.from_state(self.to_state(), copy=False)

    def _adopt(self, local: LSHBloom, snapshots: list[dict]) -> None:
        """Serve `local`'s index from now on (the driver's decisions filled it)."""
        state = local.to_state()
        self._forget_fitted()
        self.params_ = state.params
        self.bands_, self.rows_ = state.bands_rows
        self.n_documents_ = int(state.n_documents)
        self.snapshots_ = snapshots
        if state.params.mode == "lshbloom":
            assert state.bloom is not None
            self.bloom_: ScalableBloomFilter = state.bloom
        else:
            assert state.band_table is not None and state.ids is not None
            self._table: tuple[BandTable, pa.Array] = (state.band_table, state.ids)
            self.band_entries_ = state.band_table.num_keys

    def _keys(self, blocks, params, text_col, id_col, number_ids, offsets):
        return ordered_keys(blocks, params, offsets, text_col, id_col, number_ids,
                            self.in_flight)

    # -- fit -------------------------------------------------------------------------------------
    def fit(self, data, text_col: str = "text", id_col: str | None = "id") -> RayLSHBloom:
        """Index a reference corpus (replaces any previous index); returns self. A Bloom filter
        holds max(expected_items, rows) documents in one layer, as the local fit of a list."""
        params = self._validated()
        with one_line_errors():
            blocks, column, ids, numbered = self._documents(data, text_col, id_col, "fit")
            offsets = block_offsets(blocks)
            n_documents = int(offsets[-1])
            local = LSHBloom(**params.to_dict())
            if params.mode == "lshbloom":  # one layer for them all, as the local fit's
                bloom = ScalableBloomFilter(max(params.expected_items or 0, n_documents, 1),
                                            params.fp_prob, params.bands_rows[0])
                self._fill(bloom, blocks, params, column, offsets)
                local = LSHBloom.from_state(LSHBloomState(params, n_documents, bloom=bloom),
                                            copy=False)
            else:
                local._start(n_documents)
                for keys, named, _ in self._keys(blocks, params, column, ids, numbered, offsets):
                    local._add(keys, named, detect=False)
        self._adopt(local, [])
        return self

    def _fill(self, bloom: ScalableBloomFilter, blocks, params, text_col, offsets) -> None:
        """Count the blocks' rows into `bloom` (after its documents) and fill its layers with
        their band keys, from filters the tasks build in each run's layer shape."""
        runs = [(start, stop, index, bloom.layers[index].num_bits,
                 bloom.layers[index].num_hashes)
                for start, stop, index in bloom.reserve(int(offsets[-1]))]
        refs = [_block_filters.remote(b, params, text_col, int(offsets[i]), runs)
                for i, b in enumerate(blocks)]
        while refs:  # OR-ed as they come: one block's filters at a time on the driver
            done, refs = ray.wait(refs, num_returns=1)
            for index, filled in ray.get(done[0]):
                bloom.layers[index] = bloom.layers[index].merge(filled)

    def partial_fit(self, data, text_col: str = "text", id_col: str | None = "id"
                    ) -> RayLSHBloom:
        """Add the documents to the index without flagging them; an unfitted object starts an
        index that grows as documents come (layers of expected_items documents), as the local
        partial_fit: the index is byte for byte the local engine's after the same calls."""
        params = self._validated()
        if self.is_fitted() and self.params_ != params:
            raise ParameterError("partial_fit with other parameters than the fitted index's; "
                                 "load the index with RayLSHBloom.load(path)")
        with one_line_errors():
            blocks, column, ids, numbered = self._documents(data, text_col, id_col,
                                                            "partial_fit")
            offsets = block_offsets(blocks)
            snapshots = list(self.snapshots_) if self.is_fitted() else []
            local = self._local() if self.is_fitted() else LSHBloom(**params.to_dict())
            if not local.is_fitted():
                local._start(None)
            if params.mode == "lshbloom":
                state = local.to_state()
                assert state.bloom is not None
                bloom = state.bloom.copy()
                self._fill(bloom, blocks, params, column, offsets)
                local = LSHBloom.from_state(LSHBloomState(
                    params, state.n_documents + int(offsets[-1]), bloom=bloom), copy=False)
            else:
                for keys, named, _ in self._keys(blocks, params, column, ids, numbered, offsets):
                    local._add(keys, named, detect=False)
        self._adopt(local, snapshots)
        return self

    def merge(self, other: RayLSHBloom | LSHBloom) -> RayLSHBloom:
        """The union of two fitted indexes (a new RayLSHBloom; other's documents after this
        one's), by the local engine's rules (corpus_miner.dedup.incremental)."""
        from corpus_miner.dedup.incremental import merge_states

        if not isinstance(other, (RayLSHBloom, LSHBloom)):
            raise TypeError(f"can only merge an LSHBloom or RayLSHBloom, got "
                            f"{type(other).__name__}")
        return type(self).from_state(merge_states(self.to_state(), other.to_state()),
                                     self.in_flight, copy=False)

    # -- deduplicate and query -------------------------------------------------------------------
    def deduplicate(self, data, text_col: str = "text", id_col: str | None = "id",
                    annotate: bool = False, *, update: bool = False, add: str = "all"):
        """Drop every document sharing a band key with an EARLIER one (block order, inside a
        block too), as LSHBloom.deduplicate.

        Parameters
        ----------
        data : documents (class docstring)
        text_col, id_col : str
            The text and id (None: no ids) columns.
        annotate : bool, default False
            Keep every row and add `is_duplicate` (and, in minhash_lsh, `duplicate_of`: the id
            of the earliest matching row).
        update : bool, default False
            False: one-shot, self ends fitted on these documents alone. True: they are also
            checked against the current index, then added to it (an unfitted object starts a
            growing index); the index equals the local engine's after the same
            `deduplicate(update=True)`, byte for byte.
        add : {"all", "unique"}, default "all"
            Whose band keys go into the index: every document's, or only the unique ones'.

        Returns
        -------
        ray.data.Dataset
            The unique rows, or all of them with `is_duplicate` (annotate=True), block by
            block.

        Raises
        ------
        ParameterError
            A bad parameter, `add` other than "all" / "unique", or update=True on an index
            fitted with other parameters.
        InputError
            A missing text column, documents Ray cannot read.
        """
        with one_line_errors():
            blocks, found, _, internal = self._decide(data, text_col, id_col, update, add)
            refs = [_with_flags.remote(b, f, annotate, self._id_type(), internal)
                    for b, f in zip(blocks, found, strict=True)]
            ray.wait(refs, num_returns=len(refs), fetch_local=False)
        return ray.data.from_arrow_refs(refs)

    def _id_type(self) -> pa.DataType | None:
        """The type of duplicate_of (the indexed ids'), None in mode lshbloom."""
        return None if self.params_.mode == "lshbloom" else self._table[1].type

    def _decide(self, data, text_col: str, id_col: str | None, update: bool, add: str
                ) -> tuple[list, list[DedupResult], tuple[int, int], tuple[str, ...]]:
        """(blocks, the DedupResult of each block, the OrderedDigest state of the texts, the
        blocks' internal columns): the local engine's decisions on the band keys the tasks
        compute, block after block."""
        from corpus_miner.io.digest import OrderedDigest

        params = self._validated()
        if add not in ("all", "unique"):
            raise ParameterError(f"add must be 'all' or 'unique', got {add!r}")
        continuing = update and self.is_fitted()
        if continuing and self.params_ != params:
            raise ParameterError("deduplicate(update=True) with other parameters than the fitted "
                                 "index's; load the index with RayLSHBloom.load(path)")
        blocks, column, ids, numbered = self._documents(data, text_col, id_col, "deduplicate")
        offsets = block_offsets(blocks)
        snapshots = list(self.snapshots_) if continuing else []
        local = self._local() if continuing else LSHBloom(**params.to_dict())
        if not continuing:  # sized for the rows (one-shot) or growing (update), as locally
            local._start(None if update else int(offsets[-1]))
        first = local.n_documents_  # ids=None: ordinals from here, as for the local call
        found, digest = [], OrderedDigest()
        for i, (keys, named, (documents, value)) in enumerate(self._keys(
                blocks, params, column, ids, numbered, offsets)):
            if named is None:
                named = pa.array(np.arange(first + offsets[i], first + offsets[i + 1]))
            found.append(local._deduplicate_keys(keys, named, update=True, add=add))
            digest.combine(value, documents)
        self._adopt(local, snapshots)
        return blocks, found, digest.state(), ("grp",) if numbered else ()

    def query(self, data, text_col: str = "text", id_col: str | None = "id",
              return_band_keys: bool = False):
        """Match documents against the index, read-only (they are not matched against each
        other, nor added), as LSHBloom.query; the index goes to the object store once and
        every block is asked in a task.

        Parameters
        ----------
        data : documents (class docstring)
        text_col, id_col : str
            The text column, and the id column (kept as it is; None: no ids).
        return_band_keys : bool, default False
            Also add `band_keys` (list<int64>: the uint64 keys' bits).

        Returns
        -------
        ray.data.Dataset
            The documents with `is_duplicate` (shares a band key with the index); minhash_lsh
            also adds `duplicate_of` (the id of the earliest matching indexed document).
        """
        self.check_is_fitted()
        with one_line_errors():
            blocks, found, internal, _ = self._query_blocks(data, text_col, return_band_keys)
            refs = [_with_flags.remote(b, f, True, self._id_type(), internal)
                    for b, f in zip(blocks, found, strict=True)]
            ray.wait(refs, num_returns=len(refs), fetch_local=False)
        return ray.data.from_arrow_refs(refs)

    def _query_blocks(self, data, text_col: str, return_band_keys: bool = False
                      ) -> tuple[list, list, tuple[str, ...], list]:
        """(blocks, object refs of each block's DedupResult against the index, the blocks'
        internal columns, object refs of each block's texts digest state)."""
        blocks, column, _, numbered = self._documents(data, text_col, None, "query")
        offsets = block_offsets(blocks)
        shipped = ray.put(self.to_state())
        asked = [_block_query.remote(b, shipped, column, return_band_keys, int(offsets[i]))
                 for i, b in enumerate(blocks)]
        return blocks, [a[0] for a in asked], ("grp",) if numbered else (), [a[1] for a in asked]

    # -- state: the local engine's index and its folder ------------------------------------------
    def to_state(self) -> LSHBloomState:
        """The fitted index as an LSHBloomState (shared, not copied)."""
        self.check_is_fitted()
        snapshots = tuple(self.snapshots_)
        if self.params_.mode == "lshbloom":
            return LSHBloomState(self.params_, self.n_documents_, bloom=self.bloom_,
                                 snapshots=snapshots)
        table, ids = self._table
        return LSHBloomState(self.params_, self.n_documents_, band_table=table, ids=ids,
                             snapshots=snapshots)

    @classmethod
    def from_state(cls, state: LSHBloomState, in_flight: int | None = None,
                   copy: bool = True) -> RayLSHBloom:
        """A RayLSHBloom serving a fitted index (a copy of its filter / table unless
        copy=False)."""
        if not isinstance(state, LSHBloomState):
            raise TypeError(f"from_state needs an LSHBloomState, got {type(state).__name__}")
        model = cls(**state.params.to_dict(), in_flight=in_flight)
        model._adopt(LSHBloom.from_state(state, copy=copy), list(state.snapshots))
        return model

    def to_local(self) -> LSHBloom:
        """The fitted index as a local corpus_miner.dedup.LSHBloom (same parameters and index)."""
        return LSHBloom.from_state(self.to_state())

    @classmethod
    def from_local(cls, local: LSHBloom, in_flight: int | None = None) -> RayLSHBloom:
        """A RayLSHBloom serving a fitted local LSHBloom's index (a copy)."""
        return cls.from_state(local.to_state(), in_flight)

    def save(self, path) -> None:
        """Write the index folder (the local engine's format: metadata.json + raw arrays)."""
        save_state(path, self.to_state())

    @classmethod
    def load(cls, path, in_flight: int | None = None) -> RayLSHBloom:
        """The index saved in `path`, with its saved parameters."""
        return cls.from_state(load_state(path), in_flight, copy=False)

    def metadata(self) -> dict:
        return self.to_local().metadata()

