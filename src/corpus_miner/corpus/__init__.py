"""Ingestion: streaming readers, the tokenizer, and the TokenCorpus they produce.

    from corpus_miner.corpus import load_corpus
    corpus = load_corpus(["docs.jsonl.gz"])           # or a saved corpus folder
    corpus.n_docs, corpus.n_tokens, corpus.decode(corpus.doc_tokens(0))
"""

from corpus_miner.corpus.build import load_corpus
from corpus_miner.corpus.readers import (DEFAULT_BATCH_BYTES, DocumentBatch, ReadStats,
                                         is_saved_corpus, read_documents)
from corpus_miner.corpus.strings import StringList
from corpus_miner.corpus.token_corpus import FORMAT_NAME, FORMAT_VERSION, TokenCorpus
from corpus_miner.corpus.tokenizer import TokenIdAssigner, token_spans, tokenize
from corpus_miner.corpus.writers import write_records

__all__ = [
    "DEFAULT_BATCH_BYTES", "DocumentBatch", "FORMAT_NAME", "FORMAT_VERSION", "ReadStats",
    "StringList", "TokenCorpus", "TokenIdAssigner", "is_saved_corpus", "load_corpus",
    "read_documents", "token_spans", "tokenize", "write_records",
]
