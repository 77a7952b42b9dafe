"""A Bloom filter of documents' band keys that grows instead of overfilling (a scalable Bloom
filter after Almeida et al., 2007).

A filter sized for n documents and filled with more answers "duplicate" for unique documents far
more often than `fp_prob` (2,000 documents in a filter for 200: 1,419 flagged). Here layer i holds
at most `capacity * 2^i` documents, and when the last layer is full the next document opens a new
layer with twice the capacity and half of the false-positive budget still unused:

    rate of layer i = fp_prob / 2^(i+1),   sum over all layers < fp_prob

so a unique document, which can be a false positive of any layer, is flagged with probability
below fp_prob however many documents come. Queries OR the layers; inserts go to the last one.
Documents fill the layers in input order and are counted as documents (not bits set), so the
layer of a document depends only on its ordinal: the same documents give the same layers whatever
the batches, and layers filled from disjoint sets of documents merge by OR (Spark partitions) as
long as no merged layer holds more than its capacity.

Each layer is a BloomFilter sized by corpus_miner.dedup.bloom's rule for its capacity and rate,
with a prime number of bits, at least 2^20 (see layer_shape).
"""

from __future__ import annotations

import numpy as np

from corpus_miner.dedup.bloom import BloomFilter, bloom_size, key_fp_prob
from corpus_miner.errors import ParameterError


def _is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin for n < 3.3e24 (these bases suffice)."""
    if n < 2:
        return False
    small = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    for p in small:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in small:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def next_prime(n: int) -> int:
    while not _is_prime(n):
        n += 1
    return n


MIN_LAYER_BITS = 1 << 20  # 128 KiB


def layer_shape(capacity: int, rate: float, bands: int) -> tuple[int, int]:
    """(num_bits, num_hashes) of a layer for `capacity` documents of `bands` keys at `rate`
    per document: the sizing rule of corpus_miner.dedup.bloom, with num_bits at least
    MIN_LAYER_BITS and rounded up to a prime.

    Double hashing probes start + i * step (mod num_bits), so the probes of different keys are
    far from independent in a small filter: at 5e-4 per document and 13 bands, filters of the
    rule's size measured 5.4x the rate for 20 documents (5,502 bits), 1.6x for 100 and 1.1x for
    1,000, and ~1.0x from 10,000 (2.75M bits). A prime num_bits makes the probes of every key
    distinct bits (a step sharing a factor with num_bits cycled through a few of them: 2.5x,
    1.3x, 1.03x), and at least 2^20 bits (128 KiB) keep small layers far below their rate
    (benchmarks/bench_bloom_small.py, results/bloom_small_filters.csv)."""
    num_bits, num_hashes = bloom_size(capacity * bands, key_fp_prob(rate, bands))
    return next_prime(max(num_bits, MIN_LAYER_BITS)), num_hashes


class ScalableBloomFilter:
    """Layers of Bloom filters; see the module docstring.

    capacity: documents of the first layer; fp_prob: per-document false-positive rate of the
    whole filter; bands: keys per document (the width of every band_keys array given).
    layers / documents / rates: the state of a filter being restored (all three, or none for a
    new empty filter); rates[i] is layer i's per-document rate, documents[i] the documents in
    layer i (earlier layers may be part-full in a part of a partitioned input).
    """

    def __init__(self, capacity: int, fp_prob: float, bands: int,
                 layers: list[BloomFilter] | None = None, documents: list[int] | None = None,
                 rates: list[float] | None = None):
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) \
                or capacity < 1:
            raise ParameterError(f"capacity must be an integer >= 1 (documents), got {capacity!r}")
        if isinstance(bands, bool) or not isinstance(bands, (int, np.integer)) or bands < 1:
            raise ParameterError(f"bands must be an integer >= 1, got {bands!r}")
        key_fp_prob(fp_prob, 1)  # ParameterError unless 0 < fp_prob < 1
        self.capacity = int(capacity)
        self.fp_prob = float(fp_prob)
        self.bands = int(bands)
        self.layers: list[BloomFilter] = []
        self.documents: list[int] = []
        self.rates: list[float] = []
        if layers is None and documents is None and rates is None:
            self._open_layer()
            return
        if layers is None or documents is None or rates is None \
                or not len(layers) == len(documents) == len(rates) or not layers:
            raise ParameterError("restoring a filter needs layers, documents and rates, one of "
                                 "each per layer")
        for layer, count, rate in zip(layers, documents, rates):
            self._check_layer(layer, int(count), float(rate))
            self.layers.append(layer)
            self.documents.append(int(count))
            self.rates.append(float(rate))

    # -- layers ------------------------------------------------------------------------------------
    def layer_capacity(self, index: int) -> int:
        return self.capacity << index

    def _next_rate(self) -> float:
        """Half of the false-positive budget the layers so far leave unused."""
        return (self.fp_prob - sum(self.rates)) / 2.0

    def _check_layer(self, layer: BloomFilter, count: int, rate: float) -> None:
        index = len(self.layers)
        capacity = self.layer_capacity(index)
        # the plan: half of the budget left, except a first layer of the version 1 index format,
        # which took the whole budget (and so cannot grow)
        planned = (self._next_rate(), self.fp_prob) if index == 0 else (self._next_rate(),)
        if rate not in planned:
            raise ParameterError(f"layer {index}'s rate {rate} is not the plan's "
                                 f"{planned[0]} (half of fp_prob={self.fp_prob} left unused)")
        legacy = index == 0 and rate == self.fp_prob  # sized by the plain rule back then
        shape = bloom_size(capacity * self.bands, key_fp_prob(rate, self.bands)) if legacy \
            else layer_shape(capacity, rate, self.bands)
        if (layer.num_bits, layer.num_hashes) != shape:
            raise ParameterError(
                f"layer {index} has {layer.num_bits} bits x {layer.num_hashes} hashes, but a "
                f"layer of {capacity} documents at rate {rate} has {shape[0]} bits x "
                f"{shape[1]} hashes")
        if not 0 <= count <= capacity:
            raise ParameterError(f"layer {index} holds {count} documents, its capacity is "
                                 f"{capacity}")

    def _open_layer(self) -> BloomFilter:
        index = len(self.layers)
        rate = self._next_rate()
        if rate <= 0.0:
            raise ParameterError(
                f"this filter is full ({self.n_documents} documents) and has no false-positive "
                "budget left to grow (an index saved by an older corpus-miner, sized for exactly "
                "its documents); rebuild it to add documents")
        capacity = self.layer_capacity(index)
        layer = BloomFilter(*layer_shape(capacity, rate, self.bands))
        self.layers.append(layer)
        self.documents.append(0)
        self.rates.append(rate)
        return layer

    @property
    def n_documents(self) -> int:
        return sum(self.documents)

    def filled_in_order(self) -> bool:
        """True when every layer but the last is full, as documents inserted in order leave
        them (a part of a partitioned input, before merging, need not be)."""
        return all(count == self.layer_capacity(i) for i, count in enumerate(self.documents[:-1]))

    @property
    def num_bits(self) -> int:
        """Bits of all layers."""
        return sum(layer.num_bits for layer in self.layers)

    @property
    def num_hashes(self) -> int:
        """Hash functions of the first layer (each further layer uses a few more)."""
        return self.layers[0].num_hashes

    @property
    def size_bytes(self) -> int:
        return sum(int(layer.bits.nbytes) for layer in self.layers)

    # -- inserting and querying ------------------------------------------------------------------
    def _checked(self, band_keys) -> np.ndarray:
        keys = np.ascontiguousarray(band_keys, dtype=np.uint64)
        if keys.ndim != 2 or keys.shape[1] != self.bands:
            raise ParameterError(f"band keys must have shape (documents, {self.bands}), got "
                                 f"{keys.shape}")
        return keys

    def _segments(self, n: int):
        """(start, stop, layer) runs of the next n documents, opening layers as they fill."""
        start = 0
        while start < n:
            index = len(self.layers) - 1
            room = self.layer_capacity(index) - self.documents[index]
            if room == 0:
                self._open_layer()
                continue
            stop = min(n, start + room)
            yield start, stop, index
            self.documents[index] += stop - start
            start = stop

    def reserve(self, n: int) -> list[tuple[int, int, int]]:
        """Count n more documents in, opening the layers they need, without inserting them:
        (start, stop, layer) runs of the n. For engines that fill the layers elsewhere (Spark's
        partition-local filters, OR-ed into each run's layer): Bloom bits do not depend on the
        order of the inserts, so the result is the filter add() would give."""
        return list(self._segments(int(n)))

    def add(self, band_keys) -> None:
        """Insert documents (rows of band keys) in order."""
        keys = self._checked(band_keys)
        for start, stop, index in self._segments(len(keys)):
            self.layers[index].add(keys[start:stop])

    def query_then_insert(self, band_keys) -> np.ndarray:
        """In row order: is any key of the document already in the filter; then insert it."""
        keys = self._checked(band_keys)
        out = np.zeros(len(keys), bool)
        for start, stop, index in self._segments(len(keys)):
            part = keys[start:stop]
            hits = self.layers[index].query_then_insert(part)
            for full in self.layers[:index]:
                hits |= full.contains_any(part)
            out[start:stop] = hits
        return out

    def contains_any(self, band_keys) -> np.ndarray:
        """Per document: is any of its keys in any layer? (read-only)"""
        keys = self._checked(band_keys)
        out = np.zeros(len(keys), bool)
        for layer in self.layers:
            out |= layer.contains_any(keys)
        return out

    # -- combining ---------------------------------------------------------------------------------
    def same_plan(self, other: ScalableBloomFilter) -> bool:
        """Same capacity, rate and bands: the layers of both have the same shapes."""
        return (self.capacity, self.fp_prob, self.bands) == (other.capacity, other.fp_prob,
                                                             other.bands) \
            and self.rates[:1] == other.rates[:1]

    def merge(self, other: ScalableBloomFilter) -> ScalableBloomFilter:
        """Layer-wise OR of two filters of the same plan holding disjoint documents (a new
        filter); refused when a merged layer would hold more than its capacity."""
        if not isinstance(other, ScalableBloomFilter):
            raise ParameterError("can only merge a ScalableBloomFilter, got "
                                 f"{type(other).__name__}")
        if not self.same_plan(other):
            raise ParameterError(
                "cannot merge Bloom filters built with other parameters: capacity "
                f"{self.capacity} vs {other.capacity}, fp_prob {self.fp_prob} vs {other.fp_prob}, "
                f"bands {self.bands} vs {other.bands}; build both with the same expected_items, "
                "fp_prob and bands")
        longer, shorter = (self, other) if len(self.layers) >= len(other.layers) else (other, self)
        layers = [layer.copy() for layer in longer.layers]
        documents = list(longer.documents)
        for index, layer in enumerate(shorter.layers):
            layers[index] = layers[index].merge(layer)
            documents[index] += shorter.documents[index]
        for index, count in enumerate(documents):
            if count > self.layer_capacity(index):
                raise ParameterError(
                    f"merging would put {count} documents in layer {index}, whose capacity is "
                    f"{self.layer_capacity(index)}: the filters must hold disjoint parts of one "
                    "input (e.g. Spark partitions of one fit), each in the layer of its position")
        return ScalableBloomFilter(self.capacity, self.fp_prob, self.bands, layers, documents,
                                   list(longer.rates))

    __or__ = merge

    def copy(self) -> ScalableBloomFilter:
        return ScalableBloomFilter(self.capacity, self.fp_prob, self.bands,
                                   [layer.copy() for layer in self.layers], list(self.documents),
                                   list(self.rates))

    def bits_set(self) -> int:
        return sum(layer.bits_set() for layer in self.layers)

    def metadata(self) -> dict:
        layers = [{"documents": count, "rate": rate, "num_bits": layer.num_bits,
                   "num_hashes": layer.num_hashes, "bits_set": layer.bits_set()}
                  for layer, count, rate in zip(self.layers, self.documents, self.rates)]
        return {"capacity": self.capacity, "fp_prob": self.fp_prob, "num_bits": self.num_bits,
                "num_hashes": self.num_hashes, "size_bytes": self.size_bytes,
                "bits_set": sum(layer["bits_set"] for layer in layers), "layers": layers}

    def __eq__(self, other) -> bool:
        return (isinstance(other, ScalableBloomFilter) and self.same_plan(other)
                and self.documents == other.documents and self.rates == other.rates
                and all(a == b for a, b in zip(self.layers, other.layers)))

    def __repr__(self) -> str:
        return (f"ScalableBloomFilter(capacity={self.capacity}, fp_prob={self.fp_prob}, "
                f"bands={self.bands}, layers={len(self.layers)}, documents={self.n_documents})")
