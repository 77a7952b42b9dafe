"""LSHBloom: near-duplicate detection with MinHash LSH band keys in a Bloom filter (one machine).

Estimator habits: __init__ stores parameters; fit validates, builds the index and returns self;
learned state ends in `_`; querying before fit raises NotFittedError.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa

from corpus_miner.dedup.bandtable import BandTable, components_kernel
from corpus_miner.dedup.bloom import BloomFilter
from corpus_miner.dedup.params import DEFAULT_FP_PROB, DEFAULT_SKETCH, LSHBloomParams
from corpus_miner.dedup.persist import load_index, save_index
from corpus_miner.dedup.pipeline import band_keys_for_texts
from corpus_miner.dedup.result import DedupResult
from corpus_miner.errors import InputError, NotFittedError, ParameterError


def _ids_array(ids, n: int, first_ordinal: int) -> pa.Array:
    if ids is None:
        return pa.array(np.arange(first_ordinal, first_ordinal + n, dtype=np.int64))
    array = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
    if not isinstance(array, pa.Array):
        array = pa.array(list(array))
    if len(array) != n:
        raise InputError(f"got {len(array)} ids for {n} texts; pass one id per text")
    return array


class LSHBloom:
    """Near-duplicate detector. mode="lshbloom" (Bloom filter, aliases bloom/bloom_filter) or
    "minhash_lsh" (exact band table, alias banding; also reports which earlier document matched).

    threshold: Jaccard similarity of shingle sets above which documents count as near-duplicates;
        it picks (bands, rows) unless num_bands is given (rows = num_perm // num_bands).
    fp_prob: probability that a unique document is flagged by a Bloom false positive, per document
        (the per-band-key rate is derived from it, see corpus_miner.dedup.bloom).
    expected_items: number of documents the Bloom filter is sized for; None = the number given to
        fit / deduplicate (required for partial_fit and streaming).
    sketch: "oph" (one permutation hashing, densified) or "minhash" (classic, num_perm hashes).
    max_shingles: documents with more shingles keep their max_shingles smallest distinct hashes.
    """

    def __init__(self, threshold: float = 0.85, num_perm: int = 256, mode: str = "lshbloom",
                 num_bands: int | None = None, fp_prob: float = DEFAULT_FP_PROB,
                 shingle_size: int = 5, expected_items: int | None = None, seed: int = 1,
                 max_shingles: int | None = None, sketch: str = DEFAULT_SKETCH,
                 shingle_kind: str = "char"):
        self.params = LSHBloomParams(threshold=threshold, num_perm=num_perm, mode=mode,
                                     num_bands=num_bands, fp_prob=fp_prob,
                                     shingle_size=shingle_size, shingle_kind=shingle_kind,
                                     expected_items=expected_items, seed=seed,
                                     max_shingles=max_shingles, sketch=sketch)

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.params.to_dict().items()
                   if v != getattr(LSHBloomParams, k)}
        return "LSHBloom(" + ", ".join(f"{k}={v!r}" for k, v in changed.items()) + ")"

    # -- state -----------------------------------------------------------------------------------
    def _validated(self) -> LSHBloomParams:
        params = self.params.validated()
        params.bands_rows  # noqa: B018 - raises ParameterError early for a bad num_bands
        return params

    def _start(self, expected_documents: int | None) -> None:
        params = self._validated()
        self.params_ = params
        self.bands_, self.rows_ = params.bands_rows
        self.n_documents_ = 0
        if params.mode == "lshbloom":
            expected = params.expected_items or expected_documents
            if expected is None:
                raise ParameterError("expected_items is needed to size the Bloom filter when the "
                                     "number of documents is not known in advance; pass "
                                     "LSHBloom(expected_items=...)")
            self.index_ = BloomFilter.for_documents(max(int(expected), 1), self.bands_,
                                                    params.fp_prob)
            self.ids_ = None
        else:
            self.index_ = BandTable(max(int(expected_documents or 0), 1) * self.bands_)
            self.ids_ = []

    def _check_fitted(self) -> None:
        if not hasattr(self, "index_"):
            raise NotFittedError("this LSHBloom is not fitted yet; call fit(), deduplicate() or "
                                 "LSHBloom.load() first")

    @property
    def mode_(self) -> str:
        self._check_fitted()
        return self.params_.mode

    def band_keys(self, texts) -> np.ndarray:
        """uint64 (n_docs, bands) band keys of a batch (needs no fitting)."""
        params = self.params_ if hasattr(self, "params_") else self._validated()
        return band_keys_for_texts(texts, params)

    def _add(self, keys: np.ndarray, ids, detect: bool) -> DedupResult:
        """Insert documents in order; with detect, flag those sharing a key with earlier ones."""
        first = self.n_documents_
        if self.params_.mode == "lshbloom":
            if detect:
                is_dup = self.index_.query_then_insert(keys)
            else:
                self.index_.add(keys)
                is_dup = np.zeros(len(keys), bool)
            result = DedupResult(is_dup)
        else:
            ids_array = _ids_array(ids, len(keys), first)
            dup_of = self.index_.query_then_insert(keys, first, insert_only=not detect)
            self.ids_.append(ids_array)
            if not detect:
                dup_of[:] = -1
            result = DedupResult(dup_of >= 0, dup_of, self._ids_of(dup_of))
        self.n_documents_ = first + len(keys)
        return result

    def _ids_of(self, ordinals: np.ndarray) -> list:
        """Ids of indexed documents by ordinal (None where ordinal is -1)."""
        matched = ordinals >= 0
        if not matched.any():
            return [None] * len(ordinals)
        try:
            all_ids = pa.chunked_array(self.ids_)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise InputError("ids of all batches must have the same type (e.g. all strings); "
                             "pass ids consistently") from None
        taken = all_ids.take(pa.array(np.where(matched, ordinals, 0))).to_pylist()
        return [value if hit else None for value, hit in zip(taken, matched)]

    @classmethod
    def from_state(cls, params: LSHBloomParams, index, n_documents: int, ids=None) -> "LSHBloom":
        """A fitted LSHBloom from an index built elsewhere (e.g. Bloom filters merged by Spark):
        `index` is a BloomFilter (lshbloom) or a BandTable (minhash_lsh, with the ids in order)."""
        params = params.validated()
        model = cls(**params.to_dict())
        model.params_ = params
        model.bands_, model.rows_ = params.bands_rows
        model.n_documents_ = int(n_documents)
        expected = BloomFilter if params.mode == "lshbloom" else BandTable
        if not isinstance(index, expected):
            raise ParameterError(f"mode {params.mode} needs a {expected.__name__}, got "
                                 f"{type(index).__name__}")
        model.index_ = index
        model.ids_ = None if params.mode == "lshbloom" else [_ids_array(ids, n_documents, 0)]
        return model

    # -- public API ------------------------------------------------------------------------------
    def fit(self, texts: Sequence[str], ids=None) -> "LSHBloom":
        """Index a reference corpus (replaces any previous index)."""
        self._start(len(texts))
        self._add(self.band_keys(texts), ids, detect=False)
        return self

    def fit_keys(self, band_keys: np.ndarray, ids=None) -> "LSHBloom":
        """fit() on precomputed band keys (e.g. gathered batch by batch)."""
        self._start(len(band_keys))
        self._check_keys(band_keys)
        self._add(band_keys, ids, detect=False)
        return self

    def _check_keys(self, band_keys: np.ndarray) -> None:
        if band_keys.ndim != 2 or band_keys.shape[1] != self.bands_:
            raise InputError(f"band keys must have shape (n, {self.bands_}), got {band_keys.shape}")

    def partial_fit(self, texts: Sequence[str], ids=None) -> "LSHBloom":
        """Add a batch to the index (the first call on an unfitted object needs expected_items)."""
        if not hasattr(self, "index_"):
            self._start(None if self._validated().mode == "lshbloom" else len(texts))
        self._add(self.band_keys(texts), ids, detect=False)
        return self

    def query(self, texts: Sequence[str], ids=None, return_band_keys: bool = False) -> DedupResult:
        """Match new documents against the index (read-only; no in-batch matching)."""
        self._check_fitted()
        keys = self.band_keys(texts)
        band_keys = keys if return_band_keys else None
        if self.params_.mode == "lshbloom":
            return DedupResult(self.index_.contains_any(keys), band_keys=band_keys)
        first_docs = self.index_.lookup(keys)
        dup_of = np.where(first_docs >= 0, first_docs, np.iinfo(np.int64).max).min(axis=1)
        dup_of[dup_of == np.iinfo(np.int64).max] = -1
        return DedupResult(dup_of >= 0, dup_of, self._ids_of(dup_of), band_keys=band_keys)

    def transform(self, texts: Sequence[str], ids=None, return_band_keys: bool = False):
        """is_duplicate per document against the fitted index (+ band keys on request)."""
        result = self.query(texts, ids, return_band_keys)
        return (result.is_duplicate, result.band_keys) if return_band_keys else result.is_duplicate

    def deduplicate(self, texts: Sequence[str], ids=None) -> DedupResult:
        """One-shot: a document is a duplicate when it shares a band key with an EARLIER document
        of `texts` (input order, same batch included). Leaves self fitted on all of `texts`."""
        return self.deduplicate_keys(self.band_keys(texts), ids)

    def deduplicate_keys(self, band_keys: np.ndarray, ids=None) -> DedupResult:
        """deduplicate() on precomputed band keys (e.g. gathered batch by batch)."""
        self._start(len(band_keys))
        self._check_keys(band_keys)
        result = self._add(band_keys, ids, detect=True)
        if self.params_.mode == "minhash_lsh":
            labels = components_kernel(self.index_.lookup(band_keys), 0, len(band_keys))
            result = DedupResult(result.is_duplicate, result.duplicate_of, result.duplicate_of_id,
                                 labels)
        return result

    def deduplicate_stream(self, batches: Iterable) -> Iterable[DedupResult]:
        """Streaming deduplicate over (texts, ids) batches; lshbloom needs expected_items."""
        self._start(None if self._validated().mode == "lshbloom" else 0)
        for texts, ids in batches:
            yield self._add(self.band_keys(texts), ids, detect=True)

    def save(self, path) -> None:
        """Write the index folder (metadata.json + raw arrays, atomic, no pickle)."""
        self._check_fitted()
        save_index(path, self)

    @classmethod
    def load(cls, path) -> "LSHBloom":
        return load_index(cls, path)

    def metadata(self) -> dict:
        self._check_fitted()
        meta = {"params": self.params_.to_dict(), "bands": self.bands_, "rows": self.rows_,
                "n_documents": self.n_documents_}
        if self.params_.mode == "lshbloom":
            meta["bloom"] = self.index_.metadata()
        else:
            meta["band_entries"] = self.index_.num_keys
        return meta
