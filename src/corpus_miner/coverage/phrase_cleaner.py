"""Cleaning with a phrase list, one batch of documents at a time, for pipelines that stream.

`corpus-miner clean --phrases FILE` loads the whole corpus before it cuts anything. With a phrase
*list*, though, what is handled in a document depends on that document alone: a token is covered
when it lies inside a full occurrence of a listed phrase, an allowed phrase is dropped from the
list and protects its own full occurrences, and `drop_above` compares the document's own share.
So a batch can be cleaned as it comes, with the same answer as the command gives for the same
documents: the texts are tokenized batch by batch and their tokens mapped onto the vocabulary of
the listed phrases (a token no phrase has maps to one id no phrase contains, so it never matches),
and the cut itself is the Cleaner's kernel. What needs the whole corpus is refused: mining
(`--sigma`), and `keep_first` (the first document holding a phrase is only known at the end).

`PhraseCleaner(phrases).clean_texts(texts)` gives the cleaned texts; `clean_arrow` the cleaned
column, spans, shares and which rows to keep; `clean_batch` is the function Hugging Face
`datasets.Dataset.map(..., batched=True)` wants; the datatrove step builds on `clean_arrow`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from corpus_miner._numba.readonly import read_only
from corpus_miner.coverage import kernels
from corpus_miner.coverage.clean import DEFAULT_MASK, Cleaner, CleanParams
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.io.strings import string_array


@dataclass(frozen=True)
class CleanedBatch:
    """What `PhraseCleaner.clean_arrow` found for a batch of n documents.

    texts:      the cleaned texts (remove / mask), or the texts as given (annotate); null where
                the input was null
    junk_spans: [start, end) character spans of the handled text of each document, in the
                original text (a list array, null where the input was null)
    junk_share: handled tokens / tokens of each document (0 for documents without tokens)
    handled:    handled tokens of each document
    tokens:     tokens of each document
    keep:       False for documents left out by drop_above
    """

    texts: pa.Array
    junk_spans: pa.Array
    junk_share: np.ndarray
    handled: np.ndarray
    tokens: np.ndarray
    keep: np.ndarray


def _phrase_texts(phrases) -> list[str]:
    """Phrase texts from a phrase file (any format `corpus-miner clean --phrases` reads) or a
    sequence of strings."""
    if isinstance(phrases, (str, os.PathLike)):
        from corpus_miner.phrases.result import read_phrases

        rows = read_phrases(os.fspath(phrases))
        whole = [str(row["phrase"]) for row in rows if row.get("whole_line")]
        if whole:  # a whole-line phrase is handled only where it is a whole line: the command
            # needs the line starts of the whole corpus for that, which batches do not carry yet
            raise ParameterError(f"{os.fspath(phrases)} has {len(whole)} whole-line phrases "
                                 f"(e.g. {whole[0]!r}), which batch-by-batch cleaning does not "
                                 "apply yet: use `corpus-miner clean --phrases`, or drop those "
                                 "rows (mine with --min-line-length 0)")
        edges = [str(row["phrase"]) for row in rows if row.get("edge")]
        if edges:  # the same for an edge phrase, handled only at its edge of a paragraph
            raise ParameterError(f"{os.fspath(phrases)} has {len(edges)} edge phrases "
                                 f"(e.g. {edges[0]!r}), which batch-by-batch cleaning does not "
                                 "apply yet: use `corpus-miner clean --phrases`, or drop those "
                                 "rows (mine with --min-edge-length 0)")
        return [str(row["phrase"]) for row in rows]
    texts = list(phrases)
    if not all(isinstance(t, str) for t in texts):
        raise ParameterError("phrases are a phrase file or a list of strings")
    return texts


class PhraseCleaner:
    """Clean documents batch by batch with a phrase list, exactly as
    `corpus-miner clean --phrases FILE` cleans the same documents.

    Parameters
    ----------
    phrases : str, path or sequence of str
        A phrase file (output of `corpus-miner phrases`, possibly edited: .jsonl, .jsonl.gz,
        .tsv, .parquet or .txt) or the phrase texts themselves.
    mode : {"remove", "mask", "annotate"}
        As `corpus-miner clean --mode`.
    allow : str, path or sequence of str
        Phrases never handled (as `--allow`).
    drop_above : float, optional
        Documents whose handled share is greater are left out (as `--drop-above`).
    mask_text : str
        Replacement in mask mode.

    Raises
    ------
    ParameterError
        On a bad mode or share, or phrases that are neither a file nor strings.
    InputError
        When the phrase file cannot be read.

    Examples
    --------
    >>> cleaner = PhraseCleaner(["accept all cookies"])
    >>> cleaner.clean_texts(["Hello. Accept all cookies. Bye"])
    ['Hello. Bye']
    """

    def __init__(self, phrases, mode: str = "remove", allow=(), drop_above: float | None = None,
                 mask_text: str = DEFAULT_MASK):
        from corpus_miner.corpus import tokenize
        from corpus_miner.coverage.coverage import PhraseTables
        from corpus_miner.phrases.result import PhraseTable

        self.params = CleanParams(mode, False, tuple(_phrase_texts(allow)), drop_above,
                                  mask_text)
        self.params.validate()
        self.phrases = phrases
        index: dict[str, int] = {}

        def ids_of(texts: Sequence[str]) -> list[tuple[int, ...]]:
            found, seen = [], set()
            for text in texts:
                ids = tuple(index.setdefault(token, len(index)) for token in tokenize(text))
                if ids and ids not in seen:  # the same phrase twice counts once, as in clean
                    seen.add(ids)
                    found.append(ids)
            return found

        listed = ids_of(_phrase_texts(phrases))
        allowed = ids_of(self.params.allow)
        allowed_keys = set(allowed)
        kept = [ids for ids in listed if ids not in allowed_keys]
        self.n_phrases = len(kept)
        vocab = [""] * len(index)
        for token, i in index.items():
            vocab[i] = token
        self._index = index
        self._unknown = np.uint32(len(index))  # the id of every token no phrase has

        def tables(lists) -> PhraseTables | None:
            if not lists:
                return None
            zeros = [0] * len(lists)
            return PhraseTables(PhraseTable.from_lists(lists, zeros, zeros, vocab))

        self._listed = tables(kept)
        self._allowed = tables(allowed)

    def __repr__(self) -> str:
        return (f"PhraseCleaner({self.n_phrases} phrases, mode={self.params.mode!r}"
                + (f", allow={len(self.params.allow)}" if self.params.allow else "")
                + (f", drop_above={self.params.drop_above}"
                   if self.params.drop_above is not None else "") + ")")

    def _tokens(self, texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """(token ids over the phrase vocabulary, document offsets) of a string array without
        nulls."""
        from corpus_miner.corpus import kernels as corpus_kernels
        from corpus_miner.corpus.tokenizer import TokenIdAssigner

        assigner = TokenIdAssigner()
        assigner.add_texts(texts)
        tokens, doc_offsets, local_vocab = assigner.finish()
        mapping = np.fromiter((self._index.get(token, self._unknown) for token in local_vocab),
                              dtype=np.uint32, count=len(local_vocab))
        corpus_kernels.remap_ids(tokens, mapping, tokens)  # in place: each id read before written
        return tokens, doc_offsets

    def handled_mask(self, texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """(uint8 per token, 1 where handled; document offsets) of a string array without
        nulls: covered by a listed phrase and not inside a full occurrence of an allowed one."""
        tokens, doc_offsets = self._tokens(texts)
        doc_offsets = read_only(doc_offsets)
        n_tokens = len(tokens)
        if self._listed is None:
            return np.zeros(n_tokens, dtype=np.uint8), doc_offsets
        occ = self._listed.occurrences(tokens, doc_offsets)
        covered, _ = kernels.cover_by_occurrences(
            n_tokens, occ.start, self._listed.table.lengths[occ.phrase].astype(np.int64),
            occ.phrase, len(self._listed.table))
        if self._allowed is not None:
            occ = self._allowed.occurrences(tokens, doc_offsets)
            protected = kernels.mark_intervals(
                n_tokens, occ.start, self._allowed.table.lengths[occ.phrase].astype(np.int64))
            covered &= np.bitwise_xor(protected, 1, out=protected)
        return covered, doc_offsets

    def clean_arrow(self, texts) -> CleanedBatch:
        """Clean one batch: `texts` is a pyarrow string array (nulls allowed: left as they are)
        or a sequence of str / None."""
        if not isinstance(texts, (pa.Array, pa.ChunkedArray)):
            if any(t is not None and not isinstance(t, str) for t in texts):
                raise InputError("texts must be strings (or None)")
            texts = string_array(list(texts))
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        if not (pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type)):
            raise InputError(f"texts must be a string array, got {texts.type}")
        original, n = texts, len(texts)
        is_text = np.ones(n, dtype=bool)
        if texts.null_count:
            import pyarrow.compute as pc

            is_text = np.asarray(pc.is_valid(texts).to_numpy(zero_copy_only=False), dtype=bool)
            texts = pc.fill_null(texts, "")
        mask, doc_offsets = self.handled_mask(texts)
        params = self.params
        cutter = Cleaner(params.mode, False, (), params.drop_above, params.mask_text)
        cutter.fit_mask(mask, doc_offsets)
        spans = cutter._spans(texts, 0, is_text)
        cleaned = original if params.mode == "annotate" else cutter._cleaned(texts, 0, is_text)
        return CleanedBatch(cleaned, spans, np.where(is_text, cutter.doc_share_, 0.0),
                            np.where(is_text, cutter.doc_handled_, 0),
                            np.diff(doc_offsets), ~cutter.dropped_ | ~is_text)

    def clean_texts(self, texts: Sequence[str | None]) -> list[str | None]:
        """The cleaned texts (mode remove or mask; annotate returns them as given), documents
        over drop_above included: use clean_arrow's `keep` to leave them out."""
        return self.clean_arrow(texts).texts.to_pylist()

    def clean_batch(self, batch: dict, text_field: str = "text") -> dict:
        """A batch of columns (dict of lists, as `datasets.Dataset.map(batched=True)` passes it)
        cleaned: the text column replaced (remove / mask) or `junk_spans` and `junk_share`
        columns added (annotate); rows over drop_above are left out of every column.

        >>> PhraseCleaner(["accept all cookies"]).clean_batch(
        ...     {"id": [1], "text": ["Hi. Accept all cookies."]})
        {'id': [1], 'text': ['Hi.']}
        """
        if text_field not in batch:
            raise InputError(f"the batch has no {text_field!r} column (it has "
                             f"{', '.join(map(repr, batch)) or 'none'})")
        result = self.clean_arrow(list(batch[text_field]))
        out = dict(batch)
        if self.params.mode == "annotate":
            out["junk_spans"] = result.junk_spans.to_pylist()
            out["junk_share"] = [float(s) if t is not None else None
                                 for s, t in zip(result.junk_share, batch[text_field])]
        else:
            out[text_field] = result.texts.to_pylist()
        if result.keep.all():
            return out
        rows = np.flatnonzero(result.keep)
        return {name: [values[i] for i in rows] for name, values in out.items()}

    def __getstate__(self) -> dict:
        # pickled (datatrove ships steps to workers; datasets hashes map functions) as its
        # parameters; the tables are rebuilt on arrival
        return {"phrases": _phrase_texts(self.phrases), "params": self.params}

    def __setstate__(self, state: dict) -> None:
        params = state["params"]
        PhraseCleaner.__init__(self, state["phrases"], params.mode, params.allow,
                               params.drop_above, params.mask_text)

