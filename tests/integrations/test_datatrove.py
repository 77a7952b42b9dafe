"""The datatrove steps under the real LocalPipelineExecutor, against the commands on the same
small corpora: CleanPhrases against `corpus-miner clean --phrases`, LSHBloomFilter against
`corpus-miner dedup --expected-items N`."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_miner.cli import main
from corpus_miner.errors import InputError, MissingExtraError, ParameterError
from tests.helpers import run_python
from tests.integrations.corpora import EMPTY, mined_pages, pages, read_jsonl, write_jsonl

pytest.importorskip("datatrove")

from datatrove.executor import LocalPipelineExecutor  # noqa: E402
from datatrove.pipeline.readers import JsonlReader  # noqa: E402
from datatrove.pipeline.writers import JsonlWriter  # noqa: E402

from corpus_miner.integrations.datatrove import CleanPhrases, LSHBloomFilter  # noqa: E402


def run_pipeline(tmp_path: Path, name: str, inputs: Path, step, tasks: int = 1) -> list[dict]:
    """The step between datatrove's JSONL reader and writer; the records written, by task."""
    out = tmp_path / f"out-{name}"
    LocalPipelineExecutor(pipeline=[JsonlReader(str(inputs)), step,
                                    JsonlWriter(str(out), compression=None)],
                          tasks=tasks, workers=1, logging_dir=str(tmp_path / f"logs-{name}")
                          ).run()
    rows: list[dict] = []
    for part in sorted(out.iterdir()):
        rows += read_jsonl(part)
    return rows


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return mined_pages(tmp_path_factory.mktemp("datatrove"))


@pytest.mark.parametrize("mode, options", [
    ("remove", {}), ("mask", {"mask_text": "<J>"}), ("annotate", {}),
    ("remove", {"drop_above": 0.2, "allow": ("accept all cookies",)})])
def test_clean_phrases_writes_what_the_command_writes(corpus, tmp_path, mode, options):
    root, inputs, phrases = corpus
    argv = ["clean", *map(str, inputs), "--phrases", str(phrases), "--mode", mode,
            "-o", str(tmp_path / "cli.jsonl")]
    if "mask_text" in options:
        argv += ["--mask-text", options["mask_text"]]
    if "drop_above" in options:
        argv += ["--drop-above", str(options["drop_above"])]
    if "allow" in options:
        (tmp_path / "allow.txt").write_text("\n".join(options["allow"]), encoding="utf-8")
        argv += ["--allow", str(tmp_path / "allow.txt")]
    assert main(argv) == 0
    # datatrove's readers skip documents without text; the command writes them back
    expected = [r for r in read_jsonl(tmp_path / "cli.jsonl") if r["id"] not in EMPTY]
    got = run_pipeline(tmp_path, mode, root / "in",
                       CleanPhrases(phrases, mode, batch_size=7, **options), tasks=2)
    assert [r["id"] for r in got] == [r["id"] for r in expected]  # one task per file, in order
    assert len(expected) < 55 if "drop_above" in options else len(expected) == 55
    for mine, theirs in zip(got, expected):
        assert mine["text"] == theirs["text"]
        if mode == "annotate":
            assert mine["metadata"]["junk_spans"] == theirs["junk_spans"]
            assert mine["metadata"]["junk_share"] == theirs["junk_share"]
            assert mine["metadata"]["url"] == theirs["url"]


def test_clean_phrases_counts_what_it_did(corpus):
    _, inputs, phrases = corpus
    from datatrove.pipeline.readers import JsonlReader as Reader

    step = CleanPhrases(phrases, drop_above=0.2)
    docs = list(step.run(Reader(str(inputs[0].parent)).run()))
    counters = {name: step.stats[name].total for name in ("total", "dropped", "changed",
                                                          "forwarded")}
    assert counters["total"] == 55 and counters["forwarded"] == len(docs)
    assert counters["dropped"] + counters["forwarded"] == 55 and counters["dropped"] > 0
    assert 0 < counters["changed"] <= counters["forwarded"]
    assert step.stats["tokens_handled"].total < step.stats["tokens"].total


def cli_dedup(tmp_path: Path, inputs: list[Path], *options: str) -> list[dict]:
    out = tmp_path / "cli-dedup.jsonl"
    assert main(["dedup", *map(str, inputs), "-o", str(out), *options]) == 0
    return read_jsonl(out)


@pytest.fixture(scope="module")
def near_duplicates(tmp_path_factory):
    root = tmp_path_factory.mktemp("dedup")
    # datatrove's readers skip documents without text: none here
    first = write_jsonl(root / "in1" / "a.jsonl", pages(3, 30, 6, blanks=False))
    second = write_jsonl(root / "in2" / "b.jsonl",
                         pages(3, 30, 10, blanks=False)[30:] + pages(4, 10, 2, blanks=False))
    return root, first, second


def test_lshbloom_filter_keeps_what_the_command_keeps_across_runs(near_duplicates, tmp_path):
    root, first, second = near_duplicates
    n = 100
    expected = cli_dedup(tmp_path, [first, second], "--threshold", "0.7", "--expected-items",
                         str(n))
    index = tmp_path / "index"
    kept = []
    for i, folder in enumerate(("in1", "in2")):  # the second run extends the first's index
        kept += run_pipeline(tmp_path, f"dedup{i}", root / folder, LSHBloomFilter(
            index=str(index), threshold=0.7, expected_items=n, batch_size=4))
        assert (index / "metadata.json").exists()
    assert [r["id"] for r in kept] == [r["id"] for r in expected]
    assert 30 + 10 <= len(expected) < 30 + 6 + 10 + 10 + 2  # copies found, no page lost


def test_minhash_lsh_annotates_the_earliest_match(near_duplicates, tmp_path):
    root, first, _ = near_duplicates
    expected = cli_dedup(tmp_path, [first], "--mode", "minhash_lsh", "--annotate",
                         "--threshold", "0.7")
    got = run_pipeline(tmp_path, "annotate", root / "in1", LSHBloomFilter(
        annotate=True, mode="minhash_lsh", threshold=0.7, batch_size=5))
    assert [(r["id"], r["metadata"]["is_duplicate"], r["metadata"]["duplicate_of"])
            for r in got] == [(r["id"], r["is_duplicate"], r["duplicate_of"]) for r in expected]
    assert sum(r["is_duplicate"] for r in expected) >= 6


def test_lshbloom_filter_refuses_what_it_cannot_answer(near_duplicates, tmp_path):
    root, first, _ = near_duplicates
    with pytest.raises(ParameterError, match="runs on one task"):
        list(LSHBloomFilter(threshold=0.7).run(iter([]), rank=0, world_size=2))
    run_pipeline(tmp_path, "build", root / "in1",
                 LSHBloomFilter(index=str(tmp_path / "index"), threshold=0.7))
    with pytest.raises(ParameterError, match="built with threshold=0.7"):
        list(LSHBloomFilter(index=str(tmp_path / "index"), threshold=0.8).run(iter([])))
    with pytest.raises(ParameterError):
        LSHBloomFilter(threshold=2.0)


def test_a_missing_datatrove_names_the_extra():
    out = run_python("""
        import sys
        sys.modules["datatrove"] = None  # as if it were not installed
        try:
            import corpus_miner.integrations.datatrove
        except Exception as exc:
            print(type(exc).__name__, exc)
    """)
    assert "MissingExtraError" in out and 'pip install "corpus-miner[datatrove]"' in out
    assert issubclass(MissingExtraError, ImportError)


def test_an_index_in_an_s3_data_folder_is_extended_run_after_run(near_duplicates, tmp_path, s3):
    root, first, second = near_duplicates
    expected = cli_dedup(tmp_path, [first, second], "--threshold", "0.7", "--expected-items",
                         "100")
    index = (f"s3://{s3.bucket}/dedup-index", {"client_kwargs": {"endpoint_url": s3.endpoint}})
    kept = []
    for i, folder in enumerate(("in1", "in2")):
        kept += run_pipeline(tmp_path, f"s3-{i}", root / folder, LSHBloomFilter(
            index=index, threshold=0.7, expected_items=100, batch_size=8))
    assert [r["id"] for r in kept] == [r["id"] for r in expected]
    keys = s3.keys(s3.bucket, "dedup-index/")
    assert "dedup-index/metadata.json" in keys and not any(k.endswith(".lock") for k in keys)


def run_steps(tmp_path: Path, name: str, pipeline: list, tasks: int) -> None:
    LocalPipelineExecutor(pipeline=pipeline, tasks=tasks, workers=1,
                          logging_dir=str(tmp_path / f"logs-{name}")).run()


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
def test_three_stages_on_three_tasks_keep_what_the_command_keeps(tmp_path, mode):
    files = [write_jsonl(tmp_path / "in" / f"{k}.jsonl", rows) for k, rows in enumerate(
        (pages(9, 20, 4, blanks=False), pages(9, 20, 8, blanks=False)[20:] + pages(10, 8, 0,
                                                                                 blanks=False),
         pages(10, 8, 3, blanks=False)[8:] + pages(11, 12, 2, blanks=False)))]
    params = {"threshold": 0.7, "mode": mode, "expected_items": 500}
    expected = cli_dedup(tmp_path, files, "--annotate", "--threshold", "0.7", "--mode", mode,
                         "--expected-items", "500")  # rank r reads file r: rank order
    keys, flags = tmp_path / "keys", tmp_path / "flags"
    from corpus_miner.integrations.datatrove import (
        LSHBloomMerge,
        LSHBloomRemove,
        LSHBloomSignatures,
    )

    run_steps(tmp_path, "sign", [JsonlReader(str(tmp_path / "in")),
                                 LSHBloomSignatures(str(keys), batch_size=6, **params)], 3)
    run_steps(tmp_path, "merge", [LSHBloomMerge(str(keys), str(flags),
                                                index=str(tmp_path / "index"), **params)], 1)
    got = run_pipeline(tmp_path, "remove", tmp_path / "in",
                       LSHBloomRemove(str(flags), annotate=True), tasks=3)
    assert [(r["id"], r["metadata"]["is_duplicate"], r["metadata"].get("duplicate_of"))
            for r in got] == [(r["id"], r["is_duplicate"], r.get("duplicate_of"))
                              for r in expected]
    assert sum(r["is_duplicate"] for r in expected) >= 10
    kept = run_pipeline(tmp_path, "drop", tmp_path / "in", LSHBloomRemove(str(flags)), tasks=3)
    assert [r["id"] for r in kept] == [r["id"] for r in expected if not r["is_duplicate"]]
    assert (tmp_path / "index" / "metadata.json").exists()
    if mode == "lshbloom":  # an input changed between the stages
        with open(files[0], "a", encoding="utf-8") as f:
            f.write('{"id": "late", "text": "a page added after the signatures"}\n')
        reader = JsonlReader(str(tmp_path / "in"))
        with pytest.raises(InputError, match="more documents than it signed"):
            list(LSHBloomRemove(str(flags)).run(reader.run(None, 0, 3), 0, 3))
    with pytest.raises(ParameterError, match="other LSHBloom parameters"):
        list(LSHBloomMerge(str(keys), str(tmp_path / "f2"), threshold=0.8, mode=mode).run(None))
    with pytest.raises(ParameterError, match="runs on one task"):
        list(LSHBloomMerge(str(keys), str(tmp_path / "f2"), **params).run(None, 0, 2))
