"""Line templates: boilerplate whose variable part is made of lines of other places of the corpus
("Related: <three titles>", "Home » <category> » <the page's title>", a "Related articles"
paragraph listing titles), which no typed seed and no free slot of max_gap tokens reaches.

Definitions (docs/how-it-works/templates.md, "Line templates"). A *known line* at a line
position is a token sequence equal to some whole line of the corpus at another line position
(another document, or another line of the same one). Both forms start at a line start and
their anchor is literal corpus tokens (no typed slots):

- rest form `^A <rest>`: a line whose first |A| tokens are A (1 to MAX_PREFIX tokens) and whose
  other tokens (the filler, 1 to MAX_REST of them) are one or more known lines, back to back, to
  the line's end. The span is the whole line. No free head before the known lines: with one
  ("clone() - Method in class <a class name that is a heading elsewhere>") the index lines of
  API documentation became templates.
- lines form `^A <lines>`: a paragraph whose first line is A (1 to MAX_ANCHOR_LINE tokens) and
  whose 1 to MAX_BLOCK_LINES other lines are each a known line (and at most MAX_REST tokens).
  The span is the whole paragraph; the filler is every token after the anchor line.

Why known lines: titles, categories and other page names are the fillers of this boilerplate,
and they are whole lines somewhere else (a title is its page's own title line). A line of prose
after a frequent first word ("The ...") is not made of other lines, so the test keeps running
text out without a list of words.

How. Every line gets a 64-bit polynomial hash; lines sorted by hash give, for any token run,
the lines that may equal it, and a hit is confirmed token by token (so a collision never makes a
run known). The rest form's test is a dynamic programme per line from its end: position i can
reach the end through known lines when some known run [i, j) is followed by a position j that
can. Cost: O(L^2) hash steps per line of L <= MAX_PREFIX + MAX_REST tokens, most rejected by a
bitmap of line hashes before any search.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from corpus_miner._numba.hashing import WINDOW_BASE
from corpus_miner.phrases.lines import line_ends

MAX_PREFIX = 3  # anchor tokens of the rest form
MAX_REST = 64  # longest filler line of either form, in tokens
MAX_ANCHOR_LINE = 8  # anchor line of the lines form, in tokens
MAX_BLOCK_LINES = 12  # lines after the anchor line
MIN_JOINED = 2  # tokens of each known line of a rest filler made of several
_BITS_SHIFT = np.uint64(38)  # bitmap of 2^26 bits indexed by a hash's top bits


@njit(cache=True, nogil=True)
def _line_hashes(tokens, starts, lengths):
    out = np.empty(len(starts), dtype=np.uint64)
    for q in range(len(starts)):
        h = np.uint64(0)
        for p in range(starts[q], starts[q] + lengths[q]):
            h = h * WINDOW_BASE + np.uint64(tokens[p]) + np.uint64(1)
        out[q] = h
    return out


@njit(cache=True, nogil=True)
def _bitmap(hashes):
    bits = np.zeros(1 << 20, dtype=np.uint64)
    for h in hashes:
        b = h >> _BITS_SHIFT
        bits[b >> np.uint64(6)] |= np.uint64(1) << (b & np.uint64(63))
    return bits


@njit(cache=True, inline="always")
def _maybe(bits, h):
    b = h >> _BITS_SHIFT
    return (bits[b >> np.uint64(6)] >> (b & np.uint64(63))) & np.uint64(1)


@njit(cache=True, nogil=True)
def _known(tokens, at, n, h, self_line, keys, order, starts, lengths):
    """True when tokens[at:at + n] (hash h) equals a line other than self_line."""
    i = np.searchsorted(keys, h)
    while i < len(keys) and keys[i] == h:
        q = order[i]
        if q != self_line and lengths[q] == n:
            same = True
            for k in range(n):
                if tokens[starts[q] + k] != tokens[at + k]:
                    same = False
                    break
            if same:
                return True
        i += 1
    return False


@njit(cache=True, nogil=True)
def _rest_masks(tokens, starts, lengths, keys, order, bits, max_prefix, max_gap, max_rest,
                min_joined):
    """uint8 per line: bit k set when the line is an occurrence of some rest form with a
    k-token anchor: its tokens after the first k are one known line, or known lines of at
    least min_joined tokens each, back to back, to the end."""
    out = np.zeros(len(starts), dtype=np.uint8)
    good = np.zeros(max_prefix + max_rest + 1, dtype=np.bool_)
    for q in range(len(starts)):
        s, n = starts[q], lengths[q]
        if n < 2 or n > max_prefix + max_rest:
            continue
        good[n] = True
        for i in range(n - 1, 0, -1):
            g = False
            h = np.uint64(0)
            for j in range(i + 1, n + 1):
                h = h * WINDOW_BASE + np.uint64(tokens[s + j - 1]) + np.uint64(1)
                if j - i < min_joined:
                    continue
                if good[j] and _maybe(bits, h) and _known(tokens, s + i, j - i, h, q, keys,
                                                            order, starts, lengths):
                    g = True
                    break
            good[i] = g
        m = 0
        for k in range(1, max_prefix + 1):
            if k >= n or n - k > max_rest:
                continue
            ok = good[k]
            if not ok and n - k < min_joined:  # a short filler: one known line
                h = np.uint64(0)
                for p in range(s + k, s + n):
                    h = h * WINDOW_BASE + np.uint64(tokens[p]) + np.uint64(1)
                ok = _maybe(bits, h) and _known(tokens, s + k, n - k, h, q, keys, order,
                                                starts, lengths)
            if ok:
                m |= 1 << k
        out[q] = m
    return out


@njit(cache=True, nogil=True)
def _known_whole(tokens, starts, lengths, hashes, keys, order):
    out = np.zeros(len(starts), dtype=np.bool_)
    for q in range(len(starts)):
        out[q] = _known(tokens, starts[q], lengths[q], hashes[q], q, keys, order, starts,
                        lengths)
    return out


@dataclass
class LineIndex:
    """The lines of a corpus and which are occurrences of the line forms (module docstring).

    starts, lengths, doc: per line; rest_mask: per line, bit k for a rest-form occurrence with a
    k-token anchor; block_first, block_end: per paragraph that is an occurrence of some lines
    form, its first line and the token end of its last line."""

    tokens: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    doc: np.ndarray
    rest_mask: np.ndarray
    block_first: np.ndarray
    block_end: np.ndarray


def line_index(corpus, max_gap: int) -> LineIndex | None:
    """The LineIndex of a TokenCorpus with line boundaries, else None."""
    if getattr(corpus, "line_starts", None) is None or len(corpus.line_starts) == 0:
        return None
    tokens = np.ascontiguousarray(corpus.tokens, dtype=np.uint32)
    doc_offsets = np.ascontiguousarray(corpus.doc_offsets, dtype=np.int64)
    starts = np.ascontiguousarray(corpus.line_starts, dtype=np.int64)
    paragraphs = np.ascontiguousarray(corpus.paragraph_starts, dtype=np.int64)
    ends = line_ends(starts, doc_offsets)
    lengths = ends - starts
    doc = np.searchsorted(doc_offsets, starts, side="right") - 1
    hashes = _line_hashes(tokens, starts, lengths)
    order = np.argsort(hashes, kind="stable")
    keys = hashes[order]
    bits = _bitmap(hashes)
    rest = _rest_masks(tokens, starts, lengths, keys, order, bits, MAX_PREFIX, max_gap, MAX_REST,
                      MIN_JOINED)
    whole = _known_whole(tokens, starts, lengths, hashes, keys, order)
    first, end = _blocks(starts, lengths, paragraphs, whole)
    return LineIndex(tokens, starts, lengths, doc, rest, first, end)


def _blocks(starts, lengths, paragraphs, whole) -> tuple[np.ndarray, np.ndarray]:
    """(first line, token end) of every paragraph that is a lines-form occurrence."""
    first = np.searchsorted(starts, paragraphs)  # paragraph starts are line starts
    stop = np.append(first[1:], len(starts))
    n_lines = stop - first
    unknown = np.concatenate(([0], np.cumsum(~whole | (lengths > MAX_REST))))
    ok = ((n_lines >= 2) & (n_lines <= MAX_BLOCK_LINES + 1)
          & (lengths[first] <= MAX_ANCHOR_LINE)
          & (unknown[stop] - unknown[first + 1] == 0))
    chosen = first[ok]
    last = stop[ok] - 1
    return chosen, starts[last] + lengths[last]


def candidates(index: LineIndex, sigma: int, min_share: float,
               paragraphs: np.ndarray) -> list[tuple[str, tuple[int, ...]]]:
    """(form, anchor) of every line form with occurrences in >= sigma documents that holds at
    least min_share of the lines it could hold: of the lines longer than the anchor that start
    with it (rest form), of the paragraph first lines equal to it (lines form). "This <rest>"
    matches a few prose lines that end in an identifier, among thousands that do not."""
    out: list[tuple[str, tuple[int, ...]]] = []
    for k in range(1, MAX_PREFIX + 1):
        rows = np.flatnonzero(index.rest_mask & (1 << k))
        found = _frequent(index, index.starts[rows], np.full(len(rows), k), index.doc[rows],
                          sigma)
        pool = np.flatnonzero(index.lengths > k)
        out += [("rest", a) for a in _selective(index, found, rows, pool, min_share)]
    first = index.block_first
    found = _frequent(index, index.starts[first], index.lengths[first], index.doc[first], sigma)
    pool = np.searchsorted(index.starts, paragraphs)
    out += [("lines", a) for a in _selective(index, found, first, pool, min_share, whole=True)]
    return out


def _selective(index: LineIndex, anchors: list, hits: np.ndarray, pool: np.ndarray,
               min_share: float, whole: bool = False) -> list[tuple[int, ...]]:
    """The anchors whose lines among `hits` are >= min_share of their lines among `pool`
    (lines that start with the anchor; whole: lines equal to it)."""
    if not anchors:
        return []
    groups = []
    for rows in (hits, pool):  # rows sorted by first token: one slice per anchor
        first = index.tokens[index.starts[rows]].astype(np.int64)
        order = np.argsort(first, kind="stable")
        groups.append((rows[order], first[order]))
    out = []
    for a in anchors:
        counts = []
        for rows, first in groups:
            lo, hi = np.searchsorted(first, [a[0], a[0] + 1])
            rows = rows[lo:hi]
            same = np.ones(len(rows), dtype=bool) if not whole else index.lengths[rows] == len(a)
            for c, t in enumerate(a[1:], start=1):
                same &= index.tokens[np.minimum(index.starts[rows] + c,
                                                len(index.tokens) - 1)] == t
            counts.append(int(same.sum()))
        if counts[0] >= min_share * counts[1]:
            out.append(a)
    return out


def _frequent(index: LineIndex, at: np.ndarray, length: np.ndarray, doc: np.ndarray,
              sigma: int) -> list[tuple[int, ...]]:
    """The anchors tokens[at:at + length] found in >= sigma documents, sorted."""
    if len(at) == 0:
        return []
    width = int(length.max())
    key = np.full((len(at), width + 2), -1, dtype=np.int64)
    key[:, 0] = length
    for c in range(width):
        inside = c < length
        key[inside, c + 1] = index.tokens[at[inside] + c]
    key[:, -1] = doc
    pairs = np.unique(key, axis=0)  # one row per (anchor, document)
    anchors, docs = np.unique(pairs[:, :-1], axis=0, return_counts=True)
    return [tuple(int(t) for t in row[1:1 + int(row[0])]) for row in anchors[docs >= sigma]]


def occurrences(index: LineIndex, form: str, anchor: tuple[int, ...]) -> tuple[np.ndarray,
                                                                             np.ndarray]:
    """(start, end) global token spans of the occurrences of one line form, ascending."""
    k = len(anchor)
    if form == "rest":
        if k > MAX_PREFIX:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        rows = np.flatnonzero(index.rest_mask & (1 << k))
        at, ends = index.starts[rows], index.starts[rows] + index.lengths[rows]
    else:
        line = index.block_first
        rows = np.flatnonzero(index.lengths[line] == k)
        at, ends = index.starts[line[rows]], index.block_end[rows]
    same = np.ones(len(at), dtype=bool)
    for c, t in enumerate(anchor):
        same &= index.tokens[at + c] == t
    return at[same], ends[same]
