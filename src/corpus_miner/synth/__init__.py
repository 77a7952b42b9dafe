"""Corpus generators with known structure, for tests, benchmarks and the quick start.

- synthetic1, synthetic2: the BloomSpan article's corpora (`article.py`), as token lists.
- web: web-like pages with site templates and planted reposts (`web_pages.py` over the sites and
  templates of `web_world.py`, text by `web_render.py`), fast enough for a billion tokens
  (`write_web`), or as token lists for small tests (`web`).
"""

from corpus_miner.synth.article import (ARTICLE_PHRASES, synthetic1, synthetic2,
                                        unique_random_words, write_jsonl)
from corpus_miner.synth.web_pages import web, web_blocks, write_web
from corpus_miner.synth.web_world import WebParams, WebWorld

__all__ = ["ARTICLE_PHRASES", "WebParams", "WebWorld", "synthetic1", "synthetic2",
           "unique_random_words", "web", "web_blocks", "write_jsonl", "write_web"]
