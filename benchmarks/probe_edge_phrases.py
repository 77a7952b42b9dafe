"""Probe of a qualification rule, since built into corpus-miner as edge phrases
(`--min-edge-length`, phrases/edges.py): paragraph-edge phrases, for snippets glued to the start
or end of a content paragraph. Plain Python (a brute force of the
definition), added to the removals of any `clean --mode annotate` output and scored.

    python benchmarks/probe_edge_phrases.py --pages P.jsonl.gz [--labels L.jsonl.gz]
        --annotated OUT.jsonl [--sigma 20] [--min-edge-length 5] [--min-length 10]
        [--any-break] [--explain N]

The rule (lines and paragraphs as in docs/how-it-works/line-aware-phrases.md): a token
sequence Q with min_edge_length <= |Q| < min_length is an *edge phrase* when at least sigma
documents have a paragraph whose first line starts with Q, or whose last line ends with Q, the
line being longer than Q and Q meeting the rest of the line at a sentence break: the text
between Q and the next token (start) or the previous token (end) holds one of . ! ? : followed
by whitespace, or a CJK full stop, exclamation, question mark or colon. Start and end are
counted apart. Where a line qualifies on a side, the longest such Q is covered. --any-break
drops the sentence-break condition (to measure what it buys).
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from corpus_miner.corpus.tokenizer import line_starts, token_spans, tokenize  # noqa: E402

from clean_quality import (  # noqa: E402
    GroundTruth,
    Removal,
    explain,
    format_causes,
    loss_causes,
    read_removals,
    score,
)

SENTENCE_BREAK = re.compile(r"[.!?:]\S*\s|[\u3002\uff01\uff1f\uff1a]")


def edge_lines(text: str, any_break: bool = False):
    """(tokens, char starts, char ends, [(side, line start, line end, breaks)]) of one text:
    the first line of each paragraph (side "start") and the last one ("end"); breaks[k] is
    True when token k of the text follows a sentence break (always True with any_break)."""
    tokens = tokenize(text)
    starts, ends = token_spans(text)
    lines, paragraphs = line_starts(text)
    opening = set(paragraphs)
    breaks = [True] * len(tokens) if any_break else [False] + [
        bool(SENTENCE_BREAK.search(text[int(ends[k - 1]):int(starts[k])]))
        for k in range(1, len(tokens))]
    found = []
    for i, first in enumerate(lines):
        end = lines[i + 1] if i + 1 < len(lines) else len(tokens)
        if first in opening:
            found.append(("start", first, end))
        if i + 1 == len(lines) or lines[i + 1] in opening:
            found.append(("end", first, end))
    return tokens, starts, ends, found, breaks


def _pieces(side, first, end, tokens, breaks, min_edge, min_length):
    """(k, piece) for every edge piece of a line that meets the rest at a sentence break."""
    for k in range(min_edge, min(end - first - 1, min_length - 1) + 1):
        if side == "start" and breaks[first + k]:
            yield k, ("start", tuple(tokens[first:first + k]))
        if side == "end" and breaks[end - k]:
            yield k, ("end", tuple(tokens[end - k:end]))


def edge_cover(texts, sigma: int, min_edge: int, min_length: int, any_break: bool = False):
    """(edge phrases: {(side, tokens): df}, per text the covered [start, end) char spans)."""
    docs = [edge_lines(text, any_break) for text in texts]
    documents = defaultdict(set)
    for d, (tokens, _, _, lines, breaks) in enumerate(docs):
        for side, first, end in lines:
            for _, piece in _pieces(side, first, end, tokens, breaks, min_edge, min_length):
                documents[piece].add(d)
    phrases = {piece: len(ds) for piece, ds in documents.items() if len(ds) >= sigma}
    covered = []
    for tokens, starts, ends, lines, breaks in docs:
        spans = []
        for side, first, end in lines:
            longest = max((k for k, piece in _pieces(side, first, end, tokens, breaks, min_edge,
                                                     min_length) if piece in phrases), default=0)
            if longest:
                a, b = (first, first + longest) if side == "start" else (end - longest, end)
                spans.append((int(starts[a]), int(ends[b - 1])))
        covered.append(spans)
    return phrases, covered


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", required=True)
    parser.add_argument("--labels", default=None)
    parser.add_argument("--annotated", required=True, help="clean --mode annotate output")
    parser.add_argument("--sigma", type=int, default=20)
    parser.add_argument("--min-edge-length", type=int, default=5)
    parser.add_argument("--min-length", type=int, default=10)
    parser.add_argument("--any-break", action="store_true")
    parser.add_argument("--explain", type=int, default=0, metavar="N")
    args = parser.parse_args(argv)
    truth = GroundTruth.load(args.pages, args.labels)
    base = read_removals(args.annotated, "annotated", truth)
    phrases, covered = edge_cover([d.text for d in truth.documents], args.sigma,
                                  args.min_edge_length, args.min_length, args.any_break)
    both = {}
    for doc, spans in zip(truth.documents, covered):
        before = base.get(doc.doc_id)
        both[doc.doc_id] = Removal((before.spans if before else []) + spans)
    for name, removals in (("annotated", base), ("with edge phrases", both)):
        result = score(truth, removals)
        kinds = " ".join(f"{k} {v['recall']:.3f}" for k, v in result["kinds"].items())
        print(f"{name}: F1 {result['f1']:.4f} recall {result['recall']:.4f} precision "
              f"{result['precision']:.4f} content loss {result['content_loss']:.3%} {kinds}")
    print(f"{len(phrases):,} edge pieces qualify (every length)")
    print("\n".join(format_causes(truth, loss_causes(truth, both))))
    if args.explain:
        for name, examples in explain(truth, both, args.explain).items():
            print(f"\n{name}:")
            for line in examples:
                print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
