"""Property-based fuzzing of the readers and of the command line (issue 10, "done means"):
random bytes, random JSON values of every type, random truncations and compressions. Every run
ends with exit 0 and the right output, or exit 2 and one line; never a traceback, never a
changed input. Records come back exactly: 1 stays 1, 1.0 stays 1.0, 2**64 - 1 stays itself;
the only documented changes are U+FFFD for lone surrogates and null for a key that other
records of the same batch have."""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus_miner.cli import main
from corpus_miner.errors import CorpusMinerError
from corpus_miner.io import read_documents, write_records

LONE = re.compile("[\ud800-\udfff]")
SCALARS = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
           | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(max_size=8) | st.sampled_from(["\ud800", "a\udfffb", "€", ""]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)
WORDS = ("cookie policy accept all terms privacy notice read more home page").split()
TEXTS = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
RECORDS = st.fixed_dictionaries(
    {"id": VALUES}, optional={"text": TEXTS | TEXTS | VALUES, "meta": VALUES, "score": VALUES})


def _line(record) -> bytes:
    return json.dumps(record).encode() + b"\n"


def _valid(raw: bytes):
    """The record the reader must see for one line, or None when the line is bad (the rule the
    readers document: invalid UTF-8 replaced, then JSON; lone surrogates replaced)."""
    if not raw.strip():
        return None
    try:
        value = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return _fixed(value) if isinstance(value, dict) else None


def _fixed(value):
    if isinstance(value, str):
        return LONE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_fixed(v) for v in value]
    if isinstance(value, dict):
        return {_fixed(k): _fixed(v) for k, v in value.items()}
    return value


def _same(expected, written) -> bool:
    """Exactly the same value and type (True is not 1, 1 is not 1.0), except that `written` may
    hold extra keys with null where `expected` has none (the documented batch rule)."""
    if isinstance(expected, dict):
        return (isinstance(written, dict) and all(k in written and _same(v, written[k])
                                                  for k, v in expected.items())
                and all(written[k] is None for k in written if k not in expected))
    if isinstance(expected, list):
        return (isinstance(written, list) and len(expected) == len(written)
                and all(_same(a, b) for a, b in zip(expected, written)))
    if isinstance(expected, float) and isinstance(written, float):
        return math.copysign(1, expected) == math.copysign(1, written) and expected == written
    return type(expected) is type(written) and expected == written


def _read_jsonl(path) -> list:
    # lines end at "\n" only: str.splitlines would also cut at U+0085 or U+2028 in a value
    with open(path, "rb") as handle:
        return [json.loads(line) for line in handle.read().split(b"\n") if line]


def _pack(data: bytes, kind: str, cut: float | None) -> bytes:
    packed = {"plain": data, "gzip": gzip.compress(data),
              "zstd": zstandard.ZstdCompressor().compress(data)}[kind]
    return packed if cut is None else packed[:int(len(packed) * cut)]


LINES = st.lists(RECORDS.map(_line) | st.binary(max_size=30).map(lambda b: b + b"\n"),
                 max_size=25)
PACKING = st.sampled_from(["plain", "plain", "gzip", "zstd"])
CUTS = st.none() | st.none() | st.floats(0, 1)


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 300)), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(lines=LINES, kind=PACKING, cut=CUTS, skip_bad=st.booleans(), batch=st.integers(1, 400))
def test_readers_give_exact_records_or_one_clear_error(tmp_path_factory, lines, kind, cut,
                                                       skip_bad, batch):
    data = b"".join(lines)
    folder = tmp_path_factory.mktemp("read")
    source = folder / "in.jsonl"
    source.write_bytes(_pack(data, kind, cut))
    out = folder / "out.jsonl"
    try:
        written = write_records(read_documents([source], skip_bad=skip_bad, batch_size=batch),
                                out)
    except CorpusMinerError as exc:
        assert "\n" not in str(exc)
        assert not out.exists()
        return
    assert cut is None or kind == "plain" or written >= 0  # a cut stream may still decode
    if cut is not None:
        return  # which prefix survived is the decompressor's business; no crash is the point
    expected = [r for r in map(_valid, data.splitlines(keepends=True)) if r is not None]
    got = _read_jsonl(out)
    assert len(got) == len(expected)
    assert all(_same(e, g) for e, g in zip(expected, got))


COMMANDS = [
    ["stats", "{src}"],
    ["phrases", "{src}", "--sigma", "2", "--min-length", "2", "-o", "{out}/p.tsv"],
    ["report", "{src}", "--sigma", "2", "--min-length", "2", "--json", "{out}/r.json"],
    ["clean", "{src}", "--sigma", "2", "--min-length", "3", "--mode", "annotate",
     "-o", "{out}/c.jsonl"],
    ["clean", "{src}", "--sigma", "2", "--min-length", "3", "-o", "{out}/c.parquet"],
    ["dedup", "{src}", "--annotate", "--num-perm", "32", "-o", "{out}/d.jsonl"],
    ["dedup", "{src}", "--annotate", "--mode", "minhash_lsh", "--num-perm", "32",
     "-o", "{out}/d.jsonl.gz"],
    ["index", "build", "{src}", "--num-perm", "32", "-o", "{out}/idx"],
]


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 60)), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lines=LINES, kind=PACKING, cut=CUTS, skip_bad=st.booleans(),
       command=st.sampled_from(COMMANDS))
def test_commands_end_in_exit_0_or_one_line_and_never_change_the_input(
        tmp_path_factory, capsys, lines, kind, cut, skip_bad, command):
    data = b"".join(lines)
    folder = tmp_path_factory.mktemp("cli")
    source = folder / ("in.jsonl.gz" if kind == "gzip" else "in.jsonl")
    source.write_bytes(_pack(data, kind, cut))
    digest = hashlib.sha256(source.read_bytes()).digest()
    out = folder / "out"
    argv = [a.format(src=source, out=out) for a in command] + (["--skip-bad"] if skip_bad else [])
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert hashlib.sha256(source.read_bytes()).digest() == digest
    assert "Traceback" not in err
    if code == 2:
        assert err.startswith("corpus-miner: error:") and err.count("\n") == 1, err
        assert not out.exists() or not any(p.name.startswith(".") for p in out.iterdir())
        return
    assert code == 0, err
    if command[0] in ("clean", "dedup") and argv[-1 - skip_bad].endswith(".jsonl") \
            and cut is None and kind != "gzip":
        expected = [r for r in map(_valid, data.splitlines(keepends=True)) if r is not None]
        written = _read_jsonl(argv[-1 - skip_bad])
        added = ("junk_spans", "junk_share", "is_duplicate", "duplicate_of")
        assert len(written) == len(expected)
        for original, record in zip(expected, written):
            assert _same({k: v for k, v in original.items() if k not in added},
                         {k: v for k, v in record.items() if k not in added})
    assert sorted(os.listdir(folder)) == sorted({source.name, "out"} & set(os.listdir(folder)))


@pytest.mark.parametrize("junk", [b"\x1f\x8b\x08\x00broken", b"\x28\xb5\x2f\xfdnope", b"PAR1x",
                                  b"\xef\xbb\xbf", b"\x00" * 40, b"{" * 100000])
def test_known_nasty_inputs(tmp_path, capsys, junk):
    source = tmp_path / "in.jsonl"
    source.write_bytes(junk)
    assert main(["stats", str(source)]) in (0, 2)
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("corpus-miner: error:") <= 1
