"""BloomSpan: maximal contiguous frequent phrases (MCFP) and their exact baselines."""

from corpus_miner.phrases.result import PhraseTable, read_phrases, write_phrases

__all__ = ["PhraseTable", "read_phrases", "write_phrases"]
