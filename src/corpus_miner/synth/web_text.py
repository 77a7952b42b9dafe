"""English-like body text for the web-page generator: a vocabulary by part of speech and generated
sentences.

The vocabulary holds the built-in function words (determiners, pronouns, modals, prepositions,
conjunctions) and `vocabulary` content words: nouns, adjectives, verbs and adverbs, the built-in
English ones first (most common first), then pronounceable made-up words ("vandric", "tessate")
up to each class's share. Within a class, words are Zipf-distributed by rank, drawn exactly by one
alias table per class (Walker/Vose). Sentences follow built-in patterns of parts of speech
(`web_words.SENTENCES`); the world draws one long cyclic stream of such sentences, and every body
paragraph takes the parts of speech and punctuation of a stretch of that stream that ends at a
sentence end, with every word drawn anew. So words are independent across pages, and a paragraph
reads like a run of plain sentences.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from corpus_miner.synth import web_words as ww

# Separators after a word (the renderer's table); a word after one of CAPITAL_AFTER is capitalised.
SPACE, LINE, PARAGRAPH, END, PERIOD, COMMA, PERIOD_PARAGRAPH, PERIOD_END = range(8)
SEPARATORS = (" ", "\n", "\n\n", "", ". ", ", ", ".\n\n", ".")
CAPITAL_AFTER = (LINE, PARAGRAPH, PERIOD, PERIOD_PARAGRAPH)

FUNCTION_CLASSES = (("DET", ww.DETERMINERS), ("PRON", ww.PRONOUNS), ("MODAL", ww.MODALS),
                    ("PREP", ww.PREPOSITIONS), ("CONJ", ww.CONJUNCTIONS))
# content classes: built-in words, share of the made-up words, made-up word endings
CONTENT_CLASSES = (("NOUN", ww.NOUNS, 0.45, ("", "", "er", "ion", "ment", "ness")),
                   ("ADJ", ww.ADJECTIVES, 0.2, ("al", "ic", "ous", "ive", "ful", "ish")),
                   ("VERB", ww.VERBS, 0.2, ("", "ate", "ize", "en", "ify")),
                   ("ADV", ww.ADVERBS, 0.15, ("ly",)))
CLASS_NAMES = tuple(name for name, _ in FUNCTION_CLASSES) + tuple(c[0] for c in CONTENT_CLASSES)
STREAM_TOKENS = 1 << 16
MAX_PARAGRAPH = 256  # the longest stretch a paragraph takes from the stream

_ONSETS = "b br c d dr f g gr h j k l m n p pr r s st t tr v w z".split()
_VOWELS = "a e i o u a e i o ea".split()
_CODAS = ["", "", "", "", "n", "r", "s", "l", "m", "nd", "st", "nt"]


def _syllables() -> np.ndarray:
    return np.array([o + v + c for o in _ONSETS for v in _VOWELS for c in _CODAS], dtype="S8")


def _hashes(words: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each S24 string: equal strings hash alike, and a collision of two
    different ones only drops a made-up word, so uniqueness by hash is safe (and sorting
    integers is many times faster than sorting strings)."""
    lanes = np.ascontiguousarray(words, dtype="S24").view(np.uint64).reshape(-1, 3)
    with np.errstate(over="ignore"):
        return ((lanes[:, 0] * np.uint64(0x9E3779B97F4A7C15)) ^
                (lanes[:, 1] * np.uint64(0xC2B2AE3D27D4EB4F)) ^
                (lanes[:, 2] * np.uint64(0x165667B19E3779F9)))


def made_up_words(rng: np.random.Generator, counts: list[int],
                  endings: list[tuple[str, ...]], exclude: set[str]) -> list[list[str]]:
    """Per class c, counts[c] pronounceable words of one to three syllables plus one of
    endings[c], distinct across all classes and none in `exclude`; shortest first (frequent
    words are short), deterministic."""
    syllables = _syllables()
    excluded = np.array(sorted(exclude), dtype="S24")
    want = np.array(counts, dtype=np.int64)
    found = np.zeros(0, dtype="S24")
    label = np.zeros(0, dtype=np.int64)
    while True:
        short = want - np.bincount(label, minlength=len(want))
        if (short <= 0).all():
            break
        for c in np.flatnonzero(short > 0).tolist():
            need = int(short[c]) + int(short[c]) // 8 + 64
            parts = syllables[rng.integers(0, len(syllables), size=(need, 3))]
            n_syllables = np.searchsorted([0.25, 0.85], rng.random(need))  # 1, 2 or 3
            words = np.where(n_syllables >= 1, np.char.add(parts[:, 0], parts[:, 1]), parts[:, 0])
            words = np.where(n_syllables == 2, np.char.add(words, parts[:, 2]), words)
            suffix = np.array(endings[c], dtype="S8")[rng.integers(0, len(endings[c]),
                                                                   size=need)]
            found = np.concatenate([found, np.char.add(words, suffix).astype("S24")])
            label = np.concatenate([label, np.full(need, c)])
        _, first = np.unique(_hashes(found), return_index=True)
        keep = np.sort(first)  # distinct, in order of generation
        found, label = found[keep], label[keep]
        new = ~np.isin(_hashes(found), _hashes(excluded))
        found, label = found[new], label[new]
    out = []
    for c, count in enumerate(counts):
        own = found[label == c][:count]
        own = own[np.argsort(np.char.str_len(own), kind="stable")]
        out.append(own.astype(str).tolist())
    return out


@njit(cache=True)
def alias_table(weights):
    """Walker's alias table (Vose's construction) of float64 `weights`: sampling is i = uniform
    index, then i if u < prob[i] else alias[i], exact for the normalised weights, O(1) per
    sample. Returns (float64 prob, int64 alias)."""
    n = weights.shape[0]
    scaled = weights * (n / weights.sum())
    prob = np.ones(n, dtype=np.float64)
    alias = np.arange(n)
    # one array, two stacks: the small columns grow from the front, the large from the back
    stacks = np.empty(n, dtype=np.int64)
    n_small = n_large = 0
    for i in range(n):
        if scaled[i] < 1.0:
            stacks[n_small] = i
            n_small += 1
        else:
            n_large += 1
            stacks[n - n_large] = i
    while n_small > 0 and n_large > 0:
        n_small -= 1
        s = stacks[n_small]
        g = stacks[n - n_large]  # stays on top of the large stack while it is large
        prob[s] = scaled[s]
        alias[s] = g
        scaled[g] -= 1.0 - scaled[s]
        if scaled[g] < 1.0:
            n_large -= 1
            stacks[n_small] = g
            n_small += 1
    return prob, alias  # leftovers keep prob 1 (rounding)


class BodyText:
    """The body vocabulary (`words`, ids 0..len-1), per class its first id, size and alias table
    (global ids), and the sentence stream (class and separator per position)."""

    def __init__(self, rng: np.random.Generator, vocabulary: int, zipf_exponent: float):
        words: list[str] = []
        class_first, class_size = [], []
        for _, members in FUNCTION_CLASSES:
            class_first.append(len(words))
            class_size.append(len(members))
            words += members
        shares = [share for _, _, share, _ in CONTENT_CLASSES]
        sizes = np.maximum(1, np.floor(np.array(shares) * vocabulary)).astype(np.int64)
        sizes[0] += max(0, vocabulary - int(sizes.sum()))
        taken = set(words)
        builtin_words = []
        for (_, builtin, _, _), size in zip(CONTENT_CLASSES, sizes.tolist()):
            own = list(dict.fromkeys(w for w in builtin if w not in taken))[:size]
            taken.update(own)
            builtin_words.append(own)
        made_up = made_up_words(rng, [size - len(own) for own, size in
                                      zip(builtin_words, sizes.tolist())],
                                [c[3] for c in CONTENT_CLASSES], taken)
        for own, more in zip(builtin_words, made_up):
            class_first.append(len(words))
            class_size.append(len(own) + len(more))
            words += own + more
        self.words = words
        self.class_first = np.array(class_first, dtype=np.int64)
        self.class_size = np.array(class_size, dtype=np.int64)
        self.builtin_size = np.array([len(m) for _, m in FUNCTION_CLASSES]
                                     + [len(own) for own in builtin_words], dtype=np.int64)
        self.alias_prob = np.ones(len(words), dtype=np.float64)
        self.alias = np.arange(len(words), dtype=np.int64)
        for first, size in zip(class_first, class_size):
            weights = 1.0 / np.arange(1, size + 1, dtype=np.float64) ** zipf_exponent
            prob, alias = alias_table(weights)
            self.alias_prob[first:first + size] = prob
            self.alias[first:first + size] = alias + first
        self._draw_stream(rng)

    def _draw_stream(self, rng: np.random.Generator) -> None:
        """STREAM_TOKENS + MAX_PARAGRAPH positions of random sentences; `sentence_ends` lists
        the positions (>= MAX_PARAGRAPH) that end a sentence."""
        index = {name: k for k, name in enumerate(CLASS_NAMES)}
        codes, seps = [], []
        for pattern in ww.SENTENCES:
            codes.append([index[w.rstrip(",")] for w in pattern])
            seps.append([COMMA if w.endswith(",") else SPACE for w in pattern[:-1]] + [PERIOD])
        lengths = np.array([len(c) for c in codes])
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        flat_codes, flat_seps = np.concatenate(codes), np.concatenate(seps)
        need = STREAM_TOKENS + MAX_PARAGRAPH
        picks = rng.integers(0, len(codes), size=2 * need // int(lengths.min()) + 1)
        picks = picks[:int(np.searchsorted(np.cumsum(lengths[picks]), need)) + 1]
        within = np.arange(int(lengths[picks].sum())) - np.repeat(
            np.cumsum(lengths[picks]) - lengths[picks], lengths[picks])
        source = np.repeat(offsets[picks], lengths[picks]) + within
        self.stream_class = flat_codes[source].astype(np.int64)
        self.stream_sep = flat_seps[source].astype(np.uint8)
        ends = np.flatnonzero(self.stream_sep == PERIOD)
        self.sentence_ends = ends[ends >= MAX_PARAGRAPH].astype(np.int64)
        # every stretch from a sentence start to a sentence end, by length
        starts = np.concatenate([[0], ends[:-1] + 1])
        first = np.arange(len(starts))
        count = np.searchsorted(ends, starts + MAX_PARAGRAPH) - first  # end - start < MAX
        pair_start = np.repeat(starts, count)
        pair_end = ends[np.repeat(first, count) + np.arange(int(count.sum())) -
                        np.repeat(np.cumsum(count) - count, count)]
        pair_length = pair_end - pair_start + 1
        order = np.argsort(pair_length, kind="stable")
        self.stretch_start = pair_start[order].astype(np.int64)
        self.stretch_first = np.searchsorted(pair_length[order],
                                             np.arange(MAX_PARAGRAPH + 2)).astype(np.int64)

    def stream_starts(self, rng: np.random.Generator, lengths: np.ndarray) -> np.ndarray:
        """For paragraphs of `lengths` (<= MAX_PARAGRAPH) words, where each takes its stretch of
        the stream: whole sentences where the stream has a stretch of that length, else a stretch
        that ends at a sentence end."""
        pick = rng.random(len(lengths))
        first = self.stretch_first[lengths]
        count = self.stretch_first[lengths + 1] - first
        whole = self.stretch_start[np.minimum(first + (pick * count).astype(np.int64),
                                              len(self.stretch_start) - 1)]
        ends = self.sentence_ends[(pick * len(self.sentence_ends)).astype(np.int64)]
        return np.where(count > 0, whole, ends - lengths + 1)


@njit(cache=True, nogil=True)
def fill_body(tokens, seps, starts, lengths, stream_starts, stream_class, stream_sep,
              class_first, class_size, alias_prob, alias, uniforms):
    """Words and separators of body paragraphs: paragraph r fills tokens[starts[r]:...+lengths[r]]
    with the classes and separators of the stream from stream_starts[r]; each word is drawn from
    its class with one uniform (its integer part picks the column, its fraction the coin)."""
    k = 0
    for r in range(starts.shape[0]):
        at = starts[r]
        s = stream_starts[r]
        for j in range(lengths[r]):
            c = stream_class[s + j]
            scaled = uniforms[k] * class_size[c]
            column = min(np.int64(scaled), class_size[c] - 1)  # u * size may round up
            word = class_first[c] + column
            if scaled - column >= alias_prob[word]:
                word = alias[word]
            tokens[at + j] = word
            seps[at + j] = stream_sep[s + j]
            k += 1
