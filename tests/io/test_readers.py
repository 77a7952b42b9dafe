"""Every reader and every bad-input rule of read_documents."""

from __future__ import annotations

import gzip
import io
import json
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpus_miner.errors import InputError
from corpus_miner.io import ReadStats, read_documents

ROWS = [{"id": "a", "text": "Hello world", "lang": "en"},
        {"id": "b", "text": "Zweite Zeile", "lang": "de"},
        {"id": "c", "text": "", "lang": None}]


def read_all(inputs, **kw):
    stats = kw.pop("stats", None) or ReadStats()
    batches = list(read_documents(inputs, stats=stats, **kw))
    ids = [i for b in batches for i in b.ids.to_pylist()]
    texts = [t for b in batches for t in b.texts.to_pylist()]
    return ids, texts, batches, stats


@pytest.mark.parametrize("name", ["docs.jsonl", "docs.jsonl.gz", "docs.jsonl.zst", "docs.json"])
def test_jsonl_plain_and_compressed(write_jsonl, name):
    ids, texts, batches, stats = read_all(write_jsonl(name, ROWS))
    assert ids == ["a", "b", "c"]
    assert texts == ["Hello world", "Zweite Zeile", ""]
    assert batches[0].records.column_names == ["id", "text", "lang"]
    assert stats.documents == 3 and stats.files == 1 and stats.bytes == 23
    assert stats.null_texts == 0 and stats.invalid_utf8_replaced == 0


def test_small_batches_and_long_lines_keep_order_and_line_numbers(write_jsonl):
    rows = [{"id": str(i), "text": "w" * (i % 7) * 30} for i in range(50)]
    ids, texts, batches, _ = read_all(write_jsonl("d.jsonl", rows), batch_size=64)
    assert len(batches) > 5
    assert ids == [r["id"] for r in rows] and texts == [r["text"] for r in rows]
    assert [b.first_row for b in batches] == [sum(len(x) for x in batches[:k])
                                              for k in range(len(batches))]


def test_several_inputs_in_order_with_global_row_numbers(write_jsonl, tmp_path):
    first = write_jsonl("a.jsonl", [{"text": "one"}, {"text": "two"}])
    second = write_jsonl("b.jsonl.gz", [{"text": "three"}])
    ids, texts, batches, stats = read_all([first, second])
    assert ids == ["0", "1", "2"] and texts == ["one", "two", "three"]
    assert [b.source for b in batches] == [str(first), str(second)]
    assert stats.files == 2


def test_string_ids_kept_and_a_missing_one_is_the_row_number(write_jsonl):
    path = write_jsonl("s.jsonl", [{"id": "x", "text": "a"}, {"id": None, "text": "b"},
                                   {"text": "c"}, {"id": "", "text": "d"}])
    ids, _, _, _ = read_all(path)
    assert ids == ["x", "1", "2", ""]


def test_custom_fields_and_numeric_ids(write_jsonl):
    path = write_jsonl("d.jsonl", [{"doc": 7, "body": "x"}, {"doc": None, "body": "y"}])
    ids, texts, _, _ = read_all(path, text_field="body", id_field="doc")
    assert ids == ["7", "1"] and texts == ["x", "y"]


def test_stdin(monkeypatch):
    data = b'{"id": "s1", "text": "from stdin"}\n\n{"id": "s2", "text": "second"}\n'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    ids, texts, batches, _ = read_all("-")
    assert ids == ["s1", "s2"] and texts == ["from stdin", "second"]
    assert batches[0].source == "-"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"text": "a"}\n{"text"\n')))
    with pytest.raises(InputError, match="^stdin: line 2: malformed JSON"):
        read_all("-")


def test_parquet_file_and_folder(tmp_path):
    table = pa.table({"id": ["p1", "p2", "p3"], "text": ["Alpha beta", None, "gamma"],
                      "score": [1.5, 2.5, 3.5]})
    pq.write_table(table, tmp_path / "one.parquet", row_group_size=1)
    ids, texts, batches, stats = read_all(tmp_path / "one.parquet", batch_size=1)
    assert ids == ["p1", "p2", "p3"] and texts == ["Alpha beta", "", "gamma"]
    assert stats.null_texts == 1
    assert batches[0].records.column_names == ["id", "text", "score"]
    folder = tmp_path / "parts"
    (folder / "sub").mkdir(parents=True)
    pq.write_table(table.slice(2), folder / "sub" / "part-1.parquet")
    pq.write_table(table.slice(0, 2), folder / "part-0.parquet")
    (folder / "_SUCCESS").write_text("")
    ids, _, _, stats = read_all(folder)
    assert ids == ["p1", "p2", "p3"] and stats.files == 2


def test_parquet_invalid_utf8_is_replaced_and_counted(tmp_path):
    raw = pa.array([b"ok", b"bad \xff byte"], pa.binary())
    table = pa.table({"text": raw.view(pa.string())})
    pq.write_table(table, tmp_path / "bad.parquet")
    _, texts, _, stats = read_all(tmp_path / "bad.parquet")
    assert texts == ["ok", "bad \ufffd byte"] and stats.invalid_utf8_replaced == 1


def test_text_folder_recursive_with_relative_ids(tmp_path):
    root = tmp_path / "docs"
    (root / "b").mkdir(parents=True)
    (root / "a.txt").write_text("First file")
    (root / "b" / "c.md").write_text("Nested")
    (root / ".hidden").write_text("skipped")
    (root / "b" / "bad.txt").write_bytes(b"caf\xe9")
    ids, texts, batches, stats = read_all(root, batch_size=4)
    assert ids == ["a.txt", "b/bad.txt", "b/c.md"]
    assert texts == ["First file", "caf\ufffd", "Nested"]
    assert stats.invalid_utf8_replaced == 1 and stats.files == 3 and len(batches) == 3


def test_malformed_line_names_file_and_line(write_jsonl):
    path = write_jsonl("d.jsonl", [{"text": "ok"}, b"", b'{"text": "broken"', {"text": "x"}])
    with pytest.raises(InputError, match=r"d\.jsonl: line 3: malformed JSON.*--skip-bad"):
        read_all(path)


@pytest.mark.parametrize("bad", [b'{"text": "a"} {"text": "b"}', b"[1, 2]", b"not json", b"{"])
def test_skip_bad_counts_each_bad_line(write_jsonl, bad):
    path = write_jsonl("d.jsonl", [{"text": "one"}, bad, {"text": "two"}, bad])
    with pytest.raises(InputError, match="line 2"):
        read_all(path)
    _, texts, _, stats = read_all(path, skip_bad=True)
    assert texts == ["one", "two"] and stats.bad_lines_skipped == 2


def test_invalid_utf8_in_jsonl_is_replaced_and_counted(write_jsonl):
    path = write_jsonl("d.jsonl.gz", [b'{"text": "caf\xe9 ok"}', {"text": "fine"},
                                      b'{"text": "lone \\ud800 surrogate"}'])
    _, texts, _, stats = read_all(path)
    assert texts == ["caf\ufffd ok", "fine", "lone \ufffd surrogate"]
    assert stats.invalid_utf8_replaced == 2


def test_missing_text_field_lists_existing_fields(write_jsonl, tmp_path):
    path = write_jsonl("d.jsonl", [{"id": 1, "body": "x"}])
    with pytest.raises(InputError, match=r"no field 'text' \(fields: id, body\).*--text-field"):
        read_all(path)
    pq.write_table(pa.table({"content": ["x"]}), tmp_path / "p.parquet")
    with pytest.raises(InputError, match=r"no field 'text' \(fields: content\)"):
        read_all(tmp_path / "p.parquet")


def test_null_and_non_string_texts_are_empty_and_counted(write_jsonl):
    path = write_jsonl("d.jsonl", [{"text": "a"}, {"text": None}, {"text": 5},
                                   {"text": {"x": 1}}, {"other": 1}])
    _, texts, batches, stats = read_all(path)
    assert texts == ["a", "", "", "", ""] and stats.null_texts == 4
    assert batches[0].records.num_rows == 5


def test_records_keep_strings_that_look_like_timestamps(write_jsonl):
    path = write_jsonl("d.jsonl",
                       [{"id": "2020-01-01", "text": "x", "when": "2021-05-06T07:08:09"}])
    ids, _, batches, _ = read_all(path)
    assert ids == ["2020-01-01"]
    assert batches[0].records.to_pylist() == [
        {"id": "2020-01-01", "text": "x", "when": "2021-05-06T07:08:09"}]


def test_empty_inputs_give_no_documents(write_jsonl, tmp_path):
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "blank.jsonl.gz").write_bytes(gzip.compress(b"\n \n"))
    (tmp_path / "emptydir").mkdir()
    ids, _, batches, stats = read_all([tmp_path / "empty.jsonl", tmp_path / "blank.jsonl.gz",
                                       tmp_path / "emptydir"])
    assert ids == [] and batches == [] and stats.documents == 0


def test_missing_file_is_one_line(tmp_path):
    with pytest.raises(InputError) as info:
        read_all(tmp_path / "nope.jsonl")
    assert str(info.value) == f"{tmp_path / 'nope.jsonl'}: no such file or directory"


def test_corrupt_gzip_and_unreadable_file(tmp_path):
    path = tmp_path / "broken.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"text": "x"}\n' * 100)[:40])
    with pytest.raises(InputError, match="broken.jsonl.gz: cannot read or decompress"):
        read_all(path)
    bad_parquet = tmp_path / "bad.parquet"
    bad_parquet.write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match="bad.parquet: cannot read as Parquet"):
        read_all(bad_parquet)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_permission_denied(tmp_path):
    path = tmp_path / "secret.jsonl"
    path.write_text(json.dumps({"text": "x"}))
    path.chmod(0)
    with pytest.raises(InputError, match="secret.jsonl: cannot read"):
        read_all(path)


def test_saved_corpus_folder_is_not_read_as_text(tmp_path, write_jsonl):
    from corpus_miner.corpus import load_corpus

    load_corpus(write_jsonl("d.jsonl", ROWS)).save(tmp_path / "saved")
    with pytest.raises(InputError, match="saved token corpus"):
        read_all(tmp_path / "saved")


def test_bom_crlf_and_concatenated_gzip_members(tmp_path):
    path = tmp_path / "multi.jsonl.gz"
    path.write_bytes(gzip.compress(b'\xef\xbb\xbf{"text": "one"}\r\n')
                     + gzip.compress(b'{"text": "two"}\r\n'))
    _, texts, _, stats = read_all(path)
    assert texts == ["one", "two"] and stats.bad_lines_skipped == 0


def test_invalid_utf8_is_replaced_when_arrow_parses_the_chunk(write_jsonl):
    # pyarrow's JSON parser passes invalid bytes through unchecked; without a surrogate escape
    # in the chunk nothing forced the Python path, and clean/dedup crashed on the raw bytes later.
    path = write_jsonl("d.jsonl",
                       [b'{"id": "x\xff", "text": "caf\xe9 ok \xff\xfe"}', {"text": "fine"}])
    ids, texts, batches, stats = read_all(path)
    assert texts == ["caf\ufffd ok \ufffd\ufffd", "fine"] and ids == ["x\ufffd", "1"]
    assert stats.invalid_utf8_replaced == 1
    for batch in batches:
        batch.records.validate(full=True)


def test_saved_folders_with_damaged_or_foreign_metadata_are_not_read_as_text(tmp_path, write_jsonl):
    # A damaged metadata.json made a saved corpus look like a folder of text files: its .npy
    # arrays were tokenized as documents and every command "succeeded" on garbage.
    from corpus_miner.corpus import load_corpus
    from corpus_miner.errors import FormatError

    saved = tmp_path / "saved"
    load_corpus(write_jsonl("d.jsonl", ROWS)).save(saved)
    (saved / "metadata.json").write_text('{"form')
    with pytest.raises(InputError, match="saved token corpus"):
        read_all(saved)
    with pytest.raises(FormatError, match="metadata.json: unreadable or corrupt"):
        load_corpus([saved])
    index = tmp_path / "index"
    index.mkdir()
    (index / "metadata.json").write_text('{"arrays": {}, "format": "corpus-miner/lsh-index"}')
    (index / "bits.bin").write_bytes(b"\x00\xff")
    with pytest.raises(InputError, match="saved corpus-miner/lsh-index folder, not documents"):
        read_all(index)


def test_text_folder_skips_and_counts_binary_files(tmp_path):
    # An image next to the text files used to become a document of replacement characters
    # and stray ASCII tokens.
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("Readable text")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (root / "late_nul.txt").write_bytes(b"x" * 9000 + b"\x00 tail")  # NUL past the sniffed head
    ids, texts, _, stats = read_all(root)
    assert ids == ["a.txt", "late_nul.txt"] and texts[0] == "Readable text"
    assert stats.binary_files_skipped == 1 and stats.files == 2
    assert stats.invalid_utf8_replaced == 0


def test_empty_parquet_without_columns_is_an_empty_corpus(tmp_path):
    # dedup/clean write an empty corpus as a Parquet file without columns; feeding it to the
    # next stage failed with "no field 'text' (fields: none)" instead of reading no documents.
    from corpus_miner.io import write_records

    empty = tmp_path / "empty.parquet"
    write_records(iter(()), empty)
    pq.write_table(pa.table({"id": pa.array([], pa.string())}), tmp_path / "no_text.parquet")
    for path in (empty, tmp_path / "no_text.parquet"):
        ids, texts, _, stats = read_all(path)
        assert ids == [] and texts == [] and stats.documents == 0 and stats.files == 1


def test_read_ahead_gives_the_same_batches_and_raises_where_the_error_is(write_jsonl, tmp_path):
    rows = [{"id": str(i), "text": "w" * (i % 7) * 30} for i in range(50)]
    path = write_jsonl("d.jsonl", rows)
    plain = read_all(path, batch_size=64)
    ahead = read_all(path, batch_size=64, prefetch=2)
    assert ahead[:2] == plain[:2] and len(ahead[2]) == len(plain[2]) > 5
    assert [b.first_row for b in ahead[2]] == [b.first_row for b in plain[2]]
    assert ahead[3] == plain[3]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in rows[:20]) + "\n{broken\n")
    received = {}
    for prefetch in (0, 2):
        received[prefetch] = []
        with pytest.raises(InputError, match="line 21"):
            for batch in read_documents(bad, batch_size=64, prefetch=prefetch):
                received[prefetch].append(len(batch))
    assert received[2] == received[0] and sum(received[0]) > 10  # the good batches came first
    stream = read_documents(path, batch_size=64, prefetch=1)
    next(stream)
    stream.close()  # the consumer leaves early: the worker stops at its next batch
