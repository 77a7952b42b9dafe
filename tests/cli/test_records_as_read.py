"""JSONL records leave dedup and index query as they were read (issue 14, "the CLI costs more
than the pipeline"): each kept record is its input line without the whitespace around it, the
added fields inserted before its closing brace; only a record that reading repaired (U+FFFD), or
that already has an added field, is encoded again. The bytes are the same whichever way the
input is read: two reads with the second unparsed, two parsed reads, one streaming read, stdin,
gzip in or out, stdout."""

from __future__ import annotations

import gzip
import io
import json
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus_miner.cli import main
from corpus_miner.dedup import LSHBloom
from corpus_miner.io import read_documents, write_records
from corpus_miner.io.digest import TextsDigest
from corpus_miner.io.readers import LineBatch

T = "subscribe to our newsletter for weekly updates on all the new products in store"
LINES = [  # the spellings a re-encoding would change, and records Arrow's parser never sees
    b'{"id": "a", "text": "' + T.encode() + b' alpha"}',
    b'{"id":"b","text":"' + T.encode() + b' beta","n":1e2,"m":-0,"f":1.50}',
    b'  {"text": "' + T.encode() + b' caf\\u00e9 gamma", "id": 18446744073709551615}  \r',
    b'{"id": "a", "text": "' + T.encode() + b' alpha"}',  # a copy of the first
    b'{"id": "d", "text": "' + T.encode() + b' delta \\/ \\u2028", "id": "d2"}',
    b'{ }',
    b'{"id": "e", "text": "\xc3\xa9t\xc3\xa9 ' + T.encode() + b' epsilon", "x": {"y": [1, 2.0]}}',
    b'{}',
    b'{"text": "' + T.encode() + b' beta", "id": "b-copy", "extra": {"k": null}}\t',
]
BLANKS = b"\n   \n"  # blank lines between records are no records


def _source(tmp_path, lines=LINES, name="in.jsonl", crlf=False, bom=False):
    end = b"\r\n" if crlf else b"\n"
    data = (b"\xef\xbb\xbf" if bom else b"") + end.join(lines[:3]) + BLANKS + \
        end.join(lines[3:])  # and no newline after the last line
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def _flags(lines, expected_items=None):
    """The library's flags for the texts of `lines` as the reader gives them; with
    expected_items, of a stream (as dedup --expected-items)."""
    texts = []
    for line in lines:
        text = json.loads(line.decode("utf-8", "replace")).get("text")
        texts.append(re.sub("[\ud800-\udfff]", "\ufffd", text) if isinstance(text, str) else "")
    if expected_items is None:
        return LSHBloom(num_perm=64).deduplicate(texts).is_duplicate.tolist()
    model = LSHBloom(num_perm=64, expected_items=expected_items)
    return model.deduplicate(texts, update=True).is_duplicate.tolist()


def _expected(lines, flags, annotate, duplicate_of=None):
    out = []
    for i, (line, flag) in enumerate(zip(lines, flags)):
        line = line.strip()
        if not annotate:
            out += [line + b"\n"] if not flag else []
            continue
        members = b'"is_duplicate": ' + (b"true" if flag else b"false")
        if duplicate_of is not None:
            members += b', "duplicate_of": ' + json.dumps(duplicate_of[i]).encode()
        body = line[:-1]
        out.append(body + (b"" if body.rstrip().endswith(b"{") else b", ") + members + b"}\n")
    return b"".join(out)


def _run(argv):
    assert main(argv) == 0


WAYS = {  # name: (extra arguments, how the input is given)
    "two reads, the second unparsed": ([], "file"),
    "one streaming read": (["--expected-items", "5"], "file"),
    "gzip in and out": ([], "gz"),
    "stdin, kept in memory": ([], "stdin"),
    "stdout": ([], "stdout"),
}


@pytest.mark.parametrize("annotate", [False, True])
@pytest.mark.parametrize("way", list(WAYS))
def test_dedup_writes_each_record_as_read(tmp_path, monkeypatch, capsys, way, annotate):
    extra, given_as = WAYS[way]
    source = _source(tmp_path, name="in.jsonl.gz" if given_as == "gz" else "in.jsonl",
                     crlf=way == "stdout", bom=given_as == "stdin")
    out = tmp_path / ("out.jsonl.gz" if given_as == "gz" else "out.jsonl")
    inputs = [str(source)]
    if given_as == "stdin":
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(source.read_bytes())))
        inputs = ["-"]
    target = "-" if given_as == "stdout" else str(out)
    capsys.readouterr()
    assert main(["dedup", *inputs, "-o", target, "--num-perm", "64", *extra]
                + (["--annotate"] if annotate else [])) == 0
    written = capsys.readouterr().out.encode() if given_as == "stdout" else (
        gzip.decompress(out.read_bytes()) if given_as == "gz" else out.read_bytes())
    assert written == _expected(LINES, _flags(LINES, 5 if extra else None), annotate)


def test_minhash_lsh_appends_duplicate_of(tmp_path):
    source = _source(tmp_path)
    out = tmp_path / "out.jsonl"
    _run(["dedup", str(source), "-o", str(out), "--num-perm", "64", "--mode", "minhash_lsh",
          "--annotate"])
    result = LSHBloom(num_perm=64, mode="minhash_lsh").deduplicate(
        [json.loads(line).get("text") or "" for line in LINES],
        [str(json.loads(line).get("id", i)) for i, line in enumerate(LINES)])
    assert out.read_bytes() == _expected(LINES, result.is_duplicate, True,
                                         result.duplicate_of_id)


def test_a_skipped_bad_line_makes_the_second_read_parse_and_changes_no_byte(tmp_path):
    good = _source(tmp_path)
    bad = _source(tmp_path, LINES[:4] + [b'{"text": broken'] + LINES[4:], name="bad.jsonl")
    for source in (good, bad):
        _run(["dedup", str(source), "-o", str(tmp_path / f"{source.stem}.out.jsonl"),
              "--num-perm", "64", "--annotate", "--skip-bad"])
    assert (tmp_path / "bad.out.jsonl").read_bytes() == (tmp_path / "in.out.jsonl").read_bytes()


def test_index_query_writes_each_record_as_read(tmp_path):
    reference = _source(tmp_path, LINES[:2], name="ref.jsonl")
    source = _source(tmp_path)
    _run(["index", "build", str(reference), "-o", str(tmp_path / "idx"), "--num-perm", "64"])
    for annotate in (False, True):
        out = tmp_path / f"q{annotate}.jsonl"
        _run(["index", "query", str(tmp_path / "idx"), str(source), "-o", str(out)]
             + (["--annotate"] if annotate else []))
        texts = [json.loads(line.decode("utf-8", "replace")).get("text") or "" for line in LINES]
        flags = LSHBloom.load(tmp_path / "idx").query(texts).is_duplicate
        assert out.read_bytes() == _expected(LINES, flags, annotate)


def test_records_reading_repaired_are_encoded_again(tmp_path):
    """Invalid UTF-8 and lone surrogates are replaced by U+FFFD when read (and counted); those
    records are written as the reader gave them, so the output is valid UTF-8. The second read
    then parses, and the output equals one streaming read's."""
    lines = LINES[:3] + [b'{"id": "u", "text": "bad \xff byte ' + T.encode() + b'"}',
                         b'{"id": "s", "text": "lone \\ud800 ' + T.encode() + b'", "k": 1.50}']
    source = _source(tmp_path, lines)
    outs = []
    for extra in ([], ["--expected-items", "5"]):
        outs.append(tmp_path / f"out{len(outs)}.jsonl")
        _run(["dedup", str(source), "-o", str(outs[-1]), "--num-perm", "64", "--annotate",
              *extra])
    written = outs[0].read_bytes()
    assert written == outs[1].read_bytes()
    got = written.split(b"\n")
    flags = _flags(lines)
    assert b"\n".join(got[:3]) + b"\n" == _expected(lines[:3], flags[:3], True)
    assert json.loads(got[3]) == {"id": "u", "text": f"bad \ufffd byte {T}",
                                  "is_duplicate": flags[3]}
    assert got[4] == json.dumps({"id": "s", "text": f"lone \ufffd {T}", "k": 1.5,
                                 "is_duplicate": flags[4]}, ensure_ascii=False).encode()


def test_annotating_annotated_output_replaces_the_values_in_place(tmp_path):
    source = _source(tmp_path)
    first, again = tmp_path / "first.jsonl", tmp_path / "again.jsonl"
    _run(["dedup", str(source), "-o", str(first), "--num-perm", "64", "--annotate"])
    _run(["dedup", str(first), "-o", str(again), "--num-perm", "64", "--annotate"])
    before = [json.loads(line) for line in first.read_bytes().splitlines()]
    after = [json.loads(line) for line in again.read_bytes().splitlines()]
    assert after == before and [list(r) for r in after] == [list(r) for r in before]
    # one record already annotated among others: only that one is encoded again
    mixed = _source(tmp_path, [b'{"is_duplicate": "old",  "text": "x"}'] + LINES, "mixed.jsonl")
    _run(["dedup", str(mixed), "-o", str(again), "--num-perm", "64", "--annotate"])
    got = again.read_bytes().split(b"\n")
    assert got[0] == b'{"is_duplicate": false, "text": "x"}'
    assert b"\n".join(got[1:]) == _expected(LINES, _flags([b'{"text": "x"}'] + LINES)[1:], True)


@pytest.mark.parametrize("data", [b"null\n", b'  null\n{"text": "a"}\n', b'{"text": "a"}\nnull\n',
                                  b"nullx\n"])
def test_a_line_that_is_no_object_is_malformed_never_a_record(tmp_path, capsys, data):
    """Arrow's parser read `null` as a record of nulls, and crashed on one in first place."""
    source = tmp_path / "in.jsonl"
    source.write_bytes(data)
    assert main(["dedup", str(source), "-o", str(tmp_path / "o.jsonl")]) == 2
    assert "malformed JSON" in capsys.readouterr().err
    assert main(["dedup", str(source), "-o", str(tmp_path / "o.jsonl"), "--skip-bad"]) == 0
    assert (tmp_path / "o.jsonl").read_bytes() == (b'{"text": "a"}\n' if b"a" in data else b"")


def test_lines_only_reading_gives_the_parsed_batches_records_and_digest(tmp_path):
    source = _source(tmp_path, LINES * 20, crlf=True, bom=True)
    parsed = list(read_documents([source], batch_size=300))
    lines = list(read_documents([source], batch_size=300, jsonl_lines=True))
    assert all(isinstance(batch, LineBatch) for batch in lines) and len(parsed) > 5
    assert [(len(b), b.first_row) for b in lines] == [(len(b), b.first_row) for b in parsed]
    assert [b.lines.lines() for b in lines] == [b.lines.lines() for b in parsed]
    digests = [TextsDigest(), TextsDigest()]
    for digest, batches in zip(digests, (parsed, lines)):
        for batch in batches:
            digest.update_batch(batch)
    assert digests[0].value == digests[1].value and digests[0].documents == 20 * len(LINES)
    edited = tmp_path / "edited.jsonl"  # another id, same texts: the bytes show it
    edited.write_bytes(source.read_bytes().replace(b'"id": "d"', b'"id": "D"'))
    other = TextsDigest()
    for batch in read_documents([edited], batch_size=300, jsonl_lines=True):
        other.update_batch(batch)
    assert other.value != digests[0].value


SCALARS = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=5)
WORDS = "cookie policy accept all terms privacy notice read more home page".split()
RECORD = st.fixed_dictionaries({"text": st.lists(st.sampled_from(WORDS), min_size=3,
                                                 max_size=12).map(" ".join)},
                               optional={"id": VALUES, "meta": VALUES})


@st.composite
def spelled(draw):
    """A record and one of the many ways to write it on a line."""
    record = draw(RECORD)
    items = list(record.items())
    draw(st.randoms()).shuffle(items)
    text = json.dumps(dict(items), ensure_ascii=draw(st.booleans()),
                      separators=draw(st.sampled_from([(", ", ": "), (",", ":"), (" , ", " : ")])))
    pad = draw(st.sampled_from(["", " ", "\t", "\r"]))
    return (draw(st.sampled_from(["", " "])) + text + pad).encode()


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lines=st.lists(spelled(), min_size=1, max_size=15), copies=st.lists(st.integers(0, 14)),
       annotate=st.booleans(), streaming=st.booleans())
def test_any_spelling_comes_back_byte_for_byte(tmp_path_factory, lines, copies, annotate,
                                               streaming):
    lines = lines + [lines[i % len(lines)] for i in copies]  # exact copies are duplicates
    folder = tmp_path_factory.mktemp("spell")
    source = folder / "in.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    out = folder / "out.jsonl"
    assert main(["dedup", str(source), "-o", str(out), "--num-perm", "64"]
                + (["--annotate"] if annotate else [])
                + (["--expected-items", "3"] if streaming else [])) == 0
    flags = _flags(lines, 3 if streaming else None)
    assert out.read_bytes() == _expected(lines, flags, annotate)
    written = write_records(read_documents([source], batch_size=64), folder / "all.jsonl")
    assert written == len(lines)
    assert (folder / "all.jsonl").read_bytes() == _expected(lines, np.zeros(len(lines)), False)
