"""Input and output: streaming readers (JSONL/.gz/.zst, Parquet, text folders, stdin), record
writers, atomic outputs, and the saved-folder format of every artefact (metadata.json + arrays)."""

from typing import TYPE_CHECKING

from corpus_miner._lazy import lazy_attributes

if TYPE_CHECKING:
    from corpus_miner.io.readers import (
        DEFAULT_BATCH_BYTES,
        DocumentBatch,
        ReadStats,
        read_documents,
    )
    from corpus_miner.io.writers import write_records

__getattr__, __dir__ = lazy_attributes(globals(), {
    "corpus_miner.io.readers": "DEFAULT_BATCH_BYTES DocumentBatch ReadStats read_documents",
    "corpus_miner.io.writers": "write_records",
})

__all__ = ["DEFAULT_BATCH_BYTES", "DocumentBatch", "ReadStats", "read_documents", "write_records"]
