"""`corpus-miner report` (how much repeated text, where) and `corpus-miner clean` (take it out).

Both mine the inputs with BloomSpan at --sigma / --min-length (or apply a reviewed phrase list with
--phrases), compute the exact coverage mask, then read the inputs a second time for the original
text: the report for example contexts and --group-by values, the cleaner to rewrite documents.
"""

from __future__ import annotations

import argparse
import json
import sys

from corpus_miner.cli import engine
from corpus_miner.cli.common import (
    add_input_arguments,
    add_mining_arguments,
    add_record_output_argument,
    corpus_from_args,
    rereadable,
    shard_plan,
    text_argument,
)
from corpus_miner.cli.engine import add_engine_arguments, on_spark
from corpus_miner.cli.outputs import Output
from corpus_miner.errors import InputError, ParameterError


def _add_common(parser: argparse.ArgumentParser, saved_corpus: bool = True) -> None:
    from corpus_miner.phrases.params import CLEAN_MIN_EDGE_LENGTH, CLEAN_MIN_LINE_LENGTH

    parser.set_defaults(line_default=CLEAN_MIN_LINE_LENGTH, edge_default=CLEAN_MIN_EDGE_LENGTH)
    add_input_arguments(parser, saved_corpus)
    add_mining_arguments(parser)
    parser.add_argument("--phrases", default=None, metavar="FILE",
                        help="apply this phrase list (output of `corpus-miner phrases`, possibly "
                        "edited: .jsonl, .jsonl.gz, .tsv, .parquet, or .txt with one phrase per "
                        "line) instead of mining; covered = inside an occurrence of a listed "
                        "phrase (a row with whole_line true: where it is a whole line, with edge "
                        "start or end: at that edge of a paragraph); --sigma, --min-length, "
                        "--min-line-length and --min-edge-length are then ignored")
    from corpus_miner.cli.templates import add_template_arguments

    add_template_arguments(parser, mining=False)


def register(subparsers) -> None:
    from corpus_miner.io.formats import OUTPUT_SUFFIXES

    report = subparsers.add_parser(
        "report", help="how much of the corpus is repeated text, and where (HTML/JSON)",
        description="Mine repeated phrases and report the covered share of the corpus, of each "
        "document and of each group, with the biggest hogs and example contexts.")
    _add_common(report)
    report.add_argument("-o", "--output", default=None, metavar="HTML",
                        help="write the report as one self-contained HTML file")
    report.add_argument("--json", default=None, metavar="FILE",
                        help="write the figures as JSON ('-' for stdout)")
    report.add_argument("--group-by", default=None, metavar="FIELD[:host]", type=text_argument,
                        help="per-group figures by this input field; FIELD:host groups URLs by "
                        "host name")
    report.add_argument("--top", type=int, default=25, help="hogs listed per ranking (25)")
    report.add_argument("--examples", type=int, default=3, help="example contexts per hog (3)")
    report.add_argument("--template-share", type=float, default=0.9,
                        help="documents at or above this covered share count as almost entirely "
                        "template (0.9)")
    report.add_argument("--title", default="Repeated text report", type=text_argument,
                        help="title of the HTML page")
    add_engine_arguments(report, ray=True)
    report.set_defaults(handler=run_report, extra_inputs=("phrases", "templates"), outputs=(
        Output("output", "-o", suffixes=(".html", ".htm"),
               hint="the report is HTML; name it .html (use --json for the figures)"),
        Output("json", "--json", stdout=True)))

    clean = subparsers.add_parser(
        "clean", help="write the corpus back without its repeated text",
        description="Mine repeated phrases (or apply --phrases) and write every document back "
        "(same ids, fields and order) with the covered text removed, masked or annotated.")
    _add_common(clean, saved_corpus=False)
    add_record_output_argument(clean)
    clean.add_argument("--mode", choices=("remove", "mask", "annotate"), default="remove",
                       help="remove: cut covered spans and join the rest cleanly; mask: replace "
                       "them by --mask-text; annotate: keep the text, add junk_spans ([start, end) "
                       "character offsets) and junk_share (default remove)")
    clean.add_argument("--mask-text", default="[…]", type=text_argument,
                       help="replacement in mask mode ([…])")
    clean.add_argument("--keep-first", action="store_true",
                       help="the first document (input order) containing a phrase keeps its "
                       "occurrences of that phrase intact")
    clean.add_argument("--allow", default=None, metavar="FILE",
                       help="phrases never handled (same formats as --phrases): dropped from "
                       "the phrase table and protected wherever they occur in full")
    clean.add_argument("--drop-above", type=float, default=None, metavar="SHARE",
                       help="leave out documents whose handled share of tokens is greater than "
                       "SHARE (0..1)")
    clean.add_argument("--json", default=None, metavar="FILE",
                       help="write the cleaning figures as JSON ('-' for stdout)")
    add_engine_arguments(clean, ray=True)
    clean.set_defaults(handler=run_clean, extra_inputs=("phrases", "allow", "templates"), outputs=(
        Output("output", "-o", suffixes=OUTPUT_SUFFIXES, stdout=True, shardable=True,
               hint=f"use one of {', '.join(OUTPUT_SUFFIXES)}, or - for JSONL on stdout"),
        Output("json", "--json", stdout=True)))


def read_phrase_texts(path: str) -> list[str]:
    """Phrase texts from a phrase file (any format read_phrases reads, .txt included)."""
    from corpus_miner.phrases.result import read_phrases

    return [str(row["phrase"]) for row in read_phrases(path)]


def _check_parameters(args) -> None:
    """Fail on bad parameters before the (long) tokenization pass."""
    from corpus_miner.cli.templates import check_template_arguments

    check_template_arguments(args)
    if args.phrases is None:
        from corpus_miner.cli.common import min_edge_length, min_line_length
        from corpus_miner.phrases.params import PhraseParams

        PhraseParams(sigma=args.sigma, min_length=args.min_length, algorithm=args.algorithm,
                     min_line_length=min_line_length(args), min_edge_length=min_edge_length(args))


def _needs_lines(args) -> bool:
    """Whether the run needs line starts in the corpus: whole-line or edge phrases
    (--min-line-length, --min-edge-length or their defaults, or a phrase file: it may hold such
    rows), or templates with slots (their line-end slots and line test)."""
    from corpus_miner.cli.common import min_line_length

    return (_needs_sentences(args) or min_line_length(args) is not None
            or bool(getattr(args, "slots", False) or getattr(args, "templates", None)))


def _needs_sentences(args) -> bool:
    """Whether the run needs sentence starts in the corpus: edge phrases (--min-edge-length or
    its default, or a phrase file: it may hold edge rows)."""
    from corpus_miner.cli.common import min_edge_length

    return args.phrases is not None or min_edge_length(args) is not None


def _corpus(args, digest: bool = False):
    return corpus_from_args(args, lines=_needs_lines(args), digest=digest,
                            sentences=_needs_sentences(args))


def _coverage(args, corpus):
    from corpus_miner.cli.common import min_edge_length, min_line_length
    from corpus_miner.corpus import tokenize
    from corpus_miner.coverage.coverage import Coverage, phrases_from_rows

    if args.phrases is not None:
        from corpus_miner.phrases.result import read_phrases

        rows = read_phrases(args.phrases)
        table, unmatched = phrases_from_rows(rows, corpus.vocab, tokenize)
        if unmatched:
            print(f"note: {len(unmatched):,} of {len(rows):,} listed phrases contain a token "
                  "this corpus never has, so they cannot occur", file=sys.stderr)
        return Coverage.from_phrase_list(corpus, table)
    from corpus_miner.phrases.miner import BloomSpan

    lines = min_line_length(args)
    if lines is not None and args.min_line_length is None and corpus.line_starts is None:
        print("note: this saved corpus has no line starts (saved by an older corpus-miner), so "
              "no whole-line phrases are mined; tokenize the documents again to have them",
              file=sys.stderr)
        lines = None
    edges = min_edge_length(args)
    if edges is not None and args.min_edge_length is None and (
            corpus.sentence_starts is None or corpus.line_starts is None):
        print("note: this saved corpus has no sentence starts (tokenized without --sentences), "
              "so no edge phrases are mined; tokenize the documents again with --sentences to "
              "have them", file=sys.stderr)
        edges = None
    miner = BloomSpan(sigma=args.sigma, min_length=args.min_length, algorithm=args.algorithm,
                      min_line_length=lines, min_edge_length=edges).fit(corpus)
    return Coverage.from_miner(miner, corpus)


def _original_inputs(args) -> bool:
    from corpus_miner.corpus import is_saved_corpus

    return not (len(args.inputs) == 1 and args.inputs[0] != "-"
                and is_saved_corpus(args.inputs[0]))


def _write_json(data: dict, path: str) -> None:
    from corpus_miner.io.atomic import write_text

    write_text(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def run_report(args) -> int:
    from corpus_miner.cli.templates import template_occurrences
    from corpus_miner.coverage.report import CoverageReport, parse_group_by
    from corpus_miner.io import read_documents
    from corpus_miner.io.digest import checked_reread

    _check_parameters(args)
    if on_spark(args):
        return _report_on_spark(args)
    if args.engine == "ray":
        from corpus_miner.cli.ray_engine import run_report as run_on_ray

        return run_on_ray(args, write_report_outputs)
    parse_group_by(args.group_by)
    again = _original_inputs(args) and rereadable(args.inputs)
    if args.group_by and not again:
        raise ParameterError("--group-by reads the inputs a second time, which a saved corpus "
                             "(no fields), stdin ('-') or a pipe cannot give; use the original "
                             "files")
    # the digest checks the second read (examples, --group-by) against the first
    corpus = _corpus(args, digest=again)
    coverage = _coverage(args, corpus)
    report = CoverageReport(coverage, top=args.top, examples=args.examples,
                            template_share=args.template_share, group_by=args.group_by,
                            title=args.title, inputs=args.inputs)
    found = template_occurrences(args, corpus, coverage)
    if found is not None:
        from corpus_miner.templates.apply import template_mask

        table, occ = found
        report.set_templates(table.rows, template_mask(corpus.n_tokens, occ))
    if again:
        batches = read_documents(args.inputs, text_field=args.text_field,
                                 id_field=args.id_field, skip_bad=args.skip_bad, prefetch=2)
        report.collect(checked_reread(batches, corpus.texts_digest, "report"), corpus.doc_ids)
    else:
        print("note: no example contexts (stdin, a pipe or a saved corpus cannot be read "
              "again)",
              file=sys.stderr)
    write_report_outputs(args, report)
    return 0


def write_report_outputs(args, report) -> None:
    """-o HTML, --json and the terminal summary (both engines)."""
    if args.output is not None:
        report.write_html(args.output)
    if args.json is not None:
        report.write_json(args.json)
    print(report.terminal_summary(), file=sys.stderr)
    written = [p for p in (args.output, args.json) if p not in (None, "-")]
    if written:
        print(f"report: wrote {' and '.join(written)}"
              + (" (open the .html in a browser)" if args.output else ""), file=sys.stderr)


_DONE = {"remove": "removed", "mask": "masked", "annotate": "annotated"}


def run_clean(args) -> int:
    from corpus_miner.cli.templates import template_occurrences
    from corpus_miner.coverage.clean import Cleaner, CleanParams

    _check_parameters(args)
    if on_spark(args):
        return _clean_on_spark(args)
    if args.engine == "ray":
        from corpus_miner.cli.ray_engine import run_clean as run_on_ray

        return run_on_ray(args, finish_clean)
    allow = tuple(read_phrase_texts(args.allow)) if args.allow else ()
    params = CleanParams(args.mode, args.keep_first, allow, args.drop_above, args.mask_text)
    params.validate()
    if not _original_inputs(args):
        raise InputError(f"{args.inputs[0]}: a saved corpus keeps no original text; clean needs "
                         "the original JSONL/Parquet/text inputs")
    if not rereadable(args.inputs):
        raise ParameterError("clean reads its inputs twice (tokens, then text); stdin ('-') "
                             "or a pipe cannot be read twice: save it to a file first")
    corpus = _corpus(args, digest=True)
    coverage = _coverage(args, corpus)
    found = template_occurrences(args, corpus, coverage)
    if found is None:
        cleaner = Cleaner(args.mode, args.keep_first, allow, args.drop_above, args.mask_text)
        cleaner.fit(corpus, coverage)
    else:
        from corpus_miner.templates.apply import TemplateCleaner, add_templates

        cleaner = TemplateCleaner(args.mode, args.keep_first, allow, args.drop_above,
                                  args.mask_text)
        add_templates(cleaner.fit(corpus, coverage), corpus, coverage, *found)
    stats = cleaner.write(args.inputs, args.output, text_field=args.text_field,
                          id_field=args.id_field, skip_bad=args.skip_bad,
                          shards=shard_plan(args))
    finish_clean(args, stats, coverage.share)
    return 0


def finish_clean(args, stats: dict, coverage_share: float) -> None:
    """--json and the summary line of a clean run (both engines)."""
    stats["coverage"] = coverage_share
    stats["handled_share"] = stats["tokens_handled"] / stats["tokens"] if stats["tokens"] else 0.0
    if args.json is not None:
        _write_json(stats, args.json)
    print(f"clean: {stats['documents_written']:,} of {stats['documents']:,} documents written "
          f"to {args.output} ({stats['documents_changed']:,} changed, "
          f"{stats['documents_dropped']:,} dropped); {stats['tokens_handled']:,} of "
          f"{stats['tokens']:,} tokens {_DONE[args.mode]} ({100 * stats['handled_share']:.1f}%)"
          + (f", {stats['tokens_protected']:,} protected" if stats["tokens_protected"] else "")
          + (f"; {stats['documents_not_text']:,} texts that are not strings left as they were"
             if stats["documents_not_text"] else ""), file=sys.stderr)


@engine.ending_the_jvm
def _report_on_spark(args: argparse.Namespace) -> int:
    from corpus_miner.coverage.report import parse_group_by
    from corpus_miner.phrases.params import PhraseParams
    from corpus_miner.spark import documents
    from corpus_miner.spark.apply import documents_report

    engine.refuse_options(args, "--phrases")
    engine.refuse_line_phrases(args)
    PhraseParams(sigma=args.sigma, min_length=args.min_length)
    group_by = parse_group_by(args.group_by)
    spark = engine.spark_session(args)
    with documents.one_line_errors():
        # digested: a unit evicted from the cache and read again must give the same texts
        docs = engine.spark_documents(spark, args, group_by, digested=True)
        miner = engine.spark_mined(args, docs)
        engine.note_reading(args, docs, miner)
        report = documents_report(docs, miner.table_, args.sigma, args.min_length, top=args.top,
                                  examples=args.examples, template_share=args.template_share,
                                  group_by=args.group_by, title=args.title, inputs=args.inputs)
        documents.read_digests(docs, "report")
    write_report_outputs(args, report)
    return 0


@engine.ending_the_jvm
def _clean_on_spark(args: argparse.Namespace) -> int:
    from corpus_miner.coverage.clean import CleanParams
    from corpus_miner.phrases.params import PhraseParams
    from corpus_miner.spark import documents
    from corpus_miner.spark.apply import inputs_cleaner

    engine.refuse_options(args, "--phrases", "--allow", "--keep-first")
    engine.refuse_line_phrases(args)
    PhraseParams(sigma=args.sigma, min_length=args.min_length)
    CleanParams(args.mode, False, (), args.drop_above, args.mask_text).validate()
    spark = engine.spark_session(args)
    with documents.one_line_errors():
        docs = engine.spark_documents(spark, args, digested=True)
        miner = engine.spark_mined(args, docs)
        engine.note_reading(args, docs, miner)
        cleaner, share = inputs_cleaner(docs, miner.table_, args.min_length, mode=args.mode,
                                        mask_text=args.mask_text, drop_above=args.drop_above)
    stats = cleaner.write(args.inputs, args.output, text_field=args.text_field,
                          id_field=args.id_field, skip_bad=args.skip_bad,
                          shards=shard_plan(args))
    finish_clean(args, stats, share)
    return 0
