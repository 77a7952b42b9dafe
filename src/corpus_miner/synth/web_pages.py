"""Web-like pages, fast enough for a billion tokens: English-like bodies, site templates, reposts.

The world (vocabulary, templates, sites) is drawn once from the seed; pages are then generated in
blocks of BLOCK_DOCS with vectorised numpy, each block from its own generator seeded with
(seed, block index), and rendered to text by one compiled kernel (`web_render`). So the output
depends only on the parameters and the seed, and the first n pages are the same whatever the
number of pages asked for.

A page: a date line ("Posted on March 3 2024"), the site's header and navigation, body paragraphs
of generated sentences (Zipfian words by part of speech, `web_text`; lognormal length, capped at
BODY_CAP_FACTOR x the mean) with the site's "read also" widget among them, CMS snippets shared by
all sites (cookie banner, newsletter box, share bar, comment rules), the site's disclaimer and
footer. Templates hold
variable parts (years, counters, names) drawn for every page. Each template is shown with odds
of its own site. Sites are Zipf(0.8)-popular.

Reposts: a share `repost_share` of the pages are edited copies of an earlier original page of the
same block (uniformly chosen): the same site and text with every variable part drawn again (date
line included), and, with equal odds, nothing else changed, a short paragraph added (EDIT_WORDS
words, before a random paragraph after the first block or at the end), or one short paragraph
dropped (at most DROP_MAX_SHARE of the page, never the first block; when there is none, one is
added instead). `repost_of` holds the id of the copied page, null for originals.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from corpus_miner.errors import ParameterError
from corpus_miner.io.locations import base_name
from corpus_miner.io.strings import string_array
from corpus_miner.synth import web_render as wk
from corpus_miner.synth.article import _check_positive
from corpus_miner.synth.web_text import (
    END,
    LINE,
    PARAGRAPH,
    PERIOD_END,
    PERIOD_PARAGRAPH,
    fill_body,
)
from corpus_miner.synth.web_world import (
    DISCLAIMER,
    FOOTER,
    HEADER,
    NAVIGATION,
    SHARED_SNIPPETS,
    WIDGET,
    WebParams,
    WebWorld,
)

BLOCK_DOCS = 8192
PART_BLOCKS = 6  # Parquet parts of 49,152 pages
BODY_SIGMA = 0.6
BODY_CAP_FACTOR = 10
PARAGRAPH_WORDS = (40, 120)
EDIT_WORDS = (10, 30)
DROP_MAX_SHARE = 0.08
# Segment kinds.
TEMPLATE, ZIPF, COPY = range(3)
# What a page is: an original, or a repost with only its variable parts drawn again, with a
# paragraph added, or with a paragraph dropped.
ORIGINAL, REPOST_VARIABLES, REPOST_ADDED, REPOST_DROPPED = range(4)


@dataclass
class WebBlock:
    """One block of pages: tokens with separators, per page its site, source and kind."""
    first_doc: int
    tokens: np.ndarray
    seps: np.ndarray
    doc_offsets: np.ndarray
    doc_site: np.ndarray
    doc_source: np.ndarray  # index in the block of the copied page, -1 for originals
    doc_kind: np.ndarray    # ORIGINAL, REPOST_VARIABLES, REPOST_ADDED or REPOST_DROPPED

    def __len__(self) -> int:
        return len(self.doc_site)

    def head(self, n: int) -> WebBlock:
        end = int(self.doc_offsets[n])
        return WebBlock(self.first_doc, self.tokens[:end], self.seps[:end],
                        self.doc_offsets[:n + 1], self.doc_site[:n], self.doc_source[:n],
                        self.doc_kind[:n])


@dataclass
class _Segments:
    """A page as a sequence of segments (a template, a body paragraph, or a copy of a
    segment of another page), ordered by (doc, key); `sep` follows the segment's last token."""
    doc: np.ndarray
    key: np.ndarray
    kind: np.ndarray
    arg: np.ndarray     # template id; for COPY the index of the copied segment
    length: np.ndarray
    sep: np.ndarray

    @staticmethod
    def concat(parts: list[_Segments]) -> _Segments:
        return _Segments(*(np.concatenate([getattr(p, f) for p in parts])
                           for f in ("doc", "key", "kind", "arg", "length", "sep")))

    def take(self, order: np.ndarray) -> _Segments:
        return _Segments(self.doc[order], self.key[order], self.kind[order], self.arg[order],
                         self.length[order], self.sep[order])


def _segments(doc, key, kind, arg, length, sep) -> _Segments:
    n = len(doc)
    full = lambda v, dtype: np.broadcast_to(np.asarray(v, dtype=dtype), (n,))  # noqa: E731
    return _Segments(np.asarray(doc, np.int64), full(key, np.int64), full(kind, np.int8),
                     full(arg, np.int64), full(length, np.int64), full(sep, np.uint8))


def _original_segments(world: WebWorld, rng: np.random.Generator, docs: np.ndarray,
                       sites: np.ndarray) -> _Segments:
    """The segments of original pages `docs` of sites `sites` (module docstring)."""
    n = len(docs)
    show = rng.random((n, 5)) < world.site_odds[sites]
    shared_show = rng.random((n, len(SHARED_SNIPPETS))) < world.shared_odds[sites]
    mean = world.params.mean_body_words
    body = np.clip(np.exp(np.log(mean) + BODY_SIGMA * rng.standard_normal(n)), 1,
                   BODY_CAP_FACTOR * mean).astype(np.int64)
    # body paragraphs: enough random lengths for the longest split, cut at the body length
    low, high = PARAGRAPH_WORDS
    most = -(-body // low)
    lengths = rng.integers(low, high + 1, size=int(most.sum()))
    owner = np.repeat(np.arange(n), most)
    first = np.cumsum(most) - most
    ends = np.cumsum(lengths)
    starts = ends - lengths - (ends - lengths)[first][owner]
    keep = starts < body[owner]
    lengths = np.minimum(lengths, body[owner] - starts)[keep]
    owner, starts = owner[keep], starts[keep]
    index = np.arange(len(owner)) - (np.cumsum(np.bincount(owner, minlength=n)) -
                                     np.bincount(owner, minlength=n))[owner]
    n_paragraphs = np.bincount(owner, minlength=n)
    widget_at = (rng.random(n) * (n_paragraphs + 1)).astype(np.int64)
    parts = [_segments(docs, 0, TEMPLATE, 0, world.tpl_lengths[0], LINE)]  # the date line
    for role, key in ((HEADER, 1), (NAVIGATION, 2)):
        rows = np.flatnonzero(show[:, role])
        tpl = world.site_templates[sites[rows], role]
        parts.append(_segments(docs[rows], key, TEMPLATE, tpl, world.tpl_lengths[tpl], LINE))
    parts.append(_segments(docs[owner], 10 + 2 * index + 1, ZIPF, 0, lengths,
                           PERIOD_PARAGRAPH))
    tail_roles = ((WIDGET, None), (DISCLAIMER, 1 << 40), (FOOTER, (1 << 40) + 1))
    for role, tail_key in tail_roles:
        rows = np.flatnonzero(show[:, role])
        tpl = world.site_templates[sites[rows], role]
        keys = 10 + 2 * widget_at[rows] if tail_key is None else tail_key
        parts.append(_segments(docs[rows], keys, TEMPLATE, tpl, world.tpl_lengths[tpl],
                               PARAGRAPH))
    for k, tpl in enumerate(world.shared_templates):
        rows = np.flatnonzero(shared_show[:, k])
        parts.append(_segments(docs[rows], (1 << 39) + k, TEMPLATE, tpl,
                               world.tpl_lengths[tpl], PARAGRAPH))
    segments = _Segments.concat(parts)
    segments = segments.take(np.lexsort((segments.key, segments.doc)))
    # the first block (date line, header, navigation) ends with a blank line
    last_top = (segments.key <= 2) & np.append((segments.key[1:] > 2) |
                                               (segments.doc[1:] != segments.doc[:-1]), True)
    segments.sep = np.where(last_top, PARAGRAPH, segments.sep).astype(np.uint8)
    return segments


def _repost_segments(rng: np.random.Generator, originals: _Segments, docs: np.ndarray,
                     sources: np.ndarray) -> tuple[_Segments, np.ndarray]:
    """Segments of reposts `docs` of the original pages `sources`, and each repost's kind."""
    bounds = np.searchsorted(originals.doc, np.stack([sources, sources + 1]))
    kinds = rng.integers(REPOST_VARIABLES, REPOST_DROPPED + 1, size=len(docs))
    picks = rng.random(len(docs))
    added = rng.integers(EDIT_WORDS[0], EDIT_WORDS[1] + 1, size=len(docs))
    parts = []
    for r, (doc, a, b) in enumerate(zip(docs.tolist(), *bounds.tolist())):
        rows = np.arange(a, b)
        kind = originals.kind[rows]
        arg = np.where(kind == ZIPF, rows, originals.arg[rows])
        kind = np.where(kind == ZIPF, COPY, kind)
        length, sep = originals.length[rows], originals.sep[rows]
        body = np.flatnonzero(originals.key[rows] > 2)
        small = body[length[body] <= DROP_MAX_SHARE * length.sum()]
        if kinds[r] == REPOST_DROPPED and len(small) == 0:
            kinds[r] = REPOST_ADDED
        if kinds[r] == REPOST_DROPPED:
            keep = np.ones(len(rows), dtype=bool)
            keep[small[int(picks[r] * len(small))]] = False
            kind, arg, length, sep = kind[keep], arg[keep], length[keep], sep[keep]
        elif kinds[r] == REPOST_ADDED:
            at = np.append(body, len(rows))[int(picks[r] * (len(body) + 1))]
            kind = np.insert(kind, at, ZIPF)
            arg = np.insert(arg, at, 0)
            length = np.insert(length, at, added[r])
            sep = np.insert(sep, at, PERIOD_PARAGRAPH)
        parts.append(_segments(np.full(len(kind), doc), np.arange(len(kind)), kind, arg,
                               length, sep))
    if not parts:
        return _segments([], 0, 0, 0, 0, 0), kinds
    return _Segments.concat(parts), kinds


def generate_block(world: WebWorld, block: int, n_docs: int = BLOCK_DOCS) -> WebBlock:
    """Pages of block `block` (n_docs of them: BLOCK_DOCS but in tests), vectorised."""
    rng = np.random.default_rng([world.params.seed, block])
    repost = rng.random(n_docs) < world.params.repost_share
    repost[0] = False
    originals = np.flatnonzero(~repost)
    sites = np.minimum(np.searchsorted(world.site_cdf, rng.random(len(originals))),
                       world.params.n_sites - 1)
    reposts = np.flatnonzero(repost)
    # each repost copies a uniformly chosen original before it
    earlier = np.cumsum(~repost)[reposts]
    sources = originals[(rng.random(len(reposts)) * earlier).astype(np.int64)]
    own = _original_segments(world, rng, originals, sites)
    copies, repost_kinds = _repost_segments(rng, own, reposts, sources)
    segments = _Segments.concat([own, copies])
    order = np.lexsort((segments.key, segments.doc))
    segments = segments.take(order)
    ends = np.cumsum(segments.length)
    starts = ends - segments.length
    # COPY segments point at segments of `own`, which keep their order in `segments`
    where_own = np.empty(len(order), dtype=np.int64)
    where_own[order] = np.arange(len(order))
    tokens = np.empty(int(ends[-1]), dtype=np.int32)
    seps = np.zeros(len(tokens), dtype=np.uint8)
    for kind in (TEMPLATE, ZIPF, COPY):
        rows = np.flatnonzero(segments.kind == kind)
        length = segments.length[rows]
        within = np.arange(int(length.sum())) - np.repeat(np.cumsum(length) - length, length)
        at = np.repeat(starts[rows], length) + within
        if kind == TEMPLATE:
            values = world.tpl_tokens[np.repeat(world.tpl_offsets[segments.arg[rows]], length)
                                          + within]
            slot = values < 0  # a variable part: draw its value
            kinds = -values[slot]
            values[slot] = world.slot_first[kinds] + (rng.random(len(kinds)) *
                                                     world.slot_size[kinds]).astype(np.int64)
            tokens[at] = values
        elif kind == ZIPF:
            body = world.body
            fill_body(tokens, seps, starts[rows], length, body.stream_starts(rng, length),
                      body.stream_class, body.stream_sep, body.class_first, body.class_size,
                      body.alias_prob, body.alias, rng.random(len(at)))
        else:
            source_rows = where_own[segments.arg[rows]]
            source = np.repeat(starts[source_rows], length) + within
            tokens[at] = tokens[source]
            seps[at] = seps[source]
    seps[ends - 1] = segments.sep
    doc_offsets = np.zeros(n_docs + 1, dtype=np.int64)  # every page has a segment
    doc_offsets[1:] = ends[np.searchsorted(segments.doc, np.arange(n_docs), side="right") - 1]
    last = doc_offsets[1:] - 1
    seps[last] = np.where(seps[last] == PERIOD_PARAGRAPH, PERIOD_END, END)
    doc_site = np.zeros(n_docs, dtype=np.int32)
    doc_site[originals] = sites
    doc_source = np.full(n_docs, -1, dtype=np.int64)
    doc_source[reposts] = sources
    doc_site[reposts] = doc_site[sources]
    doc_kind = np.full(n_docs, ORIGINAL, dtype=np.int8)
    doc_kind[reposts] = repost_kinds
    return WebBlock(block * BLOCK_DOCS, tokens, seps, doc_offsets, doc_site, doc_source,
                    doc_kind)


def web_blocks(world: WebWorld, n_docs: int | None = None,
               n_tokens: int | None = None) -> Iterator[WebBlock]:
    """Blocks of pages until n_docs pages, or until the page that reaches n_tokens tokens."""
    if (n_docs is None) == (n_tokens is None):
        raise ParameterError("give the number of pages or of tokens (one of them)")
    if n_docs is not None:  # pages stream block by block: only int64 bounds them
        _check_positive(n_docs=n_docs, limit=2**62)
    else:
        _check_positive(n_tokens=n_tokens, limit=2**62)
    done_docs = done_tokens = 0
    block = 0
    while True:  # whole blocks always, so fewer pages asked for are a prefix of more
        pages = generate_block(world, block, BLOCK_DOCS)
        if n_tokens is not None and done_tokens + int(pages.doc_offsets[-1]) >= n_tokens:
            last = int(np.searchsorted(pages.doc_offsets[1:], n_tokens - done_tokens))
            yield pages.head(last + 1)
            return
        if n_docs is not None and done_docs + BLOCK_DOCS >= n_docs:
            yield pages.head(n_docs - done_docs)
            return
        yield pages
        done_docs += BLOCK_DOCS
        done_tokens += int(pages.doc_offsets[-1])
        block += 1


def block_table(world: WebWorld, pages: WebBlock) -> pa.Table:
    """Records {id, url, text, repost_of} of a block, text rendered by the compiled kernel."""
    data, offsets = wk.render_text(pages.tokens, pages.seps, pages.doc_offsets, *world.word_table,
                                   *wk.separator_table())
    n = len(pages)
    large = offsets[-1] >= 2**31
    text = (pa.LargeStringArray if large else pa.StringArray).from_buffers(
        n, pa.py_buffer(offsets if large else offsets.astype(np.int32)), pa.py_buffer(data))
    first = pages.first_doc
    ids = [f"web-{first + i}" for i in range(n)]
    urls = [f"https://site{s}.example/page/{first + i}"
            for i, s in enumerate(pages.doc_site.tolist())]
    repost_of = [None if s < 0 else f"web-{first + s}" for s in pages.doc_source.tolist()]
    return pa.table({"id": string_array(ids), "url": string_array(urls), "text": text,
                     "repost_of": string_array(repost_of)})


def web(n_docs: int, n_sites: int = 50, vocabulary: int = 50000, mean_body_words: int = 400,
        zipf_exponent: float = 1.1, seed: int = 0, repost_share: float = 0.05) -> list[list[str]]:
    """Web-like pages as token lists (small corpora for tests and benchmarks)."""
    world = WebWorld(WebParams(n_sites, vocabulary, mean_body_words, zipf_exponent, repost_share,
                               seed))
    vocab = world.vocab
    docs = []
    for pages in web_blocks(world, n_docs=n_docs):
        tokens = pages.tokens.tolist()
        offsets = pages.doc_offsets.tolist()
        docs += [[vocab[t] for t in tokens[a:b]] for a, b in zip(offsets[:-1], offsets[1:])]
    return docs


def _parts_only(folder: Path) -> bool:
    """A folder `write_web` may replace: empty or holding only Parquet parts."""
    return all(p.name.startswith("part-") and p.suffix == ".parquet" for p in folder.iterdir())


def _write_parts(tables: Iterator[pa.Table], folder: Path) -> None:
    """PART_BLOCKS blocks per part-NNNNN.parquet; a worker thread writes (and compresses) a
    block while the next one is generated."""
    import pyarrow.parquet as pq

    writer: pq.ParquetWriter | None = None
    part = 0
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = None
        for k, table in enumerate(tables):
            if pending is not None:
                pending.result()
            if k % PART_BLOCKS == 0:
                if writer is not None:
                    writer.close()
                writer = pq.ParquetWriter(folder / f"part-{part:05d}.parquet", table.schema)
                part += 1
            assert writer is not None  # opened at block 0
            pending = pool.submit(writer.write_table, table)
        if pending is not None:
            pending.result()
    if writer is not None:
        writer.close()


def write_web(output, params: WebParams, n_docs: int | None = None,
              n_tokens: int | None = None) -> dict:
    """Generate pages into `output`: .jsonl, .jsonl.gz or .parquet (one file), or a folder of
    Parquet parts (part-00000.parquet ...; the fast form for large corpora). Atomic. Returns
    counts: documents, tokens, reposts and each kind of repost, seconds."""
    from corpus_miner.io import write_records
    from corpus_miner.io.atomic import atomic_dir

    started = time.perf_counter()
    name = base_name(output).lower()
    to_file = name.endswith((".jsonl", ".jsonl.gz", ".parquet"))
    if not to_file and "." in name:
        raise ParameterError(f"{output}: write .jsonl, .jsonl.gz, .parquet, or a folder name "
                             "(no suffix) for Parquet parts")
    world = WebWorld(params)
    counts: dict[str, float] = {"documents": 0, "tokens": 0, "reposts": 0,
                                "reposts_variables_only": 0, "reposts_paragraph_added": 0,
                                "reposts_paragraph_dropped": 0}

    def tables() -> Iterator[pa.Table]:
        for pages in web_blocks(world, n_docs=n_docs, n_tokens=n_tokens):
            counts["documents"] += len(pages)
            counts["tokens"] += int(pages.doc_offsets[-1])
            kinds = np.bincount(pages.doc_kind, minlength=4)
            counts["reposts"] += int(kinds[1:].sum())
            counts["reposts_variables_only"] += int(kinds[REPOST_VARIABLES])
            counts["reposts_paragraph_added"] += int(kinds[REPOST_ADDED])
            counts["reposts_paragraph_dropped"] += int(kinds[REPOST_DROPPED])
            yield block_table(world, pages)

    if to_file:
        write_records(tables(), output)
    else:
        with atomic_dir(output, replaceable=_parts_only) as tmp:
            _write_parts(tables(), tmp)
    counts["seconds"] = round(time.perf_counter() - started, 3)
    return counts
