"""Corpus generators with known structure, for tests, benchmarks and the quick start.

- synthetic1, synthetic2: the BloomSpan article's corpora (`article.py`), as token lists.
- web: web-like pages in English-like text with site templates and planted reposts (`web_pages.py`
  over the sites and templates of `web_world.py`, built from the words and pieces of
  `web_words.py`, body sentences of `web_text.py`, text by `web_render.py`), fast enough for a
  billion tokens
  (`write_web`), or as token lists for small tests (`web`).
"""

from typing import TYPE_CHECKING

from corpus_miner._lazy import lazy_attributes

if TYPE_CHECKING:
    from corpus_miner.synth.article import (
        ARTICLE_PHRASES,
        synthetic1,
        synthetic2,
        unique_random_words,
        write_jsonl,
    )
    from corpus_miner.synth.web_pages import web, web_blocks, write_web
    from corpus_miner.synth.web_world import WebParams, WebWorld

__getattr__, __dir__ = lazy_attributes(globals(), {
    "corpus_miner.synth.article": ("ARTICLE_PHRASES synthetic1 synthetic2 unique_random_words "
                                   "write_jsonl"),
    "corpus_miner.synth.web_pages": "web web_blocks write_web",
    "corpus_miner.synth.web_world": "WebParams WebWorld",
})

__all__ = ["ARTICLE_PHRASES", "WebParams", "WebWorld", "synthetic1", "synthetic2",
           "unique_random_words", "web", "web_blocks", "write_jsonl", "write_web"]
