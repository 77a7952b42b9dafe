"""A fast 64-bit digest of what a reader yields, to check that two reads of an input agree.

`dedup` reads its input twice (band keys first, records second) and must not write pass 1's
flags next to other documents. Both passes feed every batch to a TextsDigest; equal digests
mean, up to a 2^-64 chance, the same input in the same order and batches: for JSONL inputs every
byte read (the second read writes the lines without parsing them), for others the texts (flags
depend only on them).

A batch contributes the hash of its texts' bytes (concatenated) and the hash of their lengths
(the document boundaries), or of its JSONL chunk and record count, chained into the running
value. The bytes are hashed as 8-byte
little-endian words in four independent lanes (xxHash64's round, so the multiplications overlap;
~2 GB/s on a loaded 2-core machine, where sha256 ran at 0.35 GB/s). Not cryptographic: it
detects changes, not an adversary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from corpus_miner._numba.hashing import splitmix64
from corpus_miner._numba.readonly import read_only
from corpus_miner.io.strings import arrow_string_buffers

_PRIME_1 = np.uint64(0x9E3779B185EBCA87)  # xxHash64's primes
_PRIME_2 = np.uint64(0xC2B2AE3D27D4EB4F)
_MASK = (1 << 64) - 1


@njit(cache=True, inline="always")
def _round(lane, word):
    """xxHash64's lane round: multiply-accumulate, rotate, multiply."""
    lane += word * _PRIME_2
    lane = (lane << np.uint64(31)) | (lane >> np.uint64(33))
    return lane * _PRIME_1


@njit(cache=True, nogil=True)  # nogil: the read-ahead thread splits the next chunk meanwhile
def words_hash_kernel(words, tail, n_bytes):
    """64-bit hash of bytes given as whole little-endian words plus the last partial word
    (`tail`, zero-padded) and their count."""
    a = np.uint64(0x2545F4914F6CDD1D)
    b = a ^ _PRIME_1
    c = a ^ _PRIME_2
    d = a + _PRIME_1 + _PRIME_2
    n = len(words)
    stripes = n - n % 4
    for i in range(0, stripes, 4):
        a = _round(a, words[i])
        b = _round(b, words[i + 1])
        c = _round(c, words[i + 2])
        d = _round(d, words[i + 3])
    h = splitmix64(np.uint64(n_bytes) ^ a)
    h = splitmix64(h ^ b)
    h = splitmix64(h ^ c)
    h = splitmix64(h ^ d)
    for i in range(stripes, n):
        h = splitmix64(h ^ words[i])
    return splitmix64(h ^ tail)


def bytes_hash(data: np.ndarray) -> int:
    """words_hash_kernel of a uint8 array (read in place when it starts on an 8-byte boundary)."""
    whole = len(data) // 8 * 8
    head = data[:whole]
    if head.ctypes.data % 8:
        head = head.copy()  # numpy allocations are aligned
    tail = int.from_bytes(data[whole:].tobytes(), "little")
    # read-only, whatever `data` is (Arrow buffers are, numpy arrays are not): one kernel type
    return int(words_hash_kernel(read_only(head.view(np.uint64)), np.uint64(tail), len(data)))


class TextsDigest:
    """Running digest of batches read in order: update(texts) or update_batch(batch) each,
    then .value."""

    def __init__(self):
        self.value = 0
        self.documents = 0

    def update(self, texts) -> None:
        """Add a batch of texts (Arrow string or large_string array)."""
        offsets, data = arrow_string_buffers(texts)
        start, end = int(offsets[0]), int(offsets[-1])
        lengths = np.diff(offsets).astype("<i8")
        self._chain(bytes_hash(data[start:end]), bytes_hash(lengths.view(np.uint8)), len(lengths))

    def update_batch(self, batch) -> None:
        """Add a DocumentBatch or LineBatch: the bytes of its JSONL chunk when it has one (every
        byte read, so an edit of any field shows, and the lines need no parsing), else its
        texts. Both reads of an input give the same kind of batches, so they agree."""
        lines = batch.lines
        if lines is None:
            self.update(batch.texts)
            return
        records = np.array([len(lines)], "<i8")
        self._chain(bytes_hash(np.frombuffer(lines.chunk, np.uint8)),
                    bytes_hash(records.view(np.uint8)), len(lines))

    def _chain(self, content: int, boundaries: int, documents: int) -> None:
        mixed = int(splitmix64(np.uint64(self.value ^ content)))
        self.value = int(splitmix64(np.uint64(mixed ^ boundaries))) & _MASK
        self.documents += documents


@njit(cache=True, nogil=True)
def ordered_xor_kernel(data, offsets, first):
    """XOR over documents of mix(hash of the document's bytes, its global index first + i):
    the same value whatever the batches or partitions the documents come in. A document's bytes
    are hashed as 8-byte little-endian words counted from its own first byte (so its place in
    the buffer does not matter), the last one zero-padded, through xxHash64's round, then its
    length: one multiplication chain per word rather than per byte."""
    acc = np.uint64(0)
    for i in range(len(offsets) - 1):
        start, end = offsets[i], offsets[i + 1]
        length = np.uint64(end - start)
        h = np.uint64(0xCBF29CE484222325) ^ length
        j = start
        while j + 8 <= end:
            word = np.uint64(0)
            for k in range(8):
                word |= np.uint64(data[j + k]) << np.uint64(8 * k)
            h = _round(h, word)
            j += 8
        tail = np.uint64(0)
        for k in range(end - j):
            tail |= np.uint64(data[j + k]) << np.uint64(8 * k)
        h = splitmix64(_round(h, tail) ^ length)
        index = splitmix64(np.uint64(first + i) ^ np.uint64(0x9E3779B97F4A7C15))
        acc ^= splitmix64(h ^ index)
    return acc


class OrderedDigest:
    """Digest of the texts of documents by their position in the input, independent of how
    they are split: what an engine that reads an input in parallel pieces (Spark partitions)
    and the driver that reads it again in batches can both compute and compare. update(texts,
    first) with the global index of the first text; combine() another digest's (value,
    documents); .value and .documents."""

    def __init__(self):
        self.value = 0
        self.documents = 0

    def update(self, texts, first: int) -> None:
        offsets, data = arrow_string_buffers(texts)
        self.value ^= int(ordered_xor_kernel(read_only(data), read_only(
            offsets.astype(np.int64, copy=False)), np.int64(first)))
        self.documents += len(offsets) - 1

    def combine(self, value: int, documents: int) -> None:
        self.value ^= int(value) & _MASK
        self.documents += int(documents)

    def state(self) -> tuple[int, int]:
        return self.documents, self.value


@dataclass(frozen=True)
class UnitDigests:
    """The first read's OrderedDigest states (documents, value), one per unit of the input in
    read order (an input file, or a Parquet part of an input folder), each over the unit's own
    documents counted from 0: what readers of the units in parallel (Spark tasks, one per unit)
    compute while they read, with no second pass and no global positions. A single unit is the
    whole input's OrderedDigest state."""

    states: tuple[tuple[int, int], ...]

    @property
    def documents(self) -> int:
        return sum(documents for documents, _ in self.states)


def changed_between_reads(command: str, first: int, second: str) -> str:
    """The one-line message for inputs whose two reads differ: `first` documents on the first
    read, `second` ("12", "more than 10", "10, other texts") on the second."""
    return (f"the inputs changed between {command}'s two reads ({first:,} documents on the "
            f"first read, {second} on the second); nothing was written: run again on files "
            "that are not being written to")


def checked_reread(batches, expected: tuple[int, int] | UnitDigests, command: str):
    """The batches of a second read, checked against the first read: `expected` is its
    OrderedDigest state (documents, value) or its UnitDigests. InputError before a batch that
    goes beyond the documents of the first read, and after the last one when the texts differ.
    A writer that consumes this inside its atomic output leaves nothing behind."""
    from corpus_miner.errors import InputError

    units = expected if isinstance(expected, UnitDigests) else \
        UnitDigests(((int(expected[0]), int(expected[1])),))
    total = units.documents
    counts = np.array([documents for documents, _ in units.states], np.int64)
    ends = np.cumsum(counts)
    found = [OrderedDigest() for _ in units.states]
    read = 0
    for batch in batches:
        n = len(batch)
        if read + n > total:
            raise InputError(changed_between_reads(command, total, f"more than {total:,}"))
        done = 0
        while done < n:  # a batch may span units: each unit digests its own positions
            unit = int(np.searchsorted(ends, read + done, side="right"))
            take = min(n - done, int(ends[unit]) - read - done)
            found[unit].update(batch.texts.slice(done, take),
                               read + done - int(ends[unit] - counts[unit]))
            done += take
        read += n
        yield batch
    if tuple(f.state() for f in found) != tuple(tuple(s) for s in units.states):
        other = ", other texts" if read == total else ""
        raise InputError(changed_between_reads(command, total, f"{read:,}{other}"))
