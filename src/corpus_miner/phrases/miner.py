"""`BloomSpan`: the estimator-style entry point of phrase mining (scikit-learn habits).

    >>> miner = BloomSpan(sigma=20, min_length=10).fit(corpus)      # doctest: +SKIP
    >>> miner.phrases_.text(0), miner.stats_["seconds_total"]  # doctest: +SKIP

`__init__` only stores the parameters; `fit` validates them (PhraseParams), mines and stores the
learned `phrases_` (a PhraseTable in canonical order) and `stats_`. Both algorithms give the same
answer; "fhk" (exact suffix array) is the better choice on data with dense nested repeats of a few
words, "bloomspan" on natural text and web corpora; "auto" (the default) picks one of them from
the data (phrases/auto.py) and says which in stats_["auto_choice"].
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from corpus_miner.errors import InputError
from corpus_miner.estimator import Estimator
from corpus_miner.phrases.params import DEFAULT_NUM_HASHES, PhraseParams
from corpus_miner.phrases.result import PhraseTable


class BloomSpan(Estimator):
    """Maximal contiguous frequent phrases: every token sequence occurring in >= sigma documents,
    of length >= min_length, that cannot be extended by one token on either side and stay in
    >= sigma documents. With min_line_length, also the whole-line phrases: every line of
    min_line_length to min_length - 1 tokens that is a whole line in >= sigma documents
    (phrases/lines.py; the corpus needs its line starts), flagged whole_line in phrases_.

    Parameters: see PhraseParams (sigma, min_length, algorithm, filter_bytes, num_hashes,
    min_line_length); progress: optional callable(stage_name) called as each mining stage
    starts.
    Learned: phrases_ (PhraseTable, canonical order), stats_ (dict: counts, seconds, peak RSS).
    """

    _fit_hint = "fit(corpus)"

    def __init__(self, sigma: int = 20, min_length: int = 10, algorithm: str = "auto",
                 filter_bytes: int | None = None, num_hashes: int = DEFAULT_NUM_HASHES,
                 progress: Callable[[str], None] | None = None,
                 min_line_length: int | None = None) -> None:
        self.sigma = sigma
        self.min_length = min_length
        self.algorithm = algorithm
        self.filter_bytes = filter_bytes
        self.num_hashes = num_hashes
        self.progress = progress
        self.min_line_length = min_line_length

    def fit(self, corpus) -> BloomSpan:
        """Mine `corpus` (a TokenCorpus, or anything with .tokens, .doc_offsets and .vocab)."""
        params = PhraseParams(sigma=self.sigma, min_length=self.min_length,
                              algorithm=self.algorithm, filter_bytes=self.filter_bytes,
                              num_hashes=self.num_hashes, min_line_length=self.min_line_length)
        missing = [name for name in ("tokens", "doc_offsets", "vocab") if not hasattr(corpus, name)]
        if missing:
            raise InputError(f"fit() needs a TokenCorpus (object with tokens, doc_offsets, vocab); "
                             f"got {type(corpus).__name__} without {', '.join(missing)}")
        if params.min_line_length is not None:
            from corpus_miner.phrases.lines import corpus_lines

            corpus_lines(corpus)  # before mining: a corpus without line starts is refused
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
        self.phrases_: PhraseTable = table  # both miners return canonical (Psi) order
        self.stats_: dict = stats
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
        merged = PhraseTable.concatenate(table.with_whole_line(False), lines).sorted()
        seconds = time.perf_counter() - started
        stats.update(min_line_length=params.min_line_length, whole_line_phrases=len(lines),
                     phrases=len(merged), whole_line_seconds=seconds)
        if "seconds_total" in stats:
            stats["seconds_total"] += seconds
        return merged
