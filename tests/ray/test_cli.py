"""`corpus-miner phrases --engine ray` on the session's Ray cluster: the local engine's phrase
file byte for byte, one-line errors from the workers, and the commands without a Ray engine
refusing it (report and clean run on Ray: test_cli_apply)."""

from __future__ import annotations

import json

import pytest

from corpus_miner.cli import main
from tests.integrations.corpora import pages, write_jsonl

pytest.importorskip("ray")
pytestmark = pytest.mark.filterwarnings(r"ignore:::ray\.data\.context")


def test_phrases_on_ray_write_the_local_file(ray_cluster, tmp_path):
    first = write_jsonl(tmp_path / "a.jsonl", pages(6, 30, 3))
    second = write_jsonl(tmp_path / "b.jsonl", pages(7, 20, 0))
    mining = ["--sigma", "4", "--min-length", "4"]
    assert main(["phrases", str(first), str(second), *mining, "-o",
                 str(tmp_path / "local.tsv")]) == 0
    assert main(["phrases", str(first), str(second), *mining, "--engine", "ray", "-o",
                 str(tmp_path / "ray.tsv"), "--stats", str(tmp_path / "stats.json")]) == 0
    assert (tmp_path / "ray.tsv").read_bytes() == (tmp_path / "local.tsv").read_bytes()
    stats = json.loads((tmp_path / "stats.json").read_text(encoding="utf-8"))
    assert stats["algorithm"] == "ray-bloomspan" and stats["documents"] == 30 + 3 + 2 + 20 + 2


def test_worker_errors_are_one_line(ray_cluster, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{not json\n', encoding="utf-8")
    assert main(["phrases", str(bad), "--engine", "ray", "-o", str(tmp_path / "p.tsv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.jsonl" in err[0] and "Traceback" not in err[0]
    assert not (tmp_path / "p.tsv").exists()
    assert main(["phrases", "-", "--engine", "ray"]) == 2
    assert "stdin" in capsys.readouterr().err
