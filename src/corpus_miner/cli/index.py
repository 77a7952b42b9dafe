"""`corpus-miner index add|merge|info` and `dedup --against`: an index that grows with every
snapshot of a recurring crawl (the library side is corpus_miner.dedup.incremental).

index add writes the new documents' output first and the index's new generation after it, so a
run stopped at any moment leaves the old index or the new one (whole), and an output that is
absent or complete; a run stopped between the two (output written, index not yet switched) is
simply run again.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING

from corpus_miner.cli.common import add_input_arguments, add_record_output_argument, print_summary
from corpus_miner.cli.dedup_common import (  # noqa: F401 - the index helpers, named here too
    _check_parameters,
    _index_exists,
    against_indexes,
    load_index,
    matches_against,
    with_matches,
)
from corpus_miner.cli.engine import add_engine_arguments, ending_the_jvm, on_spark
from corpus_miner.cli.outputs import Output
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.io.locations import display, is_remote

if TYPE_CHECKING:
    from corpus_miner.dedup import LSHBloom

def register(actions, add_model_arguments, records_output: Output) -> None:
    """The add, merge and info actions of `corpus-miner index`."""
    add = actions.add_parser(
        "add", help="add a snapshot to an index, writing its new unique documents",
        description="Check every document of INPUT... against INDEX_DIR and against the earlier "
                    "documents of INPUT (input order); write the unique ones (or all, with "
                    "is_duplicate) to -o, then add the band keys of all of INPUT (or of the "
                    "unique ones, --add unique) to the index as its next generation. A missing "
                    "INDEX_DIR is created with the parameters given; for an existing one they "
                    "must agree with it. An input added before (the index keeps a digest of "
                    "every input) is refused unless --force.")
    add.add_argument("index_dir", metavar="INDEX_DIR",
                     help="index folder (written by `index build`, `index add` or `dedup "
                          "--save-index`; created when missing)")
    add_input_arguments(add, saved_corpus=False)
    add_record_output_argument(add)
    add.add_argument("--annotate", action="store_true",
                     help="keep every document and add is_duplicate (+ duplicate_of in "
                          "minhash_lsh mode) instead of dropping duplicates")
    add.add_argument("--add", choices=("all", "unique"), default="all", dest="add_what",
                     help="whose band keys go into the index: all documents of INPUT (what one "
                          "`dedup` over every snapshot holds, so the flags equal its flags) or "
                          "only the unique ones (then a document is checked against the earlier "
                          "unique ones) (default: %(default)s)")
    add.add_argument("--force", action="store_true",
                     help="add inputs even when the index absorbed the same documents before")
    add_model_arguments(add)
    add_engine_arguments(add, ray=True)
    add.set_defaults(handler=run_index_add, parser_defaults=_defaults_of(add), outputs=(
        records_output, Output("index_dir", "INDEX_DIR", folder=True)))

    merge = actions.add_parser(
        "merge", help="merge indexes built with identical parameters",
        description="Write the union of INDEX_DIR... (in the order given) to -o. The indexes "
                    "must share every parameter that decides band keys and the Bloom filter's "
                    "plan; a mismatch is refused naming the parameter and both values.")
    merge.add_argument("indexes", nargs="+", metavar="INDEX_DIR", help="index folders to merge")
    merge.add_argument("-o", "--output", required=True, metavar="INDEX_DIR",
                       help="index folder to write (a new generation where one exists)")
    merge.set_defaults(handler=run_index_merge, outputs=(Output("output", "-o", folder=True),),
                       extra_inputs=("indexes",))

    info = actions.add_parser(
        "info", help="describe an index: parameters, documents, snapshots, size, fill",
        description="Print what INDEX_DIR holds: its parameters, documents, the snapshots it "
                    "absorbed (when, inputs and their digests, documents), its bytes, and for a "
                    "Bloom filter each layer's fill and the false-positive rate now.")
    info.add_argument("index_dir", metavar="INDEX_DIR", help="index folder")
    info.add_argument("--json", action="store_true", help="print the description as JSON")
    info.set_defaults(handler=run_index_info, outputs=())


def run_index_add(args: argparse.Namespace) -> int:
    from corpus_miner.dedup.generations import writing

    with writing(args.index_dir):  # another add waits: it must build on this one's generation
        if on_spark(args):
            return _add_on_spark(args)
        if args.engine == "ray":
            from corpus_miner.cli.ray_engine import run_index_add as run_on_ray

            return run_on_ray(args)
        return _add(args)


def _add(args: argparse.Namespace) -> int:
    import pyarrow as pa

    from corpus_miner.cli.common import shard_plan
    from corpus_miner.cli.dedup_common import _model, _selection, _sized_by_input
    from corpus_miner.dedup.incremental import refuse_absorbed, snapshot_record
    from corpus_miner.io import ReadStats, write_records

    started = time.perf_counter()
    existing = _index_exists(args.index_dir)
    if existing:
        model = load_index(args.index_dir)
        _check_parameters(args, args.parser_defaults, model)
    else:
        model = _model(args)
    record: dict = {}

    def decide(all_keys, ids, digests):
        inputs = [{"name": display(source), "digest": f"{digest.value:016x}",
                   "documents": digest.documents} for source, digest in digests.items()]
        if existing and not args.force:
            refuse_absorbed(model.snapshots_, inputs)
        if not existing and not len(all_keys):
            raise InputError("no documents in the inputs; nothing to index")
        id_column = pa.chunked_array(ids, pa.string()) if ids else None
        if args.add_what == "unique":
            if not existing and args.expected_items is None:  # sized by the first snapshot
                model.set_params(expected_items=max(len(all_keys), 1))
            result = model._deduplicate_keys(all_keys, id_column, update=True, add="unique")
        elif existing or args.expected_items is not None:
            result = model._deduplicate_keys(all_keys, id_column, update=True)
        else:  # a new index sized by its first snapshot, as `dedup` sizes its filter
            result = model._deduplicate_keys(all_keys, id_column)
        duplicates = int(result.is_duplicate.sum())
        added = len(result) - duplicates if args.add_what == "unique" else len(result)
        record.update(snapshot_record(inputs, len(result), duplicates, added))
        return result

    stats = ReadStats()
    counts = {"documents": 0, "duplicates": 0}

    def tables():
        for batch, result in _sized_by_input(args, model, stats, decide):
            counts["documents"] += len(result)
            counts["duplicates"] += int(result.is_duplicate.sum())
            yield _selection(batch, result, args.annotate)

    written = write_records(tables(), args.output,
                            shards=shard_plan(args, total_rows=lambda: record["documents"]))
    model.snapshots_.append(record)
    model.save(args.index_dir)
    print_summary("index add", documents=counts["documents"], duplicates=counts["duplicates"],
                  written=written, indexed=model.n_documents_,
                  snapshots=len(model.snapshots_), seconds=round(time.perf_counter() - started, 3))
    return 0


def _add_on_spark(args: argparse.Namespace) -> int:
    """index add with the flags and the index computed on Spark (SparkLSHBloom.deduplicate with
    update=True: the index's layers filled by partition-local filters); the driver reads the
    inputs first for their digests (an input absorbed before is refused before the JVM starts)
    and again to write the output, checked against what the executors read."""
    from corpus_miner.cli.dedup_common import _model, _read
    from corpus_miner.io import ReadStats
    from corpus_miner.io.digest import TextsDigest

    if is_remote(args.index_dir):
        raise ParameterError("index add --engine spark writes a local index folder; add to an "
                             "index at a URL with the local engine")
    existing = _index_exists(args.index_dir)
    model = load_index(args.index_dir) if existing else _model(args)
    if existing:
        _check_parameters(args, args.parser_defaults, model)
    else:
        model.params.validated()  # a bad parameter is one line before the JVM starts
    digests: dict = {}
    for batch in _read(args, ReadStats(), "digesting"):
        digests.setdefault(batch.source, TextsDigest()).update_batch(batch)
    inputs = [{"name": display(source), "digest": f"{digest.value:016x}",
               "documents": digest.documents} for source, digest in digests.items()]
    if existing and not args.force:
        from corpus_miner.dedup.incremental import refuse_absorbed

        refuse_absorbed(model.snapshots_, inputs)
    n_documents = sum(item["documents"] for item in inputs)
    if not existing and not n_documents:
        raise InputError("no documents in the inputs; nothing to index")
    if args.add_what == "unique" and not existing and args.expected_items is None:
        model.set_params(expected_items=max(n_documents, 1))  # sized by the first snapshot
    return ending_the_jvm(lambda a: _spark_add(a, model, existing, inputs))(args)


def _spark_add(args: argparse.Namespace, model: LSHBloom, existing: bool,
               inputs: list[dict]) -> int:
    from corpus_miner.cli import engine
    from corpus_miner.cli.common import note_read_stats
    from corpus_miner.cli.dedup_common import save_added_snapshot, write_flagged
    from corpus_miner.dedup.result import DedupResult
    from corpus_miner.spark import SparkLSHBloom, documents

    started = time.perf_counter()
    on_spark = SparkLSHBloom.from_state(model.to_state(), copy=False) if existing \
        else SparkLSHBloom(**model.get_params())
    # a new index is sized by its first snapshot, as `dedup` sizes its filter, unless
    # --expected-items or --add unique (then it grows from expected_items)
    update = existing or args.expected_items is not None or args.add_what == "unique"
    spark = engine.spark_session(args)
    with documents.one_line_errors():
        docs = engine.spark_documents(spark, args, digested=True)
        first = documents.unit_offsets(docs)
        ordered = documents.with_row_ids(docs, first)
        result = on_spark.deduplicate(ordered, text_col="text", id_col="id", order_col="order",
                                      annotate=True, update=update, add=args.add_what)
        columns = ["is_duplicate"] + (["duplicate_of"] if "duplicate_of" in result.columns
                                      else [])
        flags = result.orderBy("order").select(*columns).toArrow()
        note_read_stats(args, documents.read_stats(docs))
        texts_read = documents.read_digests(docs, "index add")
    is_duplicate = flags.column("is_duplicate").to_numpy(zero_copy_only=False)
    duplicate_of = flags.column("duplicate_of").to_pylist() if len(columns) > 1 else None
    answer = DedupResult(is_duplicate, duplicate_of_id=duplicate_of)
    written = write_flagged(args, answer, texts_read, "index add", total_rows=len(answer))
    return save_added_snapshot(args, on_spark, inputs, answer, written, started, "spark")


def run_index_merge(args: argparse.Namespace) -> int:
    from corpus_miner.dedup import LSHBloom
    from corpus_miner.dedup.incremental import merge_states

    started = time.perf_counter()
    state = load_index(args.indexes[0]).to_state()
    name = display(args.indexes[0])
    for location in args.indexes[1:]:
        other = load_index(location).to_state()
        state = merge_states(state, other, (name, display(location)))
        name = "the indexes before it"
    merged = LSHBloom.from_state(state, copy=False)
    merged.save(args.output)
    print_summary("index merge", indexes=len(args.indexes), documents=merged.n_documents_,
                  mode=merged.params_.mode, seconds=round(time.perf_counter() - started, 3))
    return 0


def run_index_info(args: argparse.Namespace) -> int:
    from corpus_miner.dedup.incremental import describe

    info = describe(load_index(args.index_dir).to_state())
    info["index"] = display(args.index_dir)
    if args.json:
        print(json.dumps(info, indent=2, sort_keys=True))
        return 0
    params = info["params"]
    lines = [f"index {info['index']}: {info['mode']}, {info['documents']:,} documents, "
             f"{info['bytes']:,} bytes ({info['bytes'] / max(info['documents'], 1):.1f} per "
             "document)",
             f"parameters: threshold {params['threshold']}, {info['bands']} bands x "
             f"{info['rows']} rows, sketch {params['sketch']} ({params['num_perm']}), "
             f"{params['shingle_kind']} shingles of {params['shingle_size']}, seed "
             f"{params['seed']}"]
    if info["mode"] == "lshbloom":
        lines.append(f"false positives per unique document: now {info['fp_now']:.3g} "
                     f"(estimated from the bits set), at most {info['fp_bound']:.3g} when every "
                     f"layer is full (fp_prob {info['fp_prob']:g})")
        for i, layer in enumerate(info["layers"]):
            lines.append(f"  layer {i}: {layer['documents']:,} of {layer['capacity']:,} "
                         f"documents, {layer['bytes']:,} bytes, {layer['num_hashes']} hashes, "
                         f"{layer['fill']:.1%} of bits set")
    else:
        lines.append(f"band table: {info['band_entries']:,} band keys")
    lines.append(f"snapshots: {len(info['snapshots'])}")
    for snapshot in info["snapshots"]:
        names = ", ".join(f"{item.get('name')} ({item.get('digest')})"
                          for item in snapshot.get("inputs", ()))
        lines.append(f"  {snapshot.get('time')}: {snapshot.get('documents', 0):,} documents, "
                     f"{snapshot.get('duplicates', 0):,} duplicates, {snapshot.get('added', 0):,} "
                     f"added; {names}")
    print("\n".join(lines))
    return 0


def add_against_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--against", nargs="+", metavar="INDEX_DIR", default=None,
                        help="also drop documents that match any of these indexes (read-only; "
                             "e.g. benchmark sets to decontaminate against, or earlier snapshots "
                             "not merged into one index)")


def _defaults_of(parser: argparse.ArgumentParser) -> dict:
    return {action.dest: action.default for action in parser._actions}
