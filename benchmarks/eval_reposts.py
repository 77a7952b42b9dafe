"""How many of the reposts planted by `generate web` dedup finds, and how many originals it flags.

Generates the quick start's pages (default: 5,000 pages, seed 0), then runs LSHBloom with its
defaults on the raw pages and on the pages cleaned as in the quick start (sigma 20, min length
10). The generator's `repost_of` field is the ground truth. Reported per kind of repost (new
variable parts only, a paragraph added, a paragraph dropped).

    python benchmarks/eval_reposts.py
    python benchmarks/eval_reposts.py --docs 20000 --seed 3

Writes benchmarks/results/eval_reposts.csv.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from corpus_miner.corpus import load_corpus
from corpus_miner.coverage import Cleaner, Coverage
from corpus_miner.dedup import LSHBloom
from corpus_miner.io import read_documents
from corpus_miner.phrases import BloomSpan
from corpus_miner.synth import web_pages as w

from csv_table import write_csv

RESULTS = Path(__file__).resolve().parent / "results"
KINDS = {w.REPOST_VARIABLES: "reposts: new variable parts only",
         w.REPOST_ADDED: "reposts: a paragraph added",
         w.REPOST_DROPPED: "reposts: a paragraph dropped"}


def texts_of(path: Path) -> list[str]:
    return [t for batch in read_documents([path]) for t in batch.texts.to_pylist()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "eval_reposts.csv")
    args = parser.parse_args(argv)
    params = w.WebParams(seed=args.seed)
    world = w.WebWorld(params)
    kinds = np.concatenate([b.doc_kind for b in w.web_blocks(world, n_docs=args.docs)])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "web.jsonl"
        w.write_web(raw, params, n_docs=args.docs)
        corpus = load_corpus([raw])
        coverage = Coverage.from_miner(BloomSpan(sigma=20, min_length=10).fit(corpus), corpus)
        cleaned = Path(tmp) / "clean.jsonl"
        Cleaner().fit(corpus, coverage).write([raw], cleaned)
        for label, path in (("raw pages", raw), ("cleaned pages", cleaned)):
            flagged = np.asarray(LSHBloom().deduplicate(texts_of(path)).is_duplicate)
            for kind, name in [(w.ORIGINAL, "originals")] + list(KINDS.items()):
                pick = kinds == kind
                rows.append({"docs": args.docs, "seed": args.seed, "input": label, "pages": name,
                             "count": int(pick.sum()), "flagged": int(flagged[pick].sum()),
                             "share_flagged": round(float(flagged[pick].mean()), 4)})
                print(rows[-1], flush=True)
    write_csv(args.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
