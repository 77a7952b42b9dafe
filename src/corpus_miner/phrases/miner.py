"""`BloomSpan`: the estimator-style entry point of phrase mining (scikit-learn habits).

    >>> miner = BloomSpan(sigma=20, min_length=10).fit("crawl.jsonl.gz")    # doctest: +SKIP
    >>> miner.phrases_.text(0), miner.stats_["seconds_total"]              # doctest: +SKIP

`__init__` only stores the parameters; `fit` validates them (PhraseParams), reads the documents
(corpus_miner.sources), mines and stores the learned `phrases_` (a PhraseTable in canonical order)
and `stats_`; `coverage`, `report` and `clean` apply the phrases (coverage.apply). Both
algorithms give the same answer; "fhk" (exact suffix array) is the better choice on data with
dense nested repeats of a few words, "bloomspan" on natural text and web corpora; "auto" (the
default) picks one of them from the data (phrases/auto.py) and says which in stats_["auto_choice"].
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from corpus_miner.errors import ParameterError
from corpus_miner.estimator import Estimator
from corpus_miner.phrases.params import DEFAULT_NUM_HASHES, PhraseParams
from corpus_miner.phrases.result import PhraseTable
from corpus_miner.sources import DocumentsLike, documents

if TYPE_CHECKING:
    from corpus_miner.coverage.report import CoverageReport


class BloomSpan(Estimator):
    """Maximal contiguous frequent phrases: every token sequence occurring in >= sigma documents,
    of length >= min_length, that cannot be extended by one token on either side and stay in
    >= sigma documents. With min_line_length, also the whole-line phrases: every line of
    min_line_length to min_length - 1 tokens that is a whole line in >= sigma documents
    (phrases/lines.py; the corpus needs its line starts), flagged whole_line in phrases_. With
    min_edge_length, also the edge phrases: sequences of min_edge_length to min_length - 1
    tokens glued at a sentence break to the start (or the end) of a paragraph in >= sigma
    documents (phrases/edges.py; the corpus needs its sentence starts), flagged edge.

    Parameters
    ----------
    sigma : int
        A phrase is frequent when it occurs in at least `sigma` documents (>= 2).
    min_length : int
        Shortest phrase reported, in tokens (>= 1).
    algorithm : {"auto", "bloomspan", "fhk"}
        The miner; every choice gives the same phrases (see the module docstring).
    filter_bytes : int, optional
        Size of bloomspan's counting filter (default: sized from the corpus); speed and memory
        only.
    num_hashes : int
        Hash functions of that filter.
    min_line_length : int, optional
        Also mine whole-line phrases of min_line_length to min_length - 1 tokens (None: none).
    min_edge_length : int, optional
        Also mine edge phrases of min_edge_length to min_length - 1 tokens (None: none).
    progress : callable, optional
        Called with each mining stage's name as it starts.

    Attributes
    ----------
    phrases_ : PhraseTable
        The phrases in canonical order (length x df descending).
    stats_ : dict
        Counts, seconds per stage and peak RSS (what `--stats` writes).

    Examples
    --------
    >>> from corpus_miner import BloomSpan
    >>> texts = ["Accept all cookies to continue. " + body for body in ("A.", "B.", "C.")]
    >>> miner = BloomSpan(sigma=3, min_length=4).fit(texts)
    >>> miner.phrases_.text(0)
    'accept all cookies to continue'
    >>> miner.coverage(texts).column("tokens_covered").to_pylist()
    [5, 5, 5]
    """

    _fit_hint = "fit(X)"

    def __init__(self, sigma: int = 20, min_length: int = 10, algorithm: str = "auto",
                 filter_bytes: int | None = None, num_hashes: int = DEFAULT_NUM_HASHES,
                 progress: Callable[[str], None] | None = None,
                 min_line_length: int | None = None,
                 min_edge_length: int | None = None) -> None:
        self.sigma = sigma
        self.min_length = min_length
        self.algorithm = algorithm
        self.filter_bytes = filter_bytes
        self.num_hashes = num_hashes
        self.progress = progress
        self.min_line_length = min_line_length
        self.min_edge_length = min_edge_length

    def fit(self, X: DocumentsLike, text_col: str = "text", id_col: str = "id") -> BloomSpan:
        """Mine the documents `X`.

        Parameters
        ----------
        X : paths, pyarrow data, TokenCorpus or iterable of texts
            A path (`str` or `pathlib.Path`: JSONL, Parquet, a folder, a glob, a URL, a saved
            corpus) or a list of `pathlib.Path`; a pyarrow Table, RecordBatch or
            RecordBatchReader; a TokenCorpus; or any iterable of texts (corpus_miner.sources).
        text_col, id_col : str
            The field (column) holding the text, and the id (absent: the row number).

        Returns
        -------
        BloomSpan
            self, with `phrases_` and `stats_` set.

        Raises
        ------
        ParameterError
            A parameter is out of range (checked before any reading).
        InputError
            `X` is none of the accepted kinds, or an input is missing or malformed.
        """
        params = PhraseParams(sigma=self.sigma, min_length=self.min_length,
                              algorithm=self.algorithm, filter_bytes=self.filter_bytes,
                              num_hashes=self.num_hashes, min_line_length=self.min_line_length,
                              min_edge_length=self.min_edge_length)
        if self.progress is not None and not callable(self.progress):
            raise ParameterError(f"progress must be a callable(stage_name) or None, got "
                                 f"{self.progress!r}")
        edges = params.min_edge_length is not None
        corpus = documents(X, text_col=text_col, id_col=id_col, where="BloomSpan.fit") \
            .token_corpus(sentences=edges)
        self._forget_fitted()
        if params.min_line_length is not None or edges:
            from corpus_miner.phrases.lines import corpus_lines

            corpus_lines(corpus)  # before mining: a corpus without line starts is refused
        if edges:
            from corpus_miner.phrases.edges import corpus_sentences

            corpus_sentences(corpus)
        tokens = np.asarray(corpus.tokens)
        doc_offsets = np.asarray(corpus.doc_offsets)
        algorithm, extra, word_filter = params.algorithm, {}, None
        if algorithm == "auto":
            from corpus_miner.phrases.auto import choose
            from corpus_miner.phrases.inputs import validate_corpus_arrays

            tokens, doc_offsets, vocab_size = validate_corpus_arrays(tokens, doc_offsets,
                                                                     corpus.vocab)
            started = time.perf_counter()
            choice = choose(tokens, doc_offsets, params.sigma, params.min_length, vocab_size)
            algorithm, extra, word_filter = choice.algorithm, choice.stats(), choice.word_filter
            extra["auto_seconds"] = time.perf_counter() - started
        if algorithm == "fhk":
            from corpus_miner.phrases.exact import mine_fhk  # suffix arrays load only when asked
            from corpus_miner.phrases.inputs import validate_corpus_arrays

            # the phrases are spelled with the vocabulary: ids beyond it are refused, as the
            # other algorithms refuse them
            validate_corpus_arrays(tokens, doc_offsets, corpus.vocab)

            table, stats = mine_fhk(tokens, doc_offsets, params.sigma, params.min_length,
                                    corpus.vocab, progress=self.progress)
        else:
            from corpus_miner.phrases.bloomspan import mine_bloomspan

            table, stats = mine_bloomspan(tokens, doc_offsets, params.sigma, params.min_length,
                                          corpus.vocab, filter_bytes=params.filter_bytes,
                                          num_hashes=params.num_hashes, progress=self.progress,
                                          word_filter=word_filter)
        stats.update(extra)
        if params.min_line_length is not None:
            table = self._with_whole_lines(table, corpus, params, stats)
        if edges:
            table = self._with_edges(table, corpus, params, stats)
        self.phrases_: PhraseTable = table  # both miners return canonical (Psi) order
        self.stats_: dict = stats
        self.text_col_, self.id_col_ = text_col, id_col
        return self

    @staticmethod
    def _with_whole_lines(table: PhraseTable, corpus, params: PhraseParams,
                          stats: dict) -> PhraseTable:
        """The maximal phrases and the whole-line phrases in one table, canonical order."""
        from corpus_miner.phrases.lines import mine_whole_lines

        started = time.perf_counter()
        lines = mine_whole_lines(corpus.tokens, corpus.doc_offsets, corpus.line_starts,
                                 corpus.paragraph_starts, params.sigma,
                                 int(params.min_line_length or 1), params.min_length, corpus.vocab)
        stats.update(min_line_length=params.min_line_length, whole_line_phrases=len(lines))
        return _merged(table.with_whole_line(False), lines, stats, "whole_line_seconds", started)

    @staticmethod
    def _with_edges(table: PhraseTable, corpus, params: PhraseParams, stats: dict) -> PhraseTable:
        """The phrases mined so far and the edge phrases in one table, canonical order."""
        from corpus_miner.phrases.edges import mine_edge_phrases

        started = time.perf_counter()
        edges = mine_edge_phrases(corpus.tokens, corpus.doc_offsets, corpus.line_starts,
                                  corpus.paragraph_starts, corpus.sentence_starts, params.sigma,
                                  int(params.min_edge_length or 1), params.min_length,
                                  corpus.vocab)
        stats.update(min_edge_length=params.min_edge_length, edge_phrases=len(edges))
        return _merged(table.with_edge(0), edges, stats, "edge_seconds", started)

    # -- the phrases applied to documents (coverage.apply) ----------------------------------------
    def coverage(self, X: DocumentsLike, text_col: str | None = None, id_col: str | None = None
                 ) -> pa.Table:
        """Per document of `X` (in order): id, tokens, tokens_covered and junk_spans.

        Parameters
        ----------
        X : documents
            Any kind `fit` accepts except a TokenCorpus (junk_spans are character offsets of
            the original text); need not be the documents the phrases were mined on.
        text_col, id_col : str, optional
            Default: the ones given to `fit`.

        Returns
        -------
        pyarrow.Table
            Columns id_col (str), tokens, tokens_covered (int64) and junk_spans (list of
            [start, end) character offsets), one row per document: the columns of
            `SparkBloomSpan.coverage`.

        Raises
        ------
        NotFittedError
            Before `fit`.
        InputError
            `X` is a TokenCorpus or none of the accepted kinds.
        """
        from corpus_miner.coverage.apply import coverage_rows

        docs = self._documents(X, text_col, id_col, "coverage")
        return coverage_rows(self.phrases_, self.min_length, docs)

    def report(self, X: DocumentsLike, text_col: str | None = None, id_col: str | None = None,
               *, top: int = 25, examples: int = 3, template_share: float = 0.9,
               group_by: str | None = None, title: str = "Repeated text report"
               ) -> CoverageReport:
        """The coverage report of `X` by the mined phrases (the `report` command's figures).

        Parameters
        ----------
        X : documents
            Any kind `fit` accepts. From a TokenCorpus or a saved corpus the report has every
            figure but no example contexts, snippets or groups (there is no text).
        text_col, id_col : str, optional
            Default: the ones given to `fit`.
        top, examples, template_share, group_by, title
            As the command's --top, --examples, --template-share, --group-by (FIELD or
            FIELD:host) and --title.

        Returns
        -------
        CoverageReport
            `to_dict()`, `write_html(path)`, `write_json(path)`, `terminal_summary()`; its
            `coverage` is the exact Coverage.

        Raises
        ------
        NotFittedError
            Before `fit`.
        ParameterError
            A bad option, or group_by without the documents' fields.
        """
        from corpus_miner.coverage.apply import report_of

        docs = self._documents(X, text_col, id_col, "report")
        return report_of(self.phrases_, self.min_length, self.sigma, docs, top=top,
                         examples=examples, template_share=template_share, group_by=group_by,
                         title=title, min_line_length=self.min_line_length,
                         min_edge_length=self.min_edge_length)

    def clean(self, X: DocumentsLike, mode: str = "remove", text_col: str | None = None,
              mask_text: str | None = None, output: str | os.PathLike | None = None, *,
              keep_first: bool = False, allow: Sequence[str] = (),
              drop_above: float | None = None) -> pa.Table | dict:
        """`X` with the covered text removed ("remove"), replaced by mask_text ("mask") or
        annotated with junk_spans and junk_share ("annotate"); every field and record kept.

        Parameters
        ----------
        X : documents
            Any kind `fit` accepts except a TokenCorpus (it keeps no text).
        mode : {"remove", "mask", "annotate"}
        text_col : str, optional
            Default: the one given to `fit`.
        mask_text : str, optional
            The replacement in mask mode (default "[…]").
        output : str or path, optional
            Write the records there (.jsonl, .jsonl.gz, .parquet, a URL; atomically) instead
            of returning them.
        keep_first, allow, drop_above
            As the `clean` command's --keep-first, --allow (a list of phrase texts) and
            --drop-above.

        Returns
        -------
        pyarrow.Table or dict
            The cleaned records; with `output`, the cleaning figures (documents, written,
            changed, dropped, tokens handled, coverage).

        Raises
        ------
        NotFittedError
            Before `fit`.
        ParameterError
            A bad mode or share, mask_text without mode "mask", or documents without text.
        OutputError
            `output` cannot be written, or is one of the inputs.
        """
        from corpus_miner.coverage.apply import cleaned

        docs = self._documents(X, text_col, None, "clean")
        return cleaned(self.phrases_, self.min_length, self.sigma, docs, mode=mode,
                       mask_text=mask_text, keep_first=keep_first, allow=allow,
                       drop_above=drop_above, output=output, min_line_length=self.min_line_length,
                       min_edge_length=self.min_edge_length)

    def _documents(self, X, text_col: str | None, id_col: str | None, method: str):
        self.check_is_fitted()
        return documents(X, text_col=text_col or str(getattr(self, "text_col_", "text")),
                         id_col=id_col or str(getattr(self, "id_col_", "id")),
                         where=f"BloomSpan.{method}")


def _merged(table: PhraseTable, extra: PhraseTable, stats: dict, timer: str,
            started: float) -> PhraseTable:
    """`table` and `extra` in one table, canonical order; the time since `started` is counted
    under `timer` and in the total."""
    merged = PhraseTable.concatenate(table, extra).sorted()
    seconds = time.perf_counter() - started
    stats.update(phrases=len(merged), **{timer: seconds})
    if "seconds_total" in stats:
        stats["seconds_total"] += seconds
    return merged
