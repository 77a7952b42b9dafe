"""Every command reading and writing s3:// on a real S3 API server (tests/object_store.py): the
outputs are byte for byte those of the same command on the same files on disk."""

import json
from pathlib import Path

import pytest

from corpus_miner.cli import main

MINING = ["--sigma", "3", "--min-length", "4"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A small generated web corpus: one Parquet file and the same pages as two JSONL files."""
    folder = tmp_path_factory.mktemp("corpus")
    assert main(["generate", "web", "--docs", "80", "--sites", "3", "--body-words", "60",
                 "-o", str(folder / "web.parquet")]) == 0
    import pyarrow.parquet as pq

    rows = pq.read_table(folder / "web.parquet").to_pylist()
    for name, part in (("a.jsonl", rows[:50]), ("b.jsonl", rows[50:])):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in part))
    return folder


def _upload(s3, folder: Path, names) -> str:
    for name in names:
        s3.put(s3.bucket, f"in/{name}", (folder / name).read_bytes())
    return f"s3://{s3.bucket}/in"


def _same(s3, local: Path, key: str) -> None:
    assert s3.get(s3.bucket, key) == local.read_bytes(), key


def test_every_command_reads_and_writes_s3_like_local_files(s3, corpus, tmp_path, capsys):
    remote = _upload(s3, corpus, ["a.jsonl", "b.jsonl", "web.parquet"])
    out = f"s3://{s3.bucket}/out"
    local_in = [str(corpus / "a.jsonl"), str(corpus / "b.jsonl")]
    remote_in = [f"{remote}/*.jsonl"]  # a glob, expanded in sorted order: a then b
    runs = [
        (["phrases", *MINING], "-o", "phrases.tsv"),
        (["report", *MINING], "--json", "report.json"),
        (["clean", *MINING], "-o", "clean.jsonl.gz"),
        (["dedup", "--threshold", "0.7"], "-o", "unique.parquet"),
    ]
    for argv, flag, name in runs:
        assert main([*argv, *local_in, flag, str(tmp_path / name)]) == 0
        assert main([*argv, *remote_in, flag, f"{out}/{name}"]) == 0, capsys.readouterr().err
        if name.endswith(".json"):  # the report names its inputs
            local, there = (json.loads(p) for p in (
                (tmp_path / name).read_bytes(), s3.get(s3.bucket, f"out/{name}")))
            assert there.pop("inputs") == remote_in and local.pop("inputs") == local_in
            assert there == local
        else:
            _same(s3, tmp_path / name, f"out/{name}")
    reviewed = ["clean", "--phrases", "{}/phrases.tsv", "--mode", "mask"]  # a phrase list there
    assert main([*reviewed[:2], str(tmp_path / "phrases.tsv"), *reviewed[3:], *local_in, "-o",
                 str(tmp_path / "masked.jsonl")]) == 0
    assert main([*reviewed[:2], f"{out}/phrases.tsv", *reviewed[3:], *remote_in, "-o",
                 f"{out}/masked.jsonl"]) == 0
    _same(s3, tmp_path / "masked.jsonl", "out/masked.jsonl")
    capsys.readouterr()
    assert main(["stats", "--json", *local_in]) == 0
    local_stats = json.loads(capsys.readouterr().out)
    assert main(["stats", "--json", *remote_in]) == 0
    remote_stats = json.loads(capsys.readouterr().out)
    for key in ("documents", "tokens", "vocabulary", "bytes", "files"):
        assert remote_stats[key] == local_stats[key]


def test_folders_indexes_and_generated_corpora_on_s3(s3, corpus, tmp_path):
    remote = _upload(s3, corpus, ["web.parquet"])
    out = f"s3://{s3.bucket}/out"
    source_local, source_remote = str(corpus / "web.parquet"), f"{remote}/web.parquet"
    assert main(["index", "build", source_local, "-o", str(tmp_path / "index")]) == 0
    assert main(["index", "build", source_remote, "-o", f"{out}/index/"]) == 0
    files = sorted(p.relative_to(tmp_path / "index").as_posix()
                   for p in (tmp_path / "index").rglob("*") if p.is_file())
    assert s3.keys(s3.bucket, "out/index/") == [f"out/index/{name}" for name in files]
    for name in files:
        if name.endswith("/metadata.json"):  # the generation records its input's name and time
            local = json.loads((tmp_path / "index" / name).read_text())
            stored = json.loads(s3.get(s3.bucket, f"out/index/{name}"))
            assert [s["inputs"][0]["digest"] for s in local.pop("snapshots")] == \
                [s["inputs"][0]["digest"] for s in stored.pop("snapshots")]
            assert {k: v for k, v in local.items() if k != "checksum"} == \
                {k: v for k, v in stored.items() if k != "checksum"}
            continue
        _same(s3, tmp_path / "index" / name, f"out/index/{name}")
    assert main(["index", "query", str(tmp_path / "index"), source_local, "--annotate",
                 "-o", str(tmp_path / "q.jsonl")]) == 0
    assert main(["index", "query", f"{out}/index", source_remote, "--annotate",
                 "-o", f"{out}/q.jsonl"]) == 0
    _same(s3, tmp_path / "q.jsonl", "out/q.jsonl")
    assert main(["tokenize", source_remote, "-o", f"{out}/corpus"]) == 0
    assert main(["tokenize", source_local, "-o", str(tmp_path / "corpus")]) == 0
    for file in (tmp_path / "corpus").iterdir():
        _same(s3, file, f"out/corpus/{file.name}")
    assert main(["phrases", *MINING, f"{out}/corpus", "-o", f"{out}/from-corpus.tsv"]) == 0
    assert main(["phrases", *MINING, source_local, "-o", str(tmp_path / "p.tsv")]) == 0
    _same(s3, tmp_path / "p.tsv", "out/from-corpus.tsv")
    assert main(["generate", "web", "--docs", "30", "-o", str(tmp_path / "gen")]) == 0
    assert main(["generate", "web", "--docs", "30", "-o", f"{out}/gen/"]) == 0
    for part in (tmp_path / "gen").iterdir():
        _same(s3, part, f"out/gen/{part.name}")


def test_an_index_at_a_url_grows_by_generations_like_a_local_one(s3, corpus, tmp_path):
    """index add to s3:// twice: the pointer names the second generation, the first is kept,
    the flags and the index equal the same adds on disk; index info and --against read it."""
    from corpus_miner.dedup import LSHBloom

    remote = f"s3://{s3.bucket}/crawl-index"
    for k, name in enumerate(("a.jsonl", "b.jsonl")):
        source = str(corpus / name)
        assert main(["index", "add", str(tmp_path / "local"), source, "--annotate",
                     "--expected-items", "40", "-o", str(tmp_path / f"l{k}.jsonl")]) == 0
        assert main(["index", "add", remote, source, "--annotate", "--expected-items", "40",
                     "-o", str(tmp_path / f"r{k}.jsonl")]) == 0
        assert (tmp_path / f"l{k}.jsonl").read_bytes() == (tmp_path / f"r{k}.jsonl").read_bytes()
    keys = s3.keys(s3.bucket, "crawl-index/")
    assert "crawl-index/metadata.json" in keys
    assert {key.split("/")[1] for key in keys} == {"gen-000001", "gen-000002", "metadata.json"}
    pointer = json.loads(s3.get(s3.bucket, "crawl-index/metadata.json"))
    assert pointer["current"] == "gen-000002"
    from corpus_miner.io.remote import local_copy

    with local_copy(remote) as copy:
        assert LSHBloom.load(copy).index_ == LSHBloom.load(tmp_path / "local").index_
    assert main(["index", "info", remote]) == 0
    assert main(["dedup", str(corpus / "a.jsonl"), "--against", remote, "--annotate", "-o",
                 str(tmp_path / "against.jsonl")]) == 0
    assert all(json.loads(line)["is_duplicate"]
               for line in (tmp_path / "against.jsonl").read_text().splitlines())


def test_sharded_output_on_s3_reads_back_as_the_single_file(s3, corpus, tmp_path):
    source = _upload(s3, corpus, ["web.parquet"]) + "/web.parquet"
    out = f"s3://{s3.bucket}/clean/"
    assert main(["clean", *MINING, source, "-o", str(tmp_path / "one.parquet")]) == 0
    assert main(["clean", *MINING, source, "-o", out, "--shards", "3"]) == 0
    keys = s3.keys(s3.bucket, "clean/")
    assert keys == ["clean/_manifest.json"] + [f"clean/part-{k:05d}.parquet" for k in range(3)]
    assert main(["dedup", out, "--threshold", "0.99", "--annotate", "-o",
                 str(tmp_path / "back.jsonl")]) == 0
    assert main(["dedup", str(tmp_path / "one.parquet"), "--threshold", "0.99", "--annotate",
                 "-o", str(tmp_path / "direct.jsonl")]) == 0
    assert (tmp_path / "back.jsonl").read_bytes() == (tmp_path / "direct.jsonl").read_bytes()


def test_an_output_at_an_input_is_refused_before_any_work(s3, corpus, capsys):
    source = _upload(s3, corpus, ["a.jsonl"]) + "/a.jsonl"
    assert main(["dedup", source, "-o", source.replace("s3://", "s3a://")]) == 2
    assert "same object as the input" in capsys.readouterr().err
    assert main(["clean", *MINING, f"s3://{s3.bucket}/in/*.jsonl", "-o",
                 f"s3://{s3.bucket}/in/clean.jsonl"]) == 2
    assert "input pattern" in capsys.readouterr().err
    assert s3.keys(s3.bucket) == ["in/a.jsonl"]


def test_clear_errors_for_missing_buckets_and_objects(s3, corpus, capsys):
    source = _upload(s3, corpus, ["a.jsonl"]) + "/a.jsonl"
    assert main(["stats", "s3://no-such-bucket-here/x.jsonl"]) == 2
    assert capsys.readouterr().err.strip().endswith("no such bucket")
    assert main(["stats", f"s3://{s3.bucket}/in/nothing.jsonl"]) == 2
    assert "no such object" in capsys.readouterr().err
    assert main(["dedup", source, "-o", "http://127.0.0.1:1/x.jsonl"]) == 2
    assert "read-only" in capsys.readouterr().err


@pytest.fixture(scope="module")
def guarded(corpus):
    """A second S3 server that checks signatures, IAM and bucket policies: a bucket with
    in/a.jsonl open to a reader and closed/a.jsonl denied to everyone by the bucket policy."""
    pytest.importorskip("moto.server")
    from tests.object_store import S3Server

    server = S3Server(enforce_policies=True)
    bucket = server.new_bucket()
    for key in ("in/a.jsonl", "closed/a.jsonl"):
        server.put(bucket, key, (corpus / "a.jsonl").read_bytes())
    server.s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({
        "Version": "2012-10-17", "Statement": [{
            "Effect": "Deny", "Principal": "*", "Action": "s3:GetObject",
            "Resource": f"arn:aws:s3:::{bucket}/closed/*"}]}))
    server.bucket = bucket
    server.reader = server.user({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]})
    yield server
    server.stop()


def _options(server, key, secret):
    return json.dumps({"endpoint_url": server.endpoint, "key": key, "secret": secret})


def test_access_denied_by_a_bucket_policy_and_rejected_keys(guarded, capsys):
    key, secret = guarded.reader
    options = _options(guarded, key, secret)
    assert main(["stats", f"s3://{guarded.bucket}/in/a.jsonl", "--storage-options", options]) \
        == 0
    capsys.readouterr()
    assert main(["stats", f"s3://{guarded.bucket}/closed/a.jsonl", "--storage-options",
                 options]) == 2
    err = capsys.readouterr().err
    assert "access denied" in err and secret not in err and err.count("\n") == 1
    wrong = "not-the-secret-0123456789"
    assert main(["stats", f"s3://{guarded.bucket}/in/a.jsonl", "--storage-options",
                 _options(guarded, "AKIAUNKNOWNKEY", wrong)]) == 2
    err = capsys.readouterr().err  # S3 answers a HEAD with an unknown key with a bare 403
    assert "check the credentials" in err and wrong not in err and err.count("\n") == 1
