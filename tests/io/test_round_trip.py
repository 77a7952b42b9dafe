"""Every field type through every output format and back (issue 22, "mixed-type texts read back
from our own Parquet are tokenized as JSON"): records whose fields hold strings, integers,
floats, integers beyond int64, booleans, nulls, lists, objects and mixed types (the text field
too) are written by each command that writes records to JSONL, JSONL.gz and Parquet, read back,
and run through each of those commands again. The oracle is the same command run on the
original JSONL: what is read from our own outputs must be what was written."""

from __future__ import annotations

import gzip
import json

import pytest

from corpus_miner.cli import main
from corpus_miner.io import read_documents

BANNER = "we use cookies to improve your experience by using this site you accept our policy"


def _records() -> list[dict]:
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    rows = []
    for i in range(12):
        rows.append({"id": i, "text": f"{BANNER} {' '.join(words[i:] + words[:i])} page {i}",
                     "s": f"s{i}", "i": i * 3, "f": i / 4, "big": 2**64 + i, "b": i % 2 == 0,
                     "z": None, "l": [i, "x", 1.5], "d": {"k": i, "v": [None, True]},
                     "mixed": [f"m{i}", i, 2.5, None, [i], {"a": i}, True, 2**70][i % 8]})
    rows[3]["text"] = 0  # the text field mixes types: a number, a null, a list
    rows[5]["text"] = None
    rows[8]["text"] = [1, "two"]
    rows[10]["text"] = "quote \" backslash \\ and \u00e9 \U0001f600 " + BANNER
    return rows


ADDED = {"is_duplicate", "duplicate_of", "junk_spans", "junk_share"}
WRITERS = {
    "dedup": ["dedup", "{src}", "--annotate", "--num-perm", "32"],
    "clean-annotate": ["clean", "{src}", "--sigma", "3", "--min-length", "5", "--mode",
                       "annotate"],
    "clean-remove": ["clean", "{src}", "--sigma", "3", "--min-length", "5"],
}
FORMATS = ["jsonl", "jsonl.gz", "parquet"]


def _strict(records) -> list[str]:
    """Comparable form that tells 1 from 1.0, True from 1 and a missing field from null."""
    return [json.dumps(r, sort_keys=True) for r in records]


def _read_jsonl(path) -> list[dict]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _run(name: str, source, output) -> None:
    argv = [part.format(src=source) for part in WRITERS[name]] + ["-o", str(output)]
    assert main(argv) == 0, argv


def _without_added(records):
    return [{k: v for k, v in r.items() if k not in ADDED} for r in records]


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    path = tmp_path_factory.mktemp("round") / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("first", sorted(WRITERS))
def test_every_field_type_survives_every_format_and_every_second_command(source, tmp_path,
                                                                         first, fmt):
    # our own output, in each format
    middle = tmp_path / f"mid.{fmt}"
    _run(first, source, middle)
    reference = tmp_path / "first.jsonl"
    _run(first, source, reference)
    expected_middle = _read_jsonl(reference)
    read_back = [r for b in read_documents([middle]) for r in _decoded(b)]
    assert _strict(read_back) == _strict(_normalised(expected_middle, fmt))
    # the texts a command sees in our output are the texts it wrote, whatever the format
    texts = [t for b in read_documents([middle]) for t in b.texts.to_pylist()]
    assert texts == [t for b in read_documents([reference]) for t in b.texts.to_pylist()]
    for second in sorted(WRITERS):
        got, want = tmp_path / f"got-{second}.jsonl", tmp_path / f"want-{second}.jsonl"
        _run(second, middle, got)
        _run(second, reference, want)
        assert _strict(_without_added(_read_jsonl(got))) == \
            _strict(_without_added(_normalised(_read_jsonl(want), fmt))), (first, fmt, second)


def _decoded(batch) -> list[dict]:
    """A batch's records with JSON-text (mixed-type) Parquet fields decoded."""
    from corpus_miner.io.jsonl import json_values

    table = batch.records
    columns = {name: json_values(table, name) for name in table.column_names}
    return [{name: columns[name][row] for name in table.column_names}
            for row in range(table.num_rows)]


def _normalised(records, fmt):
    """JSONL keeps each record's own fields; Parquet has one schema, so a field some records
    lack is null in them (the only difference a columnar format may make)."""
    if fmt != "parquet":
        return records
    names = list(dict.fromkeys(k for r in records for k in r))
    return [{k: r.get(k) for k in names} for r in records]
