"""Typed masking: tokens that are slot fillers by their form (numbers, month names) mapped to one
class id each, so that the exact miner sees "page <num> of <num>" as one repeated phrase.

The masked stream has the corpus's token ids for every other token and `n_vocab + class` for a
typed token; `MaskedVocab` names the class ids `<num>` and `<month>`. Positions are unchanged, so
a span found in the masked stream is the same span of the corpus.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

NUM, MONTH = 0, 1
CLASS_NAMES = ("<num>", "<month>")
LITERAL = -1
MONTHS = frozenset((
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec").split())
# "may" and "march" are also words; the mask is only a first guess at what varies: a slot is a
# slot because its fillers vary across the occurrences (verified later), not because of its class


def token_class(word: str) -> int:
    """The slot class of one token: NUM (decimal digits only), MONTH, or LITERAL."""
    if word.isdecimal():
        return NUM
    if word in MONTHS:
        return MONTH
    return LITERAL


def slot_classes(vocab: Sequence[str]) -> np.ndarray:
    """int8 per vocabulary id: its slot class (token_class)."""
    return np.fromiter((token_class(str(w)) for w in vocab), dtype=np.int8, count=len(vocab))


def mask_tokens(tokens: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """The masked stream (module docstring): uint32, one id per corpus token."""
    n_vocab = len(classes)
    lookup = np.arange(n_vocab, dtype=np.uint32)
    typed = classes >= 0
    lookup[typed] = n_vocab + classes[typed].astype(np.uint32)
    return lookup[np.asarray(tokens)]


class MaskedVocab(Sequence):
    """The corpus vocabulary followed by the class names: the vocabulary of the masked stream."""

    def __init__(self, vocab: Sequence[str]):
        self.vocab = vocab
        self.n_vocab = len(vocab)
        self._seen: dict[int, str] = {}  # a StringList decodes bytes on every access

    def __len__(self) -> int:
        return self.n_vocab + len(CLASS_NAMES)

    def __getitem__(self, i):  # type: ignore[override]
        i = int(i)
        if i < 0:
            i += len(self)
        if i >= self.n_vocab:
            return CLASS_NAMES[i - self.n_vocab]
        word = self._seen.get(i)
        if word is None:
            word = self._seen[i] = str(self.vocab[i])
        return word

    def is_class(self, i: int) -> bool:
        return int(i) >= self.n_vocab
