"""The compiled step of the web-page generator: token ids and separators to UTF-8 text.

Everything else of the generator is vectorised numpy (`web.py`); joining ~7 bytes per token from a
vocabulary is the one step numpy cannot do without index arrays many times the text's size.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Separator after a token.
SPACE, LINE, PARAGRAPH, END = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def render_text(tokens, seps, doc_offsets, word_offsets, word_bytes):
    """(UTF-8 bytes, int64 offsets) of the pages: words joined by their separators. Releases the
    GIL, so a writer thread can compress the previous block meanwhile."""
    n_docs = doc_offsets.shape[0] - 1
    n_tokens = doc_offsets[n_docs]
    total = 0
    for t in range(n_tokens):
        w = tokens[t]
        sep = seps[t]
        total += word_offsets[w + 1] - word_offsets[w] + (sep == PARAGRAPH) + (sep != END)
    data = np.empty(total, dtype=np.uint8)
    offsets = np.empty(n_docs + 1, dtype=np.int64)
    offsets[0] = 0
    out = 0
    for d in range(n_docs):
        for t in range(doc_offsets[d], doc_offsets[d + 1]):
            w = tokens[t]
            for k in range(word_offsets[w], word_offsets[w + 1]):
                data[out] = word_bytes[k]
                out += 1
            sep = seps[t]
            if sep == SPACE:
                data[out] = 32
                out += 1
            elif sep == LINE:
                data[out] = 10
                out += 1
            elif sep == PARAGRAPH:
                data[out] = 10
                data[out + 1] = 10
                out += 2
        offsets[d + 1] = out
    return data, offsets
