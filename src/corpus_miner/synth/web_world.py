"""The world of the web-page generator, drawn once from the seed: the body text's vocabulary and
sentence stream (`web_text`), sites with Zipf(0.8) popularity, and templates made of the built-in
pieces of `web_words`: per site a header (its name and tagline), a navigation menu, a "read also"
widget, a disclaimer and a footer, each shown with odds of its own site; CMS snippets every site
shows now and then (cookie banner, newsletter box, share bar, comment rules); the date line.

Every token id has a token form (`vocab`: what the tokenizer gives back, lowercase, no
punctuation) and a display form (`display`: what the page shows, e.g. "reserved." or "| News").
Templates hold variable parts (codes -kind: years, counters, names, months, days) drawn for every
page, and words drawn once per site, so every site's templates are its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from corpus_miner.errors import ParameterError
from corpus_miner.synth import web_words as ww
from corpus_miner.synth.article import _check_positive, _rng
from corpus_miner.synth.web_text import CLASS_NAMES, BodyText

# Variable-slot kinds (template codes are -kind): each draws a token from its own range.
YEAR, NUMBER, NAME, MONTH, DAY = 1, 2, 3, 4, 5
N_SLOT_KINDS = 6
_SLOTS = {"{YEAR}": YEAR, "{NUMBER}": NUMBER, "{NAME}": NAME, "{MONTH}": MONTH, "{DAY}": DAY}
_SITE_WORD = -100  # template code of a word drawn per site: _SITE_WORD - class index
_SITE_WORDS = {"{noun}": "NOUN", "{adj}": "ADJ", "{verb}": "VERB"}
# Template roles of a site (columns of site_templates / site_odds).
HEADER, NAVIGATION, WIDGET, DISCLAIMER, FOOTER = range(5)
NAMES = ("anna", "boris", "chen", "diego", "emma", "farid", "grace", "hiro", "ines", "jonas",
         "kofi", "lena", "mateo", "nadia", "oscar", "priya")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
_YEARS = tuple(str(y) for y in range(2015, 2026))
_NUMBERS = tuple(str(n) for n in range(1, 500))
SHARED_SNIPPETS = ww.SHARED_SNIPPETS


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


def token_form(display: str) -> str:
    """What the tokenizer makes of a display form of the built-in ASCII text."""
    tokens = re.findall(r"[a-z0-9]+", display.lower())
    if len(tokens) != 1:
        raise ValueError(f"{display!r} is not one token")
    return tokens[0]


class WebWorld:
    """Vocabulary, body text, templates and sites of one parameter set (drawn from the seed)."""

    def __init__(self, params: WebParams):
        params.validate()
        self.params = params
        rng = _rng(params.seed)
        self.body = BodyText(rng, params.vocabulary, params.zipf_exponent)
        self.vocab = list(self.body.words)
        self.display = list(self.body.words)
        self._ids: dict[str, int] = {}
        self.slot_first = np.zeros(N_SLOT_KINDS, dtype=np.int64)
        self.slot_size = np.zeros(N_SLOT_KINDS, dtype=np.int64)
        for kind, values in ((YEAR, _YEARS), (NUMBER, _NUMBERS),
                             (NAME, tuple(n.capitalize() for n in NAMES)),
                             (MONTH, tuple(m.capitalize() for m in MONTHS))):
            self.slot_first[kind], self.slot_size[kind] = len(self.vocab), len(values)
            self.vocab += [token_form(v) for v in values]
            self.display += list(values)
        self.slot_first[DAY], self.slot_size[DAY] = self.slot_first[NUMBER], 31
        self._build_templates(rng)

    def _display_id(self, display: str) -> int:
        if display not in self._ids:
            self._ids[display] = len(self.display)
            self.vocab.append(token_form(display))
            self.display.append(display)
        return self._ids[display]

    def _parse(self, text: str) -> list[int]:
        """Template codes of a built-in piece: display ids, -kind for variable parts,
        _SITE_WORD - class for per-site words; punctuation alone joins the next word."""
        codes: list[int] = []
        pending = ""
        for word in text.split():
            if word in _SLOTS or word in _SITE_WORDS:
                if pending:
                    raise ValueError(f"{text!r}: punctuation before a variable part")
                codes.append(-_SLOTS[word] if word in _SLOTS
                             else _SITE_WORD - CLASS_NAMES.index(_SITE_WORDS[word]))
            elif "{" in word:
                raise ValueError(f"{text!r}: variable part with punctuation: {word}")
            elif not re.search(r"[A-Za-z0-9]", word):
                pending += word + " "
            else:
                codes.append(self._display_id(pending + word))
                pending = ""
        if pending:
            raise ValueError(f"{text!r}: ends with punctuation alone")
        return codes

    def _build_templates(self, rng: np.random.Generator) -> None:
        n_sites = self.params.n_sites
        roles = {HEADER: (0.98, 0.98), NAVIGATION: (0.5, 1.0), WIDGET: (0.2, 0.7),
                 DISCLAIMER: (0.1, 0.9), FOOTER: (0.95, 0.95)}
        self.site_odds = np.zeros((n_sites, 5), dtype=np.float64)
        for role, (o0, o1) in roles.items():
            self.site_odds[:, role] = rng.uniform(o0, o1, size=n_sites)
        self.shared_odds = rng.uniform(0.0, 1.0, size=(n_sites, len(SHARED_SNIPPETS)))
        pieces: list[list[int]] = []

        def pool(texts) -> np.ndarray:
            first = len(pieces)
            pieces.extend(self._parse(t) for t in texts)
            return np.arange(first, len(pieces))

        date_line, shared = pool([ww.DATE_LINE]), pool(SHARED_SNIPPETS)
        taglines = pool("| " + t for t in ww.TAGLINES)
        extras = pool("| " + e for e in ww.HEADER_EXTRAS)
        home, sections = pool(["Home"]), pool("| " + s for s in ww.SECTIONS)
        leads, titles = pool(ww.WIDGET_LEADS), pool(ww.WIDGET_TITLES)
        disclaimers = pool(ww.DISCLAIMERS)
        copyright_, reserved = pool([ww.COPYRIGHT]), pool([ww.RESERVED])
        links, barred_links = pool(ww.FOOTER_LINKS), pool("| " + s for s in ww.FOOTER_LINKS)
        closings = pool(ww.FOOTER_CLOSINGS)
        # site names "Adjective Noun Suffix", and with a period for the footer's copyright line
        adjectives = np.array([self._display_id(w) for w in ww.NAME_ADJECTIVES])
        nouns = np.array([self._display_id(w) for w in ww.NAME_NOUNS])
        suffixes = np.array([self._display_id(w) for w in ww.NAME_SUFFIXES])
        suffixes_period = np.array([self._display_id(w + ".") for w in ww.NAME_SUFFIXES])
        choice = rng.integers(0, 2**31, size=(n_sites, 3))
        names = np.stack([adjectives[choice[:, 0] % len(adjectives)],
                          nouns[choice[:, 1] % len(nouns)],
                          suffixes[choice[:, 2] % len(suffixes)]], axis=1)
        names_period = names.copy()
        names_period[:, 2] = suffixes_period[choice[:, 2] % len(suffixes)]
        name_piece = len(pieces) + np.arange(n_sites)
        name_period_piece = name_piece + n_sites

        def pick(options: np.ndarray, none_share: float = 0.0) -> np.ndarray:
            """One of `options` per site, or -1 (no piece) with odds none_share."""
            picked = options[rng.integers(0, len(options), size=n_sites)]
            return np.where(rng.random(n_sites) < none_share, -1, picked)

        def several(options: np.ndarray, fewest: int, most: int) -> np.ndarray:
            """Per site fewest..most distinct options in random order, padded with -1."""
            order = np.argsort(rng.random((n_sites, len(options))), axis=1)[:, :most]
            count = rng.integers(fewest, most + 1, size=n_sites)
            return np.where(np.arange(most) < count[:, None], options[order], -1)

        first_links = several(links, 1, 8)  # the first link bare, the others after a bar
        link_cells = np.where((np.arange(8) == 0) | (first_links < 0), first_links,
                              first_links - links[0] + barred_links[0])
        role_refs = {
            HEADER: np.column_stack([name_piece, pick(taglines), pick(extras, 0.4)]),
            NAVIGATION: np.column_stack([np.full(n_sites, home[0]), several(sections, 5, 22)]),
            WIDGET: np.column_stack([pick(leads), pick(titles)]),
            DISCLAIMER: several(disclaimers, 1, 6),
            FOOTER: np.column_stack([np.full(n_sites, copyright_[0]), name_period_piece,
                                     np.full(n_sites, reserved[0]), link_cells,
                                     pick(closings, 0.3)]),
        }
        # template 0 is the date line, 1.. the shared snippets, then five per site (row-major)
        n_first = 1 + len(SHARED_SNIPPETS)
        self.shared_templates = np.arange(1, n_first, dtype=np.int64)
        self.site_templates = (n_first + np.arange(n_sites * 5)).reshape(n_sites, 5)
        owners = [np.arange(n_first)]
        refs = [np.concatenate([date_line, shared])]
        columns = [np.zeros(n_first, dtype=np.int64)]
        for role, cells in role_refs.items():
            site, column = np.nonzero(cells >= 0)
            owners.append(self.site_templates[site, role])
            refs.append(cells[site, column])
            columns.append(column)
        owner, ref, column = (np.concatenate(a) for a in (owners, refs, columns))
        order = np.lexsort((column, owner))
        owner, ref = owner[order], ref[order]
        piece_codes = [np.array(p, dtype=np.int64) for p in pieces]
        piece_lengths = np.array([len(p) for p in pieces] + [3] * (2 * n_sites), dtype=np.int64)
        flat = np.concatenate(piece_codes + [names.ravel(), names_period.ravel()])
        piece_offsets = np.concatenate([[0], np.cumsum(piece_lengths)[:-1]])
        lengths = piece_lengths[ref]
        within = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        codes = flat[np.repeat(piece_offsets[ref], lengths) + within]
        site_word = codes <= _SITE_WORD
        classes = _SITE_WORD - codes[site_word]  # a built-in word of that class, per site
        codes[site_word] = self.body.class_first[classes] + (
            rng.random(len(classes)) * self.body.builtin_size[classes]).astype(np.int64)
        self.tpl_tokens = codes.astype(np.int32)
        n_templates = n_first + 5 * n_sites
        self.tpl_lengths = np.bincount(np.repeat(owner, lengths), minlength=n_templates)
        self.tpl_offsets = np.concatenate([[0], np.cumsum(self.tpl_lengths)]).astype(np.int64)
        site_weights = 1.0 / np.arange(1, n_sites + 1) ** 0.8
        self.site_cdf = np.cumsum(site_weights / site_weights.sum())
        self.site_cdf[-1] = 1.0

    @cached_property
    def word_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(int32 starts, uint8 lengths, uint8 UTF-8 bytes) of the display forms, for
        rendering (every display form is shorter than 256 bytes)."""
        encoded = [w.encode() for w in self.display]
        lengths = np.array([len(b) for b in encoded], dtype=np.int64)
        if lengths.max() >= 256:
            raise ValueError("a display form of 256 bytes or more")
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int32)
        return starts, lengths.astype(np.uint8), np.frombuffer(b"".join(encoded), dtype=np.uint8)
