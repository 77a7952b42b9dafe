"""TokenCorpus: a tokenized corpus as flat arrays, and its saved folder.

Folder (format `corpus-miner/token-corpus`, version 3: corpus_miner.io.artefact's one format),
written atomically:
  metadata.json        counts, tokenizer, read stats, per array dtype/shape/sha256, checksum
  tokens.bin           uint32, token ids of all documents, concatenated
  doc_offsets.bin      int64, n_docs + 1
  line_starts.bin      int64, n_lines: the token index of the first token of each line
  paragraph_starts.bin int64, n_paragraphs: the line starts that begin a paragraph
                       (both written empty, with "lines": false, for a corpus built without them)
  sentence_starts.bin  int64, n_sentences: the tokens that follow a sentence break, present
                       (with "sentences": true) only for a corpus built with them
  vocab_offsets.bin / vocab_bytes.bin     the vocabulary (UTF-8 strings, see StringList)
  doc_id_offsets.bin / doc_id_bytes.bin   the document ids
Raw little-endian arrays, so `load(mmap=True)` maps corpora larger than RAM. Version 2 folders
(the same without the line arrays) load with `line_starts` None; version 3 folders without
sentence_starts.bin (saved before it existed, or without it) load with `sentence_starts` None.
Version 1 folders (.npy files, metadata without a checksum) are refused with a message to
re-create them: tokenizing again is fast, and their tokens may follow an older token rule.
"""

from __future__ import annotations

import contextlib
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from corpus_miner._numba.readonly import read_only
from corpus_miner.io.artefact import (
    TOKEN_CORPUS_FORMAT,
    Artefact,
    ArtefactWriter,
    open_artefact,
    write_artefact,
)
from corpus_miner.io.locations import is_remote
from corpus_miner.io.readers import ReadStats
from corpus_miner.io.strings import StringList

FORMAT_NAME = TOKEN_CORPUS_FORMAT
FORMAT_VERSION = 3
_READABLE_VERSIONS = (2, 3)  # 2: no line arrays
# The token rule; a corpus saved under another rule has other tokens and is refused on load.
TOKENIZER = ("v2: str.lower, then one Han/Hiragana/Katakana/Thai/Lao/Khmer/Myanmar character with "
             "its marks, or a maximal run of other \\p{L}\\p{M}\\p{N}")
_REMEDY = "re-create it with `corpus-miner tokenize INPUT -o DIR`"
_ARRAYS: dict[str, np.dtype] = {  # file -> dtype
    "tokens.bin": np.dtype("<u4"),
    "doc_offsets.bin": np.dtype("<i8"),
    "vocab_offsets.bin": np.dtype("<i8"),
    "vocab_bytes.bin": np.dtype("u1"),
    "doc_id_offsets.bin": np.dtype("<i8"),
    "doc_id_bytes.bin": np.dtype("u1"),
}
_LINE_ARRAYS = {"line_starts.bin": np.dtype("<i8"), "paragraph_starts.bin": np.dtype("<i8")}
_SENTENCE_ARRAY = "sentence_starts.bin"


@dataclass(eq=False)
class TokenCorpus:
    """Documents as token ids. Document i is tokens[doc_offsets[i]:doc_offsets[i + 1]].

    tokens:      uint32 token ids of all documents, concatenated
    doc_offsets: int64, n_docs + 1, starts at 0 and ends at n_tokens
    doc_ids:     document ids (str), one per document
    vocab:       token id -> token string; ids in order of first appearance
    read_stats:  what the readers counted while building it (None when unknown)
    line_starts: int64, ascending token indices of the first token of every line (the lines of
                 `str.splitlines()` that hold a token; `corpus.tokenizer.line_starts` is the
                 definition), so every non-empty document's first token is one; None when the
                 corpus was built without them (from arrays, or saved by corpus-miner < 3 of
                 the folder format)
    paragraph_starts: int64, the line starts that follow a line without tokens, and every
                 document's first token; None with line_starts
    sentence_starts: int64, ascending token indices of the tokens that follow a sentence break
                 (`corpus.tokenizer.sentence_starts` is the definition); None unless the corpus
                 was built asking for them (load_corpus(sentences=True)): edge phrases need them
    texts_digest: (documents, value) of io.digest.OrderedDigest over the texts it was built
                 from (None when unknown: built from arrays, or a folder saved without it): a
                 second read of the inputs (`Cleaner.write` writing them back) is checked
                 against it; a saved folder keeps it
    """

    tokens: np.ndarray
    doc_offsets: np.ndarray
    doc_ids: Sequence[str]
    vocab: Sequence[str]
    read_stats: ReadStats | None = None
    line_starts: np.ndarray | None = None
    paragraph_starts: np.ndarray | None = None
    texts_digest: tuple[int, int] | None = None
    sentence_starts: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.tokens = read_only(self.tokens)  # one type for the kernels: see _numba.readonly
        self.doc_offsets = read_only(self.doc_offsets)
        if (self.line_starts is None) != (self.paragraph_starts is None):
            raise ValueError("line_starts and paragraph_starts go together (both or neither)")
        if self.line_starts is not None:
            self.line_starts = read_only(np.asarray(self.line_starts, dtype=np.int64))
            self.paragraph_starts = read_only(np.asarray(self.paragraph_starts, dtype=np.int64))
        if self.sentence_starts is not None:
            self.sentence_starts = read_only(np.asarray(self.sentence_starts, dtype=np.int64))

    @property
    def n_docs(self) -> int:
        return len(self.doc_offsets) - 1

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    @property
    def n_vocab(self) -> int:
        return len(self.vocab)

    def doc_tokens(self, i: int) -> np.ndarray:
        return self.tokens[self.doc_offsets[i]:self.doc_offsets[i + 1]]

    def decode(self, ids) -> str:
        """Token ids back to readable text that tokenizes to the same tokens (join_tokens: single
        spaces, none between two CJK/Thai characters)."""
        from corpus_miner.corpus.tokenizer import join_tokens

        return join_tokens([self.vocab[int(t)] for t in ids])

    def token_id(self, token: str) -> int | None:
        """Id of a token string, or None when it is not in the vocabulary."""
        try:
            return self.vocab.index(token)
        except ValueError:
            return None

    def __repr__(self) -> str:
        return (f"TokenCorpus(n_docs={self.n_docs}, n_tokens={self.n_tokens}, "
                f"n_vocab={self.n_vocab})")

    # -- persistence -------------------------------------------------------------------------
    def save(self, path) -> Path | str:
        """Write the corpus folder atomically (a crash never leaves a half-written folder); a
        URL (s3://...) gets the folder uploaded once complete."""
        with corpus_writer(path) as writer:
            writer.add_documents(self.tokens, self.doc_offsets, _as_string_list(self.doc_ids),
                                 self.line_starts, self.paragraph_starts, self.sentence_starts)
            writer.finish(_as_string_list(self.vocab), self.read_stats, self.texts_digest)
        return path if is_remote(path) else Path(path)

    @classmethod
    def load(cls, path, mmap: bool = True, verify: bool = False) -> TokenCorpus:
        """Open a saved corpus; arrays are memory-mapped (read-only) unless mmap=False.

        Always checked (instant): the metadata checksum (edited counts or fields are refused),
        every file's size against its dtype and shape (truncation), the counts against the
        shapes, and the first and last offsets. verify=True also reads everything: the sha256 of
        every file, offsets never decreasing, every token id inside the vocabulary. A URL
        (s3://...) is fetched to a local temporary folder and read into memory.
        """
        if is_remote(path):
            from corpus_miner.io.remote import local_copy

            with local_copy(str(path)) as copy:
                return cls.load(copy, mmap=False, verify=verify)
        saved = open_artefact(path, FORMAT_NAME, _READABLE_VERSIONS, kind="token corpus",
                              remedy=_REMEDY)
        saved.check(saved.metadata.get("tokenizer") == TOKENIZER,
                    f"saved with another token rule ({saved.metadata.get('tokenizer')!r})")
        n_docs, n_tokens, n_vocab = (saved.count(key) for key in ("n_docs", "n_tokens", "n_vocab"))
        arrays = {name[:-len(".bin")]: saved.array(name, dtype, ndim=1, mmap=mmap, verify=verify)
                  for name, dtype in _ARRAYS.items()}
        saved.check(len(arrays["tokens"]) == n_tokens, "tokens length differs from n_tokens")
        _check_offsets(saved, "doc_offsets", arrays["doc_offsets"], n_docs, n_tokens, verify)
        _check_offsets(saved, "vocab_offsets", arrays["vocab_offsets"], n_vocab,
                       len(arrays["vocab_bytes"]), verify)
        _check_offsets(saved, "doc_id_offsets", arrays["doc_id_offsets"], n_docs,
                       len(arrays["doc_id_bytes"]), verify)
        if verify and n_tokens:
            saved.check(int(arrays["tokens"].max()) < n_vocab, "token id beyond the vocabulary")
        lines = paragraphs = None
        if saved.version >= 3 and saved.field("lines", bool):
            lines, paragraphs = (saved.array(name, dtype, ndim=1, mmap=mmap, verify=verify)
                                 for name, dtype in _LINE_ARRAYS.items())
            saved.check(len(lines) == saved.count("n_lines") and
                        len(paragraphs) == saved.count("n_paragraphs"),
                        "line arrays differ from n_lines / n_paragraphs")
            if verify:
                _check_lines(saved, lines, paragraphs, arrays["doc_offsets"])
        sentences = None
        if saved.metadata.get("sentences") is not None and saved.field("sentences", bool):
            sentences = saved.array(_SENTENCE_ARRAY, np.dtype("<i8"), ndim=1, mmap=mmap,
                                    verify=verify)
            saved.check(len(sentences) == saved.count("n_sentences"),
                        "sentence_starts differs from n_sentences")
            if verify:
                saved.check(bool(np.all(sentences[1:] > sentences[:-1])) and (
                    len(sentences) == 0 or 0 < int(sentences[0]) and int(sentences[-1]) < n_tokens),
                    "sentence_starts not strictly ascending inside the tokens")
        return cls(arrays["tokens"], arrays["doc_offsets"],
                   StringList(arrays["doc_id_offsets"], arrays["doc_id_bytes"]),
                   StringList(arrays["vocab_offsets"], arrays["vocab_bytes"]),
                   _read_stats(saved.metadata.get("read_stats")),
                   line_starts=lines, paragraph_starts=paragraphs,
                   texts_digest=_texts_digest(saved, n_docs), sentence_starts=sentences)


class TokenCorpusWriter:
    """Writes a corpus folder document batch by document batch, so that a corpus larger than
    memory can be saved as it is tokenized: `add_documents` for each batch in order, then
    `finish` with the vocabulary. Use it through `corpus_writer`."""

    def __init__(self, artefact: ArtefactWriter):
        self._artefact = artefact
        self._writers = {name: artefact.array_writer(name, dtype)
                         for name, dtype in (_ARRAYS | _LINE_ARRAYS).items()
                         if not name.startswith("vocab_")}
        self._writers["doc_offsets.bin"].write(np.zeros(1, np.int64))
        self._writers["doc_id_offsets.bin"].write(np.zeros(1, np.int64))
        self.n_docs = 0
        self.n_tokens = 0
        self._id_bytes = 0
        self.n_lines = 0
        self.n_paragraphs = 0
        self.lines = True  # until documents come without line starts
        self.n_sentences = 0
        self._sentences: object = None  # the array writer; False once documents come without
        self._finished = False

    def add_documents(self, tokens: np.ndarray, doc_offsets: np.ndarray, doc_ids: StringList,
                      line_starts: np.ndarray | None = None,
                      paragraph_starts: np.ndarray | None = None,
                      sentence_starts: np.ndarray | None = None):
        """The next documents: their tokens, their offsets into `tokens` (documents + 1, from
        0), their ids, their line and paragraph starts and their sentence starts (indices into
        `tokens`; without them the folder keeps no lines, or no sentence starts, at all)."""
        if len(doc_ids) != len(doc_offsets) - 1:
            raise ValueError(f"{len(doc_ids)} ids for {len(doc_offsets) - 1} documents")
        if (line_starts is None) != (paragraph_starts is None):
            raise ValueError("line_starts and paragraph_starts go together (both or neither)")
        doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
        if line_starts is None or paragraph_starts is None:
            self.lines = False
        elif self.lines:
            self._writers["line_starts.bin"].write(np.asarray(line_starts, np.int64)
                                                   + self.n_tokens)
            self._writers["paragraph_starts.bin"].write(np.asarray(paragraph_starts, np.int64)
                                                        + self.n_tokens)
            self.n_lines += len(line_starts)
            self.n_paragraphs += len(paragraph_starts)
        if self.n_docs and (sentence_starts is None) != (self._sentences is False):
            raise ValueError("sentence_starts for some documents but not others (one tokenizer "
                             "records them for all or none)")
        if sentence_starts is None:
            self._sentences = False
        else:
            if self._sentences is None:
                self._sentences = self._artefact.array_writer(_SENTENCE_ARRAY, np.dtype("<i8"))
            self._sentences.write(np.asarray(sentence_starts, np.int64)  # type: ignore[attr-defined]
                                  + self.n_tokens)
            self.n_sentences += len(sentence_starts)
        self._writers["tokens.bin"].write(tokens)
        self._writers["doc_offsets.bin"].write(doc_offsets[1:] + self.n_tokens)
        id_offsets = doc_ids.offsets
        self._writers["doc_id_offsets.bin"].write(id_offsets[1:] - id_offsets[0] + self._id_bytes)
        self._writers["doc_id_bytes.bin"].write(doc_ids.data[id_offsets[0]:id_offsets[-1]])
        self.n_docs += len(doc_ids)
        self.n_tokens += int(doc_offsets[-1])
        self._id_bytes += int(id_offsets[-1] - id_offsets[0])

    def finish(self, vocab: StringList, read_stats: ReadStats | None = None,
               texts_digest: tuple[int, int] | None = None) -> None:
        """The vocabulary and the fields of metadata.json, after the last documents;
        texts_digest: TokenCorpus.texts_digest of the documents, when known."""
        self._artefact.add_array("vocab_offsets.bin", np.asarray(vocab.offsets, _ARRAYS[
            "vocab_offsets.bin"]))
        self._artefact.add_array("vocab_bytes.bin", np.asarray(vocab.data, _ARRAYS[
            "vocab_bytes.bin"]))
        self._artefact.fields.update({
            "n_docs": self.n_docs, "n_tokens": self.n_tokens, "n_vocab": len(vocab),
            "tokenizer": TOKENIZER, "unicode_version": unicodedata.unidata_version,
            "read_stats": read_stats.as_dict() if read_stats else None,
            # a hex string: JSON readers that hold numbers as doubles keep all 64 bits
            "texts_digest": None if texts_digest is None else {
                "documents": int(texts_digest[0]), "value": f"{int(texts_digest[1]):016x}"},
            # line arrays are empty when some documents came without them
            "lines": self.lines, "n_lines": self.n_lines if self.lines else 0,
            "n_paragraphs": self.n_paragraphs if self.lines else 0})
        if self._sentences not in (None, False):
            self._artefact.fields.update({"sentences": True, "n_sentences": self.n_sentences})
        self._finished = True


@contextlib.contextmanager
def corpus_writer(path) -> Iterator[TokenCorpusWriter]:
    """A TokenCorpusWriter into the folder `path`, which appears (atomically) only when the block
    ends without an exception after `finish`."""
    with write_artefact(path, FORMAT_NAME, FORMAT_VERSION) as artefact:
        writer = TokenCorpusWriter(artefact)
        yield writer
        if not writer._finished:
            raise RuntimeError("TokenCorpusWriter.finish was not called")


def _texts_digest(saved: Artefact, n_docs: int) -> tuple[int, int] | None:
    """The saved texts digest (absent from folders saved before it was kept: None)."""
    found = saved.metadata.get("texts_digest")
    if found is None:
        return None
    ok = isinstance(found, dict) and found.get("documents") == n_docs \
        and isinstance(found.get("value"), str) and len(found["value"]) == 16
    try:
        value = int(found["value"], 16) if ok else -1
    except ValueError:
        value = -1
    saved.check(value >= 0, "texts_digest is not the digest of its documents")
    return n_docs, value


def _read_stats(saved) -> ReadStats | None:
    """ReadStats from metadata, ignoring counters this version does not know."""
    if not isinstance(saved, dict):
        return None
    known = {f.name for f in fields(ReadStats)}
    return ReadStats(**{k: v for k, v in saved.items() if k in known})


def _as_string_list(strings) -> StringList:
    return strings if isinstance(strings, StringList) else StringList.from_strings(strings)


def _check_lines(saved: Artefact, lines: np.ndarray, paragraphs: np.ndarray,
                 doc_offsets: np.ndarray) -> None:
    """verify=True's checks of the line arrays: ascending, inside the tokens, every non-empty
    document's first token a paragraph start, every paragraph start a line start."""
    n_tokens = int(doc_offsets[-1])
    for name, starts in (("line_starts", lines), ("paragraph_starts", paragraphs)):
        saved.check(bool(np.all(starts[1:] > starts[:-1])), f"{name} not strictly ascending")
        saved.check(len(starts) == 0 or (int(starts[0]) >= 0 and int(starts[-1]) < n_tokens),
                    f"{name} beyond the tokens")
    firsts = doc_offsets[:-1][doc_offsets[1:] > doc_offsets[:-1]]
    saved.check(bool(np.isin(firsts, paragraphs).all()),
                "a document's first token is not a paragraph start")
    saved.check(bool(np.isin(paragraphs, lines).all()), "a paragraph start is not a line start")


def _check_offsets(saved: Artefact, name: str, offsets: np.ndarray, n: int, end: int,
                   verify: bool) -> None:
    saved.check(len(offsets) == n + 1, f"{name} has {len(offsets)} entries, expected {n + 1}")
    saved.check(int(offsets[0]) == 0 and int(offsets[-1]) == end,
                f"{name} must start at 0 and end at {end}")
    if verify and n:
        saved.check(bool(np.all(offsets[1:] >= offsets[:-1])), f"{name} not ascending")
