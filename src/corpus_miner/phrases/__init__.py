"""BloomSpan: maximal contiguous frequent phrases (MCFP), their exact baselines, the coverage they
give (report) and the corpus without them (clean)."""

from corpus_miner.phrases.result import PhraseTable, read_phrases, write_phrases
from corpus_miner.phrases.miner import BloomSpan
from corpus_miner.phrases.params import PhraseParams
from corpus_miner.phrases.coverage import Coverage
from corpus_miner.phrases.report import CoverageReport
from corpus_miner.phrases.clean import Cleaner

__all__ = ["BloomSpan", "Cleaner", "Coverage", "CoverageReport", "PhraseParams", "PhraseTable",
           "read_phrases", "write_phrases"]
