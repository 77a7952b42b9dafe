"""Per-code-point tables that let the compiled tokenizer reproduce `str.lower()` + `\\p{L}\\p{M}\\p{N}`.

Built once from `unicodedata` (about half a second) and cached on disk, keyed by the Unicode
version of the running Python, so tokens always agree with `str.lower()` of *this* interpreter.

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
from pathlib import Path

import numpy as np

N_CODE_POINTS = 0x110000
WORD_LOWER = np.uint8(1)  # the lowercase form of this code point is a token character
WORD_SELF = np.uint8(2)   # this code point itself is a token character (\p{L}, \p{M}, \p{N})
SPECIAL = np.uint8(4)     # lowercase is not one context-free code point: exact slow path
CAPITAL_SIGMA = 0x03A3
_TABLE_FORMAT = 1


def is_token_char(ch: str) -> bool:
    """The reference definition of a token character: Unicode categories L*, M*, N*."""
    return unicodedata.category(ch)[0] in "LMN"


def _build() -> tuple[np.ndarray, np.ndarray]:
    info = np.zeros(N_CODE_POINTS, dtype=np.uint8)
    lower = np.arange(N_CODE_POINTS, dtype=np.int32)
    for cp in range(N_CODE_POINTS):
        if 0xD800 <= cp < 0xE000:  # surrogates never occur in valid UTF-8
            continue
        ch = chr(cp)
        flags = 0
        if unicodedata.category(ch)[0] in "LMN":
            flags |= WORD_SELF
        low = ch.lower()
        # A character's lowercase pieces are homogeneous (all token chars or none); this is
        # what makes character spans well defined. Checked here so a future Unicode that
        # broke it would fail loudly instead of tokenizing wrongly.
        kinds = {unicodedata.category(c)[0] in "LMN" for c in low}
        if len(kinds) != 1:
            raise RuntimeError(f"U+{cp:04X} lowercases to mixed token/non-token characters")
        if kinds.pop():
            flags |= WORD_LOWER
        if len(low) != 1 or cp == CAPITAL_SIGMA:
            flags |= SPECIAL
        else:
            lower[cp] = ord(low)
        info[cp] = flags
    return info, lower


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "corpus-miner"


@functools.lru_cache(maxsize=1)
def code_point_tables() -> tuple[np.ndarray, np.ndarray]:
    """(info uint8[0x110000] of WORD_LOWER|WORD_SELF|SPECIAL flags, lower int32[0x110000])."""
    version = f"u{unicodedata.unidata_version}-py{sys.version_info[0]}.{sys.version_info[1]}"
    path = _cache_dir() / f"codepoints-v{_TABLE_FORMAT}-{version}.npz"
    try:
        with np.load(path, allow_pickle=False) as cached:
            info, lower = cached["info"], cached["lower"]
        if info.shape == (N_CODE_POINTS,) and lower.shape == (N_CODE_POINTS,):
            return info, lower
    except (OSError, KeyError, ValueError):
        pass
    info, lower = _build()
    try:  # best effort: a read-only home only costs the rebuild next time
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            np.savez(fh, info=info, lower=lower)
        os.replace(tmp, path)
    except OSError:
        pass
    return info, lower
