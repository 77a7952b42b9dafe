"""Applying a phrase table to a corpus: the exact coverage mask, the report (JSON/HTML) and the
cleaner that writes the corpus back without the covered text."""

from typing import TYPE_CHECKING

from corpus_miner._lazy import lazy_attributes

if TYPE_CHECKING:
    from corpus_miner.coverage.clean import Cleaner
    from corpus_miner.coverage.coverage import Coverage
    from corpus_miner.coverage.phrase_cleaner import PhraseCleaner
    from corpus_miner.coverage.report import CoverageReport

__getattr__, __dir__ = lazy_attributes(globals(), {
    "corpus_miner.coverage.clean": "Cleaner",
    "corpus_miner.coverage.coverage": "Coverage",
    "corpus_miner.coverage.phrase_cleaner": "PhraseCleaner",
    "corpus_miner.coverage.report": "CoverageReport",
})

__all__ = ["Cleaner", "Coverage", "CoverageReport", "PhraseCleaner"]
