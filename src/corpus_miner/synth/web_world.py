"""The world of the web-page generator, drawn once from the seed: a vocabulary (Zipfian
words, shortest most frequent, plus the values of variable parts), an exact Zipf sampler (alias
table), sites with Zipf(0.8) popularity, and templates: per site a header, navigation, widget,
disclaimer and footer of many lengths with their odds of being shown, CMS snippets shared by all
sites, and the date line. Templates hold variable parts (codes -kind) drawn for every page.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from corpus_miner.errors import ParameterError
from corpus_miner.synth.article import _check_positive, _rng

# Variable-slot kinds (template codes are -kind): each draws a token from its own range.
YEAR, NUMBER, NAME, MONTH, DAY = 1, 2, 3, 4, 5
N_SLOT_KINDS = 6
# Template roles of a site (columns of site_templates / site_odds).
HEADER, NAVIGATION, WIDGET, DISCLAIMER, FOOTER = range(5)
NAMES = ("anna", "boris", "chen", "diego", "emma", "farid", "grace", "hiro", "ines", "jonas",
          "kofi", "lena", "mateo", "nadia", "oscar", "priya")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_YEARS = tuple(str(y) for y in range(2015, 2026))
_NUMBERS = tuple(str(n) for n in range(1, 500))
# Shared CMS snippets: (words, variable slots), shown with odds drawn per site.
SHARED_SNIPPETS = ((24, 0), (40, 1), (16, 0), (70, 2))


@dataclass(frozen=True)
class WebParams:
    n_sites: int = 50
    vocabulary: int = 50000
    mean_body_words: int = 400
    zipf_exponent: float = 1.1
    repost_share: float = 0.05
    seed: int = 0

    def validate(self) -> None:
        # bounds by memory: each site ~10 kB of templates, each word of the vocabulary ~0.3 kB,
        # and a block of 8,192 pages ~0.4 kB per word of their mean length (3.4 GB at 8,192)
        _check_positive(n_sites=self.n_sites, limit=2**18)
        _check_positive(vocabulary=self.vocabulary, limit=2**23)
        _check_positive(mean_body_words=self.mean_body_words, limit=2**13)
        if not 0.0 <= self.repost_share < 1.0:
            raise ParameterError(f"repost_share={self.repost_share}: must be in [0, 1)")
        if not self.zipf_exponent > 0:
            raise ParameterError(f"zipf_exponent={self.zipf_exponent}: must be positive")


def _random_words(rng: np.random.Generator, count: int, exclude: set[str]) -> list[str]:
    """`count` distinct lowercase words of 3-9 letters, shortest first (frequent words are
    short)."""
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    excluded = np.array(sorted(exclude), dtype="S9")
    found = np.zeros(0, dtype="S9")
    while len(found) < count:
        need = count - len(found) + count // 8 + 64
        lengths = rng.integers(3, 10, size=need)
        raw = letters[rng.integers(0, 26, size=(need, 9))]
        raw[np.arange(9)[None, :] >= lengths[:, None]] = 0  # NUL-padded: S9 drops the tail
        found = np.concatenate([found, raw.view("S9").ravel()])
        _, first = np.unique(found, return_index=True)
        found = found[np.sort(first)]  # distinct, in order of generation (determinism)
        found = found[~np.isin(found, excluded)]
    words = found[:count]
    order = np.argsort(np.char.str_len(words), kind="stable")
    return words[order].astype(str).tolist()


def _alias_table(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias table (Vose's construction): sampling is i = uniform index, then i if
    u < prob[i] else alias[i], exact for the normalised weights, O(1) per sample."""
    n = len(weights)
    scaled = weights * (n / weights.sum())
    prob = np.ones(n, dtype=np.float64)
    alias = np.arange(n, dtype=np.int32)
    small = [int(i) for i in np.flatnonzero(scaled < 1.0)]
    large = [int(i) for i in np.flatnonzero(scaled >= 1.0)]
    values = scaled.tolist()
    while small and large:
        s, g = small.pop(), large.pop()
        prob[s] = values[s]
        alias[s] = g
        values[g] -= 1.0 - values[s]
        (small if values[g] < 1.0 else large).append(g)
    return prob, alias  # leftovers keep prob 1 (rounding)


class WebWorld:
    """Vocabulary, Zipf sampler, templates and sites of one parameter set (drawn from the seed)."""

    def __init__(self, params: WebParams):
        params.validate()
        self.params = params
        rng = _rng(params.seed)
        extras = _YEARS + _NUMBERS + NAMES + MONTHS
        self.vocab = _random_words(rng, params.vocabulary, set(extras)) + list(extras)
        v = params.vocabulary
        first = {YEAR: v, NUMBER: v + len(_YEARS), NAME: v + len(_YEARS) + len(_NUMBERS),
                 MONTH: v + len(_YEARS) + len(_NUMBERS) + len(NAMES)}
        first[DAY] = first[NUMBER]
        size = {YEAR: len(_YEARS), NUMBER: len(_NUMBERS), NAME: len(NAMES),
                MONTH: len(MONTHS), DAY: 31}
        self.slot_first = np.zeros(N_SLOT_KINDS, dtype=np.int64)
        self.slot_size = np.zeros(N_SLOT_KINDS, dtype=np.int64)
        for kind in first:
            self.slot_first[kind], self.slot_size[kind] = first[kind], size[kind]
        weights = 1.0 / np.arange(1, v + 1, dtype=np.float64) ** params.zipf_exponent
        self.cdf = np.cumsum(weights / weights.sum())
        self.cdf[-1] = 1.0
        self.alias_prob, self.alias = _alias_table(weights)
        self._build_templates(rng)

    def zipf(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n Zipfian token ids (alias method; one uniform gives the column and, by its
        fraction, the coin: 53 random bits leave over 30 for the coin)."""
        scaled = rng.random(n) * len(self.alias)
        index = scaled.astype(np.int32)
        scaled -= index
        return np.where(scaled < self.alias_prob[index], index, self.alias[index])

    def _build_templates(self, rng: np.random.Generator) -> None:
        n_sites = self.params.n_sites
        # role: (fewest, most words), (fewest, most variable parts), odds of showing it
        roles = {HEADER: ((4, 24), (0, 0), (0.98, 0.98)),
                 NAVIGATION: ((8, 39), (0, 0), (0.5, 1.0)),
                 WIDGET: ((5, 19), (1, 1), (0.2, 0.7)),
                 DISCLAIMER: ((20, 149), (0, 2), (0.1, 0.9)),
                 FOOTER: ((10, 59), (1, 2), (0.95, 0.95))}
        words = np.zeros((n_sites, 5), dtype=np.int64)
        slots = np.zeros((n_sites, 5), dtype=np.int64)
        self.site_odds = np.zeros((n_sites, 5), dtype=np.float64)
        for role, ((w0, w1), (s0, s1), (o0, o1)) in roles.items():
            words[:, role] = rng.integers(w0, w1 + 1, size=n_sites)
            slots[:, role] = rng.integers(s0, s1 + 1, size=n_sites)
            self.site_odds[:, role] = rng.uniform(o0, o1, size=n_sites)
        self.shared_odds = rng.uniform(0.0, 1.0, size=(n_sites, len(SHARED_SNIPPETS)))
        # template 0 is the date line, 1.. the shared snippets, then five per site (row-major)
        n_words = np.concatenate([[0], [n for n, _ in SHARED_SNIPPETS], words.ravel()])
        n_slots = np.concatenate([[0], [k for _, k in SHARED_SNIPPETS], slots.ravel()])
        self.shared_templates = np.arange(1, 1 + len(SHARED_SNIPPETS), dtype=np.int64)
        self.site_templates = (1 + len(SHARED_SNIPPETS)
                               + np.arange(n_sites * 5)).reshape(n_sites, 5)
        # words are Zipfian; each variable part goes after a random word but the last one, so
        # it is never at a template's edge (keys order a template's pieces)
        word_owner = np.repeat(np.arange(len(n_words)), n_words)
        word_key = np.arange(len(word_owner)) - np.repeat(np.cumsum(n_words) - n_words, n_words)
        slot_owner = np.repeat(np.arange(len(n_slots)), n_slots)
        slot_key = (rng.random(len(slot_owner)) * (n_words[slot_owner] - 1)).astype(np.int64) + 0.5
        values = np.concatenate([
            np.searchsorted(self.cdf, rng.random(len(word_owner))),
            -np.array((YEAR, NUMBER, NAME))[rng.integers(0, 3, size=len(slot_owner))]])
        owner = np.concatenate([word_owner, slot_owner])
        order = np.lexsort((np.concatenate([word_key, slot_key]), owner))
        date_line = np.array([-MONTH, -DAY, -YEAR], dtype=np.int32)
        self.tpl_tokens = np.concatenate([date_line, values[order].astype(np.int32)])
        self.tpl_lengths = n_words + n_slots
        self.tpl_lengths[0] = len(date_line)
        self.tpl_offsets = np.concatenate([[0], np.cumsum(self.tpl_lengths)]).astype(np.int64)
        site_weights = 1.0 / np.arange(1, n_sites + 1) ** 0.8
        self.site_cdf = np.cumsum(site_weights / site_weights.sum())
        self.site_cdf[-1] = 1.0

    @cached_property
    def word_table(self) -> tuple[np.ndarray, np.ndarray]:
        """(int64 offsets, uint8 UTF-8 bytes) of the vocabulary, for rendering."""
        encoded = [w.encode() for w in self.vocab]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        return offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8)
