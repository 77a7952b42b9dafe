"""The Hugging Face `datasets` recipes of docs/guides/pipelines.md, with the real library on
datasets built from dicts (offline), against the commands on the same records in a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corpus_miner.cli import main
from corpus_miner.corpus import corpus_from_batches, load_corpus
from corpus_miner.coverage import PhraseCleaner
from corpus_miner.dedup import LSHBloom
from corpus_miner.phrases import BloomSpan
from corpus_miner.phrases.result import write_phrases
from tests.integrations.corpora import pages, read_jsonl, write_jsonl

datasets = pytest.importorskip("datasets")


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    rows = pages(5, 40, 8)  # near-duplicates, an empty and a null text
    return root, rows, write_jsonl(root / "pages.jsonl", rows)


@pytest.mark.parametrize("options", [{}, {"mode": "annotate"}, {"drop_above": 0.2}])
def test_map_clean_batch_writes_what_the_command_writes(records, tmp_path, options):
    root, rows, path = records
    phrases = root / "phrases.tsv"
    if not phrases.exists():
        assert main(["phrases", str(path), "--sigma", "4", "--min-length", "4",
                     "-o", str(phrases)]) == 0
    argv = ["clean", str(path), "--phrases", str(phrases), "-o", str(tmp_path / "c.jsonl")]
    for name, value in options.items():
        argv += [f"--{name.replace('_', '-')}", str(value)]
    assert main(argv) == 0
    expected = read_jsonl(tmp_path / "c.jsonl")
    cleaner = PhraseCleaner(phrases, **options)
    ds = datasets.Dataset.from_list(rows)
    cleaned = ds.map(cleaner.clean_batch, batched=True, batch_size=7)
    assert cleaned.to_list() == [{key: r.get(key) for key in cleaned.column_names}
                                 for r in expected]
    dropped = len(rows) - cleaned.num_rows
    assert dropped > 0 if "drop_above" in options else dropped == 0


def test_filter_is_new_keeps_what_the_command_keeps(records, tmp_path):
    _, rows, path = records
    assert main(["dedup", str(path), "-o", str(tmp_path / "d.jsonl"), "--threshold", "0.7",
                 "--expected-items", "1000"]) == 0
    expected = [r["id"] for r in read_jsonl(tmp_path / "d.jsonl")]
    model = LSHBloom(threshold=0.7, expected_items=1000)
    kept = datasets.Dataset.from_list(rows).filter(model.is_new, batched=True, batch_size=5)
    assert kept["id"] == expected
    assert len(expected) < len(rows)  # the copies are found


@pytest.mark.parametrize("iterable", [False, True])
def test_mining_a_dataset_writes_the_commands_phrase_file(records, tmp_path, iterable):
    _, rows, path = records
    assert main(["phrases", str(path), "--sigma", "4", "--min-length", "4",
                 "-o", str(tmp_path / "cli.tsv")]) == 0
    ds = datasets.Dataset.from_list(rows)
    if iterable:
        ds = ds.to_iterable_dataset(num_shards=3)
    corpus = corpus_from_batches(ds.iter(batch_size=6))
    reference = load_corpus([path])
    assert list(corpus.vocab) == list(reference.vocab)
    assert list(corpus.doc_ids) == list(reference.doc_ids)
    miner = BloomSpan(sigma=4, min_length=4).fit(corpus)
    write_phrases(miner.phrases_, tmp_path / "mine.tsv")
    assert (tmp_path / "mine.tsv").read_bytes() == (tmp_path / "cli.tsv").read_bytes()
    assert corpus.read_stats.null_texts == reference.read_stats.null_texts == 1


def test_corpus_from_batches_takes_tables_and_lists(tmp_path):
    import pyarrow as pa

    texts = ["Hello world", None, "hello again"]
    from_lists = corpus_from_batches([texts[:2], texts[2:]])
    from_table = corpus_from_batches([pa.table({"text": texts, "id": [7, 8, 9]})])
    path = write_jsonl(Path(tmp_path) / "t.jsonl", [{"text": t} for t in texts])
    reference = load_corpus([path])
    for corpus in (from_lists, from_table):
        assert corpus.tokens.tolist() == reference.tokens.tolist()
        assert corpus.doc_offsets.tolist() == reference.doc_offsets.tolist()
    assert list(from_lists.doc_ids) == ["0", "1", "2"] and list(from_table.doc_ids) == [
        "7", "8", "9"]
    from corpus_miner.errors import InputError

    with pytest.raises(InputError, match="no field 'text'|text"):
        corpus_from_batches([{"body": ["x"]}])
    with pytest.raises(InputError, match="batches are dicts"):
        corpus_from_batches([42])
    assert json.dumps(list(corpus_from_batches([]).vocab)) == "[]"
