"""URL text: protocols, canonical forms, what messages show, outputs that would change inputs,
sizes, and storage options (no backend involved)."""

import json

import pytest

from corpus_miner.errors import InputError, MissingExtraError, OutputError, ParameterError
from corpus_miner.io import storage
from corpus_miner.io.locations import (
    canonical,
    display,
    has_glob,
    is_remote,
    local_path,
    parse_size,
    protocol_of,
    url_conflict,
)
from corpus_miner.io.overlap import check_apart


def test_protocols_and_their_aliases():
    assert protocol_of("s3a://b/k") == protocol_of("S3://b/k") == "s3"
    assert protocol_of("gcs://b/k") == "gs" and protocol_of("abfss://c/k") == "abfs"
    assert protocol_of("data/x.jsonl") is None and protocol_of("-") is None
    assert not is_remote("file:///tmp/x.jsonl") and local_path("file:///tmp/x.jsonl") == \
        "/tmp/x.jsonl"
    with pytest.raises(ParameterError, match="unknown protocol ftp://"):
        protocol_of("ftp://host/x")


def test_two_spellings_of_one_object_are_one_canonical_url():
    assert canonical("s3a://Bucket//crawl/./a/../part.parquet") == "s3://bucket/crawl/part.parquet"
    assert canonical("s3://b/crawl/") == canonical("s3://b/crawl")
    assert canonical("https://h/x?a=1") == "https://h/x?a=1"


def test_display_hides_passwords_and_signatures():
    shown = display("https://user:hunter22@host/x.jsonl?X-Amz-Signature=abc123&part=2")
    assert "hunter22" not in shown and "abc123" not in shown
    assert shown == "https://user:***@host/x.jsonl?X-Amz-Signature=***&part=2"
    assert display("s3://b/k.jsonl") == "s3://b/k.jsonl"
    assert display("memory:///b/k") == "memory:///b/k"


@pytest.mark.parametrize(("output", "inputs", "found"), [
    ("s3://b/in.jsonl", ["s3a://b//in.jsonl"], "same object"),
    ("s3://b/in/clean.jsonl", ["s3://b/in/"], "inside the input prefix"),
    ("s3://b/out/", ["s3://b/out/part-1.parquet"], "output prefix holds the input"),
    ("s3://b/crawl/new.parquet", ["s3://b/crawl/*.parquet"], "input pattern"),
    ("s3://b/crawl-clean/x.parquet", ["s3://b/crawl/*.parquet"], None),
    ("s3://b/in.jsonl.gz", ["s3://b/in.jsonl"], None),
    ("s3://c/in.jsonl", ["s3://b/in.jsonl"], None),
])
def test_outputs_that_would_change_an_input_are_found(output, inputs, found):
    message = url_conflict(output, inputs)
    assert (message is None) if found is None else (found in message)


def test_check_apart_compares_urls_with_urls_and_local_globs_by_their_matches(tmp_path):
    (tmp_path / "a.jsonl").write_text("{}\n")
    with pytest.raises(OutputError, match="same object"):
        check_apart(["s3://b/x.jsonl"], ["s3://b/x.jsonl"])
    with pytest.raises(OutputError, match="same file"):
        check_apart([str(tmp_path / "*.jsonl")], [str(tmp_path / "a.jsonl")])
    check_apart(["s3://b/x.jsonl"], [str(tmp_path / "x.jsonl")])  # another store


def test_globs_are_told_from_names():
    assert has_glob("s3://b/2026-*/part-?.parquet") and has_glob("data/[ab].jsonl")
    assert not has_glob("https://h/x.jsonl?page=2") and not has_glob("s3://b/k")


@pytest.mark.parametrize(("text", "size"), [("512MB", 512_000_000), ("1GiB", 2 ** 30),
                                            ("4096", 4096), ("1.5 KB", 1500), ("2e6", 2_000_000)])
def test_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "0", "-5MB", "big", "5 parsecs"])
def test_bad_sizes(text):
    with pytest.raises(ParameterError, match="not a size"):
        parse_size(text)


def test_storage_options_from_json_or_a_file_and_per_protocol(tmp_path):
    assert storage.parse_storage_options('{"anon": true}') == {"anon": True}
    file = tmp_path / "opts.json"
    file.write_text(json.dumps({"s3": {"endpoint_url": "http://x"}, "gs": {"token": "anon"}}))
    options = storage.parse_storage_options(f"@{file}")
    assert storage.options_for("s3", options) == {"endpoint_url": "http://x"}
    assert storage.options_for("hf", options) == {}
    assert storage.options_for("hf", {"anon": True}) == {"anon": True}  # one table for all


def test_bad_storage_options_are_refused_without_showing_them():
    with pytest.raises(ParameterError) as caught:
        storage.parse_storage_options('{"secret": "SEKRIT-VALUE", }')
    assert "SEKRIT-VALUE" not in str(caught.value) and "not valid JSON" in str(caught.value)
    with pytest.raises(ParameterError, match="must be a JSON object"):
        storage.parse_storage_options("[1]")


def test_secrets_are_scrubbed_from_messages(monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "env-secret-123")
    with storage.using_storage_options({"s3": {"key": "AKIA1", "secret": "opt-secret-456",
                                               "client_kwargs": {"region_name": "eu"}}}):
        text = storage.scrub("failed with opt-secret-456 and env-secret-123 in eu")
    assert text == "failed with *** and *** in eu"


def test_a_missing_backend_names_its_extra(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "gcsfs", None)  # as if not installed
    with pytest.raises(MissingExtraError, match=r'pip install "corpus-miner\[gcs\]"'):
        storage.filesystem("gs://bucket/x.jsonl")


def test_hub_urls_name_the_repository_and_fail_in_one_line_offline(monkeypatch):
    """hf:// cannot be reached from the test machines: its paths and its offline error."""
    pytest.importorskip("huggingface_hub")
    from corpus_miner.errors import InputError
    from corpus_miner.io import read_documents

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("CORPUS_MINER_RETRIES", "0")
    url = "hf://datasets/some-org/some-corpus/data/train-*.parquet"
    assert storage.filesystem(url)[1] == "datasets/some-org/some-corpus/data/train-*.parquet"
    assert canonical(url) == url and display(url) == url
    with pytest.raises(InputError) as caught:
        list(read_documents(url))
    assert str(caught.value).startswith(url + ": ") and "\n" not in str(caught.value)


@pytest.mark.parametrize(("code", "message", "reason"), [
    ("ExpiredToken", "The provided token has expired.", "credentials have expired"),
    ("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist",
     "credentials were rejected"),
    ("AccessDenied", "Access Denied", "access denied"),
    ("NoSuchBucket", "The specified bucket does not exist", "no such bucket"),
])
def test_backend_errors_read_as_what_to_do(code, message, reason):
    """S3's error codes as s3fs raises them (the real translation, no server needed)."""
    pytest.importorskip("s3fs")
    from botocore.exceptions import ClientError
    from s3fs.errors import translate_boto_error

    error = translate_boto_error(ClientError({"Error": {"Code": code, "Message": message}},
                                             "GetObject"))
    found = storage.storage_error(InputError, "s3://b/k.jsonl", error)
    assert str(found).startswith("s3://b/k.jsonl: ") and reason in str(found)
