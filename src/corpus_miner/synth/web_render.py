"""The compiled step of the web-page generator: token ids and separators to UTF-8 text.

Everything else of the generator is vectorised numpy (`web_pages.py`); joining ~7 bytes per token
from a vocabulary is the one step numpy cannot do without index arrays many times the text's size.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner.synth.web_text import CAPITAL_AFTER, SEPARATORS


def separator_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(int64 offsets, uint8 bytes, uint8 capitalise-after flags) of the separators."""
    encoded = [s.encode() for s in SEPARATORS]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    capital = np.zeros(len(encoded), dtype=np.uint8)
    capital[list(CAPITAL_AFTER)] = 1
    return offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8), capital


@njit(cache=True, nogil=True)
def render_text(tokens, seps, doc_offsets, word_starts, word_lengths, word_bytes, sep_offsets,
                sep_bytes, capital_after):
    """(UTF-8 bytes, int64 offsets) of the pages: words (int32 starts and uint8 lengths into
    word_bytes: small tables, so the lookups mostly hit the cache) joined by their separators,
    the first ASCII letter of a page's first word and of a word after a sentence or line end
    upper-cased. Releases the GIL, so a writer thread can compress the previous block."""
    n_docs = doc_offsets.shape[0] - 1
    n_tokens = doc_offsets[n_docs]
    total = 0
    for t in range(n_tokens):
        sep = seps[t]
        total += word_lengths[tokens[t]] + sep_offsets[sep + 1] - sep_offsets[sep]
    data = np.empty(total, dtype=np.uint8)
    offsets = np.empty(n_docs + 1, dtype=np.int64)
    offsets[0] = 0
    out = 0
    for d in range(n_docs):
        capital = True
        for t in range(doc_offsets[d], doc_offsets[d + 1]):
            w = tokens[t]
            first = out
            start = word_starts[w]
            for k in range(start, start + word_lengths[w]):
                data[out] = word_bytes[k]
                out += 1
            if capital and 97 <= data[first] <= 122:
                data[first] -= 32
            sep = seps[t]
            if sep == 0:  # a space: by far the most common
                data[out] = 32
                out += 1
                capital = False
                continue
            for k in range(sep_offsets[sep], sep_offsets[sep + 1]):
                data[out] = sep_bytes[k]
                out += 1
            capital = capital_after[sep] == 1
        offsets[d + 1] = out
    return data, offsets
