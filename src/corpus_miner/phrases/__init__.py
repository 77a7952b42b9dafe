"""BloomSpan: maximal contiguous frequent phrases (MCFP) and their exact baselines."""

from corpus_miner.phrases.result import PhraseTable, read_phrases, write_phrases
from corpus_miner.phrases.miner import BloomSpan
from corpus_miner.phrases.params import PhraseParams

__all__ = ["PhraseTable", "read_phrases", "write_phrases"]
__all__ += ["BloomSpan", "PhraseParams"]
