"""RayBloomSpan: BloomSpan's exact maximal frequent phrases on Ray.

The data flow is phrases/distributed/driver.py's, step for step, with Ray tasks for its maps and
reduces: a map task per block returns one list of blobs per reduce bucket (Ray's own shuffle
pattern: reducer b receives the b-th return of every map task), the blocks' token batches stay in
the object store between the passes, and the driver holds what the in-process driver holds: the
frequent words, the frequent key sets from which the shipped filters are built, and the phrases.
Every step is a sum over whole documents, so the answer is the local engine's byte for byte for
any number of blocks, and a retried task recomputes the same blobs.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyarrow as pa

from corpus_miner._extras import require
from corpus_miner.errors import ParameterError
from corpus_miner.estimator import Estimator
from corpus_miner.phrases.distributed.stages import Plan
from corpus_miner.phrases.params import PhraseParams
from corpus_miner.phrases.result import PhraseTable

ray = require("ray", "ray", "the Ray engine")

from corpus_miner.ray import tasks  # noqa: E402
from corpus_miner.ray.documents import (  # noqa: E402
    blocks_of,
    input_paths,
    one_line_errors,
)


class RayBloomSpan(Estimator):
    """Maximal contiguous frequent phrases of documents on Ray, exactly as
    corpus_miner.BloomSpan finds them on one machine.

    Parameters
    ----------
    sigma, min_length : int
        As in BloomSpan.
    window_cap, salt_threshold, filter_fp : as in SparkBloomSpan
        Any values give the same answer; they trade rounds, skew and shipped bytes.
    buckets : int, optional
        Reduce tasks of each shuffle (default: 2 x the cluster's CPUs).

    Learned: phrases_ (PhraseTable in canonical order), stats_ (counts and seconds).

    Examples
    --------
    >>> import ray                                          # doctest: +SKIP
    >>> ds = ray.data.from_items([{"text": t} for t in texts])  # doctest: +SKIP
    >>> RayBloomSpan(sigma=3, min_length=5).fit(ds).phrases_    # doctest: +SKIP
    """

    _fit_hint = "fit(dataset)"

    def __init__(self, sigma: int = 20, min_length: int = 10, window_cap: int = 1024,
                 buckets: int | None = None, salt_threshold: int = 50_000_000,
                 filter_fp: float = 0.01) -> None:
        self.sigma = sigma
        self.min_length = min_length
        self.window_cap = window_cap
        self.buckets = buckets
        self.salt_threshold = salt_threshold
        self.filter_fp = filter_fp

    def _plan(self) -> Plan:
        params = PhraseParams(sigma=self.sigma, min_length=self.min_length)
        for name, low in (("window_cap", 1), ("salt_threshold", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ParameterError(f"{name}={value!r}: expected an integer >= {low}")
        buckets = self.buckets
        if buckets is None:
            buckets = max(1, 2 * int(ray.cluster_resources().get("CPU", 1)))
        if isinstance(buckets, bool) or not isinstance(buckets, (int, np.integer)) \
                or not 1 <= buckets < 2**31:
            raise ParameterError(f"buckets={self.buckets!r}: expected an integer >= 1 or None")
        if not isinstance(self.filter_fp, (int, float)) or not 0.0 < self.filter_fp <= 1.0:
            raise ParameterError(f"filter_fp={self.filter_fp!r}: expected a rate in (0, 1]")
        return Plan(params.sigma, params.min_length, int(self.window_cap), int(buckets),
                    int(self.salt_threshold), 64)

    def fit(self, data, text_col: str = "text", id_col: str | None = "id") -> RayBloomSpan:
        """Mine `data`.

        Parameters
        ----------
        data : documents
            A ray.data.Dataset with a string column `text_col` (a block is a partition; a null
            text is an empty document); a list of pyarrow string arrays (one partition each) or
            of object refs of Arrow tables with a `text_col` column; or any kind the local
            BloomSpan.fit accepts but a TokenCorpus (corpus_miner.sources): paths are read in
            the workers by corpus-miner's readers, Arrow data and texts are put in the object
            store.
        text_col, id_col : str
            The column (field) of the text and of the id (None: no id); their defaults for
            coverage, report and clean.

        Returns
        -------
        RayBloomSpan
            self, with phrases_ and stats_ set.
        """
        _started()
        plan = self._plan()
        started = time.perf_counter()
        with one_line_errors():
            blocks, column, _ = blocks_of(data, text_col, id_col, "RayBloomSpan.fit")
            table, stats = _mine(blocks, column, plan, float(self.filter_fp))
        stats.update(algorithm="ray-bloomspan", sigma=plan.sigma, min_length=plan.min_length,
                     blocks=len(blocks), buckets=plan.buckets,
                     seconds_total=time.perf_counter() - started)
        self.text_col_, self.id_col_ = text_col, id_col
        self.phrases_: PhraseTable = table
        self.stats_: dict = stats
        return self

    def coverage(self, data, text_col: str | None = None, id_col: str | None = None):
        """Per document (order kept): id_col (if any), tokens, tokens_covered and junk_spans
        (the [start, end) character spans of its covered token runs), as Coverage computes them.

        Parameters
        ----------
        data : documents
            As in fit; need not be the documents the phrases were mined on.
        text_col, id_col : str, optional
            Default: the ones given to fit.

        Returns
        -------
        ray.data.Dataset
            One block per input block (materialized in the object store).
        """
        from corpus_miner.ray.apply import coverage_block, ship

        self.check_is_fitted()
        text_col, id_col = text_col or self.text_col_, id_col or self.id_col_
        with one_line_errors():
            blocks, column, ids = blocks_of(data, text_col, id_col, "RayBloomSpan.coverage",
                                          keep_ids=True)
            shipped = ship(self.phrases_, self.min_length)
            firsts: list = [None] * len(blocks)
            if input_paths(data) is not None:  # document blocks: rows without an id are numbered
                from corpus_miner.ray.documents import block_offsets

                firsts = [int(x) for x in block_offsets(blocks)[:-1]]
            refs = [coverage_block.remote(b, shipped, column, ids, first, id_col)
                    for b, first in zip(blocks, firsts, strict=True)]
            ray.wait(refs, num_returns=len(refs), fetch_local=False)
        return ray.data.from_arrow_refs(refs)

    def report(self, data, text_col: str | None = None, id_col: str | None = None, *,
               top: int = 25, examples: int = 3, template_share: float = 0.9,
               group_by: str | None = None, title: str = "Repeated text report"):
        """The coverage report of `data`: the local BloomSpan.report's CoverageReport (same
        JSON and HTML), its figures computed in Ray tasks.

        Parameters
        ----------
        data : documents
            As in fit; documents keep their order (block by block).
        text_col, id_col : str, optional
            Default: the ones given to fit.
        top, examples, template_share, group_by, title
            As in BloomSpan.report; group_by names a column (field), FIELD:host its URL hosts.

        Returns
        -------
        CoverageReport
        """
        from corpus_miner.coverage.report import parse_group_by
        from corpus_miner.ray.apply import documents_report
        from corpus_miner.ray.documents import shaped_blocks

        self.check_is_fitted()
        text_col, id_col = text_col or self.text_col_, id_col or self.id_col_
        group = parse_group_by(group_by)
        with one_line_errors():
            blocks, column, ids = blocks_of(data, text_col, id_col, "RayBloomSpan.report",
                                          group_by=group, keep_ids=True)
            inputs = input_paths(data)
            if inputs is None:
                blocks = shaped_blocks(blocks, column, ids, group)
            return documents_report(blocks, self.phrases_, self.sigma, self.min_length,
                                    top=top, examples=examples, template_share=template_share,
                                    group_by=group_by, title=title, inputs=inputs or ())

    def clean(self, data, mode: str = "remove", text_col: str | None = None,
              mask_text: str | None = None, output=None):
        """`data` with covered text removed ("remove"), replaced by mask_text ("mask") or
        annotated (junk_spans and junk_share columns added, "annotate"); every input column
        kept.

        Parameters
        ----------
        data : documents
            As in fit.
        mode : {"remove", "mask", "annotate"}
        text_col : str, optional
            Default: the one given to fit.
        mask_text : str, optional
            The replacement in mask mode (default "[…]").
        output : str or path, optional
            Write the cleaned records there (.jsonl, .jsonl.gz, .parquet, a URL) through the
            local writers, atomically, and return the cleaning figures.

        Returns
        -------
        ray.data.Dataset, pyarrow.Table or dict
            The cleaned blocks as a Dataset (of input files: a Table of their records, every
            field kept, as the `clean` command writes them); with `output`, the figures.
        """
        from corpus_miner.ray.apply import check_mode, clean_block, ship

        self.check_is_fitted()
        text_col = text_col or self.text_col_
        filled = check_mode(mode, mask_text)
        if input_paths(data) is not None:
            return self._clean_inputs(data, mode, filled, output)
        with one_line_errors():
            blocks, column, _ = blocks_of(data, text_col, None, "RayBloomSpan.clean")
            shipped = ship(self.phrases_, self.min_length)
            refs = [clean_block.remote(b, shipped, column, mode, filled) for b in blocks]
            ray.wait(refs, num_returns=len(refs), fetch_local=False)
        if output is None:
            return ray.data.from_arrow_refs(refs)
        from corpus_miner.io.writers import write_records

        tables = ray.get(refs)
        written = write_records(tables, output)
        return {"mode": mode, "documents": sum(t.num_rows for t in tables),
                "documents_written": int(written)}

    def _clean_inputs(self, data, mode: str, mask_text: str, output):
        """Input files cleaned as `clean --engine ray` cleans them: covered runs found in Ray
        tasks, every record (all its fields) rewritten on the driver by the Cleaner."""
        from corpus_miner.ray.apply import inputs_cleaner
        from corpus_miner.sources import documents

        source = documents(data, text_col=self.text_col_, id_col=self.id_col_ or "id",
                           where="RayBloomSpan.clean")
        with one_line_errors():
            blocks, _, _ = blocks_of(data, self.text_col_, self.id_col_, "RayBloomSpan.clean")
            cleaner, share = inputs_cleaner(blocks, self.phrases_, self.min_length, mode=mode,
                                            mask_text=mask_text)
        if output is None:
            parts = list(cleaner.transform(source.batches(), source.text_col))
            return pa.concat_tables(parts) if parts else pa.table({source.text_col: []})
        stats = cleaner.write(source.paths, output, text_field=source.text_col,
                              id_field=source.id_col)
        stats["coverage"] = share
        return stats


def _started() -> None:
    if not ray.is_initialized():
        ray.init()


def _mine(blocks: list, text_col: str, plan: Plan, filter_fp: float
          ) -> tuple[PhraseTable, dict]:
    from corpus_miner.phrases.distributed.driver import _phrase_table
    from corpus_miner.phrases.distributed.stages import vocabulary

    stats: dict = {}
    n_parts, buckets = len(blocks), plan.buckets
    plan_ref = ray.put(plan)
    # stages 0 and 1: tokenize each block (kept in the object store) and count words and
    # bigram fingerprints, keyed to buckets
    counted: list[Any] = [tasks.count_block.options(num_returns=2 + 2 * buckets).remote(
        block, text_col, plan_ref) for block in blocks]
    stored = [c[0] for c in counted]
    sizes = ray.get([c[-1] for c in counted])
    stats.update(documents=sum(d for d, _ in sizes), tokens=sum(t for _, t in sizes))
    words = [tasks.frequent_words.remote(plan_ref, *[c[1 + b] for c in counted])
             for b in range(buckets)]
    pairs = [tasks.frequent_pairs.remote(plan_ref, *[c[1 + buckets + b] for c in counted])
             for b in range(buckets)]
    vocab = vocabulary(ray.get(words), plan.sigma)
    frequent = np.concatenate(ray.get(pairs) + [np.zeros(0, np.uint64)])
    stats.update(frequent_words=len(vocab), frequent_bigrams=len(frequent))
    # stage 2: global ids and runs of frequent bigrams; gram statistics keyed to buckets
    vocab_ref, pair_filter = ray.put(vocab), ray.put(tasks.key_filter(frequent, filter_fp))
    encoded: list[Any] = [tasks.encode_block.options(num_returns=1 + buckets).remote(
        part, vocab_ref, pair_filter, plan_ref) for part in stored]
    table = [e[0] for e in encoded]
    classes = ray.get([tasks.classify.remote(plan_ref, *[e[1 + b] for e in encoded])
                       for b in range(buckets)])
    frequent_fp = np.concatenate([c["frequent"] for c in classes] + [np.zeros(0, np.uint64)])
    live_fp = np.concatenate([c["live"] for c in classes] + [np.zeros(0, np.uint64)])
    occurrences = np.concatenate([c["occurrences"] for c in classes] + [np.zeros(0, np.int64)])
    stats.update(frequent_grams=len(frequent_fp), live_grams=len(live_fp))
    gram_filter = ray.put(tasks.key_filter(frequent_fp, filter_fp))
    reach = [tasks.reach_block.remote(part, gram_filter, plan_ref) for part in table]
    del stored, table  # the object store frees what no task needs any more
    group_keys, salts = frequent_fp, plan.salts(occurrences, n_parts)
    live_filter = tasks.key_filter(live_fp, filter_fp)
    found: list[tuple] = []
    deferred = None
    round_index = 0
    while True:
        spec = ray.put(tasks.round_spec(plan, round_index, live_filter if deferred is None
                                        else None, deferred, group_keys, salts))
        routed: list[Any] = [tasks.route_block.options(num_returns=2 * buckets).remote(
            part, plan_ref, spec, i) for i, part in enumerate(reach)]
        reduced: list[Any] = [tasks.reduce_bucket.options(num_returns=2 + buckets).remote(
            plan_ref, spec, n_parts, *[r[b] for r in routed],
            *[r[buckets + b] for r in routed]) for b in range(buckets)]
        forwarded: list[Any] = [tasks.reduce_forwarded.options(num_returns=2).remote(
            plan_ref, spec, *[r[2 + b] for r in reduced]) for b in range(buckets)]
        results = ray.get([r[0] for r in reduced] + [r[1] for r in reduced]
                          + [f[0] for f in forwarded] + [f[1] for f in forwarded])
        phrases = results[:buckets] + results[2 * buckets:3 * buckets]
        later = results[buckets:2 * buckets] + results[3 * buckets:]
        found += [p for p in phrases if p is not None]
        keys = np.concatenate([k for k, _ in later] + [np.zeros(0, np.uint64)])
        stats[f"round_{round_index}_deferred"] = len(keys)
        if len(keys) == 0:
            break
        order = np.argsort(keys, kind="stable")
        deferred = keys[order]
        salts = plan.salts(np.concatenate([o for _, o in later])[order], n_parts)
        group_keys = deferred
        round_index += 1
    stats["rounds"] = round_index + 1
    table_out = _phrase_table(found, vocab).sorted()
    stats["phrases"] = len(table_out)
    return table_out, stats
