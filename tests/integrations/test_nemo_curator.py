"""The NeMo Curator stages in real Curator pipelines, against the commands on the same small
corpora: CleanPhrasesStage against `corpus-miner clean --phrases`, the LSHBloom identification
against `corpus-miner dedup` over the documents in id order, then Curator's own removal workflow.

NeMo Curator does not install in CI's time (several GB, and pandas 3 beside PySpark's pandas < 3),
so it is not in the `test` extra: `tools/test_nemo_curator.sh` builds a virtualenv with it and
runs this file there."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_miner.cli import main
from corpus_miner.errors import InputError, ParameterError
from tests.integrations.corpora import mined_pages, pages, read_jsonl, write_jsonl

nemo = pytest.importorskip("nemo_curator")

import pyarrow as pa  # noqa: E402
from nemo_curator.tasks import DocumentBatch  # noqa: E402

from corpus_miner.integrations.nemo_curator import (  # noqa: E402
    CURATOR_DEDUP_ID,
    DUPLICATE_IDS_SUBDIR,
    CleanPhrasesStage,
    LSHBloomSignaturesStage,
    identify_duplicates,
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return mined_pages(tmp_path_factory.mktemp("nemo"))


def batch_of(rows: list[dict]) -> DocumentBatch:
    return DocumentBatch(dataset_name="pages", data=pa.Table.from_pylist(rows))


@pytest.mark.parametrize("mode, options", [
    ("remove", {}), ("mask", {"mask_text": "<J>"}), ("annotate", {}),
    ("remove", {"drop_above": 0.2})])
def test_clean_phrases_stage_writes_what_the_command_writes(corpus, tmp_path, mode, options):
    _, inputs, phrases = corpus
    argv = ["clean", *map(str, inputs), "--phrases", str(phrases), "--mode", mode,
            "-o", str(tmp_path / "cli.jsonl")]
    if "mask_text" in options:
        argv += ["--mask-text", options["mask_text"]]
    if "drop_above" in options:
        argv += ["--drop-above", str(options["drop_above"])]
    assert main(argv) == 0
    expected = read_jsonl(tmp_path / "cli.jsonl")
    stage = CleanPhrasesStage(phrases, mode, **options)
    got = []
    for path in inputs:  # one batch per file, as Curator's readers make them
        got += stage.process(batch_of(read_jsonl(path))).to_pyarrow().to_pylist()
    assert [r["id"] for r in got] == [r["id"] for r in expected]
    assert len(expected) < 59 if "drop_above" in options else len(expected) == 59
    for mine, theirs in zip(got, expected):
        assert mine["text"] == theirs["text"]
        if mode == "annotate":
            assert mine["junk_spans"] == theirs.get("junk_spans")
            assert mine["junk_share"] == theirs.get("junk_share")


def test_clean_phrases_stage_refuses_a_batch_without_its_column(corpus):
    _, _, phrases = corpus
    with pytest.raises(InputError, match="no text column 'body'"):
        CleanPhrasesStage(phrases, text_field="body").process(batch_of([{"text": "x"}]))
    with pytest.raises(ParameterError):
        CleanPhrasesStage(phrases, mode="erase")


def near_duplicates(root: Path) -> list[Path]:
    """Two files; the second re-posts copies of the first's pages (ids unique over both)."""
    reposts = [dict(r, id="again-" + r["id"]) for r in pages(3, 20, 9, blanks=False)[20:]]
    return [write_jsonl(root / "in" / f"{k}.jsonl", rows) for k, rows in enumerate((
        pages(3, 20, 5, blanks=False), reposts + pages(4, 10, 2, blanks=False)))]


def in_id_order(signed: list[dict]) -> list[dict]:
    return sorted(signed, key=lambda r: r[CURATOR_DEDUP_ID])


def expected_duplicates(tmp_path: Path, rows: list[dict], *options: str) -> set:
    """Ids the command flags over the rows in id order."""
    ordered = write_jsonl(tmp_path / "ordered.jsonl", rows)
    out = tmp_path / "cli-dedup.jsonl"
    assert main(["dedup", str(ordered), "--annotate", "-o", str(out), *options]) == 0
    return {r[CURATOR_DEDUP_ID] for r in read_jsonl(out) if r["is_duplicate"]}


def duplicate_ids(output: Path) -> set:
    import pyarrow.parquet as pq

    return set(pq.read_table(output / DUPLICATE_IDS_SUBDIR).column("id").to_pylist())


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
def test_identification_flags_what_the_command_flags_in_id_order(tmp_path, mode):
    files = near_duplicates(tmp_path)
    rows = [dict(r, **{CURATOR_DEDUP_ID: 1000 - i})  # ids against the reading order
            for i, r in enumerate(read_jsonl(files[0]) + read_jsonl(files[1]))]
    params = {"threshold": 0.7, "mode": mode, "expected_items": 200}
    signer = LSHBloomSignaturesStage(str(tmp_path / "sig"), **params)
    signer.setup()
    for k in range(0, len(rows), 7):  # batches of 7, in any order
        assert signer.process(batch_of(rows[k:k + 7])).num_items == len(rows[k:k + 7])
    count = identify_duplicates(str(tmp_path / "sig"), str(tmp_path / "out"), **params)
    expected = expected_duplicates(tmp_path, in_id_order(rows), "--threshold", "0.7", "--mode",
                                   mode, "--expected-items", "200")
    assert duplicate_ids(tmp_path / "out") == expected and count == len(expected)
    assert 5 <= len(expected) < 5 + 9 + 2 + 1


def test_identification_extends_a_saved_index_run_after_run(tmp_path):
    files = near_duplicates(tmp_path)
    runs = [read_jsonl(files[0]), read_jsonl(files[1])]
    start = 0
    for run in runs:  # Curator's generated ids grow over the runs of one id generator
        for r in run:
            r[CURATOR_DEDUP_ID] = start
            start += 1
    params = {"threshold": 0.7, "expected_items": 200}
    found = set()
    for k, run in enumerate(runs):
        signer = LSHBloomSignaturesStage(str(tmp_path / f"sig{k}"), **params)
        signer.setup()
        signer.process(batch_of(run))
        identify_duplicates(str(tmp_path / f"sig{k}"), str(tmp_path / f"out{k}"),
                            index=str(tmp_path / "index"), **params)
        found |= duplicate_ids(tmp_path / f"out{k}")
    assert found == expected_duplicates(tmp_path, runs[0] + runs[1], "--threshold", "0.7",
                                        "--expected-items", "200")
    assert (tmp_path / "index" / "metadata.json").exists()
    other = LSHBloomSignaturesStage(str(tmp_path / "sig-other"), threshold=0.8)
    other.setup()
    other.process(batch_of(runs[0][:3]))
    with pytest.raises(ParameterError, match="built with threshold=0.7"):
        identify_duplicates(str(tmp_path / "sig-other"), str(tmp_path / "o"),
                            index=str(tmp_path / "index"), threshold=0.8)


def test_identification_refuses_what_it_cannot_answer(tmp_path):
    signer = LSHBloomSignaturesStage(str(tmp_path / "sig"), threshold=0.7)
    signer.setup()
    row = {"text": "a b c d e f", CURATOR_DEDUP_ID: 1}
    signer.process(batch_of([row, dict(row, text="x y z")]))
    with pytest.raises(InputError, match="more than once"):
        identify_duplicates(str(tmp_path / "sig"), str(tmp_path / "out"), threshold=0.7)
    with pytest.raises(ParameterError, match="signatures were made with threshold=0.7"):
        identify_duplicates(str(tmp_path / "sig"), str(tmp_path / "out"), threshold=0.9)
    with pytest.raises(InputError, match="no signatures here"):
        identify_duplicates(str(tmp_path / "nothing"), str(tmp_path / "out"))
    with pytest.raises(InputError, match="no id column"):
        signer.process(batch_of([{"text": "a"}]))
    with pytest.raises(ParameterError, match="local folder"):
        identify_duplicates(str(tmp_path / "sig"), str(tmp_path / "out"), index="s3://b/i")
    with pytest.raises(ParameterError):
        LSHBloomSignaturesStage(str(tmp_path / "sig"), threshold=2.0)


def test_a_curator_pipeline_removes_what_the_command_removes(tmp_path):
    """Curator's reader and the signature stage on Curator's Xenna executor (a local Ray
    cluster), the identification, then Curator's own removal workflow reading the ids; the
    documents' own `id` field orders the decisions."""
    from nemo_curator.backends.xenna import XennaExecutor
    from nemo_curator.pipeline import Pipeline
    from nemo_curator.stages.text.deduplication.removal_workflow import (
        TextDuplicatesRemovalWorkflow,
    )
    from nemo_curator.stages.text.io.reader import JsonlReader

    files = near_duplicates(tmp_path)
    params = {"threshold": 0.7, "expected_items": 200}
    batch_mode = {"execution_mode": "batch"}  # streaming wants a CPU per stage worker
    Pipeline(name="sign", stages=[
        JsonlReader(str(tmp_path / "in"), files_per_partition=1),
        LSHBloomSignaturesStage(str(tmp_path / "sig"), id_field="id", **params),
    ]).run(XennaExecutor(batch_mode))
    identify_duplicates(str(tmp_path / "sig"), str(tmp_path / "out"), **params)
    TextDuplicatesRemovalWorkflow(
        input_path=str(tmp_path / "in"), input_filetype="jsonl",
        ids_to_remove_path=str(tmp_path / "out" / DUPLICATE_IDS_SUBDIR), id_field="id",
        output_path=str(tmp_path / "kept"), output_filetype="jsonl").run(XennaExecutor(batch_mode))
    rows = read_jsonl(files[0]) + read_jsonl(files[1])
    ordered = sorted(rows, key=lambda r: r["id"])
    out = tmp_path / "cli-dedup.jsonl"
    assert main(["dedup", str(write_jsonl(tmp_path / "ordered.jsonl", ordered)), "--annotate",
                 "--threshold", "0.7", "--expected-items", "200", "-o", str(out)]) == 0
    flagged = {r["id"] for r in read_jsonl(out) if r["is_duplicate"]}
    kept = [r for part in sorted((tmp_path / "kept").iterdir()) for r in read_jsonl(part)]
    assert flagged and sorted(r["id"] for r in kept) == sorted({r["id"] for r in rows} - flagged)
