"""Every command says what its read skipped or replaced (issue 10: clean and report were silent
where stats warned), once, after a successful run."""

from __future__ import annotations

import json

import pytest

from corpus_miner.cli import main

TEXT = "please accept our cookies so that the site can remember your choices"


@pytest.fixture
def messy(tmp_path):
    lines = [json.dumps({"id": i, "text": f"{TEXT} {i}"}) for i in range(10)]
    lines[3] = '{"id": 3, "text": "broken'  # malformed
    lines[5] = json.dumps({"id": 5, "text": None})
    raw = "\n".join(lines).encode() + b"\n" + b'{"id": 99, "text": "bad \xff byte"}\n'
    (tmp_path / "in.jsonl").write_bytes(raw)
    assert main(["index", "build", str(tmp_path / "in.jsonl"), "--skip-bad",
                 "-o", str(tmp_path / "idx")]) == 0
    return tmp_path


WARNING = "warning: bad lines skipped 1, invalid utf8 replaced 1, null texts 1\n"


@pytest.mark.parametrize("argv", [
    ["stats", "{t}/in.jsonl"],
    ["tokenize", "{t}/in.jsonl", "-o", "{t}/corpus"],
    ["phrases", "{t}/in.jsonl", "--sigma", "3", "--min-length", "4", "-o", "{t}/p.jsonl"],
    ["report", "{t}/in.jsonl", "--sigma", "3", "--min-length", "4", "--json", "{t}/r.json"],
    ["clean", "{t}/in.jsonl", "--sigma", "3", "--min-length", "4", "-o", "{t}/c.jsonl"],
    ["dedup", "{t}/in.jsonl", "-o", "{t}/d.jsonl"],
    ["dedup", "{t}/in.jsonl", "-o", "{t}/d.jsonl", "--mode", "minhash_lsh"],
    ["index", "build", "{t}/in.jsonl", "-o", "{t}/idx2"],
    ["index", "query", "{t}/idx", "{t}/in.jsonl", "-o", "{t}/q.jsonl"],
], ids=lambda argv: " ".join(argv[:2]))
def test_every_command_warns_once_about_tolerated_input(messy, capsys, argv):
    assert main([a.format(t=messy) for a in argv] + ["--skip-bad"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning:") == 1 and WARNING in err
