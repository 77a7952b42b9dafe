"""Applying a phrase table to a corpus: the exact coverage mask, the report (JSON/HTML) and the
cleaner that writes the corpus back without the covered text."""

from corpus_miner.coverage.clean import Cleaner
from corpus_miner.coverage.coverage import Coverage
from corpus_miner.coverage.report import CoverageReport

__all__ = ["Cleaner", "Coverage", "CoverageReport"]
