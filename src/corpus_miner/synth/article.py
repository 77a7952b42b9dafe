"""The BloomSpan article's synthetic corpora, with known structure. Deterministic given `seed`.

Each generator returns one list of token strings per document (already tokenized: lowercase
letters and digits, so the project's tokenizer gives the same tokens back from " ".join(doc)).
`write_jsonl` stores them as JSONL rows {"id", "text"}, atomically.

- synthetic1: the BloomSpan article's Synthetic 1. Background words are random 8-letter strings,
  unique across the whole corpus (df = 1 each); each given phrase is inserted whole into `support`
  distinct random documents. Insertions never share a gap between background words, so the exact
  answer is known: every given phrase with length >= min_length and support >= sigma, nothing else
  (for phrases that share no two-token run, like the defaults).
- synthetic2: dense nested overlaps (the article's worst case for BloomSpan): every document holds
  many random windows of a few shared "family" sequences, so almost every n-gram of a family is
  frequent and the maximal phrases nest and overlap heavily.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from corpus_miner.errors import ParameterError
from corpus_miner.io.atomic import atomic_path, text_output
from corpus_miner.io.locations import base_name, is_remote

ARTICLE_PHRASES = (
    ("this is the first test sentence", 3),
    ("another unique phrase for testing", 5),
    ("a third sentence", 4),
)
_WORD_SPACE = 26**8
_CHUNK = 1 << 20


def _letters(codes: np.ndarray, width: int) -> list[str]:
    """Base-26 codes -> lowercase strings of `width` letters."""
    out: list[str] = []
    powers = 26 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    for start in range(0, len(codes), _CHUNK):
        chunk = codes[start:start + _CHUNK]
        letters = ((chunk[:, None] // powers) % 26 + 97).astype(np.uint8)
        out.extend(letters.view(f"S{width}").ravel().astype(str).tolist())
    return out


def _word_code(word: str) -> int | None:
    if len(word) != 8 or not all("a" <= c <= "z" for c in word):
        return None
    code = 0
    for c in word:
        code = code * 26 + ord(c) - 97
    return code


def unique_random_words(count: int, rng: np.random.Generator,
                        exclude: Iterable[str] = ()) -> list[str]:
    """`count` distinct random 8-letter lowercase words, none of them in `exclude`."""
    excluded = np.array(sorted({c for c in map(_word_code, exclude) if c is not None}),
                        dtype=np.int64)
    codes = np.empty(0, dtype=np.int64)
    while len(codes) < count:
        need = count - len(codes)
        fresh = rng.integers(0, _WORD_SPACE, size=need + need // 64 + 16, dtype=np.int64)
        codes = np.concatenate([codes, fresh])
        _, first = np.unique(codes, return_index=True)
        codes = codes[np.sort(first)]  # drop repeats, keep generation order (determinism)
        if len(excluded):
            codes = codes[~np.isin(codes, excluded)]
    return _letters(codes[:count], 8)


MAX_COUNT = 2**31 - 1  # any size parameter; beyond it numpy overflows
MAX_CELLS = 2**28  # words (or table cells) generated in all: ~65 bytes each as Python lists


def _check_positive(limit: int = MAX_COUNT, **values):
    """Each value a whole number from 1 to `limit` (what memory or int64 allow)."""
    for name, value in values.items():
        if not isinstance(value, (int, float, np.integer)) or not math.isfinite(value) \
                or int(value) != value or value < 1:
            raise ParameterError(f"{name}={value}: must be a positive integer")
        if value > limit:
            raise ParameterError(f"{name}={value}: must be at most {limit:,}")


def _check_size(**products: int) -> None:
    """What the parameters ask to hold in memory, against MAX_CELLS (a bound, not a limit any
    test corpus nears: 2^28 words take ~17 GB as Python lists)."""
    for what, size in products.items():
        if size > MAX_CELLS:
            raise ParameterError(f"these parameters ask for {size:,} {what.replace('_', ' ')}; "
                                 f"at most 2^28 ({MAX_CELLS:,}) fit in memory")


def _rng(seed) -> np.random.Generator:
    """numpy's generator, with numpy's own complaint about the seed as a ParameterError."""
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"seed={seed!r}: must be a non-negative integer ({exc})") from None


def synthetic1(n_docs: int, words_per_doc: int = 5000,
               phrases: Sequence[tuple[str, int]] = ARTICLE_PHRASES,
               seed: int = 0) -> list[list[str]]:
    """The article's Synthetic 1: unique random background words, phrases inserted with supports."""
    _check_positive(n_docs=n_docs, words_per_doc=words_per_doc)
    _check_size(words=n_docs * words_per_doc)
    rng = _rng(seed)
    phrase_tokens = [(text.lower().split(), int(support)) for text, support in phrases]
    for tokens, support in phrase_tokens:
        if not tokens or support < 1 or support > n_docs:
            raise ParameterError(f"phrase {' '.join(tokens)!r} with support {support}: "
                                 "needs at least one token and a support between 1 and "
                                 f"n_docs={n_docs}")
    if len(phrase_tokens) > words_per_doc + 1:
        raise ParameterError(f"{len(phrase_tokens)} phrases need at least as many gaps per "
                             f"document; raise words_per_doc={words_per_doc}")
    vocabulary = {t for tokens, _ in phrase_tokens for t in tokens}
    background = unique_random_words(n_docs * words_per_doc, rng, exclude=vocabulary)
    # insertions[doc] = {gap index: phrase tokens}; one phrase per gap keeps insertions apart.
    insertions: list[dict[int, list[str]]] = [{} for _ in range(n_docs)]
    for tokens, support in phrase_tokens:
        for doc in rng.choice(n_docs, size=support, replace=False):
            taken = insertions[int(doc)]
            gap = int(rng.integers(0, words_per_doc + 1))
            while gap in taken:
                gap = int(rng.integers(0, words_per_doc + 1))
            taken[gap] = tokens
    docs = []
    for d in range(n_docs):
        words = background[d * words_per_doc:(d + 1) * words_per_doc]
        for gap in sorted(insertions[d], reverse=True):  # right to left keeps gap indices valid
            words[gap:gap] = insertions[d][gap]
        docs.append(words)
    return docs


def synthetic2(n_docs: int, words_per_doc: int = 1000, n_families: int = 3, family_length: int = 40,
               windows_per_doc: int = 20, family_vocabulary: int = 12,
               max_window: int | None = None, seed: int = 0) -> list[list[str]]:
    """Dense nested overlaps: random windows of a few shared family sequences in every document.

    Families draw from a tiny vocabulary, so families also share many short runs; windows have
    random start and length (2..max_window, default family_length // 2), so nearly every n-gram of
    a family is frequent while whole families are not: the maximal phrases are many overlapping
    windows whose lengths depend on sigma. Background words are unique (df = 1), as in Synthetic 1.
    """
    _check_positive(n_docs=n_docs, words_per_doc=words_per_doc, n_families=n_families,
                    family_length=family_length, windows_per_doc=windows_per_doc,
                    family_vocabulary=family_vocabulary)
    _check_size(words=n_docs * (words_per_doc + windows_per_doc * family_length),
                family_words=n_families * family_length, vocabulary_words=family_vocabulary)
    max_window = max(2, family_length // 2) if max_window is None else max_window
    if not 2 <= max_window <= family_length:
        raise ParameterError(f"max_window={max_window}: must be between 2 and family_length="
                             f"{family_length}")
    rng = _rng(seed)
    family_words = _letters((np.arange(family_vocabulary, dtype=np.int64) * 7919 + 1) % 26**5, 5)
    families = rng.integers(0, family_vocabulary, size=(n_families, family_length))
    background = unique_random_words(n_docs * words_per_doc, rng, exclude=family_words)
    docs = []
    for d in range(n_docs):
        words = background[d * words_per_doc:(d + 1) * words_per_doc]
        gaps = np.sort(rng.integers(0, words_per_doc + 1, size=windows_per_doc))[::-1]
        for gap in gaps:
            family = families[rng.integers(0, n_families)]
            length = int(rng.integers(2, max_window + 1))
            start = int(rng.integers(0, family_length - length + 1))
            words[gap:gap] = [family_words[t] for t in family[start:start + length]]
        docs.append(words)
    return docs


def write_jsonl(docs: Sequence[Sequence[str]], path: str | Path,
                id_prefix: str = "doc") -> Path | str:
    """Write documents as JSONL rows {"id": "<prefix>-<n>", "text": tokens joined by spaces},
    atomically; `.gz` suffix compresses."""
    with atomic_path(path) as tmp, text_output(tmp, base_name(path).lower().endswith(".gz")) \
            as out:
        for n, doc in enumerate(docs):
            out.write(json.dumps({"id": f"{id_prefix}-{n}", "text": " ".join(doc)}) + "\n")
    return path if is_remote(path) else Path(path)
