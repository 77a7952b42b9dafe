"""clean changes string texts only (issue 10, "clean erases non-string texts"): a null text
stays null, a number stays that number, bytes stay those bytes, a missing text stays missing,
in every mode, whatever the batch a record falls in."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpus_miner.cli import main
from corpus_miner.corpus import load_corpus
from corpus_miner.coverage.clean import Cleaner
from corpus_miner.coverage.coverage import Coverage
from corpus_miner.io import read_documents, write_records
from corpus_miner.phrases import BloomSpan

TEMPLATE = "all rights reserved by the example company and its many friends"
NOT_TEXT = [None, 7, [1, 2], {"a": 1}, True, 2.5]


def _records(n_strings=8):
    """String texts sharing TEMPLATE, then one record per non-string kind, then a record
    without a text field, in a run long enough to fill whole batches."""
    rows = [{"id": f"s{i}", "text": f"{TEMPLATE} story {i}"} for i in range(n_strings)]
    rows += [{"id": f"n{i}", "text": value} for i, value in enumerate(NOT_TEXT * 20)]
    rows.append({"id": "no-text", "other": 1})
    return rows


def _clean(path, out, batch_size, **params):
    corpus = load_corpus([path])
    coverage = Coverage.from_miner(BloomSpan(sigma=3, min_length=4).fit(corpus), corpus)
    cleaner = Cleaner(**params).fit(corpus, coverage)
    rows = write_records(cleaner.transform(read_documents([path], batch_size=batch_size)), out)
    return cleaner.summary(), rows


@pytest.mark.parametrize("batch_size", [64, 1 << 20])  # tiny: whole batches of non-strings
@pytest.mark.parametrize("mode", ["remove", "mask", "annotate"])
def test_non_string_texts_come_back_as_they_were(tmp_path, batch_size, mode):
    rows = _records()
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    summary, written = _clean(path, tmp_path / "out.jsonl", batch_size, mode=mode,
                              drop_above=0.5)
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert written == len(out)
    # more than half of each string text is template: dropped; the others never are
    assert [r for r in out if r["id"].startswith("s")] == []
    others = [r for r in out if not r["id"].startswith("s")]
    expected = [r for r in rows if not r["id"].startswith("s")]
    assert len(others) == len(expected)
    for record, original in zip(others, expected):
        for key, value in original.items():  # exactly as it was: 7 stays 7, True stays True
            assert json.dumps(record[key]) == json.dumps(value)
        # added: the annotations (null for a non-string text) and, as documented, null for
        # a field that other records of its batch have
        assert all(record[key] is None for key in record if key not in original)
    assert summary["documents_not_text"] == len(expected)
    assert summary["documents_dropped"] == 8


@pytest.mark.parametrize("column", [
    pa.array([7, None, 9, 11], pa.int64()),
    pa.array([b"caf\xc3\xa9 bar", b"\xff\xfe raw", None, b"x"], pa.binary()),
    pa.array([None, None, None, None], pa.string()),
])
def test_parquet_text_columns_that_are_not_strings_are_untouched(tmp_path, capsys, column):
    source = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3, 4], "text": column}), source)
    out = tmp_path / "out.parquet"
    assert main(["clean", str(source), "--sigma", "2", "--min-length", "2",
                 "-o", str(out)]) == 0
    assert pq.read_table(out).column("text").combine_chunks().equals(column)
    err = capsys.readouterr().err
    assert "texts that are not strings left as they were" in err
    assert err.count("warning:") == 1  # what the reader tolerated, e.g. null texts


def test_string_texts_beside_nulls_are_cleaned_and_nulls_stay_null(tmp_path):
    rows = [{"id": i, "text": f"{TEMPLATE} {i}" if i % 2 else None} for i in range(10)]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    assert main(["clean", str(source), "--sigma", "3", "--min-length", "4", "-o", str(out)]) == 0
    texts = [json.loads(line)["text"] for line in out.read_text().splitlines()]
    assert texts == [None if i % 2 == 0 else str(i) for i in range(10)]
