"""TokenCorpus: a tokenized corpus as flat arrays, and its on-disk folder format.

Folder layout (format `corpus-miner/token-corpus`, version 1), written atomically:
  metadata.json        format, version, counts, tokenizer, and per array: file, dtype, shape, sha256
  tokens.npy           uint32, token ids of all documents, concatenated
  doc_offsets.npy      int64, n_docs + 1
  vocab_offsets.npy / vocab_bytes.npy     the vocabulary (UTF-8 strings, see StringList)
  doc_id_offsets.npy / doc_id_bytes.npy   the document ids
Everything is plain `.npy` (no pickle) so `load(mmap=True)` maps corpora larger than RAM.
"""

from __future__ import annotations

import hashlib
import json
import os
import unicodedata
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Sequence

import numpy as np

from corpus_miner.io.artefact import TOKEN_CORPUS_FORMAT
from corpus_miner.io.atomic import atomic_dir
from corpus_miner.io.readers import ReadStats
from corpus_miner.io.strings import StringList
from corpus_miner.errors import FormatError

FORMAT_NAME = TOKEN_CORPUS_FORMAT
FORMAT_VERSION = 1
# The token rule; a corpus saved under another rule has other tokens and is refused on load.
TOKENIZER = ("v2: str.lower, then one Han/Hiragana/Katakana/Thai/Lao/Khmer/Myanmar character with "
             "its marks, or a maximal run of other \\p{L}\\p{M}\\p{N}")
_ARRAYS = {  # name -> dtype
    "tokens": np.dtype("<u4"),
    "doc_offsets": np.dtype("<i8"),
    "vocab_offsets": np.dtype("<i8"),
    "vocab_bytes": np.dtype("u1"),
    "doc_id_offsets": np.dtype("<i8"),
    "doc_id_bytes": np.dtype("u1"),
}


@dataclass(eq=False)
class TokenCorpus:
    """Documents as token ids. Document i is tokens[doc_offsets[i]:doc_offsets[i + 1]].

    tokens:      uint32 token ids of all documents, concatenated
    doc_offsets: int64, n_docs + 1, starts at 0 and ends at n_tokens
    doc_ids:     document ids (str), one per document
    vocab:       token id -> token string; ids in order of first appearance
    read_stats:  what the readers counted while building it (None when unknown)
    """

    tokens: np.ndarray
    doc_offsets: np.ndarray
    doc_ids: Sequence[str]
    vocab: Sequence[str]
    read_stats: ReadStats | None = None

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
        """Token ids back to text: tokens joined by single spaces."""
        return " ".join(self.vocab[int(t)] for t in ids)

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
    def save(self, path) -> Path:
        """Write the corpus folder atomically (a crash never leaves a half-written folder)."""
        path = Path(path)
        vocab = _as_string_list(self.vocab)
        doc_ids = _as_string_list(self.doc_ids)
        arrays = {
            "tokens": self.tokens, "doc_offsets": self.doc_offsets,
            "vocab_offsets": vocab.offsets, "vocab_bytes": vocab.data,
            "doc_id_offsets": doc_ids.offsets, "doc_id_bytes": doc_ids.data,
        }
        with atomic_dir(path) as tmp:
            entries = {}
            for name, dtype in _ARRAYS.items():
                array = np.ascontiguousarray(arrays[name], dtype=dtype)
                file = tmp / f"{name}.npy"
                np.save(file, array, allow_pickle=False)
                entries[name] = {"file": file.name, "dtype": dtype.str,
                                 "shape": list(array.shape), "sha256": _sha256(file)}
            metadata = {
                "format": FORMAT_NAME, "version": FORMAT_VERSION,
                "n_docs": self.n_docs, "n_tokens": self.n_tokens, "n_vocab": len(vocab),
                "tokenizer": TOKENIZER, "unicode_version": unicodedata.unidata_version,
                "read_stats": self.read_stats.as_dict() if self.read_stats else None,
                "arrays": entries,
            }
            (tmp / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
            tmp.chmod(0o777 & ~_umask())  # mkdtemp made it private; a corpus is ordinary data
        return path

    @classmethod
    def load(cls, path, mmap: bool = True, verify: bool = True) -> "TokenCorpus":
        """Open a saved corpus; arrays are memory-mapped unless mmap=False.

        Sizes, shapes, dtypes and offsets are always checked; verify=True also checks the
        sha256 of every file and that every token id is in the vocabulary (reads everything).
        """
        path = Path(path)
        metadata = _read_metadata(path)
        arrays = {}
        for name, dtype in _ARRAYS.items():
            entry = metadata["arrays"].get(name)
            if not isinstance(entry, dict):
                raise FormatError(f"{path}: metadata.json lacks array '{name}'; re-create the corpus")
            arrays[name] = _load_array(path, name, entry, dtype, mmap, verify)
        n_docs, n_tokens, n_vocab = (int(metadata[k]) for k in ("n_docs", "n_tokens", "n_vocab"))
        _check(path, arrays["tokens"].shape == (n_tokens,), "tokens length differs from n_tokens")
        _check_offsets(path, "doc_offsets", arrays["doc_offsets"], n_docs, n_tokens, verify)
        _check_offsets(path, "vocab_offsets", arrays["vocab_offsets"], n_vocab,
                       len(arrays["vocab_bytes"]), verify)
        _check_offsets(path, "doc_id_offsets", arrays["doc_id_offsets"], n_docs,
                       len(arrays["doc_id_bytes"]), verify)
        if verify and n_tokens:
            _check(path, int(arrays["tokens"].max()) < n_vocab, "token id beyond the vocabulary")
        stats = metadata.get("read_stats")
        return cls(arrays["tokens"], arrays["doc_offsets"],
                   StringList(arrays["doc_id_offsets"], arrays["doc_id_bytes"]),
                   StringList(arrays["vocab_offsets"], arrays["vocab_bytes"]),
                   _read_stats(stats))


def _read_stats(saved) -> ReadStats | None:
    """ReadStats from metadata, ignoring counters this version does not know."""
    if not isinstance(saved, dict):
        return None
    known = {f.name for f in fields(ReadStats)}
    return ReadStats(**{k: v for k, v in saved.items() if k in known})


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _as_string_list(strings) -> StringList:
    return strings if isinstance(strings, StringList) else StringList.from_strings(strings)


def _sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as fh:
        while block := fh.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def _read_metadata(path: Path) -> dict:
    meta_file = path / "metadata.json"
    if not path.is_dir() or not meta_file.is_file():
        raise FormatError(f"{path}: not a saved token corpus (no metadata.json); "
                          "create one with `corpus-miner tokenize INPUT -o DIR`")
    try:
        metadata = json.loads(meta_file.read_text())
    except (OSError, ValueError) as exc:
        raise FormatError(f"{meta_file}: unreadable or corrupt ({exc})") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT_NAME:
        raise FormatError(f"{path}: metadata.json is not a {FORMAT_NAME} file")
    if metadata.get("version") != FORMAT_VERSION:
        raise FormatError(f"{path}: token corpus format version {metadata.get('version')!r}, "
                          f"this corpus-miner reads version {FORMAT_VERSION}; re-create it")
    if metadata.get("tokenizer") != TOKENIZER:
        raise FormatError(f"{path}: saved with another token rule ({metadata.get('tokenizer')!r}); "
                          "re-create it with `corpus-miner tokenize INPUT -o DIR`")
    if not isinstance(metadata.get("arrays"), dict):
        raise FormatError(f"{path}: metadata.json lacks the array list; re-create the corpus")
    return metadata


def _load_array(path: Path, name: str, entry: dict, dtype: np.dtype, mmap: bool,
                verify: bool) -> np.ndarray:
    file = path / f"{name}.npy"
    if entry.get("file") != file.name or not file.is_file():
        raise FormatError(f"{path}: missing {file.name}; the corpus folder is incomplete")
    try:
        array = np.load(file, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise FormatError(f"{file}: truncated or corrupt ({exc})") from None
    if array.dtype != dtype or list(array.shape) != entry.get("shape"):
        raise FormatError(f"{file}: dtype/shape {array.dtype}{list(array.shape)} differ from "
                          f"metadata {entry.get('dtype')}{entry.get('shape')}; corrupt corpus")
    if verify and _sha256(file) != entry.get("sha256"):
        raise FormatError(f"{file}: checksum mismatch; the corpus was modified or damaged")
    return array


def _check(path: Path, ok: bool, what: str) -> None:
    if not ok:
        raise FormatError(f"{path}: inconsistent corpus ({what}); re-create it")


def _check_offsets(path, name, offsets, n, end, verify) -> None:
    _check(path, offsets.shape == (n + 1,), f"{name} has {len(offsets)} entries, expected {n + 1}")
    _check(path, int(offsets[0]) == 0 and int(offsets[-1]) == end,
           f"{name} must start at 0 and end at {end}")
    if verify and n:
        _check(path, bool(np.all(offsets[1:] >= offsets[:-1])), f"{name} not ascending")
