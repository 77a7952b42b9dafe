"""What `dedup` and the `index` actions share: the model from the options, reading the inputs,
sizing a filter by them, the records selected for writing, and the index folders (loading one,
checking options against it, the read-only `--against` checks) every engine's command uses."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from corpus_miner.cli.common import (
    note_read_stats,
    rereadable,
)
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.io.formats import writes_jsonl
from corpus_miner.io.locations import is_remote

if TYPE_CHECKING:  # the others are imported by the commands that run: --help needs none of them
    from corpus_miner.dedup import LSHBloom
    from corpus_miner.dedup.result import DedupResult
    from corpus_miner.io import ReadStats
    from corpus_miner.io.digest import TextsDigest
    from corpus_miner.io.readers import DocumentBatch, LineBatch
    from corpus_miner.io.writers import Selection
    from corpus_miner.ray.lshbloom import RayLSHBloom


def _model(args: argparse.Namespace) -> LSHBloom:
    from corpus_miner.dedup import LSHBloom

    return LSHBloom(threshold=args.threshold, num_perm=args.num_perm, mode=args.mode,
                    num_bands=args.num_bands, fp_prob=args.fp_prob,
                    shingle_size=args.shingle_size, expected_items=args.expected_items,
                    seed=args.seed, max_shingles=args.max_shingles, sketch=args.sketch,
                    shingle_kind="word" if args.word_shingles else "char")


def _read(args: argparse.Namespace, stats: ReadStats, label: str = "reading",
          jsonl_lines: bool = False):
    """Document batches of the inputs (JSONL as LineBatches with jsonl_lines); a progress bar
    on stderr when it is a terminal."""
    from corpus_miner.io import read_documents
    from corpus_miner.io.progress import byte_progress, input_bytes

    note_read_stats(args, stats)
    batches = read_documents(args.inputs, text_field=args.text_field, id_field=args.id_field,
                             skip_bad=args.skip_bad, stats=stats, prefetch=2,
                             jsonl_lines=jsonl_lines)
    if not sys.stderr.isatty():
        yield from batches
        return
    bar = byte_progress()
    with bar:
        task = bar.add_task(label, total=input_bytes(args.inputs))
        for batch in batches:
            yield batch
            bar.update(task, completed=stats.input_bytes,
                       description=f"{label}: {stats.documents:,} docs")


ADDED_FIELDS = ("is_duplicate", "duplicate_of")


def _selection(batch: DocumentBatch | LineBatch, result: DedupResult,
               annotate: bool) -> Selection:
    import pyarrow as pa

    from corpus_miner.io.writers import Selection

    if not annotate:
        return Selection(batch, keep=result.keep)
    added = {"is_duplicate": pa.array(result.is_duplicate, pa.bool_())}
    if result.duplicate_of_id is not None:
        added["duplicate_of"] = pa.array(result.duplicate_of_id, pa.string())
        return Selection(batch, added=added)
    # lshbloom names no match: a duplicate_of of an earlier minhash_lsh run would contradict
    # the new is_duplicate, so it goes
    return Selection(batch, added=added, dropped=("duplicate_of",))


def write_flagged(args: argparse.Namespace, answer: DedupResult, texts_read, command: str,
                  total_rows: int | None = None) -> int:
    """Read the inputs again, checked against the digest of the first read (`texts_read`), and
    write them with `answer`'s flags (or the unique ones) to args.output: the end of `dedup`
    and `index add|query` on the cluster engines, whose first read happened on the workers.
    The records written."""
    from corpus_miner.cli.common import shard_plan
    from corpus_miner.io import ReadStats, write_records
    from corpus_miner.io.digest import checked_reread

    def tables():
        start = 0
        for batch in checked_reread(_read(args, ReadStats(), "writing"), texts_read, command):
            part = answer.part(start, start + len(batch))
            start += len(batch)
            yield _selection(batch, part, args.annotate)

    return write_records(tables(), args.output, shards=shard_plan(args, total_rows=total_rows))


def save_added_snapshot(args: argparse.Namespace, model: LSHBloom | RayLSHBloom, inputs: list[dict],
                        answer: DedupResult, written: int, started: float, engine: str) -> int:
    """The end of `index add` on a cluster engine: the snapshot recorded, the index saved to
    args.index_dir, the summary line."""
    import time

    from corpus_miner.cli.common import print_summary
    from corpus_miner.dedup.incremental import snapshot_record

    duplicates = int(answer.is_duplicate.sum())
    added = len(answer) - duplicates if args.add_what == "unique" else len(answer)
    model.snapshots_.append(snapshot_record(inputs, len(answer), duplicates, added))
    model.save(args.index_dir)
    print_summary("index add", documents=len(answer), duplicates=duplicates, written=written,
                  indexed=model.n_documents_, snapshots=len(model.snapshots_), engine=engine,
                  seconds=round(time.perf_counter() - started, 3))
    return 0


def _sized_by_input(args: argparse.Namespace, model: LSHBloom, stats: ReadStats, decide=None,
                    on_batch=None):
    """(batch, its DedupResult) pairs when the filter is sized by the document count
    (lshbloom without --expected-items): pass 1 keeps only the band keys (8 bytes x bands per
    document), pass 2 reads the inputs again to write them. To JSONL, pass 2 reads JSONL
    inputs as lines, not parsed, when pass 1 found every non-blank line a record that needed
    no repair and has no is_duplicate or duplicate_of field. Both passes digest what they
    read; a difference (a file replaced or edited in between) stops the output before it is
    renamed into place. Stdin cannot be read twice: its batches (only their lines, to JSONL)
    are kept in memory.

    One pass cannot give the same output: the filter's size decides which unique documents a
    false positive removes, so sizing it from a guess (the input's bytes) or growing it from a
    small first layer keeps fp_prob but flags other documents (--expected-items does that).

    decide(all_keys, ids, digests): how `index add` flags the documents instead of a one-shot
    deduplicate (ids: the batches' ids; digests: a TextsDigest per input, from pass 1);
    on_batch(batch): called on every batch of pass 1 (`dedup --against` queries its indexes)."""
    import numpy as np

    from corpus_miner.io import ReadStats
    from corpus_miner.io.digest import TextsDigest

    bands = model.params.validated().bands_rows[0]
    from_stdin = not rereadable(args.inputs)  # stdin or a pipe
    to_jsonl = writes_jsonl(args.output)
    kept, keys, first = [], [], TextsDigest()
    ids: list = []
    per_input: dict[str, TextsDigest] = {}
    fields: set[str] = set()
    for batch in _read(args, stats, "deduplicating" if from_stdin else "hashing"):
        keys.append(model._band_keys(batch.texts))
        first.update_batch(batch)
        if on_batch is not None:
            on_batch(batch)
        if decide is not None:
            ids.append(batch.ids)
            per_input.setdefault(batch.source, TextsDigest()).update_batch(batch)
        fields.update(batch.records.column_names)
        if from_stdin:
            kept.append(_retained(batch, to_jsonl))
    all_keys = np.concatenate(keys) if keys else np.zeros((0, bands), np.uint64)
    result = model._deduplicate_keys(all_keys) if decide is None \
        else decide(all_keys, ids, per_input)
    if from_stdin:
        yield from _with_results(kept, result)
        return
    as_lines = (to_jsonl and not stats.bad_lines_skipped and not stats.invalid_utf8_replaced
                and not fields.intersection(ADDED_FIELDS))
    second = TextsDigest()
    for batch, part in _with_results(_read(args, ReadStats(), "writing", as_lines), result,
                                     second):
        yield batch, part
    if (second.documents, second.value) != (first.documents, first.value):
        raise InputError(f"the inputs changed between dedup's two reads ({first.documents:,} "
                         f"documents on the first read, {second.documents:,} on the second, other "
                         "texts); nothing was written: run again on files that are not being "
                         "written to")


def _retained(batch: DocumentBatch, to_jsonl: bool) -> DocumentBatch | LineBatch:
    """What a batch kept for writing later needs: to JSONL the lines of a JSONL batch (not its
    parsed fields, unless they show a field to replace), else the batch."""
    from corpus_miner.io.readers import LineBatch

    if to_jsonl and batch.lines is not None \
            and not set(batch.records.column_names).intersection(ADDED_FIELDS):
        return LineBatch(batch.lines, batch.source, batch.first_row)
    return batch


def _with_results(batches, result: DedupResult, digest: TextsDigest | None = None):
    """(batch, its part of result) for consecutive batches; more documents than result has
    means the input grew between the reads."""
    start = 0
    for batch in batches:
        stop = start + len(batch)
        if stop > len(result):
            raise InputError(f"the inputs changed between dedup's two reads (more than the "
                             f"{len(result):,} documents of the first read); nothing was written: "
                             "run again on files that are not being written to")
        if digest is not None:
            digest.update_batch(batch)
        yield batch, result.part(start, stop)
        start = stop


def growth_note(label: str, model: LSHBloom, expected_items: int | None) -> None:
    """Say on stderr when the Bloom filter outgrew its first layer (the promise holds, but one
    filter sized for all documents would be smaller)."""
    if not model.is_fitted() or model.mode_ != "lshbloom":
        return
    bloom = model.to_state().bloom
    if bloom is None or len(bloom.layers) == 1:
        return
    first = bloom.capacity
    sized = f"--expected-items {expected_items:,}" if expected_items else f"{first:,} documents"
    print(f"{label}: note: {model.n_documents_:,} documents outgrew a Bloom filter sized for "
          f"{sized}: it grew to {len(bloom.layers)} layers, {bloom.size_bytes:,} "
          f"bytes (fp_prob still holds; --expected-items {model.n_documents_:,} gives one "
          "smaller filter)", file=sys.stderr)


def save_built_index(args: argparse.Namespace, model: LSHBloom, inputs: list[dict],
                     started: float) -> int:
    """The end of `index build` on every engine: the snapshot of `inputs` recorded, the index
    saved to args.output, the growth note and the summary line."""
    import time

    from corpus_miner.cli.common import print_summary
    from corpus_miner.dedup.incremental import snapshot_record

    model.snapshots_.append(snapshot_record(inputs, model.n_documents_, 0, model.n_documents_))
    model.save(args.output)
    growth_note("index build", model, args.expected_items)
    meta = model.metadata()
    size = meta["bloom"]["size_bytes"] if "bloom" in meta else meta["band_entries"] * 16
    print_summary("index build", documents=model.n_documents_, mode=model.params_.mode,
                  bands=model.bands_, rows=model.rows_, index_bytes=size,
                  seconds=round(time.perf_counter() - started, 3))
    return 0


# argparse dest -> LSHBloom parameter, for the checks of `index add` against an existing index
_MODEL_ARGUMENTS = {"threshold": "threshold", "num_perm": "num_perm", "mode": "mode",
                    "num_bands": "num_bands", "fp_prob": "fp_prob", "sketch": "sketch",
                    "shingle_size": "shingle_size", "expected_items": "expected_items",
                    "seed": "seed", "max_shingles": "max_shingles",
                    "word_shingles": "shingle_kind"}


def load_index(location, mmap: bool = True) -> LSHBloom:
    """The index at a path or URL (a URL is fetched first: its current generation only)."""
    from corpus_miner.dedup import LSHBloom

    if is_remote(location):
        from corpus_miner.io.remote import local_copy

        with local_copy(str(location)) as copy:
            return LSHBloom.load(copy)
    return LSHBloom.load(location, mmap=mmap)


def _index_exists(location) -> bool:
    from pathlib import Path

    from corpus_miner.io.artefact import METADATA_FILE
    from corpus_miner.io.locations import join, local_path

    if is_remote(location):
        from corpus_miner.io.storage import filesystem

        fs, path = filesystem(join(location, METADATA_FILE))
        return bool(fs.exists(path))
    return (Path(local_path(location)) / METADATA_FILE).is_file()


def _check_parameters(args: argparse.Namespace, parser_defaults: dict, model: LSHBloom) -> None:
    """A model argument given with a value other than its default must agree with the index."""
    from corpus_miner.dedup.params import canonical_mode

    params = model.params_
    for dest, name in _MODEL_ARGUMENTS.items():
        value = getattr(args, dest)
        if value == parser_defaults.get(dest):
            continue
        if dest == "word_shingles":
            value = "word" if value else "char"
        elif dest == "mode":
            value = canonical_mode(value)
        if value != getattr(params, name):
            flag = "--" + dest.replace("_", "-")
            raise ParameterError(f"{flag} {value!r} differs from the index's {name} "
                                 f"{getattr(params, name)!r}: an index keeps the parameters it "
                                 "was built with (leave the option out)")


def against_indexes(args: argparse.Namespace) -> list:
    """The --against indexes, loaded (memory-mapped) before any work."""
    locations = getattr(args, "against", None) or ()
    return [load_index(location) for location in locations]


def matches_against(indexes: list, texts):
    """(flagged, names) of documents matching any of `indexes`: names, the id of the matched
    document of the first minhash_lsh index that names one (else None)."""
    import numpy as np

    flagged = np.zeros(len(texts), bool)
    names: list = [None] * len(texts)
    for index in indexes:
        found = index.query(texts)
        if found.duplicate_of_id is not None:
            for i in np.flatnonzero(found.is_duplicate & ~flagged):
                names[i] = found.duplicate_of_id[i]
        flagged |= found.is_duplicate
    return flagged, names


def with_matches(result, flagged, names):
    """A DedupResult with the --against matches flagged too; in minhash_lsh, duplicate_of
    names the index's document where the input had no earlier match."""
    from corpus_miner.dedup.result import DedupResult

    ids = None
    if result.duplicate_of_id is not None:
        ids = [own if own is not None else other
               for own, other in zip(result.duplicate_of_id, names)]
    return DedupResult(result.is_duplicate | flagged, result.duplicate_of, ids, result.cluster)
