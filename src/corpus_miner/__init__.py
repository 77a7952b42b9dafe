"""corpus-miner: find what is repeated in large text corpora, and remove it.

Every public name is importable from here (`from corpus_miner import BloomSpan, Coverage`); the
Spark engines from `corpus_miner.spark`.

    >>> from corpus_miner import BloomSpan                                    # doctest: +SKIP
    >>> miner = BloomSpan(sigma=20, min_length=10).fit("crawl.jsonl.gz")     # doctest: +SKIP
    >>> miner.report("crawl.jsonl.gz").write_html("report.html")             # doctest: +SKIP
"""

from typing import TYPE_CHECKING

from corpus_miner._lazy import lazy_attributes
from corpus_miner.errors import (
    CorpusMinerError,
    FormatError,
    InputError,
    MissingExtraError,
    NotFittedError,
    OutputError,
    ParameterError,
)

__version__ = "0.1.0"

if TYPE_CHECKING:
    from corpus_miner.corpus.build import load_corpus, save_corpus
    from corpus_miner.corpus.token_corpus import TokenCorpus
    from corpus_miner.corpus.tokenizer import token_spans, tokenize
    from corpus_miner.coverage.clean import Cleaner
    from corpus_miner.coverage.coverage import Coverage
    from corpus_miner.coverage.report import CoverageReport
    from corpus_miner.dedup.lshbloom import LSHBloom
    from corpus_miner.dedup.result import DedupResult
    from corpus_miner.io.readers import DocumentBatch, ReadStats, read_documents
    from corpus_miner.io.writers import write_records
    from corpus_miner.phrases.miner import BloomSpan
    from corpus_miner.phrases.result import PhraseTable, read_phrases, write_phrases
    from corpus_miner.templates import SlotTemplates

# The estimators import numba and the readers pyarrow: each name loads on first use, so that
# `corpus-miner --version` and `--help` stay instant.
__getattr__, __dir__ = lazy_attributes(globals(), {
    "corpus_miner.phrases.miner": "BloomSpan",
    "corpus_miner.dedup.lshbloom": "LSHBloom",
    "corpus_miner.dedup.result": "DedupResult",
    "corpus_miner.corpus.build": "load_corpus save_corpus",
    "corpus_miner.corpus.token_corpus": "TokenCorpus",
    "corpus_miner.corpus.tokenizer": "token_spans tokenize",
    "corpus_miner.coverage.clean": "Cleaner",
    "corpus_miner.coverage.coverage": "Coverage",
    "corpus_miner.coverage.report": "CoverageReport",
    "corpus_miner.io.readers": "DocumentBatch ReadStats read_documents",
    "corpus_miner.io.writers": "write_records",
    "corpus_miner.phrases.result": "PhraseTable read_phrases write_phrases",
    "corpus_miner.templates": "SlotTemplates",
})

__all__ = [
    "__version__",
    # estimators
    "BloomSpan", "SlotTemplates", "LSHBloom", "DedupResult",
    # documents in and out
    "read_documents", "DocumentBatch", "ReadStats", "write_records",
    "TokenCorpus", "load_corpus", "save_corpus", "tokenize", "token_spans",
    # phrases, coverage, report, cleaning
    "PhraseTable", "read_phrases", "write_phrases", "Coverage", "CoverageReport", "Cleaner",
    # errors
    "CorpusMinerError", "FormatError", "InputError", "MissingExtraError", "NotFittedError",
    "OutputError", "ParameterError",
]
