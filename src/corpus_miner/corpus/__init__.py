"""Tokens: the tokenizer and the TokenCorpus that load_corpus builds from documents.

    from corpus_miner.corpus import load_corpus
    corpus = load_corpus(["docs.jsonl.gz"])           # or a saved corpus folder
    corpus.n_docs, corpus.n_tokens, corpus.decode(corpus.doc_tokens(0))
"""

from typing import TYPE_CHECKING

from corpus_miner._lazy import lazy_attributes

if TYPE_CHECKING:
    from corpus_miner.corpus.build import load_corpus
    from corpus_miner.corpus.from_batches import corpus_from_batches
    from corpus_miner.corpus.token_corpus import FORMAT_NAME, FORMAT_VERSION, TokenCorpus
    from corpus_miner.corpus.tokenizer import TokenIdAssigner, join_tokens, token_spans, tokenize
    from corpus_miner.io.artefact import is_saved_corpus

__getattr__, __dir__ = lazy_attributes(globals(), {
    "corpus_miner.corpus.build": "load_corpus",
    "corpus_miner.corpus.from_batches": "corpus_from_batches",
    "corpus_miner.io.artefact": "is_saved_corpus",
    "corpus_miner.corpus.token_corpus": "FORMAT_NAME FORMAT_VERSION TokenCorpus",
    "corpus_miner.corpus.tokenizer": "TokenIdAssigner join_tokens token_spans tokenize",
})

__all__ = [
    "FORMAT_NAME", "FORMAT_VERSION", "TokenCorpus", "TokenIdAssigner", "corpus_from_batches",
    "is_saved_corpus",
    "join_tokens", "load_corpus", "token_spans", "tokenize",
]
