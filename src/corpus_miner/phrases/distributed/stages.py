"""The distributed miner's map and reduce steps, as functions of batches and blobs.

An engine (the in-process driver in driver.py, Spark in corpus_miner.spark) only moves what these
functions return: it runs a *map* function on the batches of each partition, routes its keyed
blobs so that equal keys meet (a shuffle), runs the *reduce* function per key bucket, and
broadcasts the small results (vocabulary, filters, deferred keys) to the next map. Every reduce is
a sum over disjoint sets of documents, so any grouping of partitions gives the same answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from corpus_miner._numba.delta_varint import (
    decode_gram_rows,
    decode_key_counts,
    encode_gram_rows,
    encode_key_counts,
)
from corpus_miner._numba.hashing import splitmix64
from corpus_miner._numba.sorted_runs import sum_sorted_runs
from corpus_miner.errors import ParameterError
from corpus_miner.io.strings import StringList
from corpus_miner.phrases.distributed import counts, encode, traverse, windows
from corpus_miner.phrases.distributed.encode import LocalBatch, TokenBatch
from corpus_miner.phrases.distributed.windows import (
    ReachBatch,
    Summary,
    pack_arrays,
    unpack_arrays,
)
from corpus_miner.phrases.distributed.word_table import WordCounter, word_hashes

BATCH_TEXT_BYTES = 2 << 20
"""Texts are tokenized in slices of about this many bytes (whole documents): one stored batch.
Spark moves binary values of a few MB between the JVM and Python several times faster than values
of tens of MB, and a slice's vocabulary usually fits 16-bit ids (local_to_blob)."""

Contains = Callable[[np.ndarray], np.ndarray]
"""A membership test over uint64 keys that may err only by saying yes (a Bloom filter)."""


@dataclass(frozen=True)
class Plan:
    """Parameters of one distributed run (validated by the estimator).

    window_cap: round 0 windows hold min_length + window_cap tokens, doubling each round.
    buckets: how many reduce buckets keyed blobs are spread over.
    salt_threshold: a group with more occurrences is merged in two levels (salted by partition).
    fingerprint_bits: bits kept of every fingerprint (fewer force collisions; tests).
    """

    sigma: int
    min_length: int
    window_cap: int = 1024
    buckets: int = 64
    salt_threshold: int = 50_000_000
    fingerprint_bits: int = 64

    @property
    def mask(self) -> np.uint64:
        return counts.fingerprint_mask(self.fingerprint_bits)

    def depths(self, round_index: int) -> tuple[int, int]:
        """[lo, hi) of the phrase lengths decided by round `round_index`."""
        hi = self.min_length + self.window_cap * (1 << round_index)
        lo = self.min_length if round_index == 0 else \
            self.min_length + self.window_cap * (1 << (round_index - 1))
        return lo, hi

    def salts(self, occurrences: np.ndarray, partitions: int) -> np.ndarray:
        """Number of salts of groups with these occurrence counts (1: not salted)."""
        wanted = -(-np.asarray(occurrences, np.int64) // self.salt_threshold)
        return np.clip(wanted, 1, max(partitions, 1))


@njit(cache=True, nogil=True)
def bucket_of(keys, salt, n_buckets):
    """Reduce bucket of each key (salt 0 = unsalted; salts spread one key over several)."""
    out = np.empty(len(keys), dtype=np.int64)
    for i in range(len(keys)):
        mixed = splitmix64(keys[i] ^ (np.uint64(salt[i]) * np.uint64(0x9E3779B97F4A7C15)))
        out[i] = np.int64(mixed % np.uint64(n_buckets))
    return out


# ---------------------------------------------------------------- stage 0: tokens and words

def text_slices(texts: pa.Array, max_bytes: int = BATCH_TEXT_BYTES) -> Iterator[pa.Array]:
    """Consecutive slices of whole documents holding about max_bytes of text each (a document
    larger than that is a slice of its own)."""
    texts = encode.texts_without_nulls(texts)
    ends = np.cumsum(pc.binary_length(texts).to_numpy(zero_copy_only=False), dtype=np.int64)
    start = 0
    while start < len(texts):
        base = ends[start - 1] if start else 0
        stop = max(int(np.searchsorted(ends, base + max_bytes, side="left")) + 1, start + 1)
        yield texts.slice(start, min(stop, len(texts)) - start)
        start = stop
    if len(texts) == 0:
        yield texts

def local_to_blob(local: LocalBatch) -> bytes:
    """The stored form of a tokenized batch: what encode_batch needs (tokens, documents, the
    vocabulary), in the fewest bytes, since every stored byte crosses between the JVM and Python
    twice; the word counts stay behind (pass 1 has summed them)."""
    tokens, offsets = local.batch.tokens, local.vocab.offsets
    if len(local.vocab) <= 1 << 16:  # half the bytes to store and to move
        tokens = tokens.astype(np.uint16)
    if len(offsets) and offsets[-1] < 1 << 31:
        offsets = offsets.astype(np.int32)
    return pack_arrays({"tokens": tokens, "doc_offsets": local.batch.doc_offsets,
                        "vocab_offsets": offsets, "vocab_data": local.vocab.data})


def local_from_blob(raw: bytes) -> LocalBatch:
    """A stored batch (local_to_blob), without word counts."""
    a = unpack_arrays(raw)
    return LocalBatch(TokenBatch(a["tokens"], a["doc_offsets"]),
                      StringList(a["vocab_offsets"].astype(np.int64), a["vocab_data"]), None)


class PartitionCounts:
    """Stages 0 and 1, map side, over one partition's tokenized batches: the documents of the
    partition containing each word, and each bigram fingerprint (counts.pair_fingerprint of the
    two words' hashes, so bigrams are counted in this same pass, before global ids exist).
    Bigrams are written as packed (fingerprint, document) integers into one buffer of
    PAIRS_PER_FLUSH, reduced by one in-place sort whenever the next batch would not fit or
    2^PAIR_DOC_BITS documents accumulate (bounded memory; a larger batch grows the buffer)."""

    PAIRS_PER_FLUSH = 1 << 24

    def __init__(self, mask: np.uint64):
        self.mask = mask
        self._words = WordCounter()
        self._packed = np.empty(0, np.uint64)  # allocated by the first batch with pairs
        self._n_packed = 0
        self._docs = 0
        self._pairs: list[tuple[np.ndarray, np.ndarray]] = []
        self.tokens = 0
        self.documents = 0

    def add(self, local: LocalBatch) -> None:
        if local.word_df is None:
            raise ParameterError("PartitionCounts.add: a stored batch has no word counts; "
                                 "add the batch tokenize_batch returned")
        batch = local.batch
        self.tokens += len(batch.tokens)
        self.documents += batch.n_docs
        hashes = word_hashes(local.vocab)
        self._words.add(local.vocab, local.word_df, hashes)
        room = max(len(batch.tokens) - 1, 0)
        if self._n_packed + room > len(self._packed) or \
                self._docs + batch.n_docs >= 1 << counts.PAIR_DOC_BITS:
            self._flush_pairs()
            if room > len(self._packed):
                self._packed = np.empty(max(room, self.PAIRS_PER_FLUSH), np.uint64)
        self._n_packed = counts.packed_pair_documents(
            batch.tokens, batch.doc_offsets, hashes, self._docs,
            self.mask, self._packed, self._n_packed)
        self._docs += batch.n_docs

    def _flush_pairs(self) -> None:
        if self._n_packed:
            packed = self._packed[:self._n_packed]
            packed.sort()
            self._pairs.append(counts.documents_per_key(packed, counts.PAIR_DOC_BITS))
        self._n_packed, self._docs = 0, 0

    def words(self) -> tuple[StringList, np.ndarray]:
        """(the distinct words of the partition, the documents containing each)."""
        return self._words.result()

    def pairs(self) -> dict[str, np.ndarray]:
        """Bigram fingerprint -> documents of the partition containing it."""
        self._flush_pairs()
        self._packed = np.empty(0, np.uint64)  # the buffer is not needed any more
        key, df = sum_sorted_runs(self._pairs)
        return {"key": key, "df": df.astype(np.uint32)}


def pair_blob(keys: np.ndarray, df: np.ndarray) -> bytes:
    """A bucket's bigram counts (sorted fingerprints, uint32 df) as one blob of delta varints
    (~4 bytes a bigram; _numba/delta_varint.py)."""
    return pack_arrays({"n": np.array([len(keys)], np.int64),
                        "coded": encode_key_counts(keys, df)})


def _pair_counts(raw: bytes) -> tuple[np.ndarray, np.ndarray]:
    a = unpack_arrays(raw)
    return decode_key_counts(a["coded"], int(a["n"][0]))


def keyed_word_blobs(words: StringList, df: np.ndarray, n_buckets: int
                     ) -> Iterator[tuple[int, bytes]]:
    """(bucket, blob) of a partition's words and their document counts, split by a hash of the
    word, so that every word's partition counts meet in one reducer (frequent_words)."""
    if len(words) == 0:
        return
    text = words.to_arrow()
    for bucket, rows in _bucket_rows(word_hashes(words), n_buckets):
        chosen = StringList.from_arrow([text.take(pa.array(rows, pa.int64()))])
        yield bucket, pack_arrays({"word_offsets": chosen.offsets, "word_data": chosen.data,
                                   "df": df[rows]})


def frequent_words(blobs: Iterable[bytes], sigma: int) -> tuple[StringList, np.ndarray]:
    """Stage 0 reduce: the words of one bucket in >= sigma documents, and their df."""
    counter = WordCounter()
    for raw in blobs:
        a = unpack_arrays(raw)
        counter.add(StringList(a["word_offsets"], a["word_data"]), a["df"])
    words, df = counter.result()
    keep = np.flatnonzero(df >= sigma)
    return StringList.from_arrow([words.to_arrow().take(pa.array(keep, pa.int64()))]), df[keep]


def vocabulary(buckets: Iterable[tuple[StringList, np.ndarray]], sigma: int) -> StringList:
    """The frequent vocabulary (global ids) from the frequent_words of every bucket."""
    found = [(words, df) for words, df in buckets if len(words)]
    if not found:
        return encode.frequent_vocabulary(pa.array([], pa.string()), np.zeros(0, np.int64), sigma)
    return encode.frequent_vocabulary(pa.concat_arrays([w.to_arrow() for w, _ in found]),
                                      np.concatenate([df for _, df in found]), sigma)


def frequent_keys(blobs: Iterable[bytes], sigma: int) -> np.ndarray:
    """Stage 1 reduce: the bigram fingerprints of one bucket with df >= sigma."""
    key, df = sum_sorted_runs(_pair_counts(raw) for raw in blobs)
    return key[df >= sigma]


def encode_batch(local: LocalBatch, index: encode.WordIndex, frequent_pair: Contains,
                 plan: Plan) -> TokenBatch:
    """Global ids, keeping only runs of >= min_length tokens joined by frequent bigrams (both
    words frequent, the pair's fingerprint in the frequent-bigram set; encode.compact_runs)."""
    hashes = word_hashes(local.vocab)
    batch = encode.global_batch(local, index, hashes)
    keys, where = counts.frequent_pair_positions(batch.tokens, local.batch.tokens, hashes,
                                                 plan.mask)
    ok = np.zeros(len(batch.tokens), dtype=bool)
    if len(keys):
        ok[where] = frequent_pair(keys)
    return TokenBatch(*encode.compact_runs(batch.tokens, batch.doc_offsets, ok, plan.min_length))


def batch_to_blob(batch: TokenBatch) -> bytes:
    return pack_arrays({"tokens": batch.tokens, "doc_offsets": batch.doc_offsets})


def batch_from_blob(raw: bytes) -> TokenBatch:
    a = unpack_arrays(raw)
    return TokenBatch(a["tokens"], a["doc_offsets"])


# ---------------------------------------------------------------- keyed counts (stages 1, 2)

def keyed_pair_blobs(pairs: dict[str, np.ndarray], plan: Plan) -> Iterator[tuple[int, bytes]]:
    """(bucket, pair_blob) of a partition's bigram counts (PartitionCounts.pairs, sorted)."""
    bits = min(counts.PAIR_KEY_BITS, plan.fingerprint_bits)
    for bucket, lo, hi in sorted_key_buckets(pairs["key"], bits, plan.buckets):
        yield bucket, pair_blob(pairs["key"][lo:hi], pairs["df"][lo:hi])


def keyed_gram_blobs(stats: dict[str, np.ndarray], plan: Plan) -> Iterator[tuple[int, bytes]]:
    """(bucket, blob) of a partition's gram statistics (sorted by fingerprint), as varints
    (~12 bytes a gram; _numba/delta_varint.py)."""
    for bucket, lo, hi in sorted_key_buckets(stats["fp"], plan.fingerprint_bits, plan.buckets):
        coded = encode_gram_rows(*(stats[name][lo:hi] for name in counts.GRAM_FIELDS))
        yield bucket, pack_arrays({"n": np.array([hi - lo], np.int64), "coded": coded})


def gram_rows_from_blob(raw: bytes) -> dict[str, np.ndarray]:
    """The gram statistics of a keyed_gram_blobs blob."""
    a = unpack_arrays(raw)
    fp, columns = decode_gram_rows(a["coded"], int(a["n"][0]))
    return {"fp": fp, **{name: columns[c] for c, name in enumerate(counts.GRAM_FIELDS[1:])}}


def sorted_key_buckets(keys: np.ndarray, key_bits: int, n_buckets: int
                       ) -> Iterator[tuple[int, int, int]]:
    """(bucket, lo, hi): the reduce bucket of each slice of sorted keys below 2^key_bits, by
    their top bits (floor(key * n_buckets / 2^key_bits)), which never decreases along sorted
    keys: no sort, no gather, and each reducer receives sorted runs to merge. The keys are
    hashes, so the buckets get even shares."""
    if len(keys) == 0:
        return
    shift = max(key_bits - 32, 0)
    scaled = (keys >> np.uint64(shift)) * np.uint64(n_buckets)  # < 2^32 * 2^31
    bucket = (scaled >> np.uint64(key_bits - shift)).astype(np.int64)
    bounds = np.flatnonzero(np.concatenate(([True], bucket[1:] != bucket[:-1], [True])))
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        yield int(bucket[lo]), int(lo), int(hi)


def _bucket_rows(keys: np.ndarray, n_buckets: int) -> Iterator[tuple[int, np.ndarray]]:
    """(bucket, rows in their input order) of each non-empty reduce bucket of the keys."""
    if len(keys) == 0:
        return
    bucket = bucket_of(keys, np.zeros(len(keys), np.int64), n_buckets)
    # a stable sort of small integers is a radix sort
    order = np.argsort(bucket.astype(np.uint16 if n_buckets <= 1 << 16 else np.int64),
                       kind="stable")
    bucket = bucket[order]
    bounds = np.flatnonzero(np.concatenate(([True], bucket[1:] != bucket[:-1], [True])))
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        yield int(bucket[lo]), order[lo:hi]


class PartitionGrams:
    """Stage 2 map over one partition's batches, one at a time: per fingerprint of its
    min_length-grams the counts.GRAM_FIELDS. The batches' statistics wait until FLUSH_ROWS rows
    are pending, then are merged once and given back as a chunk to ship (a gram met in two
    chunks ships twice; the reducers add them up, as they add up partitions). A running merge of
    the whole partition (merging the pending rows into it whenever they outgrew it) merged each
    row about four times: at σ 3 on 113M web tokens it was the largest step of the workers."""

    FLUSH_ROWS = 1 << 22
    """Pending rows (48 bytes each) that make a chunk. At σ 20 a 37.6M-token
    partition has 3.7M batch rows, which merge to 1.45M: one chunk; at σ 3 15.6M merge to 11.9M
    in one, to more in four chunks."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.tokens = 0
        self._pending: list[dict[str, np.ndarray]] = []
        self._n_pending = 0

    def add(self, batch: TokenBatch) -> dict[str, np.ndarray] | None:
        """Take a batch; a chunk (sorted by fingerprint) when one is full."""
        self.tokens += len(batch.tokens)
        part = counts.gram_statistics(batch.tokens, batch.doc_offsets, self.plan.min_length,
                                      self.plan.mask)
        self._pending.append(part)
        self._n_pending += len(part["fp"])
        return self.flush() if self._n_pending >= self.FLUSH_ROWS else None

    def flush(self) -> dict[str, np.ndarray]:
        """The pending statistics as a chunk (empty when none are pending)."""
        merged = counts.merge_gram_statistics(self._pending)
        self._pending, self._n_pending = [], 0
        return merged


def partition_gram_chunks(batches: Iterable[TokenBatch], plan: Plan
                          ) -> Iterator[dict[str, np.ndarray]]:
    """Stage 2 map: the chunks of PartitionGrams over all the batches of a partition."""
    grams = PartitionGrams(plan)
    for batch in batches:
        chunk = grams.add(batch)
        if chunk is not None:
            yield chunk
    yield grams.flush()


def classify_grams(blobs: Iterable[bytes], plan: Plan) -> dict[str, np.ndarray]:
    """Stage 2 reduce: frequent and live fingerprints of one bucket, and the occurrences of
    frequent ones (for salting)."""
    stats = counts.merge_gram_statistics([gram_rows_from_blob(raw) for raw in blobs])
    frequent, live = counts.live_and_frequent(stats, plan.sigma)
    return {"frequent": stats["fp"][frequent], "live": stats["fp"][live],
            "occurrences": stats["occurrences"][frequent]}


# ---------------------------------------------------------------- rounds (stages 3, 4)

def mark_reach(batch: TokenBatch, frequent_gram: Contains, plan: Plan) -> ReachBatch:
    """After stage 2: each position's chain of frequent grams; only covered tokens are kept."""
    return windows.mark_reach(batch.tokens, batch.doc_offsets, plan.min_length, frequent_gram,
                              plan.mask)


@dataclass(frozen=True)
class Round:
    """What one round's map needs besides the batches: its depths, the live-gram test (round 0)
    or the deferred keys of the previous round, and the salted groups (sorted keys, salts)."""

    index: int
    lo: int
    hi: int
    live_gram: Contains | None
    deferred: Contains | None
    salted_keys: np.ndarray
    salted_counts: np.ndarray


def partition_summary(batches: Iterable[ReachBatch], plan: Plan, spec: Round) -> Summary:
    """Stage 3 map: the summary of a partition's shipped occurrences (batches merged)."""
    parts = []
    for batch in batches:
        occ = windows.scan_occurrences(batch, plan.min_length, spec.lo, spec.hi, plan.mask,
                                       live_gram=spec.live_gram, deferred=spec.deferred)
        parts.append(windows.build_summary(batch.tokens, occ, spec.lo))
    return windows.merge_summaries(parts)


FINAL, PARTIAL = 0, 1


def route(summary: Summary, plan: Plan, spec: Round, partition: int
          ) -> Iterator[tuple[int, int, bytes]]:
    """(bucket, FINAL or PARTIAL, blob) pieces of a partition summary. A salted group's piece
    goes to a bucket chosen by its salt (partition mod salts): PARTIAL, merged there first."""
    if summary.n_windows == 0:
        return
    salts = np.ones(summary.n_windows, np.int64)
    if len(spec.salted_keys):
        at = np.searchsorted(spec.salted_keys, summary.gkey)
        hit = at < len(spec.salted_keys)
        hit[hit] = spec.salted_keys[at[hit]] == summary.gkey[hit]
        salts[hit] = spec.salted_counts[at[hit]]
    salt = np.where(salts > 1, partition % salts + 1, 0)
    bucket = bucket_of(summary.gkey, salt, plan.buckets)
    stage = (salt > 0).astype(np.int64)
    code = bucket * 2 + stage
    for value in np.unique(code):
        yield int(value // 2), int(value % 2), windows.subset(summary, code == value).to_bytes()


def reduce_round(final: list[bytes], partial: list[bytes], plan: Plan, spec: Round):
    """Stage 4 reduce of one bucket: merge FINAL pieces and decide them; merge PARTIAL pieces and
    send them on as FINAL pieces of their group's unsalted bucket. Returns (phrases, deferred,
    [(bucket, blob)]) with phrases = (tokens, offsets, df, occurrences) in global ids and
    deferred = (keys, df, occurrences)."""
    forwarded = []
    if partial:
        merged = windows.merge_summaries([Summary.from_bytes(raw) for raw in partial])
        bucket = bucket_of(merged.gkey, np.zeros(merged.n_windows, np.int64), plan.buckets)
        for value in np.unique(bucket):
            forwarded.append((int(value), windows.subset(merged, bucket == value).to_bytes()))
    merged = windows.merge_summaries([Summary.from_bytes(raw) for raw in final])
    phrases, deferred = traverse.decide(merged, plan.sigma, spec.lo, spec.hi, plan.mask)
    return phrases, deferred, forwarded
