"""`--engine ray` for `phrases`, `report`, `clean`, `dedup` and `index build|add|query`: the inputs
read by Ray tasks with corpus-miner's reader, mined by RayBloomSpan, and every output written by
the driver with the local writers (byte-identical to the local engine's). `report` and `clean`
apply the phrases in Ray tasks too (ray.apply); `clean` reads the inputs a second time on the
driver to write every record back, as the local command does. `--address` joins a running
cluster; without it a local one is started with the cores of this machine. `dedup`, `index
build` and `index add` compute the band keys in Ray tasks (ray.dedup) and decide with the local
LSHBloom on the driver; `index query` and `dedup --against` ask the indexes in Ray tasks
(ray.lshbloom)."""

from __future__ import annotations

import argparse

from corpus_miner.errors import ParameterError


def _connect(args: argparse.Namespace):
    import os

    from corpus_miner._extras import require

    # a failed task fails every task downstream of it; the command prints the first failure in
    # one line, and Ray must not print the others' tracebacks when their results are dropped
    os.environ.setdefault("RAY_IGNORE_UNHANDLED_ERRORS", "1")
    ray = require("ray", "ray", "--engine ray")
    if not ray.is_initialized():
        ray.init(address=args.address, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    return ray


def run_phrases(args: argparse.Namespace, write_outputs) -> int:
    """write_outputs: the phrases command's writer (passed in: cli/phrases imports this module)."""
    from corpus_miner.io.storage import current_storage_options
    from corpus_miner.phrases.params import PhraseParams

    if args.filter_bytes is not None:
        raise ParameterError("--filter-bytes is not available with --engine ray; run it with "
                             "the local engine")
    from corpus_miner.cli.engine import refuse_line_phrases

    refuse_line_phrases(args, note=False)
    PhraseParams(sigma=args.sigma, min_length=args.min_length)
    _connect(args)
    from corpus_miner.ray import RayBloomSpan
    from corpus_miner.ray.documents import input_blocks, one_line_errors

    with one_line_errors():
        read = input_blocks(args.inputs, args.text_field, args.id_field, args.skip_bad,
                            current_storage_options())
        miner = RayBloomSpan(sigma=args.sigma, min_length=args.min_length).fit(read.refs)
    _note_reading(args, read, miner)
    write_outputs(args, miner.phrases_, miner.stats_)
    return 0


def _mined(args: argparse.Namespace, group_by=None):
    """(the blocks read, RayBloomSpan fitted on them) for report and clean."""
    from corpus_miner.cli.engine import refuse_line_phrases
    from corpus_miner.io.storage import current_storage_options
    from corpus_miner.phrases.params import PhraseParams

    _refuse(args, "--phrases", "--allow", "--keep-first", "--templates", "--slots")
    refuse_line_phrases(args)
    PhraseParams(sigma=args.sigma, min_length=args.min_length)
    _connect(args)
    from corpus_miner.ray import RayBloomSpan
    from corpus_miner.ray.documents import input_blocks

    read = input_blocks(args.inputs, args.text_field, args.id_field, args.skip_bad,
                        current_storage_options(), group_by)
    miner = RayBloomSpan(sigma=args.sigma, min_length=args.min_length).fit(read.refs)
    _note_reading(args, read, miner)
    return read, miner


def run_report(args: argparse.Namespace, write_outputs) -> int:
    """write_outputs: the report command's writer (cli/report imports this module)."""
    from corpus_miner.coverage.report import parse_group_by

    group_by = parse_group_by(args.group_by)
    with _errors():
        read, miner = _mined(args, group_by)
        from corpus_miner.ray.apply import documents_report

        report = documents_report(read.refs, miner.phrases_, args.sigma, args.min_length,
                                  top=args.top, examples=args.examples,
                                  template_share=args.template_share, group_by=args.group_by,
                                  title=args.title, inputs=args.inputs)
    write_outputs(args, report)
    return 0


def run_clean(args: argparse.Namespace, finish) -> int:
    """finish: the clean command's --json and summary line (cli/report imports this module)."""
    from corpus_miner.cli.common import shard_plan
    from corpus_miner.coverage.clean import CleanParams

    CleanParams(args.mode, False, (), args.drop_above, args.mask_text).validate()
    with _errors():
        read, miner = _mined(args)
        from corpus_miner.ray.apply import inputs_cleaner

        cleaner, share = inputs_cleaner(read.refs, miner.phrases_, args.min_length,
                                        mode=args.mode, mask_text=args.mask_text,
                                        drop_above=args.drop_above)
    stats = cleaner.write(args.inputs, args.output, text_field=args.text_field,
                          id_field=args.id_field, skip_bad=args.skip_bad,
                          shards=shard_plan(args))
    finish(args, stats, share)
    return 0


def run_dedup(args: argparse.Namespace) -> int:
    """dedup: band keys in Ray tasks, the flags by the local LSHBloom on the driver, the records
    written from a second read of the inputs on the driver (refused if their texts changed)."""
    import sys
    import time

    from corpus_miner.cli.dedup_common import _model, growth_note, write_flagged
    from corpus_miner.io.storage import current_storage_options

    started = time.perf_counter()
    model = _model(args)
    params = model.params.validated()
    from corpus_miner.cli.dedup_common import against_indexes

    against = against_indexes(args)  # loaded before any work: a bad folder is one line
    sized = params.mode == "lshbloom" and args.expected_items is None
    if args.shards is not None and not sized:
        raise ParameterError("--shards N needs the number of documents before writing, and "
                             "this dedup streams (--expected-items, or mode minhash_lsh): use "
                             "--shard-size")
    _connect(args)
    from corpus_miner.dedup.result import DedupResult
    from corpus_miner.ray.dedup import block_keys, concatenated
    from corpus_miner.ray.documents import input_blocks

    with _errors():
        read = input_blocks(args.inputs, args.text_field, args.id_field, args.skip_bad,
                            current_storage_options())
        keys, ids, texts_read = block_keys(read.refs, params)
        matches = matches_on_ray(against, read.refs)
    from corpus_miner.cli.common import note_read_stats

    note_read_stats(args, read.stats)
    if sized:  # one layer sized for the documents, as the local two-pass dedup
        answer = model._deduplicate_keys(concatenated(keys, params))
    else:  # a growing index, block after block in input order, as the local streaming dedup
        model.partial_fit([])
        answer = DedupResult.concat([model._deduplicate_keys(k, i, update=True)
                                     for k, i in zip(keys, ids, strict=True)]
                                    or [model.deduplicate([], update=True)])
    if against:
        from corpus_miner.cli.dedup_common import with_matches

        answer = with_matches(answer, *matches)
    n_documents = len(answer)
    written = write_flagged(args, answer, texts_read, "dedup", total_rows=n_documents)
    if args.save_index:
        model.save(args.save_index)
    growth_note("dedup", model, args.expected_items)
    duplicates = int(answer.is_duplicate.sum())
    print(f"dedup: {duplicates:,} of {n_documents:,} documents are near-duplicates of an earlier "
          f"one (similarity >= {model.threshold:g}, {model.mode_}, Ray); {written:,} written"
          f"{' with is_duplicate' if args.annotate else ''} to {args.output} in "
          f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


def matches_on_ray(indexes: list, blocks: list):
    """cli.index.matches_against on Ray: (flagged, names) of the blocks' documents matching
    any of `indexes` (each shipped to the tasks once and queried there, read-only)."""
    import numpy as np

    from corpus_miner.dedup.result import DedupResult
    from corpus_miner.ray.lshbloom import RayLSHBloom

    n = None
    flagged: np.ndarray = np.zeros(0, bool)
    names: list = []
    for index in indexes:
        _, refs, _, _ = RayLSHBloom.from_state(index.to_state(), copy=False)._query_blocks(
            blocks, "text")
        found = DedupResult.concat(ray_get(refs) or [index.query([])])
        if n is None:
            n = len(found)
            flagged, names = np.zeros(n, bool), [None] * n
        if found.duplicate_of_id is not None:
            for i in np.flatnonzero(found.is_duplicate & ~flagged):
                names[i] = found.duplicate_of_id[i]
        flagged |= found.is_duplicate
    return flagged, names


def ray_get(refs: list) -> list:
    import ray

    return ray.get(refs)


def run_index_query(args: argparse.Namespace) -> int:
    """index query: every block asked against the index in a Ray task (the index shipped
    once), the records written from a checked second read of the inputs on the driver."""
    import time

    from corpus_miner.cli.common import note_read_stats, print_summary
    from corpus_miner.cli.dedup_common import load_index, write_flagged
    from corpus_miner.dedup.result import DedupResult
    from corpus_miner.io.digest import OrderedDigest
    from corpus_miner.io.storage import current_storage_options

    if args.shards is not None:
        raise ParameterError("--shards N needs the number of documents before writing, and "
                             "index query streams: use --shard-size")
    started = time.perf_counter()
    model = load_index(args.index_dir)
    _connect(args)
    from corpus_miner.ray.documents import input_blocks
    from corpus_miner.ray.lshbloom import RayLSHBloom

    with _errors():
        read = input_blocks(args.inputs, args.text_field, args.id_field, args.skip_bad,
                            current_storage_options())
        _, refs, _, digests = RayLSHBloom.from_state(model.to_state(), copy=False) \
            ._query_blocks(read.refs, "text")
        answer = DedupResult.concat(ray_get(refs) or [model.query([])])
        texts_read = OrderedDigest()
        for documents, value in ray_get(digests):
            texts_read.combine(value, documents)
    note_read_stats(args, read.stats)
    written = write_flagged(args, answer, texts_read.state(), "index query")
    print_summary("index query", documents=len(answer), duplicates=int(answer.is_duplicate.sum()),
                  written=written, indexed=model.n_documents_, mode=model.params_.mode,
                  engine="ray", seconds=round(time.perf_counter() - started, 3))
    return 0


def run_index_add(args: argparse.Namespace) -> int:
    """index add: each file's digest computed where it is read (an input absorbed before is
    refused before any band key is computed), the flags and the index's new generation by
    RayLSHBloom (the local decisions on band keys from Ray tasks), the records written from a
    checked second read; the output first, the index after it, as the local command."""
    import time

    import numpy as np

    from corpus_miner.cli.common import note_read_stats
    from corpus_miner.cli.dedup_common import (
        _check_parameters,
        _index_exists,
        _model,
        load_index,
        save_added_snapshot,
        write_flagged,
    )
    from corpus_miner.dedup.incremental import refuse_absorbed
    from corpus_miner.dedup.result import DedupResult
    from corpus_miner.errors import InputError
    from corpus_miner.io.locations import display, is_remote
    from corpus_miner.io.storage import current_storage_options

    if is_remote(args.index_dir):
        raise ParameterError("index add --engine ray writes a local index folder; add to an "
                             "index at a URL with the local engine")
    started = time.perf_counter()
    existing = _index_exists(args.index_dir)
    model = load_index(args.index_dir) if existing else _model(args)
    if existing:
        _check_parameters(args, args.parser_defaults, model)
    else:
        model.params.validated()
    _connect(args)
    from corpus_miner.ray.documents import input_blocks
    from corpus_miner.ray.lshbloom import RayLSHBloom

    with _errors():
        read = input_blocks(args.inputs, args.text_field, args.id_field, args.skip_bad,
                            current_storage_options())
        sources = [source for source, _, _ in read.digests]
        if len(set(sources)) < len(sources):
            raise InputError("--engine ray digests each file once; a file is given twice (or "
                             "inside two inputs): run it with the local engine")
        inputs = [{"name": display(source), "digest": f"{value:016x}", "documents": documents}
                  for source, value, documents in read.digests]
        if existing and not args.force:
            refuse_absorbed(model.snapshots_, inputs)
        n_documents = sum(item["documents"] for item in inputs)
        if not existing and not n_documents:
            raise InputError("no documents in the inputs; nothing to index")
        if args.add_what == "unique" and not existing and args.expected_items is None:
            model.set_params(expected_items=max(n_documents, 1))  # sized by the first snapshot
        on_ray = RayLSHBloom.from_state(model.to_state(), copy=False) if existing \
            else RayLSHBloom(**model.get_params())
        # a new index is sized by its first snapshot, as `dedup` sizes its filter, unless
        # --expected-items or --add unique (then it grows from expected_items)
        update = existing or args.expected_items is not None or args.add_what == "unique"
        _, found, texts_read, _ = on_ray._decide(read.refs, "text", "id", update,
                                                 args.add_what)
    note_read_stats(args, read.stats)
    named: list | None = [] if on_ray.mode_ == "minhash_lsh" else None
    answer = DedupResult.concat(found or [DedupResult(np.zeros(0, bool), duplicate_of_id=named)])
    written = write_flagged(args, answer, texts_read, "index add", total_rows=len(answer))
    return save_added_snapshot(args, on_ray, inputs, answer, written, started, "ray")


def add_ray_arguments(parser: argparse.ArgumentParser) -> None:
    """--engine local|ray and --address, for a command that runs locally or on Ray only."""
    group = parser.add_argument_group("engine")
    group.add_argument("--engine", choices=("local", "ray"), default="local",
                       help="local (default: in this process) or ray (needs the `ray` extra; "
                       "same output)")
    group.add_argument("--address", default=None, metavar="auto|ray://HOST:PORT",
                       help="Ray cluster to join with --engine ray (default: start a local one "
                       "with this machine's cores); the input paths must be readable by every "
                       "worker")


def run_index_build(args: argparse.Namespace) -> int:
    """index build: band keys in Ray tasks, the index filled by the local LSHBloom on the
    driver as the local command fills it, each file's digest computed where it is read."""
    import time

    import pyarrow as pa

    from corpus_miner.cli.common import note_read_stats
    from corpus_miner.cli.dedup_common import _model, save_built_index
    from corpus_miner.errors import InputError
    from corpus_miner.io.locations import display
    from corpus_miner.io.storage import current_storage_options

    started = time.perf_counter()
    model = _model(args)
    params = model.params.validated()
    _connect(args)
    from corpus_miner.ray.dedup import block_keys, concatenated
    from corpus_miner.ray.documents import input_blocks

    with _errors():
        read = input_blocks(args.inputs, args.text_field, args.id_field, args.skip_bad,
                            current_storage_options())
        keys, ids, _ = block_keys(read.refs, params)
    note_read_stats(args, read.stats)
    sources = [source for source, _, _ in read.digests]
    if len(set(sources)) < len(sources):
        raise InputError("--engine ray indexes each file once; a file is given twice (or inside "
                         "two inputs): run it with the local engine")
    if args.expected_items is not None or params.mode == "minhash_lsh":
        for block, named in zip(keys, ids, strict=True):  # grows as needed: partial_fit's steps
            if not model.is_fitted():
                model._start(None)
            model._add(model._checked_keys(block), named, detect=False)
    elif keys:  # the filter sized from the input
        model._fit_keys(concatenated(keys, params), pa.chunked_array(ids, pa.string()))
    if not model.is_fitted():
        raise InputError("no documents in the inputs; nothing to index")
    inputs = [{"name": display(source), "digest": f"{value:016x}", "documents": documents}
              for source, value, documents in read.digests]
    return save_built_index(args, model, inputs, started)


def _errors():
    from corpus_miner.ray.documents import one_line_errors

    return one_line_errors()


def _refuse(args: argparse.Namespace, *options: str) -> None:
    for option in options:
        value = getattr(args, option.lstrip("-").replace("-", "_"), None)
        if value not in (None, False, (), []):
            raise ParameterError(f"{option} is not available with --engine ray yet; run it "
                                 "with the local engine")


def _note_reading(args: argparse.Namespace, read, miner) -> None:
    """What the workers' readers tolerated (printed after the run, as the local engine does),
    and the local miner's note when no phrase can be frequent."""
    from corpus_miner.cli.common import note_read_stats

    note_read_stats(args, read.stats)
    if miner.stats_.get("note") is None and args.sigma > read.stats.documents:
        miner.stats_["note"] = (f"sigma={args.sigma} exceeds the {read.stats.documents} "
                                "documents: no phrase can be frequent")
