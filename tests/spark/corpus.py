"""Small generated corpora for the Spark tests: random documents plus planted near-copies."""

from __future__ import annotations

import numpy as np

WORDS = [f"w{i:03d}x" for i in range(500)]


def planted_corpus(n_originals: int = 60, seed: int = 0):
    """(ids, texts, is_copy): originals of 150 random words; every third is followed later by a
    copy with two words changed (Jaccard ~0.9), every fifth by an upper-cased, re-spaced copy."""
    rng = np.random.default_rng(seed)
    originals = [" ".join(rng.choice(WORDS, 150)) for _ in range(n_originals)]
    texts, is_copy = [], []
    for i, doc in enumerate(originals):
        texts.append(doc)
        is_copy.append(False)
        if i % 3 == 0:
            words = doc.split()
            for position in rng.choice(len(words), 2, replace=False):
                words[position] = "changed"
            texts.append(" ".join(words))
            is_copy.append(True)
        if i % 5 == 0:
            texts.append("  " + doc.upper().replace(" ", "\n"))
            is_copy.append(True)
    ids = [f"doc-{i:04d}" for i in range(len(texts))]
    return ids, texts, np.array(is_copy)
