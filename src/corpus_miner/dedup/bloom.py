"""A Bloom filter of 64-bit band keys: sized per document, mergeable by OR, saved without pickle.

Sizing. `fp_prob` is the probability that a *unique document* (one sharing no band key with the
indexed documents) is reported as a duplicate. A document is flagged when any of its `bands` keys
is a false positive, so the per-key rate is

    key_fp = 1 - (1 - fp_prob) ** (1 / bands)        (~ fp_prob / bands)

and for n = expected_documents * bands keys the optimal filter has

    num_bits   m = ceil(-n * ln(key_fp) / ln(2)^2)
    num_hashes k = max(1, round(m / n * ln 2))        (~ log2(1 / key_fp))

(k is capped at 64 hash functions; below the rate 64 optimal hashes give, m is raised to
ceil(-64 n / ln(1 - key_fp^(1/64))) instead.) A filter never takes more memory than the machine
has: it is refused with a ParameterError instead of failing inside numpy.

The predicted false-positive rate of a key once the n keys are in is (1 - exp(-k n / m)) ** k.

Bit positions use Kirsch-Mitzenmacher double hashing of the key: pos_i = (h1 + i * h2) mod m with
h1, h2 two SplitMix64 mixes of the key. They are computed by numba kernels over whole arrays of
keys, so a Spark partition can build a local filter with the same bits and the driver ORs them
together.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
from numba import njit

from corpus_miner._numba.hashing import splitmix64
from corpus_miner.errors import ParameterError
from corpus_miner.io.artefact import open_artefact, save_artefact

BLOOM_FORMAT = "corpus-miner/bloom-filter"
BLOOM_VERSION = 2  # 2: metadata checksum; 1 (no checksum) is still read
MAX_BITS = 1 << 56  # keeps h1 + i * h2 (i < 64) below 2^64 in the position kernel
MAX_HASHES = 64
_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], np.uint8)
_SALT_1 = np.uint64(0x243F6A8885A308D3)
_SALT_2 = np.uint64(0x13198A2E03707344)


def key_fp_prob(doc_fp_prob: float, bands: int) -> float:
    """Per-key false-positive rate that gives `doc_fp_prob` per document of `bands` keys."""
    if not 0.0 < doc_fp_prob < 1.0:
        raise ParameterError(f"fp_prob must be in (0, 1), got {doc_fp_prob}")
    return -math.expm1(math.log1p(-doc_fp_prob) / bands)


def bloom_size(num_keys: int, key_fp: float) -> tuple[int, int]:
    """(num_bits, num_hashes) of the smallest filter holding num_keys keys at rate key_fp."""
    if num_keys < 1:
        raise ParameterError(f"a Bloom filter needs capacity for >= 1 key, got {num_keys}")
    if not 0.0 < key_fp < 1.0:
        raise ParameterError(f"per-key false-positive rate must be in (0, 1), got {key_fp}")
    num_bits = max(8, math.ceil(-num_keys * math.log(key_fp) / math.log(2) ** 2))
    num_hashes = max(1, round(num_bits / num_keys * math.log(2)))
    if num_hashes > MAX_HASHES:
        num_hashes = MAX_HASHES
        num_bits = math.ceil(-num_hashes * num_keys / math.log1p(-key_fp ** (1.0 / num_hashes)))
    if num_bits >= MAX_BITS:
        raise ParameterError(f"a filter of {num_bits} bits is too large; lower expected_items or "
                             "raise fp_prob")
    return num_bits, num_hashes


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def _gib(n_bytes: int) -> str:
    return f"{n_bytes / 2**30:,.1f} GiB"


def _zeroed_bits(n_bytes: int) -> np.ndarray:
    """The bit array of a new filter, or a ParameterError when it cannot fit in memory (numpy's
    own MemoryError, or worse the OOM killer, would come only after a long allocation)."""
    memory = _physical_memory()
    advice = ("lower expected_items (the index grows as documents come) or raise fp_prob")
    if memory is not None and n_bytes > memory:
        raise ParameterError(f"a Bloom filter of {_gib(n_bytes)} does not fit in this machine's "
                             f"{_gib(memory)} of memory; {advice}")
    try:
        return np.zeros(n_bytes, np.uint8)
    except MemoryError:
        raise ParameterError(f"cannot allocate a Bloom filter of {_gib(n_bytes)}; "
                             f"{advice}") from None


def predicted_fp(num_bits: int, num_hashes: int, num_keys: int) -> float:
    """Predicted per-key false-positive rate after inserting num_keys distinct keys."""
    return (1.0 - math.exp(-num_hashes * num_keys / num_bits)) ** num_hashes


@njit(cache=True, inline="always")
def _start_and_step(key, num_bits):
    m = np.uint64(num_bits)
    start = splitmix64(key ^ _SALT_1) % m
    step = np.uint64(1)
    if m > np.uint64(1):
        step = np.uint64(1) + splitmix64(key ^ _SALT_2) % (m - np.uint64(1))
    return start, step


@njit(cache=True)
def bloom_positions(keys, num_bits, num_hashes):
    """Bit positions (len(keys), num_hashes) of a flat uint64 key array."""
    out = np.empty((len(keys), num_hashes), np.uint64)
    m = np.uint64(num_bits)
    for i in range(len(keys)):
        start, step = _start_and_step(keys[i], num_bits)
        for h in range(num_hashes):
            out[i, h] = (start + np.uint64(h) * step) % m
    return out


@njit(cache=True, inline="always")
def _byte_and_bit(start, step, h, num_bits):
    """Byte index and bit mask of the key's h-th position (start, step: _start_and_step)."""
    pos = (start + np.uint64(h) * step) % np.uint64(num_bits)
    return pos >> np.uint64(3), np.uint8(1) << np.uint8(pos & np.uint64(7))


@njit(cache=True)
def _contains(bits, key, num_bits, num_hashes):
    start, step = _start_and_step(key, num_bits)
    for h in range(num_hashes):
        byte, bit = _byte_and_bit(start, step, h, num_bits)
        if bits[byte] & bit == 0:
            return False
    return True


@njit(cache=True)
def _insert(bits, key, num_bits, num_hashes):
    start, step = _start_and_step(key, num_bits)
    for h in range(num_hashes):
        byte, bit = _byte_and_bit(start, step, h, num_bits)
        bits[byte] |= bit


@njit(cache=True)
def bloom_add_kernel(bits, keys, num_bits, num_hashes):
    """Set the bits of every key of a flat uint64 array (in place)."""
    for i in range(len(keys)):
        _insert(bits, keys[i], num_bits, num_hashes)


@njit(cache=True)
def bloom_add_counting_kernel(bits, twice, keys, num_bits, num_hashes):
    """bloom_add_kernel that also sets, in `twice`, every position already set in `bits`: a key
    inserted twice then has all its positions in `twice` (other keys only by collisions), so
    `twice` is a filter of "possibly inserted more than once"."""
    for i in range(len(keys)):
        start, step = _start_and_step(keys[i], num_bits)
        for h in range(num_hashes):
            byte, bit = _byte_and_bit(start, step, h, num_bits)
            if bits[byte] & bit:
                twice[byte] |= bit
            bits[byte] |= bit


@njit(cache=True)
def bloom_contains_kernel(bits, keys, num_bits, num_hashes):
    """Membership (may be a false positive, never a false negative) of each key."""
    out = np.empty(len(keys), np.bool_)
    for i in range(len(keys)):
        out[i] = _contains(bits, keys[i], num_bits, num_hashes)
    return out


@njit(cache=True)
def bloom_any_kernel(bits, band_keys, num_bits, num_hashes):
    """Per document (row of band_keys): is any of its keys in the filter?"""
    out = np.zeros(band_keys.shape[0], np.bool_)
    for d in range(band_keys.shape[0]):
        for b in range(band_keys.shape[1]):
            if _contains(bits, band_keys[d, b], num_bits, num_hashes):
                out[d] = True
                break
    return out


@njit(cache=True)
def bloom_query_then_insert_kernel(bits, band_keys, num_bits, num_hashes):
    """In row order: flag a document if any key is already present, then insert all its keys.

    Every document is inserted, duplicates too, so the answer is "shares a key with an earlier
    document", independent of how the input is cut into batches.
    """
    out = np.zeros(band_keys.shape[0], np.bool_)
    for d in range(band_keys.shape[0]):
        for b in range(band_keys.shape[1]):
            if _contains(bits, band_keys[d, b], num_bits, num_hashes):
                out[d] = True
                break
        for b in range(band_keys.shape[1]):
            _insert(bits, band_keys[d, b], num_bits, num_hashes)
    return out


def _as_keys(keys) -> np.ndarray:
    return np.ascontiguousarray(keys, dtype=np.uint64)


class BloomFilter:
    """Bit array of `num_bits` bits probed by `num_hashes` positions per 64-bit key."""

    def __init__(self, num_bits: int, num_hashes: int, bits: np.ndarray | None = None):
        if not 1 <= num_bits < MAX_BITS:
            raise ParameterError(f"num_bits must be in [1, 2^56), got {num_bits}")
        if not 1 <= num_hashes <= MAX_HASHES:
            raise ParameterError(f"num_hashes must be in [1, {MAX_HASHES}], got {num_hashes}")
        n_bytes = (num_bits + 7) // 8
        if bits is None:
            bits = _zeroed_bits(n_bytes)
        elif bits.dtype != np.uint8 or bits.shape != (n_bytes,):
            raise ParameterError(f"bits must be uint8 of length {n_bytes} for {num_bits} bits, got "
                                 f"{bits.dtype} {bits.shape}")
        self.num_bits = int(num_bits)
        self.num_hashes = int(num_hashes)
        self.bits = bits
        # (file, metadata entry) of the saved array these bits are, while nothing was added:
        # a later save may hard-link that file instead of writing the bits again
        self.source: tuple[Path, dict] | None = None

    @classmethod
    def for_documents(cls, expected_documents: int, bands: int, fp_prob: float) -> BloomFilter:
        """A filter for `expected_documents` documents of `bands` keys at `fp_prob` per document."""
        return cls(*bloom_size(expected_documents * bands, key_fp_prob(fp_prob, bands)))

    def add(self, keys) -> None:
        self.source = None
        bloom_add_kernel(self.bits, _as_keys(keys).ravel(), self.num_bits, self.num_hashes)

    def add_counting(self, keys, twice: BloomFilter) -> None:
        """add(keys), and mark in `twice` (same shape) the positions set a second time."""
        if not self.same_shape(twice):
            raise ParameterError("the `twice` filter must have this filter's num_bits and "
                                 "num_hashes")
        self.source = None
        bloom_add_counting_kernel(self.bits, twice.bits, _as_keys(keys).ravel(), self.num_bits,
                                  self.num_hashes)

    def contains(self, keys) -> np.ndarray:
        keys = _as_keys(keys)
        flat = bloom_contains_kernel(self.bits, keys.ravel(), self.num_bits, self.num_hashes)
        return flat.reshape(keys.shape)

    def contains_any(self, band_keys) -> np.ndarray:
        return bloom_any_kernel(self.bits, _as_keys(band_keys), self.num_bits, self.num_hashes)

    def query_then_insert(self, band_keys) -> np.ndarray:
        self.source = None
        return bloom_query_then_insert_kernel(self.bits, _as_keys(band_keys), self.num_bits,
                                              self.num_hashes)

    def same_shape(self, other: BloomFilter) -> bool:
        return self.num_bits == other.num_bits and self.num_hashes == other.num_hashes

    def merge(self, other: BloomFilter) -> BloomFilter:
        """OR of two filters with identical num_bits and num_hashes (a new filter)."""
        if not isinstance(other, BloomFilter):
            raise ParameterError(f"can only merge a BloomFilter, got {type(other).__name__}")
        if not self.same_shape(other):
            raise ParameterError(
                f"cannot merge Bloom filters of different shapes: {self.num_bits} bits x "
                f"{self.num_hashes} hashes vs {other.num_bits} x {other.num_hashes}; build both "
                "with the same expected_items, fp_prob and bands")
        return BloomFilter(self.num_bits, self.num_hashes, self.bits | other.bits)

    __or__ = merge

    def copy(self) -> BloomFilter:
        return BloomFilter(self.num_bits, self.num_hashes, self.bits.copy())

    def bits_set(self) -> int:
        return int(_POPCOUNT[self.bits].sum(dtype=np.int64))

    def estimated_fp(self) -> float:
        """Per-key false-positive rate of the filter as it is now: (fraction of bits set)^k."""
        return (self.bits_set() / self.num_bits) ** self.num_hashes

    def metadata(self) -> dict:
        return {"num_bits": self.num_bits, "num_hashes": self.num_hashes,
                "size_bytes": int(self.bits.nbytes), "bits_set": self.bits_set(),
                "estimated_key_fp": self.estimated_fp()}

    def __eq__(self, other) -> bool:
        return (isinstance(other, BloomFilter) and self.same_shape(other)
                and bool(np.array_equal(self.bits, other.bits)))

    def __repr__(self) -> str:
        return f"BloomFilter(num_bits={self.num_bits}, num_hashes={self.num_hashes})"

    def save(self, path) -> None:
        """Write the filter as a folder (metadata.json + bits.bin, checksummed, atomic)."""
        save_artefact(path, BLOOM_FORMAT, BLOOM_VERSION,
                      {"num_bits": self.num_bits, "num_hashes": self.num_hashes},
                      {"bits.bin": self.bits})

    @classmethod
    def load(cls, path) -> BloomFilter:
        saved = open_artefact(path, BLOOM_FORMAT, (BLOOM_VERSION,), unchecked_versions=(1,),
                              kind="Bloom filter", remedy="save the filter again")
        return cls.from_artefact(saved, saved.metadata)

    @classmethod
    def from_artefact(cls, saved, shape: dict, array_name: str = "bits.bin",
                      mmap: bool = False) -> BloomFilter:
        """The filter whose num_bits / num_hashes are in `shape` (a metadata table) and whose
        bytes are the artefact's array `array_name`. mmap: the bytes are memory-mapped
        copy-on-write instead of read (a query reads only the pages it probes; inserts stay
        in memory), and their sha256 is not computed (that would read them all): the size is
        still checked, and the metadata's checksum covers the shape."""
        num_bits = saved.count("num_bits", shape, 1)
        num_hashes = saved.count("num_hashes", shape, 1)
        bits = saved.array(array_name, np.uint8, ndim=1, mmap="c" if mmap else False,
                           verify=not mmap)
        try:
            bloom = cls(num_bits, num_hashes, bits)
        except ParameterError as exc:
            raise saved.error(str(exc)) from None
        bloom.source = (Path(saved.path) / array_name, saved.entry(array_name))
        return bloom
