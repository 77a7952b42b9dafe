"""algorithm="auto": BloomSpan or the suffix array (fhk), chosen from the shape of the data.

The rule reads what BloomSpan's first stage measures anyway (exact word df): the windows of
min_length frequent words, per frequent word. Natural text, documentation and web pages have
thousands of frequent words and a few hundred to a few thousand such windows per word; there the
filter leaves a small part of the corpus and BloomSpan is 3-14x faster than fhk. Data built from
a handful of words repeated in dense, nested, overlapping windows (the article's Synthetic 2:
12 frequent words, ~400k windows each) makes every bigram a seed with tens of thousands of
occurrences, and the depth-first growth rescans them at every branching level; fhk sorts such
data in one go and is 1.2-1.5x faster. So fhk is chosen when there are at least
DENSE_WINDOWS_PER_WORD windows per frequent word, the corpus fits fhk's suffix array, and its
~16 bytes per token fit into the available memory; BloomSpan otherwise. Both give the same
answer; measured per corpus in benchmarks/results/bench_phrases.csv ("auto" rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from corpus_miner.phrases import window_filter as wf
from corpus_miner.phrases.suffix_array import MAX_TEXT_LENGTH
from corpus_miner.phrases.threads import mining_threads

DENSE_WINDOWS_PER_WORD = 20_000
FHK_BYTES_PER_TOKEN = 16  # text, suffix array, ranks/LCP (int32 each) and the inverse


@dataclass(frozen=True)
class Choice:
    algorithm: str  # "bloomspan" or "fhk"
    windows_per_frequent_word: float
    word_filter: wf.WordFilter  # handed to BloomSpan, which would compute it first anyway

    def stats(self) -> dict:
        return {"auto_choice": self.algorithm,
                "auto_windows_per_frequent_word": round(self.windows_per_frequent_word, 1)}


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def choose(tokens: np.ndarray, doc_offsets: np.ndarray, sigma: int, min_length: int,
           vocab_size: int) -> Choice:
    """The algorithm for validated corpus arrays (see the module docstring for the rule)."""
    threads = mining_threads(len(tokens))
    words = wf.word_filter(tokens, doc_offsets, vocab_size, sigma, min_length, threads)
    frequent = int(words.word_ok.sum())
    per_word = words.counted_windows / max(frequent, 1)
    n_tokens, n_docs = len(tokens), len(doc_offsets) - 1
    memory = _available_memory()
    fits = n_tokens + n_docs <= MAX_TEXT_LENGTH and (
        memory is None or FHK_BYTES_PER_TOKEN * (n_tokens + n_docs) < memory)
    dense = frequent > 0 and per_word >= DENSE_WINDOWS_PER_WORD
    return Choice("fhk" if dense and fits else "bloomspan", per_word, words)
