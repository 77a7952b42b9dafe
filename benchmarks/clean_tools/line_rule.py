"""The line rule: drop every line (whitespace stripped) found in at least SIGMA pages.

    python line_rule.py PAGES.jsonl[.gz] OUT.jsonl SIGMA

Writes {"id", "removed_spans": [[start, end, line text], ...]}. Standard library only.
"""
import gzip
import json
import sys


def lines_with_offsets(text):
    start = 0
    for line in text.split("\n"):
        if line.strip():
            yield start, start + len(line), line.strip()
        start += len(line) + 1


def read(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)


def main(pages, out, sigma):
    df = {}
    for page in read(pages):
        for line in {key for _, _, key in lines_with_offsets(page["text"])}:
            df[line] = df.get(line, 0) + 1
    with open(out, "w", encoding="utf-8") as dst:
        for page in read(pages):
            spans = [[s, e, key] for s, e, key in lines_with_offsets(page["text"])
                     if df[key] >= int(sigma)]
            dst.write(json.dumps({"id": page["id"], "removed_spans": spans},
                                 ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
