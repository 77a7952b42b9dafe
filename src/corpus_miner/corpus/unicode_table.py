"""Per-code-point tables that let the compiled tokenizer reproduce the token rule exactly.

The rule (README "Tokens"): after `str.lower()`, a token is either one *single* character (a
letter or number, other than a decimal digit, of the scripts written without spaces: Han,
Hiragana, Katakana, Thai, Lao, Khmer, Myanmar, plus the Common-script letters used only with
Han/kana such as the prolonged sound mark ー) together with the combining marks (\\p{M}) that
follow it, or a maximal run of the other letters, marks and numbers (\\p{L}\\p{M}\\p{N}).

Character classes (categories, scripts) come from the `regex` module's Unicode data, which is
also the reference the tests check against; lowercase comes from `str.lower()` of the running
Python. The tables are built once (about a second) and cached on disk, keyed by both versions.

Why per code point is enough: CPython's `str.lower()` maps every character independently with
its full case mapping, except CAPITAL SIGMA (final-sigma context). Characters whose full mapping
is not exactly one code point (only U+0130 today) or that depend on context are flagged SPECIAL;
documents containing one take the exact slow path (`str.lower()` on the whole text).
"""

from __future__ import annotations

import functools
import os
import sys
import unicodedata
from collections.abc import Callable

import numpy as np

from corpus_miner.io.cache import cache_dir

N_CODE_POINTS = 0x110000
# Flags of the lowercase form of a code point (the fold-as-you-scan path and character spans) ...
LOWER_RUN = np.uint8(1)     # a run character: \p{L}\p{M}\p{N} that is not single (marks included)
LOWER_SINGLE = np.uint8(2)  # a single character: a token by itself (with the marks after it)
LOWER_MARK = np.uint8(4)    # a combining mark (also LOWER_RUN): attaches to a single before it
# ... and the same three flags of the code point itself, for text that is already lowercased.
SELF_SHIFT = 3
SELF_RUN = np.uint8(LOWER_RUN << SELF_SHIFT)
SELF_SINGLE = np.uint8(LOWER_SINGLE << SELF_SHIFT)
SELF_MARK = np.uint8(LOWER_MARK << SELF_SHIFT)
SPECIAL = np.uint8(64)      # lowercase is not one context-free code point: exact slow path
CAPITAL_SIGMA = 0x03A3
_TABLE_FORMAT = 3  # two .npy files (2: one .npz)

SINGLE_SCRIPTS = ("Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar")
# `regex` (V1) sets of the rule; tests/corpus/reference.py spells the same rule out on its own.
WORD_SET = r"[\p{L}\p{M}\p{N}]"
MARK_SET = r"\p{M}"
SINGLE_SET = (r"[[\p{L}\p{N}--\p{Nd}]&&["
              + "".join(rf"\p{{sc={s}}}" for s in SINGLE_SCRIPTS)
              + r"[\p{sc=Common}&&[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]]]]")


def _members(pattern: str, text: str, code_points: np.ndarray) -> np.ndarray:
    """bool[N_CODE_POINTS]: which code points `pattern` (a one-character set) matches."""
    import regex

    out = np.zeros(N_CODE_POINTS, dtype=bool)
    for match in regex.finditer(pattern + "+", text, flags=regex.V1):
        out[code_points[match.start():match.end()]] = True
    return out


def _build() -> tuple[np.ndarray, np.ndarray]:
    code_points = np.array([cp for cp in range(N_CODE_POINTS) if not 0xD800 <= cp < 0xE000],
                           dtype=np.int64)  # surrogates never occur in valid UTF-8
    text = "".join(map(chr, code_points.tolist()))
    word = _members(WORD_SET, text, code_points)
    single = _members(SINGLE_SET, text, code_points)  # letters and numbers only
    mark = _members(MARK_SET, text, code_points)  # marks are never single
    run = word & ~single
    self_class = (run * LOWER_RUN) | (single * LOWER_SINGLE) | (mark * LOWER_MARK)
    self_class = self_class.astype(np.uint8)

    lower = np.arange(N_CODE_POINTS, dtype=np.int32)
    multi = []  # code points whose lowercase has several code points
    lowered = []
    for cp in code_points.tolist():
        low = chr(cp).lower()
        if len(low) == 1:
            lowered.append(ord(low))
        else:
            lowered.append(cp)
            multi.append((cp, low))
    lower[code_points] = lowered
    info = (self_class << SELF_SHIFT).astype(np.uint8) | self_class[lower]
    info[CAPITAL_SIGMA] |= SPECIAL
    for cp, low in multi:
        # No token boundary may fall inside such a character, so that its character span is
        # well defined: after a separator come only separators, after a run character run
        # characters, after a single character marks. Checked so that a future Unicode that
        # broke it fails loudly instead of tokenizing wrongly.
        first = int(self_class[ord(low[0])])
        rest = {int(self_class[ord(c)]) for c in low[1:]}
        allowed = {0: {0}, int(LOWER_RUN): {int(LOWER_RUN), int(LOWER_RUN | LOWER_MARK)},
                   int(LOWER_RUN | LOWER_MARK): {int(LOWER_RUN | LOWER_MARK)},
                   int(LOWER_SINGLE): {int(LOWER_RUN | LOWER_MARK)}}[first]
        if not rest <= allowed:
            raise RuntimeError(f"U+{cp:04X} lowercases to characters of mixed token classes")
        info[cp] = (self_class[cp] << SELF_SHIFT) | first | SPECIAL
    return info, lower


@functools.lru_cache(maxsize=1)
def code_point_tables() -> tuple[np.ndarray, np.ndarray]:
    """(info uint8[0x110000] of the LOWER_*, SELF_* and SPECIAL flags, lower int32[0x110000])."""
    info, lower = cached_tables(f"codepoints-v{_TABLE_FORMAT}",
                                (("info", np.uint8), ("lower", np.int32)), _build)
    return info, lower


def cached_tables(kind: str, specs: tuple[tuple[str, type], ...],
                  build: Callable[[], tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """Per-code-point tables (one per (name, dtype) of specs, N_CODE_POINTS entries each) that
    `build` computes from the Unicode data of Python and `regex`: built once per version of
    those and cached as .npy files, then memory-mapped."""
    import regex

    version = (f"u{unicodedata.unidata_version}-py{sys.version_info[0]}.{sys.version_info[1]}"
               f"-regex{regex.__version__}")
    paths = [cache_dir() / f"{kind}-{version}-{name}.npy" for name, _ in specs]
    try:
        # Memory-mapped copy-on-write (writable: the same numba type as a built table): a
        # command reads only the pages of the code points its text has, not all 5.5 MB.
        tables = tuple(np.asarray(np.load(path, mmap_mode="c")) for path in paths)
        if all(t.shape == (N_CODE_POINTS,) and t.dtype == dtype
               for t, (_, dtype) in zip(tables, specs)):
            return tables
    except (OSError, ValueError):
        pass
    tables = build()
    try:  # best effort: a read-only home only costs the rebuild next time
        for path, table in zip(paths, tables):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            with open(tmp, "wb") as fh:
                np.save(fh, table, allow_pickle=False)
            os.replace(tmp, path)
    except OSError:
        pass
    return tables
