"""RayBloomSpan's phrases applied to document blocks (ray.documents): per-block coverage and
cleaning, the coverage report and the cleaner of input files, as the local engine's Coverage,
CoverageReport and Cleaner give them, their figures computed in Ray tasks.

The phrase table goes to the object store once; each worker process builds its lookup tables
(coverage.batches.BatchCoverage) once per table and reuses them for every block. What reaches
the driver is small: per document its token and covered-token counts (and its group value with
--group-by, its covered runs for cleaning), per block the covered tokens attributed to each
phrase, and for the report's examples the few documents the local report would pick: chosen in
the tasks (two passes: how many documents of each block hold each hog, then the picked ones'
first occurrences and texts). The report is then completed on the driver exactly as the local
one is (CoverageReport.add_document / add_groups), so its JSON and HTML are the local engine's.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import ray

from corpus_miner.coverage.batches import BatchCoverage, cleaned_text, junk_spans
from corpus_miner.coverage.clean import DEFAULT_MASK, MODES, Cleaner
from corpus_miner.coverage.coverage import Coverage, Occurrences
from corpus_miner.coverage.report import MISSING_GROUP, CoverageReport
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.io.strings import StringList
from corpus_miner.phrases.result import PhraseTable

_SPANS = pa.list_(pa.list_(pa.int64()))
_BUILT: dict[str, BatchCoverage] = {}
"""Per worker process: the lookup tables of the shipped tables seen, by the table's key (a
task's arguments are deserialized anew each time; building the tables is the costly part)."""


@dataclass(frozen=True)
class Shipped:
    """A phrase table as shipped to the tasks: a key naming it, its arrays, min_length."""

    key: str
    tokens: np.ndarray
    offsets: np.ndarray
    vocab_offsets: np.ndarray
    vocab_data: np.ndarray
    min_length: int


def ship(table: PhraseTable, min_length: int):
    """An object ref of `table` for the tasks of this module."""
    vocab = table.vocab if isinstance(table.vocab, StringList) else \
        StringList.from_strings(table.vocab)
    return ray.put(Shipped(uuid.uuid4().hex, table.tokens, table.offsets, vocab.offsets,
                           vocab.data, int(min_length)))


def _coverage(shipped: Shipped) -> BatchCoverage:
    found = _BUILT.get(shipped.key)
    if found is None:
        zeros = np.zeros(len(shipped.offsets) - 1, np.int64)
        table = PhraseTable(shipped.tokens, shipped.offsets, zeros, zeros,
                            StringList(shipped.vocab_offsets, shipped.vocab_data))
        _BUILT.clear()  # one table at a time: a long-lived worker does not pile them up
        found = _BUILT[shipped.key] = BatchCoverage(table, shipped.min_length)
    return found


def _texts(table: pa.Table, text_col: str) -> pa.Array:
    texts = table.column(text_col).combine_chunks()
    return texts.cast(pa.string()) if pa.types.is_null(texts.type) else texts


# -- per block: coverage and cleaning of a Ray Dataset's (or Arrow) blocks ----------------------
@ray.remote
def coverage_block(table: pa.Table, shipped: Shipped, text_col: str, id_col: str | None,
                   first: int | None = None, id_name: str | None = None) -> pa.Table:
    """id_col (if given; named id_name), tokens, tokens_covered, junk_spans of each row. first:
    the global index of a document block's first row, to number the rows without an id."""
    texts = _texts(table, text_col)
    found = _coverage(shipped).documents(texts)
    spans = [junk_spans(text or "", runs)
             for text, runs in zip(texts.to_pylist(), found.runs, strict=True)]
    columns = {}
    if id_col is not None:
        ids = table.column(id_col)
        if first is not None:
            numbers = pa.array([str(first + i) for i in range(table.num_rows)], pa.string())
            ids = pc.if_else(pc.is_null(ids), numbers, ids)
        columns[id_name or id_col] = ids
    columns.update(tokens=pa.array(found.tokens, pa.int64()),
                   tokens_covered=pa.array(found.covered, pa.int64()),
                   junk_spans=pa.array(spans, _SPANS))
    return pa.table(columns)


@ray.remote
def clean_block(table: pa.Table, shipped: Shipped, text_col: str, mode: str,
                mask_text: str) -> pa.Table:
    """The block with covered text removed or masked, or annotated with junk_spans and
    junk_share; every other column kept."""
    column = table.column(text_col).combine_chunks()
    texts = _texts(table, text_col)
    found = _coverage(shipped).documents(texts)
    originals = column.to_pylist()
    if mode == "annotate":
        spans = [junk_spans(text or "", runs)
                 for text, runs in zip(originals, found.runs, strict=True)]
        share = np.divide(found.covered, found.tokens, out=np.zeros(len(found.tokens)),
                          where=found.tokens > 0)
        kept = table.drop_columns([n for n in ("junk_spans", "junk_share")
                                   if n in table.column_names])
        return kept.append_column("junk_spans", pa.array(spans, _SPANS)) \
            .append_column("junk_share", pa.array(share, pa.float64()))
    new = [text if text is None else cleaned_text(text, runs, mode, mask_text)
           for text, runs in zip(originals, found.runs, strict=True)]
    index = table.column_names.index(text_col)
    return table.set_column(index, table.schema.field(text_col),
                            pa.array(new, column.type if not pa.types.is_null(column.type)
                                     else pa.string()))


def check_mode(mode: str, mask_text: str | None) -> str:
    """The mask text of a valid mode (DEFAULT_MASK unless given), or a ParameterError."""
    if mode not in MODES:
        raise ParameterError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mask_text is not None and mode != "mask":
        raise ParameterError("mask_text only applies to mode='mask'")
    return DEFAULT_MASK if mask_text is None else mask_text


# -- document figures: the report and the cleaner of document blocks -----------------------------
@ray.remote
def _block_figures(block: pa.Table, shipped: Shipped, with_runs: bool, with_groups: bool,
                   first: int) -> dict:
    """A document block's figures: tokens and covered tokens per document, covered tokens by
    phrase, the digest of its texts at their global indexes (first: the block's), and with_runs
    each document's covered runs (flat [first, end) pairs and their number per document)."""
    from corpus_miner.io.digest import OrderedDigest

    texts = block.column("text").combine_chunks()
    found = _coverage(shipped).documents(texts)
    digest = OrderedDigest()
    digest.update(texts, first)
    out = {"tokens": found.tokens.astype(np.int64), "covered": found.covered.astype(np.int64),
           "attributed": found.tokens_by_phrase.astype(np.int64), "digest": digest.state()}
    if with_groups:
        out["groups"] = block.column("grp").to_pylist()
    if with_runs:
        out["runs"] = np.concatenate([r.astype(np.int64).ravel() for r in found.runs]
                                     + [np.zeros(0, np.int64)])
        out["run_counts"] = np.array([len(r) for r in found.runs], np.int64)
    return out


@dataclass
class Figures:
    """Per document, in input order: tokens, covered tokens, group value (with groups), covered
    runs (with runs); covered tokens by phrase; blocks' first documents; the texts' digest."""

    tokens: np.ndarray
    covered: np.ndarray
    groups: list | None
    runs: list | None
    tokens_by_phrase: np.ndarray
    block_offsets: np.ndarray
    texts_digest: tuple[int, int]


def document_figures(blocks: list, shipped, n_phrases: int, with_runs: bool = False,
                     with_groups: bool = False) -> Figures:
    from corpus_miner.io.digest import OrderedDigest
    from corpus_miner.ray.documents import block_offsets

    offsets = block_offsets(blocks)
    parts = ray.get([_block_figures.remote(b, shipped, with_runs, with_groups, int(offsets[i]))
                     for i, b in enumerate(blocks)])
    digest = OrderedDigest()
    attributed = np.zeros(n_phrases, np.int64)
    for part in parts:
        digest.combine(part["digest"][1], part["digest"][0])
        attributed += part["attributed"]
    runs = None
    if with_runs:
        runs = []
        for part in parts:
            pairs = part["runs"].reshape(-1, 2)
            ends = np.cumsum(part["run_counts"])
            runs += np.split(pairs, ends[:-1]) if len(ends) else []
    return Figures(np.concatenate([p["tokens"] for p in parts] + [np.zeros(0, np.int64)]),
                   np.concatenate([p["covered"] for p in parts] + [np.zeros(0, np.int64)]),
                   [g for p in parts for g in p["groups"]] if with_groups else None, runs,
                   attributed, offsets, digest.state())


@ray.remote
def _holding(block: pa.Table, shipped: Shipped, phrases: np.ndarray) -> np.ndarray:
    """How many documents of the block hold an occurrence of each of `phrases`."""
    occ = _coverage(shipped).documents(block.column("text").combine_chunks()).occurrences
    keep = np.isin(occ.phrase, phrases)
    pairs = np.unique(np.stack([occ.phrase[keep], occ.doc[keep]]), axis=1)
    return np.array([(pairs[0] == p).sum() for p in phrases], np.int64)


@ray.remote
def _picked(block: pa.Table, shipped: Shipped, wanted: dict[int, np.ndarray],
            rows: np.ndarray) -> tuple[list, dict]:
    """([(phrase, row, token start)] of the first occurrence of each phrase in the documents
    ranked wanted[phrase] (within the block) among those holding it, {row: (id, text)} of those
    documents and of `rows`."""
    texts = block.column("text").combine_chunks()
    found = _coverage(shipped).documents(texts)
    occ = found.occurrences
    picks = []
    for phrase, ranks in wanted.items():
        keep = occ.phrase == phrase
        doc, start = occ.doc[keep], occ.start[keep]
        order = np.lexsort((start, doc))  # the earliest occurrence of each document first
        doc, start = doc[order], start[order]
        first = np.ones(len(doc), dtype=bool)
        first[1:] = doc[1:] != doc[:-1]
        doc, start = doc[first], start[first]
        picks += [(int(phrase), int(doc[r]), int(start[r] - found.doc_offsets[doc[r]]))
                  for r in ranks]
    ids = block.column("id")
    chosen = sorted({row for _, row, _ in picks} | {int(r) for r in rows})
    return picks, {row: (ids[row].as_py(), texts[row].as_py()) for row in chosen}


def documents_report(blocks: list, table: PhraseTable, sigma: int, min_length: int, *,
                     top: int = 25, examples: int = 3, template_share: float = 0.9,
                     group_by: str | None = None, title: str = "Repeated text report",
                     inputs: Iterable[str] = ()) -> CoverageReport:
    """The CoverageReport of document blocks by the phrase table of a mining run."""
    shipped = ship(table, min_length)
    figures = document_figures(blocks, shipped, len(table), with_groups=group_by is not None)
    offsets = np.zeros(len(figures.tokens) + 1, np.int64)
    np.cumsum(figures.tokens, out=offsets[1:])
    # the report reads the per-document figures and the attribution; the token mask and the
    # occurrences stay in the workers (the examples are chosen there)
    empty = np.zeros(0, np.int64)
    coverage = Coverage(np.zeros(0, np.uint8), offsets, figures.covered, table,
                        figures.tokens_by_phrase, Occurrences(empty, empty, empty),
                        int(min_length), int(sigma), "mined")
    report = CoverageReport(coverage, top=top, examples=examples, template_share=template_share,
                            group_by=group_by, title=title, inputs=inputs)
    hogs = np.union1d(report.hogs_by_psi, report.hogs_by_covered).astype(np.int64)
    wanted: dict[int, np.ndarray] = {}
    if examples > 0:  # the local report's choice: evenly spread over the documents
        for phrase in hogs:
            df = int(table.df[phrase])
            if df:
                wanted[int(phrase)] = np.unique(np.linspace(0, df - 1, min(examples, df))
                                                .round().astype(np.int64))
    starts = figures.block_offsets
    per_block: list[dict] = [{} for _ in blocks]
    if wanted:
        phrases = np.array(sorted(wanted), np.int64)
        held = np.array(ray.get([_holding.remote(b, shipped, phrases) for b in blocks]),
                        np.int64).reshape(len(blocks), len(phrases))
        before = np.cumsum(held, axis=0) - held  # documents holding each phrase in earlier blocks
        for j, phrase in enumerate(phrases):
            for b in range(len(blocks)):
                ranks = wanted[int(phrase)]
                inside = ranks[(ranks >= before[b, j]) & (ranks < before[b, j] + held[b, j])]
                if len(inside):
                    per_block[b][int(phrase)] = inside - before[b, j]
    template_rows: list[list[int]] = [[] for _ in blocks]
    for d in report.template_docs[:report.top]:
        b = int(np.searchsorted(starts, d, side="right") - 1)
        template_rows[b].append(int(d - starts[b]))
    asked = [b for b in range(len(blocks)) if per_block[b] or template_rows[b]]
    answers = ray.get([_picked.remote(blocks[b], shipped, per_block[b],
                                      np.array(template_rows[b], np.int64)) for b in asked])
    found: dict[int, list] = {}
    documents: dict[int, tuple] = {}
    for b, (picks, texts) in zip(asked, answers, strict=True):
        for phrase, row, start in picks:
            found.setdefault(int(starts[b] + row), []).append(
                (phrase, start, int(table.lengths[phrase])))
        for row, value in texts.items():
            documents[int(starts[b] + row)] = value
    for d in sorted(documents):  # documents in input order, each one's examples by phrase: the
        doc_id, text = documents[d]  # order in which the local report adds contexts
        report.add_document(d, str(d) if doc_id is None else doc_id, text or "",
                            sorted(found.get(d, ())), "ray")
    if report.group_by is not None:
        assert figures.groups is not None
        if len(figures.groups) and all(g is None for g in figures.groups):
            raise InputError(f"group_by field {report.group_by[0]!r} is in no record")
        report.add_groups([MISSING_GROUP if g is None else g for g in figures.groups])
    return report


def inputs_cleaner(blocks: list, table: PhraseTable, min_length: int, *,
                   mode: str = "remove", mask_text: str = DEFAULT_MASK,
                   drop_above: float | None = None) -> tuple[Cleaner, float]:
    """(a Cleaner fitted with the covered runs of the document blocks, the covered share of the
    tokens): its write(inputs, output) rewrites the input files, and refuses inputs whose texts
    changed since the blocks were read."""
    figures = document_figures(blocks, ship(table, min_length), len(table), with_runs=True)
    offsets = np.zeros(len(figures.tokens) + 1, np.int64)
    np.cumsum(figures.tokens, out=offsets[1:])
    mask = np.zeros(int(offsets[-1]), np.uint8)  # a byte per token, as the local cleaner's
    assert figures.runs is not None
    for d, runs in enumerate(figures.runs):
        for first, end in runs:
            mask[offsets[d] + first:offsets[d] + end] = 1
    cleaner = Cleaner(mode, False, (), drop_above, mask_text)
    cleaner.fit_mask(mask, offsets, texts_digest=figures.texts_digest)
    return cleaner, int(figures.covered.sum()) / max(int(offsets[-1]), 1)
