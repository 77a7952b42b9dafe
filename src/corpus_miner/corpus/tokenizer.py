"""The tokenizer: `str.lower()`, then single characters of the scripts written without spaces
(with their combining marks) and maximal runs of the other letters, marks and numbers.

The rule in full is in `unicode_table`. `tokenize` and `token_spans` work on one string;
`join_tokens` writes tokens back as text that tokenizes to them again (no space between CJK
characters); `TokenIdAssigner` is the bulk path that turns batches of Arrow strings into flat
uint32 token ids with a vocabulary in order of first appearance, calling the compiled scan in
`kernels.py` and growing its buffers on demand.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from corpus_miner.corpus import kernels
from corpus_miner.corpus.unicode_table import (
    LOWER_MARK,
    LOWER_RUN,
    LOWER_SINGLE,
    SELF_MARK,
    SELF_RUN,
    SELF_SINGLE,
    code_point_tables,
)
from corpus_miner.io.strings import StringList, arrow_string_buffers


def _char_class(flags: np.ndarray) -> str:
    """A stdlib `re` character class of the code points whose `flags` are true."""
    is_member = np.concatenate([[False], flags, [False]])
    edges = np.flatnonzero(is_member[1:] != is_member[:-1])
    ranges = []
    for lo, hi in zip(edges[0::2], edges[1::2] - 1):
        low, high = re.escape(chr(lo)), re.escape(chr(hi))
        ranges.append(low if lo == hi else f"{low}-{high}")
    return "[" + "".join(ranges) + "]"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@functools.lru_cache(maxsize=1)
def token_regex() -> re.Pattern:
    """The rule as a stdlib `re` pattern over lowercased text (which lacks \\p), from the table:
    a single character with the marks after it, or a run of run characters."""
    info, _ = code_point_tables()
    single = _char_class((info & SELF_SINGLE) != 0)
    mark = _char_class((info & SELF_MARK) != 0)
    run = _char_class((info & SELF_RUN) != 0)
    return re.compile(f"{single}{mark}*|{run}+")


def tokenize(text: str) -> list[str]:
    """Tokens of one text: lowercase exactly like `text.lower()`, then the token rule.

    This is the definition; the bulk path (`TokenIdAssigner`) produces the same tokens.
    """
    return token_regex().findall(text.lower())


def token_spans(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends), int64 character offsets into `text` of each token, in order.

    Token k is produced by exactly the characters text[starts[k]:ends[k]]: lowercasing maps each
    character to one or more characters with no token boundary between them (checked when the
    table is built), so tokens of the lowered text correspond one to one to spans of the original.
    """
    info, _ = code_point_tables()
    code_points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return kernels.token_char_spans(code_points, info)


def line_starts(text: str) -> tuple[list[int], list[int]]:
    """(line starts, paragraph starts) of one text: the index in `tokenize(text)` of the first
    token of each line of `text.splitlines()` that has a token, and of those among them that
    follow a line without tokens or are the text's first token.

    This is the definition; the bulk path (`TokenIdAssigner`) records the same positions.
    """
    lines, paragraphs = [], []
    count = 0
    after_empty = True
    for line in text.splitlines():
        n = len(tokenize(line))
        if n:
            lines.append(count)
            if after_empty:
                paragraphs.append(count)
            count += n
        after_empty = n == 0
    return lines, paragraphs


# A sentence break in the text between two tokens: one of . ! ? : and, later in that text,
# whitespace (". ", ".) ", "?\n"), or a CJK full stop, exclamation, question mark or colon.
SENTENCE_BREAK = re.compile(r"[.!?:]\S*\s|[\u3002\uff01\uff1f\uff1a]")


def sentence_starts(text: str) -> list[int]:
    """The indices k in `tokenize(text)` of the tokens that follow a sentence break: the text
    between token k - 1 and token k matches SENTENCE_BREAK (never the first token: text before
    it is no break).

    This is the definition; the bulk path (`TokenIdAssigner(sentences=True)`) records the same
    positions.
    """
    starts, ends = token_spans(text)
    return [k for k in range(1, len(starts))
            if SENTENCE_BREAK.search(text, int(ends[k - 1]), int(starts[k]))]


def _flags(ch: str) -> int:
    cp = ord(ch)
    return int(code_point_tables()[0][cp]) if cp < 0xD800 or cp >= 0xE000 else 0


def needs_separator(left: str, right: str) -> bool:
    """Whether `left + right` would join the last token of `left` and the first of `right` into
    one (so a separator must go between them to keep both).

    They join when `right` starts with a combining mark (it attaches to any token), or with a run
    character while `left` ends in a run token (not in a single character and its marks).
    """
    if not left or not right:
        return False
    first = _flags(right[0])
    if not first & LOWER_RUN:  # a separator, or a single character: always a token start
        return False
    if not _flags(left[-1]) & (LOWER_RUN | LOWER_SINGLE):
        return False
    if first & LOWER_MARK:
        return True
    end = len(left) - 1
    while end >= 0 and _flags(left[end]) & LOWER_MARK:  # marks belong to the token before them
        end -= 1
    return end < 0 or not _flags(left[end]) & LOWER_SINGLE


RUN_TOKEN, SINGLE_TOKEN = range(2)  # token kinds, see join_with_kinds


def token_kind(token: str) -> int:
    """SINGLE_TOKEN (a single character and its marks) or RUN_TOKEN."""
    return SINGLE_TOKEN if token and _flags(token[0]) & LOWER_SINGLE else RUN_TOKEN


def join_with_kinds(tokens: Sequence[str], kinds: Sequence[int]) -> str:
    """`join_tokens` with the kinds of the tokens given (callers joining many phrases over one
    vocabulary compute them once)."""
    if SINGLE_TOKEN not in kinds:
        return " ".join(tokens)
    out: list[str] = []
    previous = RUN_TOKEN
    for token, kind in zip(tokens, kinds):
        if out and not (kind == SINGLE_TOKEN and previous == SINGLE_TOKEN):
            out.append(" ")
        out.append(token)
        previous = kind
    return "".join(out)


def join_tokens(tokens: Sequence[str]) -> str:
    """Tokens written back as readable text that tokenizes to the same tokens: no space between
    two single characters (CJK, kana, Thai... read as written), one space everywhere else
    (`我们使用 cookie 来改善`; a space before a token that starts with a combining mark keeps the
    mark from attaching to the token before it)."""
    return join_with_kinds(tokens, [token_kind(t) for t in tokens])


class TokenIdAssigner:
    """Accumulates token ids for batches of documents; ids follow order of first appearance."""

    def __init__(self, initial_vocab: int = 1 << 14, initial_tokens: int = 1 << 16,
                 sentences: bool = False):
        """sentences=True also records which tokens follow a sentence break (the
        kernels.SENTENCE_BREAK bit of finish_with_lines' flags; `sentence_starts` defines it)."""
        if initial_vocab < 1 or initial_tokens < 1:
            raise ValueError("initial capacities must be positive")
        self._info, self._lower = code_point_tables()
        self._state = np.zeros(kernels.STATE_SIZE, dtype=np.int64)
        self._state[kernels.SENTENCES] = int(bool(sentences))
        self._table = new_table(2 * initial_vocab)
        self._vocab_key = np.zeros(initial_vocab, dtype=np.uint64)
        self._vocab_offsets = np.zeros(initial_vocab + 1, dtype=np.int64)
        self._vocab_bytes = np.zeros(16 * initial_vocab, dtype=np.uint8)
        self._tokens = np.zeros(initial_tokens, dtype=np.uint32)
        self._line_flags = np.zeros(initial_tokens, dtype=np.uint8)  # kernels.IN_LINE, ...
        self._doc_ends = np.zeros(1 << 10, dtype=np.int64)  # token count after each document
        self.n_docs = 0
        self.special_docs = 0  # documents that needed the exact str.lower() path

    @property
    def n_tokens(self) -> int:
        return int(self._state[kernels.N_TOKENS])

    @property
    def n_vocab(self) -> int:
        return int(self._state[kernels.N_VOCAB])

    def add_texts(self, texts) -> None:
        """Tokenize a string array (no nulls), or any sequence of str; one document per element.
        A lone surrogate (which UTF-8 cannot hold) separates tokens, as in `tokenize`."""
        if not isinstance(texts, (pa.Array, pa.ChunkedArray)):
            texts = pa.array([_LONE_SURROGATE.sub("\ufffd", t) for t in texts], pa.string())
        offsets, data = arrow_string_buffers(texts)
        n = len(offsets) - 1
        self._ensure_doc_capacity(self.n_docs + n)
        doc_ends = self._doc_ends[self.n_docs:self.n_docs + n]
        # Token count is at most one per two bytes (+1 per document); a fifth is typical.
        self._ensure_token_capacity(self.n_tokens + (int(offsets[-1] - offsets[0]) // 5) + n)
        state = self._state
        state[kernels.DOC] = 0
        state[kernels.POS] = -1
        while True:
            self._run(data, offsets, n, 0, state, doc_ends)
            status = state[kernels.STATUS]
            if status == kernels.DONE:
                break
            if status == kernels.SPECIAL_DOC:
                d = int(state[kernels.DOC])
                raw = data[offsets[d]:offsets[d + 1]].tobytes()  # robust to unvalidated bytes
                self._add_lowered(raw.decode("utf-8", "replace").lower(), doc_ends[d:d + 1])
                state[kernels.DOC] = d + 1
                state[kernels.POS] = -1
                self.special_docs += 1
            else:
                self._grow(int(status))
        self.n_docs += n

    def _add_lowered(self, lowered: str, doc_end: np.ndarray) -> None:
        """Exact path: `lowered` is already str.lower() of the whole document."""
        data = np.frombuffer(lowered.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        offsets = np.array([0, len(data)], dtype=np.int64)
        state = self._state
        saved_doc = int(state[kernels.DOC])
        state[kernels.DOC] = 0
        state[kernels.POS] = -1
        while True:
            self._run(data, offsets, 1, 1, state, doc_end)
            status = state[kernels.STATUS]
            if status == kernels.DONE:
                break
            self._grow(int(status))
        state[kernels.DOC] = saved_doc

    def _run(self, data, offsets, n_docs, lowered, state, doc_ends):
        kernels.scan_documents(data, offsets, n_docs, self._info, self._lower, lowered, state,
                               self._tokens, self._line_flags, doc_ends, self._table,
                               self._vocab_key, self._vocab_offsets, self._vocab_bytes)

    def _grow(self, status: int) -> None:
        if status == kernels.NEED_TOKENS:
            self._ensure_token_capacity(int(len(self._tokens) * 1.5) + 1024)
        elif status == kernels.NEED_TABLE:
            table = new_table(2 * len(self._table))
            kernels.rehash(self._vocab_key, self.n_vocab, table)
            self._table = table
        elif status == kernels.NEED_VOCAB_SLOTS:
            size = 2 * len(self._vocab_key)
            self._vocab_key = resized(self._vocab_key, size)
            self._vocab_offsets = resized(self._vocab_offsets, size + 1)
        elif status == kernels.NEED_VOCAB_BYTES:
            self._vocab_bytes = resized(self._vocab_bytes, 2 * len(self._vocab_bytes))
        else:  # pragma: no cover - a kernel/driver mismatch, not a user error
            raise RuntimeError(f"unexpected tokenizer status {status}")

    def _ensure_token_capacity(self, size: int) -> None:
        if size > len(self._tokens):
            self._tokens = resized(self._tokens, size)
            self._line_flags = resized(self._line_flags, size)

    def _ensure_doc_capacity(self, size: int) -> None:
        if size > len(self._doc_ends):
            self._doc_ends = resized(self._doc_ends, max(size, 2 * len(self._doc_ends)))

    def vocab_keys(self) -> np.ndarray:
        """The table key of each vocabulary entry (as the scan computed it), in id order."""
        return self._vocab_key[:self.n_vocab]

    def finish(self) -> tuple[np.ndarray, np.ndarray, StringList]:
        """(tokens uint32, doc_offsets int64 n_docs+1, vocab); the assigner is spent afterwards
        (but for `vocab_keys`)."""
        return self.finish_with_lines()[:3]  # type: ignore[return-value]

    def finish_with_lines(self) -> tuple[np.ndarray, np.ndarray, StringList, np.ndarray]:
        """`finish`, and the line flag of every token (uint8: kernels.IN_LINE, LINE_START or
        PARAGRAPH_START in the kernels.LINE_FLAGS bits, and the kernels.SENTENCE_BREAK bit when
        built with sentences=True; see kernels.scan_documents)."""
        line_flags = resized(self._line_flags, self.n_tokens)
        self._line_flags = np.zeros(0, dtype=np.uint8)
        tokens = resized(self._tokens, self.n_tokens)
        doc_offsets = np.zeros(self.n_docs + 1, dtype=np.int64)
        doc_offsets[1:] = self._doc_ends[:self.n_docs]
        n_vocab = self.n_vocab
        vocab_offsets = self._vocab_offsets[:n_vocab + 1].copy()
        vocab = StringList(vocab_offsets, self._vocab_bytes[:vocab_offsets[-1]].copy())
        self._tokens = np.zeros(0, dtype=np.uint32)  # the buffers now belong to the caller
        self._doc_ends = np.zeros(0, dtype=np.int64)
        self._table = np.zeros(0, dtype=np.int32)
        return tokens, doc_offsets, vocab, line_flags


def new_table(slots: int) -> np.ndarray:
    """An empty hash table of the kernels: `slots` (a power of two) int32 ids, -1 for empty."""
    return np.full(slots, -1, dtype=np.int32)


def resized(array: np.ndarray, size: int) -> np.ndarray:
    """`array` grown/shrunk to `size` in place when possible (realloc, no second copy in RAM)."""
    try:
        array.resize(size, refcheck=False)
        return array
    except ValueError:  # not owning its memory (a view): copy instead
        out = np.zeros(size, dtype=array.dtype)
        keep = min(size, len(array))
        out[:keep] = array[:keep]
        return out
