"""LSHBloomState: what a fitted near-duplicate index is, whichever engine built it.

The local LSHBloom, SparkLSHBloom and the index folder (corpus_miner.dedup.persist) exchange
fitted indexes only through this object (`to_state()` / `from_state()`), so none reads another's
private attributes, and every way in (a loaded folder, a Spark fit, a merge) passes the same
consistency checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from corpus_miner.dedup.bandtable import BandTable
from corpus_miner.dedup.params import LSHBloomParams
from corpus_miner.dedup.scalable_bloom import ScalableBloomFilter
from corpus_miner.errors import ParameterError


@dataclass(frozen=True, eq=False)
class LSHBloomState:
    """A fitted index. params: validated parameters (canonical mode); n_documents: documents
    indexed, in order; bloom: the filter (mode lshbloom); band_table and ids: the exact table
    and the id of every indexed document in order (mode minhash_lsh); snapshots: what the
    index absorbed, oldest first (one dict per `index add` / build: time, inputs with their
    digests, documents), carried from generation to generation of the index folder.

    The arrays are shared, not copied: LSHBloom.from_state copies them unless told otherwise."""

    params: LSHBloomParams
    n_documents: int
    bloom: ScalableBloomFilter | None = None
    band_table: BandTable | None = None
    ids: pa.Array | None = None
    snapshots: tuple = ()

    def __post_init__(self):
        params = self.params
        if not isinstance(params, LSHBloomParams):
            raise ParameterError(f"params must be LSHBloomParams, got {type(params).__name__}")
        if params != params.validated():
            raise ParameterError("params must be validated (LSHBloomParams(...).validated())")
        n = self.n_documents
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ParameterError(f"n_documents must be an integer >= 0, got {self.n_documents!r}")
        bands = params.bands_rows[0]
        if params.mode == "lshbloom":
            self._check_bloom(bands)
        else:
            self._check_table(bands)

    def _check_bloom(self, bands: int) -> None:
        bloom = self.bloom
        if not isinstance(bloom, ScalableBloomFilter) or self.band_table is not None:
            raise ParameterError("mode lshbloom needs a ScalableBloomFilter (and no band table), "
                                 f"got {type(bloom).__name__}")
        if bloom.bands != bands or bloom.fp_prob != self.params.fp_prob:
            raise ParameterError(f"the filter was built for {bloom.bands} bands at fp_prob "
                                 f"{bloom.fp_prob}; these parameters give {bands} bands at "
                                 f"{self.params.fp_prob}")
        if bloom.n_documents != self.n_documents:
            raise ParameterError(f"the filter holds {bloom.n_documents} documents, not "
                                 f"n_documents={self.n_documents}")
        if not bloom.filled_in_order():
            raise ParameterError(f"the filter's layers hold {bloom.documents} documents: a layer "
                                 "before the last is not full")

    def _check_table(self, bands: int) -> None:
        table = self.band_table
        if not isinstance(table, BandTable) or self.bloom is not None:
            raise ParameterError("mode minhash_lsh needs a BandTable (and no Bloom filter), got "
                                 f"{type(table).__name__}")
        if not isinstance(self.ids, pa.Array) or len(self.ids) != self.n_documents:
            got = len(self.ids) if isinstance(self.ids, pa.Array) else type(self.ids).__name__
            raise ParameterError(f"mode minhash_lsh needs one id per indexed document "
                                 f"({self.n_documents}), got {got}")
        if table.num_keys > self.n_documents * bands:
            raise ParameterError(f"the band table has {table.num_keys} keys, more than "
                                 f"{self.n_documents} documents x {bands} bands")
        documents = table.document_range()
        if documents is not None and (documents[0] < 0 or documents[1] >= self.n_documents):
            raise ParameterError("the band table names documents outside "
                                 f"0..{self.n_documents - 1}")

    @property
    def bands_rows(self) -> tuple[int, int]:
        return self.params.bands_rows

    def copy(self) -> LSHBloomState:
        """A state owning its own filter / table (ids are immutable Arrow data)."""
        bloom = self.bloom.copy() if self.bloom is not None else None
        table = self.band_table.copy() if self.band_table is not None else None
        return LSHBloomState(self.params, self.n_documents, bloom, table, self.ids,
                             self.snapshots)
