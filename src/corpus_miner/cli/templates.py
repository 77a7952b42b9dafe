"""`corpus-miner templates INPUT... -o templates.jsonl`: templates with slots.

Also the options that `report` and `clean` share for them (--slots, --templates FILE, --max-gap)
and the step both run: the template occurrences of the corpus, mined or read from a file.
"""

from __future__ import annotations

import sys

from corpus_miner.cli.outputs import Output
from corpus_miner.errors import ParameterError

OUTPUTS = (Output("output", "-o", suffixes=(".jsonl", ".jsonl.gz"),
                  hint="templates are written as .jsonl or .jsonl.gz", stdout=True,
                  default_stdout=True),)


def add_template_arguments(parser, mining: bool = True) -> None:
    """--max-gap and --typed-min-length (all), --slots and --templates (report, clean)."""
    if not mining:
        parser.add_argument("--slots", action="store_true",
                            help="also mine templates with slots (boilerplate with variable "
                            "parts: dates, numbers, names) in the same run and handle their "
                            "anchors and fillers; local engine only")
        parser.add_argument("--templates", default=None, metavar="FILE",
                            help="apply the templates of this file (output of `corpus-miner "
                            "templates`, possibly edited) instead of mining them")
    parser.add_argument("--max-gap", type=int, default=5,
                        help="longest free slot between two anchors of a template, in tokens "
                        "(default 5)")
    parser.add_argument("--typed-min-length", type=int, default=3,
                        help="shortest repeated run (numbers and month names counted as "
                        "their class) that seeds a template, in tokens (default 3)")


def register(subparsers) -> None:
    from corpus_miner.cli.common import add_input_arguments

    parser = subparsers.add_parser(
        "templates", help="find templates with slots (boilerplate with variable parts)",
        description="Find boilerplate with variable parts ('updated on <month> <num> <num> by', "
        "'page <num> of <num>', 'written by <*> on <month> <num> <num>'): anchors with typed "
        "slots (numbers, month names) and free slots of 1 to --max-gap tokens, each template "
        "in at least SIGMA documents, every slot taking varied values. One JSON row per "
        "template: pattern, df, occurrences, tokens covered, per slot the length histogram, "
        "distinct and top fillers and a type, examples, and what it subsumes.")
    add_input_arguments(parser)
    parser.add_argument("--sigma", type=int, default=20,
                        help="a template occurs in at least SIGMA documents (default 20)")
    parser.add_argument("--min-length", type=int, default=10,
                        help="length of the exact phrases listed in `subsumes` (default 10)")
    add_template_arguments(parser)
    parser.add_argument("-o", "--output", default=None,
                        help="output file: .jsonl or .jsonl.gz (default, or -: JSONL on stdout)")
    parser.set_defaults(handler=run, outputs=OUTPUTS)


def check_template_arguments(args) -> None:
    """Refuse bad template parameters before the tokenization pass."""
    from corpus_miner.templates.params import TemplateParams

    if getattr(args, "engine", "local") != "local" and (
            getattr(args, "slots", False) or getattr(args, "templates", None)):
        raise ParameterError("templates with slots (--slots, --templates) run on the local "
                             "engine only; drop --engine or the template options")
    if getattr(args, "slots", False) and getattr(args, "templates", None):
        raise ParameterError("--slots mines templates and --templates applies a file: use one")
    TemplateParams(sigma=args.sigma, typed_min_length=args.typed_min_length,
                   max_gap=args.max_gap)


def template_occurrences(args, corpus, coverage=None):
    """(TemplateTable, TemplateOccurrences) for report and clean: mined with --slots, read
    with --templates; None without either."""
    from corpus_miner.templates.miner import SlotTemplates

    if getattr(args, "templates", None):
        return read_and_apply(args.templates, corpus)
    if not getattr(args, "slots", False):
        return None
    found = SlotTemplates(sigma=args.sigma, typed_min_length=args.typed_min_length,
                          max_gap=args.max_gap).fit(corpus, coverage)
    return found.templates_, found.occurrences_


def read_and_apply(path, corpus):
    """A templates file applied to `corpus`: every row's pattern and the templates it
    subsumes, each counted for its row."""
    from corpus_miner.corpus import tokenize
    from corpus_miner.templates.miner import apply_patterns
    from corpus_miner.templates.pattern import parse_pattern
    from corpus_miner.templates.result import TemplateTable, read_template_rows

    rows = read_template_rows(path)
    index = {str(word): i for i, word in enumerate(corpus.vocab)}
    patterns, root, kept_rows = [], [], []
    for row in rows:
        texts = [row["pattern"], *row.get("subsumes", {}).get("templates", [])]
        found = [parse_pattern(t, index, len(corpus.vocab), row["max_gap"], tokenize)
                 for t in texts]
        found = [p for p in found if p is not None]
        if not found:
            continue
        for p in found:
            patterns.append(p)
            root.append(len(kept_rows))
        kept_rows.append(row)
    if len(kept_rows) < len(rows):
        print(f"note: {len(rows) - len(kept_rows):,} of {len(rows):,} templates hold a token "
              "this corpus never has, so they cannot occur", file=sys.stderr)
    occ = apply_patterns(corpus, patterns, root)
    return TemplateTable(kept_rows, patterns, root), occ


def run(args) -> int:
    from corpus_miner.cli.common import corpus_from_args
    from corpus_miner.io.atomic import writing_stdout
    from corpus_miner.phrases.miner import BloomSpan
    from corpus_miner.phrases.params import PhraseParams
    from corpus_miner.templates.miner import SlotTemplates
    from corpus_miner.templates.result import write_templates

    check_template_arguments(args)
    PhraseParams(sigma=args.sigma, min_length=args.min_length)
    corpus = corpus_from_args(args)
    from corpus_miner.coverage.coverage import Coverage

    coverage = Coverage.from_miner(BloomSpan(sigma=args.sigma, min_length=args.min_length)
                                   .fit(corpus), corpus)
    found = SlotTemplates(sigma=args.sigma, typed_min_length=args.typed_min_length,
                          max_gap=args.max_gap).fit(corpus, coverage)
    table = found.templates_
    if args.output in (None, "-"):
        import json

        with writing_stdout():
            for row in table.rows:
                sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
            sys.stdout.flush()
    else:
        write_templates(table, args.output)
    where = "stdout" if args.output in (None, "-") else args.output
    print(f"templates: {len(table):,} templates with slots, each in at least {args.sigma} of "
          f"{corpus.n_docs:,} documents, written to {where} "
          f"({found.stats_['seconds_total']:.1f} s)", file=sys.stderr)
    return 0
