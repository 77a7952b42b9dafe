"""Steps for the pipelines users already run. Each module imports its host library when it is
itself imported, and fails with a one-line MissingExtraError naming the extra to install:

    from corpus_miner.integrations.datatrove import CleanPhrases, LSHBloomFilter

Hugging Face `datasets` needs no adapter: `PhraseCleaner.clean_batch`, `LSHBloom.is_new` and
`corpus_from_batches` are the functions `Dataset.map` / `Dataset.filter` and mining want."""
