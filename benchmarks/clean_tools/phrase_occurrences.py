"""Which phrase each removed token run of a corpus-miner annotate output came from.

    PYTHON phrase_occurrences.py ANNOTATED.jsonl PHRASES.jsonl OUT.jsonl

Run with the Python of the corpus-miner build under test (its tokenizer). For every document,
every occurrence of a listed phrase that lies inside one of its `junk_spans` (coverage is the
union of such occurrences) is written as [start, end, phrase index] in `junk_patterns`.
Standard library and corpus_miner only.
"""
import bisect
import json
import sys

from corpus_miner.corpus import token_spans, tokenize


def main(annotated: str, phrases: str, out: str) -> int:
    by_first: dict[str, list[tuple[tuple[str, ...], int]]] = {}
    with open(phrases, encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            tokens = tuple(tokenize(json.loads(line)["phrase"]))
            if tokens:
                by_first.setdefault(tokens[0], []).append((tokens, index))
    with open(annotated, encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        for line in src:
            record = json.loads(line)
            text, found = record["text"], []
            starts, ends = (a.tolist() for a in token_spans(text))
            for span_start, span_end in record["junk_spans"]:
                first = bisect.bisect_left(starts, span_start)
                last = bisect.bisect_right(ends, span_end)
                run = tokenize(text[starts[first]:ends[last - 1]]) if last > first else []
                for at, token in enumerate(run):
                    for tokens, index in by_first.get(token, ()):
                        if tuple(run[at:at + len(tokens)]) == tokens:
                            found.append([starts[first + at],
                                          ends[first + at + len(tokens) - 1], index])
            dst.write(json.dumps({"id": record["id"], "junk_patterns": found}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
