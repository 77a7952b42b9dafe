"""BloomSpan: maximal contiguous frequent phrases (MCFP), mined by BloomSpan or by the exact
suffix-array baseline (fhk), and the PhraseTable they return."""

from typing import TYPE_CHECKING

from corpus_miner._lazy import lazy_attributes

if TYPE_CHECKING:
    from corpus_miner.phrases.miner import BloomSpan
    from corpus_miner.phrases.params import PhraseParams
    from corpus_miner.phrases.result import PhraseTable, read_phrases, write_phrases

__getattr__, __dir__ = lazy_attributes(globals(), {
    "corpus_miner.phrases.miner": "BloomSpan",
    "corpus_miner.phrases.params": "PhraseParams",
    "corpus_miner.phrases.result": "PhraseTable read_phrases write_phrases",
})

__all__ = ["BloomSpan", "PhraseParams", "PhraseTable", "read_phrases", "write_phrases"]
