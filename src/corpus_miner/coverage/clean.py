"""Cleaning: write a corpus back with its covered text removed, masked or annotated.

What is handled. Start from a Coverage (mined phrases or a reviewed phrase list), then:

* `allow`: phrase texts that are never handled. An allowed phrase is dropped from the phrase table
  before the coverage is computed (so its pieces repeated elsewhere are not handled on its
  account), and every full occurrence of it is protected (so a window it shares with another,
  non-allowed phrase does not cut into it either).
* `keep_first`: for every phrase of the table, the first document (input order) containing a full
  occurrence of it keeps all its full occurrences of that phrase intact. Other covered tokens of
  that document are still handled.
* `drop_above`: documents whose handled share (handled tokens / tokens, after allow and keep_first)
  is strictly greater than this are left out of the output. Empty documents are never dropped.

How. Covered tokens form maximal runs; a run's character span is [start of its first token, end
of its last token) in the original text (case, punctuation and Unicode untouched).

* remove: the span is cut. The cut also takes punctuation glued to the span (non-space characters
  between the span and the nearest whitespace or text edge, if no token lies between them), and
  the terminal punctuation (Unicode Terminal_Punctuation: `。`, `、`, `！`, `.`, `,`, `;`) right
  after it that reaches the next token directly, as in Chinese and Japanese text written without
  spaces (`前文。广告。后文` loses `广告。`; brackets and quotes stay). Then it joins the two
  sides with the strongest whitespace found at the cut ("\\n\\n" if either side had a blank
  line, else "\\n" if either had a line break, else one space; nothing at the start or end of the
  text); with no whitespace on either side, a space only if the tokens on both sides would
  otherwise join (never between CJK characters). Cuts fall on token boundaries, so no token and
  no character is ever split, and the cleaned text tokenizes to exactly the unhandled tokens, in
  order.
* mask: the span is replaced by `mask_text`.
* annotate: the text is untouched; `junk_spans` (list of [start, end) character offsets) and
  `junk_share` (handled tokens / tokens) are added to the record.

Every record keeps its id, its other fields and its place in the input order; a document whose
text is removed entirely stays, with an empty text, unless `drop_above` leaves it out.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import regex

from corpus_miner._numba.readonly import read_only
from corpus_miner.coverage import cut_kernels
from corpus_miner.coverage import kernels as kernels
from corpus_miner.coverage.coverage import (
    Coverage,
    aligned_batches,
    find_occurrences,
    phrases_from_texts,
)
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.estimator import Estimator
from corpus_miner.io.jsonl import is_json_text
from corpus_miner.io.strings import bool_array, string_array, validity_bitmap

MODES = ("remove", "mask", "annotate")
_AHEAD = 2  # batches read or cleaned ahead of their consumer
DEFAULT_MASK = "[…]"


_TERMINAL = regex.compile(r"\p{Terminal_Punctuation}+")  # ends the clause before it


def run_char_spans(starts: np.ndarray, ends: np.ndarray, runs: np.ndarray) -> list[list[int]]:
    """[start, end) character span of each token run [first, end)."""
    return [[int(starts[a]), int(ends[b - 1])] for a, b in runs]


def _joiner(left: str, left_space: str, right_space: str, right: str) -> str:
    """What replaces a cut between kept text `left` and `right` that were followed / preceded
    by the whitespace runs `left_space` / `right_space`."""
    newlines = max(left_space.count("\n"), right_space.count("\n"))
    line = "\r\n" if "\r\n" in left_space + right_space else "\n"
    if newlines >= 2:
        return line + line
    if newlines == 1:
        return line
    if left_space or right_space:
        return " "
    # no whitespace on either side: keep two tokens from fusing into one
    from corpus_miner.corpus.tokenizer import needs_separator

    return " " if needs_separator(left, right) else ""


def remove_runs(text: str, starts: np.ndarray, ends: np.ndarray, runs: np.ndarray) -> str:
    """`text` without the character spans of the token runs, joined cleanly (module docstring)."""
    if len(runs) == 0:
        return text
    n_tokens = len(starts)
    pieces: list[str] = []  # kept pieces; each one after the first holds at least one token
    cursor = 0
    for a, b in runs:
        s, e = int(starts[a]), int(ends[b - 1])
        lo = int(ends[a - 1]) if a > 0 else 0
        hi = int(starts[b]) if b < n_tokens else len(text)
        j = s
        while j > lo and not text[j - 1].isspace():
            j -= 1
        if j == 0 or text[j - 1].isspace():  # glued punctuation reaches whitespace: take it
            s = j
        j = e
        while j < hi and not text[j].isspace():
            j += 1
        if j == len(text) or text[j].isspace() or _TERMINAL.fullmatch(text, e, j):
            e = j
        pieces.append(text[cursor:s])
        cursor = e
    pieces.append(text[cursor:])
    out: list[str] = []
    for index, piece in enumerate(pieces):
        if not out:  # everything so far was cut: no whitespace left over at the start
            kept = piece if index == 0 else piece.lstrip()
            if kept.strip():
                out.append(kept)
            continue
        left = out[-1].rstrip()
        right = piece.lstrip()
        if not right:  # end of text: drop the trailing whitespace at the cut
            out[-1] = left
            continue
        left_space = out[-1][len(left):]
        right_space = piece[:len(piece) - len(right)]
        out[-1] = left
        out.append(_joiner(left, left_space, right_space, right))
        out.append(right)
    return "".join(out)


def mask_runs(text: str, starts: np.ndarray, ends: np.ndarray, runs: np.ndarray,
              mask_text: str = DEFAULT_MASK) -> str:
    """`text` with each run's character span replaced by `mask_text`."""
    out: list[str] = []
    cursor = 0
    for s, e in run_char_spans(starts, ends, runs):
        out.append(text[cursor:s])
        out.append(mask_text)
        cursor = e
    out.append(text[cursor:])
    return "".join(out)


@dataclass(frozen=True)
class CleanParams:
    mode: str = "remove"
    keep_first: bool = False
    allow: tuple[str, ...] = ()
    drop_above: float | None = None
    mask_text: str = DEFAULT_MASK

    def validate(self) -> None:
        if self.mode not in MODES:
            raise ParameterError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.drop_above is not None and not 0.0 <= self.drop_above <= 1.0:
            raise ParameterError(f"drop_above is a share between 0 and 1, got {self.drop_above}")


class Cleaner(Estimator):
    """`Cleaner(mode=...).fit(corpus, coverage)`, then `transform` (document batches -> record
    batches) or `write(inputs, output)`.

    Learned: params_ (the validated CleanParams), coverage_, mask_ (uint8 per corpus token: 1
    where a token is removed, masked or annotated), doc_offsets_, doc_handled_ (such tokens per
    document), doc_share_, dropped_ (documents over drop_above), doc_ids_, tokens_covered_
    (covered tokens before protection)."""

    _fit_hint = "fit(corpus, coverage)"
    params_: CleanParams

    def __init__(self, mode: str = "remove", keep_first: bool = False,
                 allow: Sequence[str] = (), drop_above: float | None = None,
                 mask_text: str = DEFAULT_MASK):
        self.mode = mode
        self.keep_first = keep_first
        self.allow = allow
        self.drop_above = drop_above
        self.mask_text = mask_text

    @property
    def params(self) -> CleanParams:
        """The constructor arguments in the frozen CleanParams (not validated)."""
        if isinstance(self.allow, str):
            raise ParameterError("allow is a list of phrases, got one string")
        return CleanParams(self.mode, bool(self.keep_first), tuple(self.allow), self.drop_above,
                           self.mask_text)

    def fit(self, corpus, coverage: Coverage,
            tokenize: Callable[[str], list[str]] | None = None) -> Cleaner:
        params = self.params
        params.validate()
        self._forget_fitted()
        self.params_ = params
        if tokenize is None:
            from corpus_miner.corpus import tokenize as default_tokenize

            tokenize = default_tokenize
        n_tokens = len(corpus.tokens)
        protected = None  # a byte per token, only when something is protected
        if self.params_.allow:
            allowed, _ = phrases_from_texts(self.params_.allow, corpus.vocab, tokenize)
            allowed_keys = {tuple(allowed.phrase_ids(i).tolist()) for i in range(len(allowed))}
            keep = np.array([tuple(coverage.phrases.phrase_ids(i).tolist()) not in allowed_keys
                             for i in range(len(coverage.phrases))], dtype=bool)
            if not keep.all():
                coverage = coverage.recompute(corpus, keep)
            occ = find_occurrences(corpus, allowed)
            protected = kernels.mark_intervals(n_tokens, occ.start,
                                               allowed.lengths[occ.phrase].astype(np.int64))
        if self.params_.keep_first and len(coverage.phrases):
            occ = coverage.occurrences
            first_doc = np.full(len(coverage.phrases), np.iinfo(np.int64).max, dtype=np.int64)
            np.minimum.at(first_doc, occ.phrase, occ.doc)
            in_first = occ.doc == first_doc[occ.phrase]
            first = kernels.mark_intervals(
                n_tokens, occ.start[in_first],
                coverage.phrases.lengths[occ.phrase[in_first]].astype(np.int64))
            protected = first if protected is None else np.bitwise_or(protected, first,
                                                                      out=protected)
        if protected is None:  # the covered mask itself, not a copy (a byte per token)
            mask = coverage.covered
        else:
            mask = np.bitwise_xor(protected, 1, out=protected)  # now 1 where not protected
            mask &= coverage.covered
        self.coverage_ = coverage
        return self._fit_mask(mask, coverage.doc_offsets, getattr(corpus, "doc_ids", None),
                              None if protected is None else int(coverage.covered.sum()),
                              getattr(corpus, "texts_digest", None))

    def fit_mask(self, mask: np.ndarray, doc_offsets: np.ndarray, doc_ids=None,
                 tokens_covered: int | None = None,
                 texts_digest: tuple[int, int] | None = None) -> Cleaner:
        """Fit from a handled-token mask (uint8 per corpus token) computed elsewhere, e.g. by
        another engine from the same phrases; allow and keep_first need fit() and the corpus.
        tokens_covered: covered tokens before protection (for summary(); default the mask's).
        texts_digest: (documents, value) of io.digest.OrderedDigest over the texts the mask
        was computed from; given, `write` refuses inputs that read otherwise."""
        params = self.params
        params.validate()
        self._forget_fitted()
        self.params_ = params
        return self._fit_mask(mask, doc_offsets, doc_ids, tokens_covered, texts_digest)

    def _fit_mask(self, mask: np.ndarray, doc_offsets: np.ndarray, doc_ids,
                  tokens_covered: int | None,
                  texts_digest: tuple[int, int] | None = None) -> Cleaner:
        self.texts_digest_ = texts_digest
        self.mask_ = mask
        self.doc_offsets_ = doc_offsets
        self.tokens_covered_ = int(mask.sum()) if tokens_covered is None else tokens_covered
        self.doc_handled_ = kernels.count_per_document(self.mask_, doc_offsets)
        doc_tokens = np.diff(doc_offsets)
        self.doc_share_ = np.divide(self.doc_handled_, doc_tokens, out=np.zeros(len(doc_tokens)),
                                    where=doc_tokens > 0)
        self.dropped_ = (np.zeros(len(doc_tokens), dtype=bool) if self.params_.drop_above is None
                         else self.doc_share_ > self.params_.drop_above)
        self.doc_ids_ = doc_ids
        return self

    def transform(self, batches: Iterable, text_field: str = "text") -> Iterator:
        """DocumentBatch stream (same inputs and order as the fitted corpus) -> pa.Table stream
        of the kept documents with all their fields. Only string texts are cleaned: a null,
        number, list or bytes text is written back as it was, never dropped, and annotated with
        null junk_spans / junk_share."""
        import pyarrow as pa

        self.check_is_fitted()
        self.not_text_ = np.zeros(len(self.dropped_), dtype=bool)
        for doc, batch in aligned_batches(batches, self.doc_ids_, len(self.doc_offsets_) - 1):
            records = batch.records
            if isinstance(records, pa.RecordBatch):
                records = pa.Table.from_batches([records])
            n = records.num_rows
            is_text = _string_rows(records, text_field)
            self.not_text_[doc:doc + n] = ~is_text
            if self.params_.mode == "annotate":
                spans = self._spans(batch.texts, doc, is_text)
                share = pa.py_buffer(self.doc_share_[doc:doc + n])  # null where not is_text
                shares = pa.Array.from_buffers(pa.float64(), n, [validity_bitmap(is_text), share],
                                               int(n - is_text.sum()))
                for name, column in (("junk_spans", spans), ("junk_share", shares)):
                    if name in records.schema.names:  # annotating an annotated corpus: replace
                        records = records.remove_column(records.schema.get_field_index(name))
                    records = records.append_column(name, column)
            elif is_text.any():
                cleaned = self._cleaned(batch.texts, doc, is_text)
                i = records.schema.get_field_index(text_field)
                field = records.schema.field(i)
                if is_json_text(field):  # text of mixed types: only the strings change
                    column = string_array(_json_texts_replaced(records.column(i).to_pylist(),
                                                               cleaned.to_pylist()))
                else:  # a string column: nulls stay null
                    column = cleaned if cleaned.type == field.type else cleaned.cast(field.type)
                records = records.set_column(i, field, column)
            keep = ~self.dropped_[doc:doc + n] | ~is_text
            yield records.filter(bool_array(keep)) if not keep.all() else records

    def document(self, doc: int, text: str) -> tuple[str, list[list[int]], float]:
        """(cleaned text, junk spans, handled share) of document `doc` whose original is `text`
        (a batch of one document)."""
        self.check_is_fitted()
        texts, one = string_array([text]), np.ones(1, dtype=bool)
        spans = self._spans(texts, doc, one)[0].as_py()
        if self.params_.mode != "annotate":
            text = self._cleaned(texts, doc, one)[0].as_py()
        return text, spans, float(self.doc_share_[doc])

    def _batch_arguments(self, texts, doc: int, is_text: np.ndarray) -> tuple:
        """The kernel arguments shared by _spans and _cleaned for documents doc, doc + 1, ...
        whose texts are `texts`; only those with a string text and handled tokens are cut."""
        from corpus_miner.corpus.unicode_table import code_point_tables
        from corpus_miner.io.strings import arrow_string_buffers

        handled = self.doc_handled_[doc:doc + len(is_text)]
        todo = is_text & (handled > 0)
        token_offsets = self.doc_offsets_[doc:doc + len(is_text) + 1]
        offsets, data = arrow_string_buffers(texts)
        max_tokens = int(np.diff(token_offsets)[todo].max(initial=0))
        max_runs = int(handled[todo].sum())
        return (read_only(data), offsets, todo.view(np.uint8), read_only(token_offsets),
                read_only(self.mask_), max_runs, max_tokens, code_point_tables()[0])

    def _spans(self, texts, doc: int, is_text: np.ndarray):
        """junk_spans of documents doc, doc + 1, ... (a list array, null where is_text is
        False), their runs found in one kernel call."""
        import pyarrow as pa

        span_offsets, spans, failed = cut_kernels.run_spans(
            *self._batch_arguments(texts, doc, is_text))
        self._check_tokens(failed, texts, doc)
        runs = pa.ListArray.from_arrays(np.arange(0, 2 * len(spans) + 1, 2, dtype=np.int32),
                                        spans.ravel())
        return pa.ListArray.from_arrays(span_offsets.astype(np.int32), runs,
                                        mask=None if is_text.all() else bool_array(~is_text))

    def _cleaned(self, texts, doc: int, is_text: np.ndarray):
        """Texts of documents doc, doc + 1, ... with their handled runs removed or masked (a
        large_string array, null where is_text is False), cut in one kernel call."""
        import pyarrow as pa

        data, offsets, todo, token_offsets, mask, max_runs, max_tokens, cp_info = \
            self._batch_arguments(texts, doc, is_text)
        mask_bytes = read_only(np.frombuffer(self.params_.mask_text.encode("utf-8"), np.uint8))
        mode = cut_kernels.REMOVE if self.params_.mode == "remove" else cut_kernels.MASK
        # each run's cut adds at most its joiner ("\r\n\r\n") or the mask text
        out_size = int(offsets[-1] - offsets[0]) + max_runs * max(4, len(mask_bytes))
        text, text_offsets, failed = cut_kernels.cut_rows(
            data, offsets, todo, token_offsets, mask, mode, mask_bytes, out_size, max_tokens,
            cp_info, cut_kernels.cut_char_table())
        self._check_tokens(failed, texts, doc)
        n = len(is_text)
        return pa.LargeStringArray.from_buffers(n, pa.py_buffer(text_offsets), pa.py_buffer(text),
                                                validity_bitmap(is_text), int(n - is_text.sum()))

    def _check_tokens(self, failed: int, texts, doc: int) -> None:
        if failed == cut_kernels.NO_ERROR:
            return
        from corpus_miner.corpus import token_spans

        d = doc + failed
        found = len(token_spans(texts[failed].as_py())[0])
        expected = int(self.doc_offsets_[d + 1] - self.doc_offsets_[d])
        raise InputError(f"document {d}: text has {found} tokens but the corpus had "
                         f"{expected}; the input changed since it was loaded, run again")

    def write(self, inputs, output, *, text_field: str = "text", id_field: str = "id",
              skip_bad: bool = False, shards=None) -> dict:
        """Re-read `inputs` (the ones the corpus was loaded from), clean them and write `output`
        (.jsonl, .jsonl.gz or .parquet, a file or a URL) atomically; returns summary() plus
        rows written. Refuses an output that is one of the inputs or lies inside an input
        folder. `shards` (an io.formats.ShardPlan) writes a sharded folder instead."""
        from corpus_miner.io import read_documents, write_records
        from corpus_miner.io.overlap import check_apart
        from corpus_miner.io.readers import read_ahead

        self.check_is_fitted()
        check_apart([inputs] if isinstance(inputs, (str, os.PathLike)) else inputs, [output])
        # three threads, each on its own batch: reading, cleaning (the kernels and pyarrow
        # release the GIL) and writing
        batches = read_documents(inputs, text_field=text_field, id_field=id_field,
                                 skip_bad=skip_bad, prefetch=_AHEAD)
        if self.texts_digest_ is not None:  # the texts the mask was computed from, or refuse
            from corpus_miner.io.digest import checked_reread

            batches = checked_reread(batches, self.texts_digest_, "clean")
        if shards is not None and shards.total_rows is None:
            shards = dataclasses.replace(shards, total_rows=len(self.dropped_))
        rows = write_records(read_ahead(self.transform(batches, text_field), _AHEAD), output,
                             shards=shards)
        return {**self.summary(), "documents_written": int(rows)}

    def summary(self) -> dict:
        """Figures of the cleaning; after `transform`, documents whose text is not a string
        (left as they were) count as neither changed nor dropped."""
        self.check_is_fitted()
        not_text = getattr(self, "not_text_", np.zeros(len(self.dropped_), dtype=bool))
        dropped = self.dropped_ & ~not_text
        handled = np.where(not_text, 0, self.doc_handled_)
        return {
            "mode": self.params_.mode,
            "documents": len(self.dropped_),
            "documents_dropped": int(dropped.sum()),
            "documents_changed": int(((handled > 0) & ~dropped).sum()),
            "documents_not_text": int(not_text.sum()),
            "tokens": int(self.doc_offsets_[-1]),
            "tokens_handled": int(handled.sum()),
            "tokens_protected": int(self.tokens_covered_ - self.mask_.sum()),
        }


def _string_rows(records, text_field: str) -> np.ndarray:
    """Which records have a string text (only those are cleaned)."""
    import pyarrow as pa

    n = records.num_rows
    if text_field not in records.schema.names:
        return np.zeros(n, dtype=bool)
    field = records.schema.field(text_field)
    column = records.column(text_field)
    if is_json_text(field):
        return np.array([v is not None and v.startswith('"') for v in column.to_pylist()],
                        dtype=bool)
    if pa.types.is_string(field.type) or pa.types.is_large_string(field.type) \
            or pa.types.is_string_view(field.type):
        if not column.null_count:
            return np.ones(n, dtype=bool)
        import pyarrow.compute as pc  # here: 30-40 ms to import, for texts that may be null

        return np.asarray(pc.is_valid(column).to_numpy(zero_copy_only=False), dtype=bool)
    return np.zeros(n, dtype=bool)


def _json_texts_replaced(originals: list, cleaned: list[str]) -> list:
    """A JSON-text column (corpus.jsonl.JSON_TEXT) with its string values replaced by `cleaned`;
    numbers, objects and nulls stay as they were."""
    return [json.dumps(text, ensure_ascii=False) if text is not None else original
            for original, text in zip(originals, cleaned)]
