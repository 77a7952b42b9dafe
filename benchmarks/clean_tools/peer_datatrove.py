"""datatrove as a whole process: SentenceDedup (lines or sentences) or the C4 line filters.

    PYTHON peer_datatrove.py MODE PAGES.jsonl OUT_FOLDER WORK_FOLDER

Run with the Python of the datatrove virtualenv. MODE:
  sentdedup-lines  SentenceDedup over single lines (n_sentences=1, split_sentences=False)
  sentdedup-3      SentenceDedup over 3-sentence spans (datatrove's default n_sentences=3)
  c4-lines         C4QualityFilter's line rules (its page-level rules switched off)
Both dedup modes keep every page (min_doc_words and min_num_sentences 0: this measures what is
cut from pages, not which pages are dropped). Writes OUT_FOLDER/00000.jsonl (id, text).
"""
import sys

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup.sentence_dedup import (
    SentDedupConfig,
    SentenceDedupFilter,
    SentenceDedupSignature,
    SentenceFindDedups,
)
from datatrove.pipeline.filters import C4QualityFilter
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter


def main(mode: str, pages: str, out: str, work: str) -> int:
    folder, name = pages.rsplit("/", 1)
    reader = JsonlReader(folder, glob_pattern=name, text_key="text", id_key="id")
    writer = JsonlWriter(out, output_filename="00000.jsonl", compression=None)
    if mode == "c4-lines":
        step = C4QualityFilter(min_num_sentences=-1, filter_lorem_ipsum=False,
                               filter_curly_bracket=False)
        LocalPipelineExecutor([reader, step, writer], tasks=1,
                              logging_dir=f"{work}/logs-c4").run()
        return 0
    config = SentDedupConfig(n_sentences=1 if mode == "sentdedup-lines" else 3,
                             split_sentences=mode != "sentdedup-lines",
                             min_doc_words=0, min_num_sentences=0)
    LocalPipelineExecutor([reader, SentenceDedupSignature(f"{work}/sigs", config=config)],
                          tasks=1, logging_dir=f"{work}/logs-1").run()
    LocalPipelineExecutor([SentenceFindDedups(f"{work}/sigs", f"{work}/dups", config=config)],
                          tasks=1, logging_dir=f"{work}/logs-2").run()
    reader = JsonlReader(folder, glob_pattern=name, text_key="text", id_key="id")
    LocalPipelineExecutor([reader, SentenceDedupFilter(f"{work}/dups", config=config), writer],
                          tasks=1, logging_dir=f"{work}/logs-3").run()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
