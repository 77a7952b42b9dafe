"""`corpus-miner dedup` and `corpus-miner index build|query`: near-duplicate removal (LSHBloom).

dedup keeps the first document of every group of near-duplicates (input order) and writes the
others out, with all their fields; --annotate keeps every document and adds `is_duplicate` (and
`duplicate_of`, the id of the earliest matching earlier document, in mode minhash_lsh).
index build fits a reference corpus and saves it; index query matches new documents against it.
"""

from __future__ import annotations

import argparse
import sys
import time

from corpus_miner.cli import engine
from corpus_miner.cli import index as index_actions
from corpus_miner.cli.common import (
    add_input_arguments,
    add_record_output_argument,
    note_read_stats,
    print_summary,
    shard_plan,
)
from corpus_miner.cli.dedup_common import (  # noqa: F401 - also used by prewarm
    _model,
    _read,
    _retained,
    _selection,
    _sized_by_input,
    _with_results,
    growth_note,
    save_built_index,
    write_flagged,
)
from corpus_miner.cli.engine import add_engine_arguments, on_spark
from corpus_miner.cli.outputs import Output
from corpus_miner.dedup.params import DEFAULT_FP_PROB, DEFAULT_SKETCH, MODE_ALIASES
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.io.formats import OUTPUT_SUFFIXES
from corpus_miner.io.locations import display


def _add_model_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("near-duplicate parameters")
    group.add_argument("--mode", default="lshbloom", choices=sorted(MODE_ALIASES),
                       help="lshbloom: Bloom filter of band keys (small index); minhash_lsh: exact "
                            "band table (names the matched document) (default: %(default)s)")
    group.add_argument("--threshold", type=float, default=0.85,
                       help="Jaccard similarity of character shingle sets above which documents "
                            "are near-duplicates (default: %(default)s)")
    group.add_argument("--num-perm", type=int, default=256,
                       help="signature length (default: %(default)s)")
    group.add_argument("--num-bands", type=int, default=None,
                       help="LSH bands (rows = num_perm // bands); default: chosen from "
                            "--threshold to minimise false positives + false negatives")
    group.add_argument("--sketch", choices=("minhash", "oph"), default=DEFAULT_SKETCH,
                       help="oph: one permutation hashing (fast), minhash: classic "
                            "(default: %(default)s)")
    group.add_argument("--fp-prob", type=float, default=DEFAULT_FP_PROB,
                       help="chance that a unique document is removed by a Bloom false positive, "
                            "per document (default: %(default)s)")
    group.add_argument("--expected-items", type=int, default=None,
                       help="documents the Bloom filter is sized for; given, dedup streams with "
                            "bounded memory (more documents add layers to the filter, fp_prob "
                            "still holds); default: counted from the input")
    group.add_argument("--shingle-size", type=int, default=5,
                       help="characters (or words) per shingle (default: %(default)s)")
    group.add_argument("--word-shingles", action="store_true",
                       help="shingle words instead of characters")
    group.add_argument("--max-shingles", type=int, default=None,
                       help="cap per document: keep its MAX smallest distinct shingle hashes")
    group.add_argument("--seed", type=int, default=1, help="hash seed (default: %(default)s)")


RECORDS_OUTPUT = Output("output", "-o", suffixes=OUTPUT_SUFFIXES, stdout=True, shardable=True,
                        hint=f"use one of {', '.join(OUTPUT_SUFFIXES)}, or - for JSONL on stdout")


def register(subparsers) -> None:
    dedup = subparsers.add_parser(
        "dedup", help="remove near-duplicate documents (LSHBloom)",
        description="Write the documents of INPUT... that are not near-duplicates of an earlier "
                    "document (input order), keeping all their fields.")
    add_input_arguments(dedup, saved_corpus=False)
    add_record_output_argument(dedup)
    dedup.add_argument("--annotate", action="store_true",
                       help="keep every document and add is_duplicate (+ duplicate_of in "
                            "minhash_lsh mode) instead of dropping duplicates")
    dedup.add_argument("--save-index", metavar="DIR",
                       help="also save the index of all input documents (for `index query`)")
    index_actions.add_against_argument(dedup)
    _add_model_arguments(dedup)
    add_engine_arguments(dedup, ray=True)
    dedup.set_defaults(handler=run_dedup, outputs=(
        RECORDS_OUTPUT, Output("save_index", "--save-index", folder=True)),
        extra_inputs=("against",))

    index = subparsers.add_parser("index", help="build a near-duplicate index, or query one",
                                  description="Fit a reference corpus once, query new data later.")
    actions = index.add_subparsers(dest="index_command", metavar="ACTION")
    build = actions.add_parser("build", help="index a reference corpus and save it",
                               description="Compute band keys of INPUT... and save the index.")
    add_input_arguments(build, saved_corpus=False)
    build.add_argument("-o", "--output", required=True, metavar="INDEX_DIR",
                       help="index folder to write (replaced atomically)")
    _add_model_arguments(build)
    from corpus_miner.cli.ray_engine import add_ray_arguments

    add_ray_arguments(build)
    build.set_defaults(handler=run_index_build, outputs=(Output("output", "-o", folder=True),))

    query = actions.add_parser(
        "query", help="drop documents that are near-duplicates of an indexed corpus",
        description="Write the documents of INPUT... that match nothing in INDEX_DIR (the index "
                    "is read-only: documents of INPUT are not matched against each other).")
    query.add_argument("index_dir", metavar="INDEX_DIR", help="folder written by `index build`")
    add_input_arguments(query, saved_corpus=False)
    add_record_output_argument(query)
    query.add_argument("--annotate", action="store_true",
                       help="keep every document and add is_duplicate (+ duplicate_of)")
    add_ray_arguments(query)
    query.set_defaults(handler=run_index_query, outputs=(RECORDS_OUTPUT,),
                       extra_inputs=("index_dir",))
    index_actions.register(actions, _add_model_arguments, RECORDS_OUTPUT)


def run_dedup(args: argparse.Namespace) -> int:
    if on_spark(args):
        return _run_on_spark(args)
    if args.engine == "ray":
        from corpus_miner.cli.ray_engine import run_dedup as run_on_ray

        return run_on_ray(args)
    from corpus_miner.io import ReadStats, write_records

    started = time.perf_counter()
    against = index_actions.against_indexes(args)
    model = _model(args)
    stats = ReadStats()
    counts = {"documents": 0, "duplicates": 0}
    needs_count = model.params.validated().mode == "lshbloom" and args.expected_items is None
    if args.shards is not None and not needs_count:
        raise ParameterError("--shards N needs the number of documents before writing, and "
                             "this dedup streams (--expected-items, or mode minhash_lsh): use "
                             "--shard-size")
    shards = shard_plan(args, total_rows=lambda: model.n_documents_)

    def tables():
        if needs_count and against:
            import numpy as np

            matches: list = []

            def decide(all_keys, ids, digests):
                flagged = np.concatenate([m[0] for m in matches]) if matches else np.zeros(0, bool)
                names = [name for m in matches for name in m[1]]
                return index_actions.with_matches(model._deduplicate_keys(all_keys), flagged,
                                                  names)
            def on_batch(batch):
                matches.append(index_actions.matches_against(against, batch.texts))
            pairs = _sized_by_input(args, model, stats, decide, on_batch)
        elif needs_count:
            pairs = _sized_by_input(args, model, stats)
        else:
            model.partial_fit([])  # an empty growing index, also when no document comes
            pairs = ((batch, model.deduplicate(batch.texts, batch.ids, update=True))
                     for batch in _read(args, stats, "deduplicating"))
        for batch, result in pairs:
            if against and not needs_count:
                result = index_actions.with_matches(
                    result, *index_actions.matches_against(against, batch.texts))
            counts["documents"] += len(result)
            counts["duplicates"] += int(result.is_duplicate.sum())
            yield _selection(batch, result, args.annotate)

    written = write_records(tables(), args.output, shards=shards)
    if args.save_index:
        model.save(args.save_index)
    growth_note("dedup", model, args.expected_items)
    print(f"dedup: {counts['duplicates']:,} of {counts['documents']:,} documents are "
          f"near-duplicates of an earlier one (similarity >= {model.threshold:g}, {model.mode_}); "
          f"{written:,} written{' with is_duplicate' if args.annotate else ''} to {args.output} "
          f"in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


def run_index_build(args: argparse.Namespace) -> int:
    if args.engine == "ray":
        from corpus_miner.cli.ray_engine import run_index_build as run_on_ray

        return run_on_ray(args)
    import numpy as np
    import pyarrow as pa

    from corpus_miner.io import ReadStats
    from corpus_miner.io.digest import TextsDigest

    started = time.perf_counter()
    model = _model(args)
    stats = ReadStats()
    digests: dict = {}  # per input, so that `index add` refuses an input indexed here

    def batches():
        for batch in _read(args, stats, "indexing"):
            digests.setdefault(batch.source, TextsDigest()).update_batch(batch)
            yield batch
    if args.expected_items is not None or model.params.validated().mode == "minhash_lsh":
        for batch in batches():  # the index grows as needed: stream
            model.partial_fit(batch.texts, batch.ids)
    else:  # size the filter from the input: keep only the band keys (8 bytes x bands per doc)
        keys, ids = [], []
        for batch in batches():
            keys.append(model._band_keys(batch.texts))
            ids.append(batch.ids)
        if keys:
            model._fit_keys(np.concatenate(keys), pa.chunked_array(ids))
    if not model.is_fitted():
        raise InputError("no documents in the inputs; nothing to index")
    inputs = [{"name": display(source), "digest": f"{digest.value:016x}",
               "documents": digest.documents} for source, digest in digests.items()]
    return save_built_index(args, model, inputs, started)


def run_index_query(args: argparse.Namespace) -> int:
    if args.engine == "ray":
        from corpus_miner.cli.ray_engine import run_index_query as run_on_ray

        return run_on_ray(args)
    from corpus_miner.io import ReadStats, write_records

    if args.shards is not None:
        raise ParameterError("--shards N needs the number of documents before writing, and "
                             "index query streams: use --shard-size")
    started = time.perf_counter()
    model = index_actions.load_index(args.index_dir)  # memory-mapped; a URL is fetched first
    stats = ReadStats()
    counts = {"documents": 0, "duplicates": 0}

    def tables():
        for batch in _read(args, stats, "querying"):
            result = model.query(batch.texts, batch.ids)
            counts["documents"] += len(result)
            counts["duplicates"] += int(result.is_duplicate.sum())
            yield _selection(batch, result, args.annotate)

    written = write_records(tables(), args.output, shards=shard_plan(args))
    print_summary("index query", documents=counts["documents"], duplicates=counts["duplicates"],
                  written=written, indexed=model.n_documents_, mode=model.params_.mode,
                  seconds=round(time.perf_counter() - started, 3))
    return 0


def _spark_matches(indexes: list, ordered):
    """cli.index.matches_against on Spark: (flagged, names) of the rows of `ordered` (in its
    `order`) matching any of `indexes`, each queried read-only by SparkLSHBloom.query."""
    import numpy as np

    from corpus_miner.spark import SparkLSHBloom

    flagged: np.ndarray | None = None
    names: list = []
    for index in indexes:
        found = SparkLSHBloom.from_state(index.to_state(), copy=False).query(
            ordered, text_col="text", id_col="id")
        named = "duplicate_of" in found.columns
        table = found.orderBy("order").select(
            "is_duplicate", *(["duplicate_of"] if named else [])).toArrow()
        hits = table.column("is_duplicate").to_numpy(zero_copy_only=False).astype(bool)
        if flagged is None:
            flagged, names = np.zeros(len(hits), bool), [None] * len(hits)
        if named:
            ids = table.column("duplicate_of").to_pylist()
            for i in np.flatnonzero(hits & ~flagged):
                names[i] = ids[i]
        flagged |= hits
    return flagged, names


@engine.ending_the_jvm
def _run_on_spark(args: argparse.Namespace) -> int:
    from corpus_miner.dedup.result import DedupResult
    from corpus_miner.spark import SparkLSHBloom, documents

    started = time.perf_counter()
    model = SparkLSHBloom(threshold=args.threshold, num_perm=args.num_perm, mode=args.mode,
                          num_bands=args.num_bands, fp_prob=args.fp_prob,
                          shingle_size=args.shingle_size, seed=args.seed,
                          expected_items=args.expected_items,
                          max_shingles=args.max_shingles, sketch=args.sketch,
                          shingle_kind="word" if args.word_shingles else "char")
    model.params.validated()  # a bad parameter is one line before the JVM starts
    against = index_actions.against_indexes(args)  # and a bad --against folder
    spark = engine.spark_session(args)
    with documents.one_line_errors():
        docs = engine.spark_documents(spark, args, digested=True)
        first = documents.unit_offsets(docs)
        ordered = documents.with_row_ids(docs, first)
        result = model.deduplicate(ordered, text_col="text", id_col="id", order_col="order",
                                   annotate=True).orderBy("order")
        columns = ["is_duplicate"] + (["duplicate_of"] if "duplicate_of" in result.columns
                                      else [])
        flags = result.select(*columns).toArrow()
        matches = _spark_matches(against, ordered) if against else None
        note_read_stats(args, documents.read_stats(docs))
        texts_read = documents.read_digests(docs, "dedup")
    is_duplicate = flags.column("is_duplicate").to_numpy(zero_copy_only=False)
    duplicate_of = flags.column("duplicate_of").to_pylist() if len(columns) > 1 else None
    answer = DedupResult(is_duplicate, duplicate_of_id=duplicate_of)
    if matches is not None:
        answer = index_actions.with_matches(answer, *matches)
        is_duplicate = answer.is_duplicate
    written = write_flagged(args, answer, texts_read, "dedup", total_rows=len(is_duplicate))
    if args.save_index:
        model.save(args.save_index)
    print(f"dedup: {int(is_duplicate.sum()):,} of {len(is_duplicate):,} documents are "
          f"near-duplicates of an earlier one (similarity >= {args.threshold:g}, {args.mode}, "
          f"Spark); {written:,} written{' with is_duplicate' if args.annotate else ''} to "
          f"{args.output} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0
