"""Corpora with long passages that several documents share, inside text whose short grams recur
everywhere: the case that drives the distributed miner's continuation rounds deep. Almost every
gram of a passage also occurs elsewhere after other words, so it is live, and its group grows
along the passage until its windows hold only the passage's copies (which then all follow one
word and stop); a long run of one word never becomes left-unique and goes to the run's end,
round after round, with windows doubling each round."""

from __future__ import annotations

import numpy as np


def shared_passage_texts(n_docs: int = 14, passages: int = 2, passage_length: int = 600,
                         copies: int = 3, filler: int = 300, alphabet: int = 8, run: int = 1000,
                         seed: int = 0) -> list[str]:
    """Texts of n_docs documents of random words from a small alphabet (every short gram recurs
    with many left neighbours); passage k (passage_length random words) is copied into `copies`
    documents, k, k + passages, ..., each between filler words of its own. The last `copies`
    documents also hold a run of one word repeated `run` times: its grams are never left-unique
    (the run's first one follows another word), so every position of the run is shipped round
    after round with a window to the run's end."""
    rng = np.random.default_rng(seed)
    words = [f"a{i}" for i in range(alphabet)]
    texts = []
    shared = [list(rng.choice(words, passage_length)) for _ in range(passages)]
    for d in range(n_docs):
        doc = list(rng.choice(words, filler))
        k = d % passages
        if d // passages < copies:
            at = int(rng.integers(0, filler))
            doc[at:at] = shared[k]
        if d >= n_docs - copies:
            at = int(rng.integers(0, filler))
            doc[at:at] = ["r"] * run
        texts.append(" ".join(doc))
    return texts
