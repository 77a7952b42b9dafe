"""LSHBloom: near-duplicate detection with MinHash LSH band keys in a Bloom filter (one machine).

Estimator habits (corpus_miner.estimator): __init__ stores the arguments as given; fit validates
them, builds the index and returns self; learned state ends in `_`; to_state / from_state hand
the fitted index to another engine or to the index folder.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Set

import numpy as np
import pyarrow as pa

from corpus_miner.dedup.bandtable import BandTable, components_kernel
from corpus_miner.dedup.params import (
    DEFAULT_CAPACITY,
    DEFAULT_FP_PROB,
    DEFAULT_SKETCH,
    LSHBloomParams,
)
from corpus_miner.dedup.persist import load_state, save_state
from corpus_miner.dedup.pipeline import band_keys_for_texts
from corpus_miner.dedup.result import DedupResult
from corpus_miner.dedup.scalable_bloom import ScalableBloomFilter
from corpus_miner.dedup.state import LSHBloomState
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.estimator import Estimator
from corpus_miner.sources import texts_of_table

STREAM_BATCH = 4096  # texts per batch when fit / deduplicate / query read an iterator
_MAX_TABLE_HINT = 1 << 24  # keys pre-allocated in a band table (256 MiB); more grow it
_END = object()


def _texts(texts, text_col: str, where: str):
    """The texts of a table (a pandas DataFrame, a pyarrow Table or RecordBatch: its column
    text_col, through corpus_miner.sources), else texts as given."""
    column = texts_of_table(texts, text_col, f"LSHBloom.{where}")
    return texts if column is None else column


def _is_sized(texts) -> bool:
    """True for inputs whose length is known up front (lists, arrays, Arrow arrays); an
    InputError for what is no ordered collection of texts (a mapping, a set, None)."""
    if isinstance(texts, (Mapping, Set)) or not isinstance(texts, Iterable):
        raise InputError(f"texts must be a sequence or an iterable of strings in input order, got "
                         f"{type(texts).__name__}")
    return isinstance(texts, (pa.Array, pa.ChunkedArray, str, bytes)) or (
        hasattr(texts, "__len__") and hasattr(texts, "__getitem__"))


def _batches(texts, ids) -> Iterator[tuple[object, object]]:
    """(texts, ids) batches of an iterator of texts (ids: None, a sequence or an iterator)."""
    texts = iter(texts)
    id_iter = None if ids is None else iter(ids)
    while True:
        chunk = list(itertools.islice(texts, STREAM_BATCH))
        if not chunk:
            if id_iter is not None and next(id_iter, _END) is not _END:
                raise InputError("got more ids than texts; pass one id per text")
            return
        id_chunk = None if id_iter is None else list(itertools.islice(id_iter, len(chunk)))
        yield chunk, id_chunk


def _ids_array(ids, n: int, first_ordinal: int) -> pa.Array:
    if ids is None:
        return pa.array(np.arange(first_ordinal, first_ordinal + n, dtype=np.int64))
    array = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
    if not isinstance(array, pa.Array):
        values = list(array)
        try:
            array = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            kinds = sorted({type(v).__name__ for v in values if v is not None})
            raise InputError(f"ids must all have one type, got {', '.join(kinds)}; convert "
                             "them first, e.g. ids=[str(i) for i in ids]") from None
        except UnicodeEncodeError as exc:
            raise InputError(f"an id is not valid Unicode ({exc.reason}: {exc.object!r}); "
                             "ids are returned as given, so fix them first") from None
    if len(array) != n:
        raise InputError(f"got {len(array)} ids for {n} texts; pass one id per text")
    return array


class LSHBloom(Estimator):
    """Near-duplicate detector. mode="lshbloom" (Bloom filter, aliases bloom/bloom_filter) or
    "minhash_lsh" (exact band table, alias banding; also reports which earlier document matched).

    threshold: Jaccard similarity of shingle sets above which documents count as near-duplicates;
        it picks (bands, rows) unless num_bands is given (rows = num_perm // num_bands).
    fp_prob: probability that a unique document is flagged by a Bloom false positive, per document
        (the per-band-key rate is derived from it, see corpus_miner.dedup.bloom); it holds however
        many documents are indexed: a full filter grows a layer (dedup.scalable_bloom).
    expected_items: documents the Bloom filter is first sized for. When fit / deduplicate get a
        list or array, the filter holds max(expected_items, its length) in one layer; for
        documents that come in parts (partial_fit, deduplicate(update=True), an iterator) it
        starts at expected_items (default 65,536) and grows when full.
    sketch: "oph" (one permutation hashing, densified) or "minhash" (classic, num_perm hashes).
    max_shingles: documents with more shingles keep their max_shingles smallest distinct hashes.

    Learned: params_ (validated LSHBloomParams), bands_, rows_, n_documents_, index_ (a
    ScalableBloomFilter, or a BandTable in minhash_lsh), ids_ (minhash_lsh: the indexed
    documents' ids in order, a pa.ChunkedArray; None in lshbloom), snapshots_ (what the index
    absorbed, as recorded by `corpus-miner index add` and kept across generations).
    """

    _fit_hint = "fit(), deduplicate() or LSHBloom.load()"
    params_: LSHBloomParams
    bands_: int
    rows_: int
    n_documents_: int
    index_: ScalableBloomFilter | BandTable
    ids_: pa.ChunkedArray | None
    snapshots_: list[dict]

    def __init__(self, threshold: float = 0.85, num_perm: int = 256, mode: str = "lshbloom",
                 num_bands: int | None = None, fp_prob: float = DEFAULT_FP_PROB,
                 shingle_size: int = 5, expected_items: int | None = None, seed: int = 1,
                 max_shingles: int | None = None, sketch: str = DEFAULT_SKETCH,
                 shingle_kind: str = "char"):
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

    @property
    def params(self) -> LSHBloomParams:
        """The constructor arguments as given, in the frozen LSHBloomParams (not validated)."""
        return LSHBloomParams(**self.get_params())

    # -- state -----------------------------------------------------------------------------------
    def _start(self, known_documents: int | None) -> None:
        """Validate, forget any previous index and open an empty one: sized for max(expected,
        known_documents) when the input's size is known, else for expected_items (or the
        default) with room to grow."""
        params = self.params.validated()
        self._forget_fitted()
        self.params_ = params
        self.bands_, self.rows_ = params.bands_rows
        self.n_documents_ = 0
        self.snapshots_ = []
        if known_documents is None:
            capacity = params.expected_items or DEFAULT_CAPACITY
        else:
            capacity = max(params.expected_items or 0, known_documents, 1)
        if params.mode == "lshbloom":
            self.index_ = ScalableBloomFilter(capacity, params.fp_prob, self.bands_)
            self.ids_ = None
        else:  # the table grows as keys come: pre-allocate for what is known, within reason
            self.index_ = BandTable(min(capacity * self.bands_, _MAX_TABLE_HINT))
            self.ids_ = pa.chunked_array([], pa.int64())

    def _bloom(self) -> ScalableBloomFilter:
        """The index of mode lshbloom."""
        assert isinstance(self.index_, ScalableBloomFilter), self.params_.mode
        return self.index_

    def _table(self) -> tuple[BandTable, pa.ChunkedArray]:
        """The index of mode minhash_lsh and the ids of its documents."""
        assert isinstance(self.index_, BandTable) and self.ids_ is not None, self.params_.mode
        return self.index_, self.ids_

    @property
    def mode_(self) -> str:
        self.check_is_fitted()
        return self.params_.mode

    def to_state(self) -> LSHBloomState:
        """The fitted index (shared, not copied): for SparkLSHBloom, the index folder, ..."""
        self.check_is_fitted()
        snapshots = tuple(getattr(self, "snapshots_", ()))
        if self.params_.mode == "lshbloom":
            return LSHBloomState(self.params_, self.n_documents_, bloom=self._bloom(),
                                 snapshots=snapshots)
        table, ids = self._table()
        return LSHBloomState(self.params_, self.n_documents_, band_table=table,
                             ids=ids.combine_chunks(), snapshots=snapshots)

    @classmethod
    def from_state(cls, state: LSHBloomState, copy: bool = True) -> LSHBloom:
        """A fitted LSHBloom serving `state` (e.g. Bloom filters merged by Spark); it works on a
        copy of the filter / table unless copy=False (then it may add to the state's)."""
        if not isinstance(state, LSHBloomState):
            raise TypeError(f"from_state needs an LSHBloomState, got {type(state).__name__}")
        state = state.copy() if copy else state
        model = cls(**state.params.to_dict())
        model.params_ = state.params
        model.bands_, model.rows_ = state.bands_rows
        model.n_documents_ = int(state.n_documents)
        model.snapshots_ = list(state.snapshots)
        if state.params.mode == "lshbloom":
            assert state.bloom is not None
            model.index_, model.ids_ = state.bloom, None
        else:
            assert state.band_table is not None
            model.index_, model.ids_ = state.band_table, pa.chunked_array([state.ids])
        return model

    def _band_keys(self, texts, fresh: bool = False) -> np.ndarray:
        """uint64 (n_docs, bands) band keys of a batch (needs no fitting; the engines and the
        CLI gather them batch by batch for _fit_keys / _deduplicate_keys). fresh: by the
        parameters as set now, for a call that replaces the index (set_params may have changed
        them since the fit), else by the fitted index's."""
        params = self.params_ if self.is_fitted() and not fresh else self.params.validated()
        return band_keys_for_texts(texts, params)

    def _add(self, keys: np.ndarray, ids, detect: bool) -> DedupResult:
        """Insert documents in order; with detect, flag those sharing a key with earlier ones."""
        first = self.n_documents_
        if self.params_.mode == "lshbloom":
            if detect:
                is_dup = self._bloom().query_then_insert(keys)
            else:
                self._bloom().add(keys)
                is_dup = np.zeros(len(keys), bool)
            result = DedupResult(is_dup)
        else:
            ids_array = self._typed_like_earlier(_ids_array(ids, len(keys), first))
            table, earlier = self._table()
            dup_of = table.query_then_insert(keys, first, insert_only=not detect)
            kept = earlier.chunks if first else []  # empty earlier batches: any id type
            self.ids_ = pa.chunked_array([*kept, ids_array], ids_array.type)
            if not detect:
                dup_of[:] = -1
            result = DedupResult(dup_of >= 0, dup_of, self._ids_of(dup_of))
        self.n_documents_ = first + len(keys)
        return result

    def _typed_like_earlier(self, ids: pa.Array) -> pa.Array:
        """ids in the type of the ids indexed so far (all batches share one id column)."""
        earlier = self._table()[1].type
        if self.n_documents_ == 0 or ids.type == earlier:
            return ids
        try:
            return ids.cast(earlier)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise InputError(f"ids of this batch are {ids.type}, earlier ones {earlier}; "
                             "pass ids of one type (e.g. all strings)") from None

    def _ids_of(self, ordinals: np.ndarray) -> list:
        """Ids of indexed documents by ordinal (None where ordinal is -1)."""
        matched = ordinals >= 0
        if not matched.any():
            return [None] * len(ordinals)
        taken = self._table()[1].take(pa.array(np.where(matched, ordinals, 0))).to_pylist()
        return [value if hit else None for value, hit in zip(taken, matched)]

    def _checked_keys(self, band_keys) -> np.ndarray:
        keys = np.asarray(band_keys)
        empty_integers = keys.size == 0 and np.issubdtype(keys.dtype, np.integer)
        if keys.ndim != 2 or keys.shape[1] != self.bands_ or not (
                keys.dtype == np.uint64 or empty_integers):
            raise InputError(f"band keys must be a uint64 array of shape (n, {self.bands_}), got "
                             f"{keys.dtype} {keys.shape}")
        return keys.astype(np.uint64, copy=False)

    # -- public API ------------------------------------------------------------------------------
    def fit(self, texts, ids=None, *, text_col: str = "text") -> LSHBloom:
        """Index a reference corpus, replacing any previous index; no document is flagged.

        Parameters
        ----------
        texts : list, array or iterable of str, or a table
            The documents in order; a generator is read once, in batches. A pandas DataFrame
            or a pyarrow Table / RecordBatch gives its column `text_col` (null: empty).
        ids : sequence or iterable, optional
            One id per text (minhash_lsh names matches by them); default the ordinals.
        text_col : str, default "text"
            The text column of a table.

        Returns
        -------
        LSHBloom
            self, fitted.
        """
        texts = _texts(texts, text_col, "fit")
        if _is_sized(texts):
            return self._fit_keys(self._band_keys(texts, fresh=True), ids)
        self._start(None)
        for chunk, id_chunk in _batches(texts, ids):
            self._add(self._band_keys(chunk), id_chunk, detect=False)
        return self

    def _fit_keys(self, band_keys: np.ndarray, ids=None) -> LSHBloom:
        """fit() on precomputed band keys (the CLI gathers them batch by batch)."""
        self._start(len(band_keys))
        self._add(self._checked_keys(band_keys), ids, detect=False)
        return self

    def partial_fit(self, texts, ids=None, *, text_col: str = "text") -> LSHBloom:
        """Add documents to the index without flagging them; an unfitted object starts an
        index that grows as documents come (layers of expected_items documents).

        Parameters
        ----------
        texts : list, array or iterable of str, or a table (as for fit)
        ids : sequence or iterable, optional
        text_col : str, default "text"

        Returns
        -------
        LSHBloom
            self.
        """
        texts = _texts(texts, text_col, "partial_fit")
        if not self.is_fitted():
            self._start(None)
        if not _is_sized(texts):
            for chunk, id_chunk in _batches(texts, ids):
                self._add(self._band_keys(chunk), id_chunk, detect=False)
            return self
        self._add(self._band_keys(texts), ids, detect=False)
        return self

    def deduplicate(self, texts, ids=None, *, update: bool = False, add: str = "all",
                    text_col: str = "text") -> DedupResult:
        """Flag every document that shares a band key with an EARLIER one (input order, same
        batch included).

        Parameters
        ----------
        texts : list, array or iterable of str, or a table
            The documents in order; a generator is read once, in batches. A pandas DataFrame
            or a pyarrow Table / RecordBatch gives its column `text_col` (null: empty).
        ids : sequence or iterable, optional
            One id per text; in minhash_lsh, `duplicate_of_id` names matches by them.
        update : bool, default False
            False: one-shot, any previous index is replaced and self ends fitted on `texts`
            (a list sizes the Bloom filter for its length; minhash_lsh also returns clusters).
            True: the documents are also checked against the current index, then added to it
            (an unfitted object starts a growing index). Snapshots s1, s2, ... given one after
            another get exactly the flags of one `deduplicate` over an iterator of their
            concatenation: the layer of a document depends only on its ordinal.
        add : {"all", "unique"}, default "all"
            Whose band keys go into the index: every document's, or only those not flagged
            (then a document is checked against the earlier *unique* ones, what
            `corpus-miner index add --add unique` keeps).
        text_col : str, default "text"
            The text column of a table.

        Returns
        -------
        DedupResult
            `is_duplicate` per document; in minhash_lsh also `duplicate_of` (ordinal) and
            `duplicate_of_id` of the earliest match.

        Raises
        ------
        ParameterError
            A bad parameter, or `add` other than "all" / "unique".
        InputError
            Texts that are no ordered collection of strings, or ids of another count or type.

        Examples
        --------
        >>> lsh = LSHBloom(threshold=0.8, num_perm=64)
        >>> lsh.deduplicate(["a cookie banner " * 9, "a cookie banner " * 9, "other"]).is_duplicate
        array([False,  True, False])
        >>> lsh.deduplicate(["a cookie banner " * 9], update=True).is_duplicate
        array([ True])
        """
        if add not in ("all", "unique"):
            raise ParameterError(f"add must be 'all' or 'unique', got {add!r}")
        texts = _texts(texts, text_col, "deduplicate")
        if _is_sized(texts):
            sized = self._band_keys(texts, fresh=not update or not self.is_fitted())
            return self._deduplicate_keys(sized, ids, update=update, add=add)
        if not update or not self.is_fitted():
            self._start(None)
        clusters = not update and add == "all" and self.params_.mode == "minhash_lsh"
        parts, keys = [self._empty_result()], [self._band_keys([])]
        for chunk, id_chunk in _batches(texts, ids):
            keys.append(self._band_keys(chunk))
            parts.append(self._insert(keys[-1], id_chunk, add))
            if not clusters:
                keys.pop()  # only the band table's clusters need them
        result = DedupResult.concat(parts)
        return self._with_clusters(result, np.concatenate(keys)) if clusters else result

    def _deduplicate_keys(self, band_keys: np.ndarray, ids=None, *, update: bool = False,
                          add: str = "all") -> DedupResult:
        """deduplicate() on precomputed band keys (the CLI and datatrove gather them batch by
        batch)."""
        if add not in ("all", "unique"):
            raise ParameterError(f"add must be 'all' or 'unique', got {add!r}")
        if not update:
            self._start(len(band_keys))
        elif not self.is_fitted():
            self._start(None)
        band_keys = self._checked_keys(band_keys)
        if ids is not None and hasattr(ids, "__len__") and len(ids) != len(band_keys):
            # both modes: lshbloom returns no ids, but a wrong count is a caller's mistake
            raise InputError(f"got {len(ids)} ids for {len(band_keys)} texts; pass one id per "
                             "text")
        result = self._insert(band_keys, ids, add)
        if not update and add == "all" and self.params_.mode == "minhash_lsh":
            result = self._with_clusters(result, band_keys)
        return result

    def _insert(self, keys: np.ndarray, ids, add: str) -> DedupResult:
        return self._add(keys, ids, detect=True) if add == "all" else self._add_unique(keys, ids)

    def _add_unique(self, keys: np.ndarray, ids) -> DedupResult:
        """Document by document: flagged when a key is in the index (which grows by the
        unique documents only); only the unique ones get ordinals and ids."""
        is_dup = np.zeros(len(keys), bool)
        if self.params_.mode == "lshbloom":
            bloom = self._bloom()
            for i in range(len(keys)):
                row = keys[i:i + 1]
                is_dup[i] = bool(bloom.contains_any(row)[0])
                if not is_dup[i]:
                    bloom.add(row)
            self.n_documents_ += int((~is_dup).sum())
            return DedupResult(is_dup)
        ids_array = self._typed_like_earlier(_ids_array(ids, len(keys), self.n_documents_))
        table, earlier = self._table()
        dup_of = np.full(len(keys), -1, np.int64)
        for i in range(len(keys)):
            found = table.lookup(keys[i:i + 1])[0]
            found = found[found >= 0]
            if len(found):
                is_dup[i], dup_of[i] = True, int(found.min())
            else:
                table.query_then_insert(keys[i:i + 1], self.n_documents_, insert_only=True)
                self.n_documents_ += 1
        kept = earlier.chunks if earlier.length() else []
        self.ids_ = pa.chunked_array([*kept, ids_array.filter(pa.array(~is_dup))],
                                     ids_array.type)
        return DedupResult(is_dup, dup_of, self._ids_of(dup_of))

    def _empty_result(self) -> DedupResult:
        if self.params_.mode == "lshbloom":
            return DedupResult(np.zeros(0, bool))
        return DedupResult(np.zeros(0, bool), np.zeros(0, np.int64), [])

    def _with_clusters(self, result: DedupResult, band_keys: np.ndarray) -> DedupResult:
        labels = components_kernel(self._table()[0].lookup(band_keys), 0, len(band_keys))
        return DedupResult(result.is_duplicate, result.duplicate_of, result.duplicate_of_id,
                           labels)

    def query(self, texts, ids=None, return_band_keys: bool = False, *,
              text_col: str = "text") -> DedupResult:
        """Match documents against the index, read-only: documents of `texts` are not matched
        against each other, nor added.

        Parameters
        ----------
        texts : list, array or iterable of str, or a table (as for fit)
        ids : ignored, accepted so that query and deduplicate take the same arguments
        return_band_keys : bool, default False
            Also return the (n, bands) uint64 band keys in `band_keys`.
        text_col : str, default "text"
            The text column of a table.

        Returns
        -------
        DedupResult
            `is_duplicate`: shares a band key with an indexed document; in minhash_lsh also
            the earliest matching indexed document (`duplicate_of`, `duplicate_of_id`).

        Raises
        ------
        NotFittedError
            Before fit / deduplicate / load.
        """
        self.check_is_fitted()
        texts = _texts(texts, text_col, "query")
        if not _is_sized(texts):
            return DedupResult.concat([self.query([], None, return_band_keys)] + [
                self.query(chunk, None, return_band_keys) for chunk, _ in _batches(texts, None)])
        keys = self._band_keys(texts)
        band_keys = keys if return_band_keys else None
        if self.params_.mode == "lshbloom":
            return DedupResult(self._bloom().contains_any(keys), band_keys=band_keys)
        first_docs = self._table()[0].lookup(keys)
        dup_of = np.where(first_docs >= 0, first_docs, np.iinfo(np.int64).max).min(axis=1)
        dup_of[dup_of == np.iinfo(np.int64).max] = -1
        return DedupResult(dup_of >= 0, dup_of, self._ids_of(dup_of), band_keys=band_keys)

    def merge(self, other: LSHBloom) -> LSHBloom:
        """The union of two fitted indexes (a new LSHBloom; `other`'s documents follow this
        one's). Parameters must be identical (ParameterError naming the one that differs);
        Bloom filters merge layer by layer and must fit their layers' capacities
        (corpus_miner.dedup.incremental)."""
        from corpus_miner.dedup.incremental import merge_states

        if not isinstance(other, LSHBloom):
            raise TypeError(f"can only merge an LSHBloom, got {type(other).__name__}")
        return type(self).from_state(merge_states(self.to_state(), other.to_state()),
                                     copy=False)

    def is_new(self, batch, text_field: str = "text") -> list[bool]:
        """The batched predicate of Hugging Face `datasets.Dataset.filter(model.is_new,
        batched=True)`: `deduplicate(texts, update=True)` on a batch of columns (a dict of
        lists, as `filter` passes it) or a list of texts, answered as filter wants it: True
        for the documents to keep. It is public because `filter` takes exactly this shape
        (a dict in, a list of bools out) and null texts must count as empty documents. The
        batches must come in order, one at a time (num_proc=1)."""
        if isinstance(batch, Mapping):
            if text_field not in batch:
                raise InputError(f"the batch has no {text_field!r} column (it has "
                                 f"{', '.join(map(repr, batch)) or 'none'})")
            batch = batch[text_field]
        texts = [t if isinstance(t, str) else "" for t in batch]
        return (~self.deduplicate(texts, update=True).is_duplicate).tolist()

    def save(self, path) -> None:
        """Write the index folder (metadata.json + raw arrays, checksummed, no pickle). An
        existing index folder gets a new generation, switched to atomically: a reader of the
        folder sees the previous index or this one, whole (dedup.generations). Bloom layers
        unchanged since `load` are hard-linked from the previous generation, not rewritten."""
        save_state(path, self.to_state())

    @classmethod
    def load(cls, path, mmap: bool = False) -> LSHBloom:
        """The index saved in `path`. mmap=True memory-maps the Bloom layers copy-on-write:
        queries read only the pages they probe (an index far larger than memory stays usable),
        documents added stay in memory until `save`; the layers' sizes are checked but not
        their sha256 (which reads every byte; `mmap=False` does)."""
        return cls.from_state(load_state(path, mmap=mmap), copy=False)

    def metadata(self) -> dict:
        self.check_is_fitted()
        meta = {"params": self.params_.to_dict(), "bands": self.bands_, "rows": self.rows_,
                "n_documents": self.n_documents_}
        if self.params_.mode == "lshbloom":
            meta["bloom"] = self._bloom().metadata()
        else:
            meta["band_entries"] = self._table()[0].num_keys
        return meta
