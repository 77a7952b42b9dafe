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

from corpus_miner.errors import InputError, ParameterError
from corpus_miner.estimator import Estimator
from corpus_miner.phrases.params import DEFAULT_NUM_HASHES, PhraseParams
from corpus_miner.phrases.result import PhraseTable


class BloomSpan(Estimator):
    """Maximal contiguous frequent phrases: every token sequence occurring in >= sigma documents,
    of length >= min_length, that cannot be extended by one token on either side and stay in
    >= sigma documents.

    Parameters: see PhraseParams (sigma, min_length, algorithm, filter_bytes, num_hashes);
    progress: optional callable(stage_name) called as each mining stage starts.
    Learned: phrases_ (PhraseTable, canonical order), stats_ (dict: counts, seconds, peak RSS).
    """

    _fit_hint = "fit(corpus)"

    def __init__(self, sigma: int = 20, min_length: int = 10, algorithm: str = "auto",
                 filter_bytes: int | None = None, num_hashes: int = DEFAULT_NUM_HASHES,
                 progress: Callable[[str], None] | None = None) -> None:
        self.sigma = sigma
        self.min_length = min_length
        self.algorithm = algorithm
        self.filter_bytes = filter_bytes
        self.num_hashes = num_hashes
        self.progress = progress

    def fit(self, corpus) -> BloomSpan:
        """Mine `corpus` (a TokenCorpus, or anything with .tokens, .doc_offsets and .vocab)."""
        params = PhraseParams(sigma=self.sigma, min_length=self.min_length,
                              algorithm=self.algorithm, filter_bytes=self.filter_bytes,
                              num_hashes=self.num_hashes)
        missing = [name for name in ("tokens", "doc_offsets", "vocab") if not hasattr(corpus, name)]
        if missing:
            raise InputError(f"fit() needs a TokenCorpus (object with tokens, doc_offsets, vocab); "
                             f"got {type(corpus).__name__} without {', '.join(missing)}")
        if self.progress is not None and not callable(self.progress):
            raise ParameterError(f"progress must be a callable(stage_name) or None, got "
                                 f"{self.progress!r}")
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
        self.phrases_: PhraseTable = table  # both miners return canonical (Psi) order
        self.stats_: dict = stats
        return self
