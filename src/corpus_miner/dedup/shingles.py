"""Shingling: normalised text -> 64-bit shingle hashes, for a whole batch of documents at once.

Normalisation, vectorised over the batch: lowercase (Unicode, pyarrow's utf8_lower), then (numba)
every run of whitespace becomes one space and leading/trailing whitespace is removed; whitespace is
what Python's `str.split()` splits on. For texts without special-cased letters this equals
`" ".join(text.lower().split())`.

Shingles are either character n-grams (`kind="char"`, default, n = `shingle_size` Unicode code
points) or word n-grams (`kind="word"`, n words of the normalised text). A document shorter than one
shingle contributes its whole normalised text as a single shingle; an empty document has none.

Each shingle is hashed over its UTF-8 bytes (SplitMix64 chained over 8-byte chunks, see
`_hash_bytes`), in numba over the batch's flat byte buffer and offsets (no Python object per
shingle).

`max_shingles` caps the per-document work deterministically: a document whose shingle list is
longer than the cap keeps the `max_shingles` smallest *distinct* shingle hashes (a bottom-k sample:
the same shingle is kept or dropped in every document, so similar documents keep similar samples).
The kept hashes come in an unspecified, deterministic order: signatures do not depend on it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from corpus_miner._numba.hashing import SHINGLE_SEED, splitmix64
from corpus_miner.dedup.params import SHINGLE_KINDS
from corpus_miner.errors import InputError, ParameterError

_SPACE = np.uint8(32)


_ASCII_SPACE = np.zeros(128, np.uint8)
_ASCII_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = 1


@njit(cache=True, nogil=True)  # nogil: a read-ahead thread can parse meanwhile
def collapse_whitespace_kernel(data, offsets):
    """Each document with whitespace runs replaced by one space and trimmed: (bytes, offsets).

    Whitespace = what Python's str.split() splits on: ASCII 9-13, 28-31, 32 and U+0085, U+00A0,
    U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000. ASCII bytes take a
    branch-free step (every byte is written, the write position advances unless the byte
    continues a run of whitespace): word boundaries made the branchy version mispredict.
    """
    n_docs = len(offsets) - 1
    out = np.empty(len(data), np.uint8)  # never longer than the input
    out_offsets = np.zeros(n_docs + 1, np.int64)
    k = 0
    for d in range(n_docs):
        i, end = offsets[d], offsets[d + 1]
        doc_start = k
        in_space = 1  # leading whitespace is dropped: as if a space came before
        while i < end:
            b = data[i]
            if b < 0x80:
                space = _ASCII_SPACE[b]
                out[k] = _SPACE if space else b
                k += 1 - (space & in_space)
                in_space = space
                i += 1
                continue
            width = 0
            if b == 0xC2:
                if i + 1 < end and (data[i + 1] == 0x85 or data[i + 1] == 0xA0):
                    width = 2
            elif 0xE1 <= b <= 0xE3 and i + 2 < end:
                b1 = data[i + 1]
                b2 = data[i + 2]
                if b == 0xE1:
                    if b1 == 0x9A and b2 == 0x80:
                        width = 3
                elif b == 0xE3:
                    if b1 == 0x80 and b2 == 0x80:
                        width = 3
                elif b1 == 0x80:
                    if b2 <= 0x8A or b2 == 0xA8 or b2 == 0xA9 or b2 == 0xAF:
                        width = 3
                elif b1 == 0x81 and b2 == 0x9F:
                    width = 3
            if width:
                if not in_space:
                    out[k] = _SPACE
                    k += 1
                in_space = 1
                i += width
            else:
                out[k] = b
                k += 1
                in_space = 0
                i += 1
        if in_space and k > doc_start:  # a trailing run left one space behind
            k -= 1
        out_offsets[d + 1] = k
    return out[:k], out_offsets


def normalize_texts(texts: Sequence[str] | pa.Array | pa.ChunkedArray) -> pa.LargeStringArray:
    """Lowercase (pyarrow, Unicode) and collapse whitespace runs (numba); large_string array."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if isinstance(texts, (str, bytes)):  # iterating would make each character a document
        raise InputError(f"texts must be a sequence of documents, got one {type(texts).__name__}; "
                         "wrap it in a list")
    if not isinstance(texts, pa.Array):
        texts = _python_texts_to_arrow(texts)
    if not (pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type)):
        raise InputError(f"texts must be a string array, got Arrow type {texts.type}")
    if texts.null_count:
        raise _null_text(pc.index(pc.is_null(texts), True).as_py())
    data, offsets = text_buffers(pc.utf8_lower(texts).cast(pa.large_string()))
    out, out_offsets = collapse_whitespace_kernel(data, offsets)
    return pa.LargeStringArray.from_buffers(len(out_offsets) - 1, pa.py_buffer(out_offsets),
                                            pa.py_buffer(out))


def _null_text(document: int) -> InputError:
    return InputError(f"text of document {document} (0-based, in this batch) is null; "
                      "drop or fill null texts before deduplication")


def _python_texts_to_arrow(texts) -> pa.LargeStringArray:
    """A large_string array from their UTF-8 bytes. Not pa.array: converting a Python sequence
    imports pandas when it is installed, ~50 MB of resident memory for one type check."""
    encoded = []
    for document, text in enumerate(texts):
        if isinstance(text, str):
            try:
                encoded.append(text.encode("utf-8"))
            except UnicodeEncodeError as exc:
                raise InputError(f"text of document {document} cannot be UTF-8 encoded: "
                                 f"{exc}") from None
        elif isinstance(text, bytes):
            try:
                text.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"text of document {document} is not UTF-8: {exc}") from None
            encoded.append(text)
        elif text is None:
            raise _null_text(document)
        else:
            raise InputError(f"texts must be strings, document {document} is a "
                             f"{type(text).__name__}; convert them with str() first")
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return pa.LargeStringArray.from_buffers(len(encoded), pa.py_buffer(offsets),
                                            pa.py_buffer(b"".join(encoded)))


def text_buffers(texts: pa.LargeStringArray) -> tuple[np.ndarray, np.ndarray]:
    """Zero-copy view of a large_string array as (uint8 bytes, int64 offsets relative to them)."""
    all_offsets = np.frombuffer(texts.buffers()[1], dtype=np.int64)
    offsets = all_offsets[texts.offset: texts.offset + len(texts) + 1]
    data_buf = texts.buffers()[2]
    data = (np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None
            else np.zeros(0, np.uint8))
    return data, offsets


@njit(cache=True, inline="always")
def _hash_bytes(data, start, end):
    """64-bit hash of data[start:end]: SplitMix64 chained over little-endian 8-byte chunks
    (last one zero-padded), seeded with a constant xor the length (so padding cannot collide)."""
    h = SHINGLE_SEED ^ np.uint64(end - start)
    chunk = np.uint64(0)
    shift = np.uint64(0)
    for i in range(start, end):
        chunk |= np.uint64(data[i]) << shift
        shift += np.uint64(8)
        if shift == np.uint64(64):
            h = splitmix64(h ^ chunk)
            chunk = np.uint64(0)
            shift = np.uint64(0)
    if shift:
        h = splitmix64(h ^ chunk)
    return h


@njit(cache=True)
def _unit_counts(data, offsets, word_mode):
    """Code points (char mode) or words (word mode) per document of normalised text."""
    n_docs = len(offsets) - 1
    units = np.zeros(n_docs, np.int64)
    for d in range(n_docs):
        count = 0
        start = offsets[d]
        for i in range(start, offsets[d + 1]):
            b = data[i]
            if word_mode:
                count += b != _SPACE and (i == start or data[i - 1] == _SPACE)
            else:
                count += (b & 0xC0) != 0x80
        units[d] = count
    return units


@njit(cache=True)
def _hash_shingles(data, begin, end, word_mode, width, trim, ring, out):
    """out[j] = hash of the shingle of `width` units (code points or words) starting at unit j of
    data[begin:end].

    Unit starts are found in the same pass and kept in `ring` (a power of two > width entries):
    the starts of the last width + 1 units are all a shingle needs, so no per-unit array exists.
    After the last unit comes a sentinel start (`end + 1` in word mode, where a shingle ends
    before the separating space). Shingles of at most 8 bytes (char 5-grams of ASCII text) read
    their bytes from a rolling window of the last 8 bytes: the same value as _hash_bytes."""
    mask = len(ring) - 1
    window = np.uint64(0)
    pushed = begin
    found = 0  # unit starts seen so far (the sentinel included)
    i = begin
    for j in range(len(out)):
        while found <= j + width:  # find the start of unit j + width
            if i < end:
                b = data[i]
                if word_mode:
                    is_start = b != _SPACE and (i == begin or data[i - 1] == _SPACE)
                else:
                    is_start = (b & 0xC0) != 0x80
                if is_start:
                    ring[found & mask] = i
                    found += 1
                i += 1
            else:
                ring[found & mask] = end + 1 if word_mode else end
                found += 1
        first, stop = ring[j & mask], ring[(j + width) & mask] - trim
        while pushed < stop:
            window = (window >> np.uint64(8)) | (np.uint64(data[pushed]) << np.uint64(56))
            pushed += 1
        length = stop - first
        if length <= 8:
            chunk = window >> np.uint64(64 - 8 * length)
            out[j] = splitmix64(SHINGLE_SEED ^ np.uint64(length) ^ chunk)
        else:
            out[j] = _hash_bytes(data, first, stop)


@njit(cache=True, nogil=True)  # nogil: a read-ahead thread can parse meanwhile
def shingle_hashes_kernel(data, offsets, shingle_size, word_mode, max_shingles):
    """Shingle hashes of every document: (flat uint64 hashes, int64 per-document offsets).

    max_shingles an int: a document with more shingles keeps its max_shingles smallest distinct
    hashes, in unspecified order (hashed into a scratch buffer first: the full lists of all
    documents never exist at once); None: no cap. numba drops the branches of the other case
    when it compiles for None, so the default run does not compile the capping kernels (nor
    numba's sort), a third of this kernel's first-run compile."""
    n_docs = len(offsets) - 1
    units = _unit_counts(data, offsets, word_mode)
    counts = np.empty(n_docs, np.int64)
    longest_count, kept_total = 0, 0
    for d in range(n_docs):
        count = units[d] - shingle_size + 1 if units[d] >= shingle_size else min(units[d], 1)
        counts[d] = count
        if max_shingles is None:
            kept_total += count
        elif count > max_shingles:
            longest_count = max(longest_count, count)
            kept_total += max_shingles
        else:
            kept_total += count
    hashes = np.empty(kept_total, np.uint64)
    scratch = np.empty(longest_count, np.uint64)
    under = np.empty(longest_count + 1, np.uint64)
    ring_size = 1
    while ring_size <= shingle_size:
        ring_size *= 2
    ring = np.empty(ring_size, np.int64)  # unit starts of the shingles being hashed
    out_offsets = np.zeros(n_docs + 1, np.int64)
    trim = 1 if word_mode else 0
    kept = 0
    for d in range(n_docs):
        count = counts[d]
        if count > 0:
            width = min(shingle_size, units[d])
            if max_shingles is None:
                _hash_shingles(data, offsets[d], offsets[d + 1], word_mode, width, trim, ring,
                               hashes[kept:kept + count])
                kept += count
            elif count <= max_shingles:
                _hash_shingles(data, offsets[d], offsets[d + 1], word_mode, width, trim, ring,
                               hashes[kept:kept + count])
                kept += count
            else:
                _hash_shingles(data, offsets[d], offsets[d + 1], word_mode, width, trim, ring,
                               scratch[:count])
                smallest = bottom_k_distinct(scratch[:count], max_shingles, under)
                for i in range(len(smallest)):  # no array slice assignment: _numba/arrays.py
                    hashes[kept + i] = smallest[i]
                kept += len(smallest)
        out_offsets[d + 1] = kept
    return hashes[:kept], out_offsets


@njit(cache=True)
def distinct_values(seg):
    """The distinct values of seg in first-seen order, through an open-addressing hash set
    (linear in len(seg); sorting a whole document was the cost this avoids)."""
    n = len(seg)
    bits = 1
    while (1 << bits) < 2 * n:
        bits += 1
    mask = (1 << bits) - 1
    table = np.zeros(1 << bits, np.uint64)  # 0 marks an empty slot; the value 0 is tracked apart
    out = np.empty(n, np.uint64)
    m = 0
    seen_zero = False
    for i in range(n):
        h = seg[i]
        if h == 0:
            if not seen_zero:
                seen_zero = True
                out[m] = h
                m += 1
            continue
        j = h & mask  # shingle hashes are already mixed; low bits also spread small test values
        while table[j] != 0 and table[j] != h:
            j = (j + 1) & mask
        if table[j] == 0:
            table[j] = h
            out[m] = h
            m += 1
    return out[:m]


@njit(cache=True)
def smallest_distinct(values, k):
    """The k smallest distinct values (all distinct values if fewer), in an unspecified but
    deterministic order (MinHash and OPH do not depend on it).

    De-duplicate with a hash set, count the distinct values per bucket of their leading bits,
    find the bucket where the running count reaches k, and sort only that bucket: two linear
    passes on uniform hashes, where sorting everything with numba's np.sort cost 4x more.
    """
    distinct = distinct_values(values)
    m = len(distinct)
    if m <= k:
        return distinct
    largest = distinct[0]
    for i in range(1, m):
        largest = max(largest, distinct[i])
    value_bits = 0
    while value_bits < 64 and (largest >> np.uint64(value_bits)) != 0:
        value_bits += 1
    bucket_bits = 1
    while (1 << bucket_bits) < m:
        bucket_bits += 1
    shift = np.uint64(max(value_bits - bucket_bits, 0))
    counts = np.zeros(np.int64(largest >> shift) + 1, np.int64)
    for i in range(m):
        counts[np.int64(distinct[i] >> shift)] += 1
    boundary, below = 0, 0  # values in buckets before `boundary`: all kept
    while below + counts[boundary] < k:
        below += counts[boundary]
        boundary += 1
    out = np.empty(k, np.uint64)
    edge = np.empty(counts[boundary], np.uint64)
    n_out, n_edge = 0, 0
    for i in range(m):
        bucket = np.int64(distinct[i] >> shift)
        if bucket < boundary:
            out[n_out] = distinct[i]
            n_out += 1
        elif bucket == boundary:
            edge[n_edge] = distinct[i]
            n_edge += 1
    smallest = np.sort(edge)
    for i in range(k - n_out):  # no array slice assignment: _numba/arrays.py
        out[n_out + i] = smallest[i]
    return out


@njit(cache=True)
def bottom_k_distinct(seg, k, under):
    """The k smallest distinct values of seg (all if fewer), in smallest_distinct's order.

    Shingle hashes are uniform 64-bit values, so the k smallest distinct ones lie, with high
    probability, under a cut at 1.5 k/n of the range (n = len(seg) >= distinct values): keep the
    values under the cut (one sequential pass) and select among those only; if fewer than k
    distinct survive, raise the cut (at least doubling it). Exact for any input (k distinct values
    under the cut are the k smallest); on uniform hashes about one linear pass over seg.
    `under`: scratch of at least len(seg) + 1 values (reused across documents by the caller).
    """
    n = len(seg)
    fraction = 1.5 * k / max(n, 1)
    while fraction < 1.0:
        cut = np.uint64(fraction * 18446744073709551615.0)
        m = 0
        for i in range(n):  # branchless compaction: the test is a coin flip for the CPU
            under[m] = seg[i]
            m += seg[i] < cut
        smallest = smallest_distinct(under[:m], k)
        if len(smallest) >= k:
            return smallest
        # Repeated shingles: aim the next cut at the distinct density seen under this one.
        fraction *= max(2.0, 1.5 * k / max(len(smallest), 1))
    return smallest_distinct(seg, k)


def shingle_batch(texts, shingle_size: int = 5, kind: str = "char",
                  max_shingles: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Normalise a batch of texts and return (uint64 shingle hashes, int64 offsets of len n+1)."""
    if kind not in SHINGLE_KINDS:
        raise ParameterError(f"shingle kind must be one of {SHINGLE_KINDS}, got {kind!r}")
    if shingle_size < 1:
        raise ParameterError(f"shingle_size must be >= 1, got {shingle_size}")
    if max_shingles is not None and max_shingles < 1:
        raise ParameterError(f"max_shingles must be >= 1 or None, got {max_shingles}")
    data, offsets = text_buffers(normalize_texts(texts))
    cap = None if max_shingles is None else int(max_shingles)
    return shingle_hashes_kernel(data, offsets, int(shingle_size), kind == "word", cap)
