from corpus_miner.cli import entry_point

entry_point()
