"""Streams to and from a real S3 API server and an HTTP server on 127.0.0.1: dropped and refused
connections, an object replaced while a command reads it, an upload stopped by SIGTERM, the
memory of reading an object much larger than a batch."""

import gzip
import json
import os
import signal
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpus_miner.cli import main
from corpus_miner.errors import InputError
from corpus_miner.io import read_documents
from corpus_miner.io.remote import consistent_reads
from corpus_miner.io.storage import using_storage_options
from tests.helpers import ROOT
from tests.object_store import FaultyProxy, http_server


def _jsonl(n, width=200, tag="d") -> bytes:
    return b"".join(json.dumps({"id": f"{tag}{i}", "text": f"{tag} {i} " + f"w{i} " * width})
                    .encode() + b"\n" for i in range(n))


def _ids(batches):
    return [i for b in batches for i in b.ids.to_pylist()]


@pytest.fixture
def proxy(s3):
    relay = FaultyProxy(s3.port)
    yield relay
    relay.close()


def _through(proxy):
    """Requests through the proxy, each made once by the SDK (the retries are ours)."""
    return using_storage_options({"endpoint_url": proxy.endpoint,
                                  "config_kwargs": {"retries": {"max_attempts": 1}}})


def test_a_dropped_connection_is_retried_and_the_records_are_the_same(s3, proxy):
    data = _jsonl(6000)  # ~8 MB: more than one block
    s3.put(s3.bucket, "big.jsonl", data)
    url = f"s3://{s3.bucket}/big.jsonl"
    expected = [f"d{i}" for i in range(6000)]
    proxy.cut_after, proxy.cuts = 3 << 20, 2  # two responses cut 3 MB in
    with _through(proxy):
        assert _ids(read_documents(url, batch_size=1 << 20)) == expected
    assert proxy.cut_count == 2


def test_a_server_gone_mid_read_is_an_error_naming_the_object_and_the_byte(s3, proxy):
    s3.put(s3.bucket, "big.jsonl", _jsonl(6000))
    url = f"s3://{s3.bucket}/big.jsonl"
    with _through(proxy), pytest.raises(InputError) as caught:
        for n, _ in enumerate(read_documents(url, batch_size=1 << 20)):
            if n == 0:
                proxy.down = True  # every new connection refused from here on
    message = str(caught.value)
    assert message.startswith(f"{url}: the connection failed at byte ")
    offset = int(message.split("at byte ")[1].split(" ")[0].replace(",", ""))
    assert 1 << 20 <= offset < len(_jsonl(6000)) and "3 tries" in message


def test_an_object_replaced_between_two_reads_is_refused(s3):
    s3.put(s3.bucket, "x.jsonl", _jsonl(10))
    url = f"s3://{s3.bucket}/x.jsonl"
    with consistent_reads():
        assert len(_ids(read_documents(url))) == 10
        s3.put(s3.bucket, "x.jsonl", _jsonl(11))
        with pytest.raises(InputError, match="changed while"):
            list(read_documents(url))


def test_dedup_refuses_an_input_replaced_while_it_runs_and_writes_nothing(s3, proxy, capsys):
    s3.put(s3.bucket, "in/a.jsonl", _jsonl(40, 30, "a"))
    s3.put(s3.bucket, "in/b.jsonl", _jsonl(40, 30, "b"))

    def replace_a(line: str) -> None:  # when a.jsonl is first fetched, a new version lands
        if line.startswith(f"GET /{s3.bucket}/in/a.jsonl") and proxy.on_request is not None:
            proxy.on_request = None
            s3.put(s3.bucket, "in/a.jsonl", _jsonl(41, 30, "a"))

    proxy.on_request = replace_a
    options = json.dumps({"endpoint_url": proxy.endpoint})
    assert main(["dedup", f"s3://{s3.bucket}/in/*.jsonl", "-o", f"s3://{s3.bucket}/out.jsonl",
                 "--storage-options", options]) == 2
    assert "changed while" in capsys.readouterr().err
    assert s3.keys(s3.bucket) == ["in/a.jsonl", "in/b.jsonl"] and s3.uploads(s3.bucket) == []


def test_sigterm_during_a_multipart_upload_leaves_no_object_and_no_upload(s3, proxy, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_bytes(_jsonl(9000, 150))  # ~12 MB out: three 5 MiB parts
    proxy.delay = 0.01  # ~6 MB/s up: the upload takes seconds
    env = dict(os.environ, **s3.env(proxy.endpoint), CORPUS_MINER_UPLOAD_PART=str(5 << 20),
               PYTHONPATH=str(ROOT / "src"))
    with subprocess.Popen([sys.executable, "-m", "corpus_miner", "dedup", str(source),
                           "--threshold", "0.99", "-o", f"s3://{s3.bucket}/out.jsonl"],
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as command:
        deadline = time.monotonic() + 120
        while not s3.uploads(s3.bucket) and command.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        running = command.poll() is None
        command.send_signal(signal.SIGTERM)
        _, err = command.communicate(timeout=60)
    assert running, err
    assert command.returncode == 128 + signal.SIGTERM and b"stopped by SIGTERM" in err
    assert s3.keys(s3.bucket) == [] and s3.uploads(s3.bucket) == []


MEASURE = """
import resource, sys
from corpus_miner.io import read_documents
def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
for url in sys.argv[1:]:
    documents = sum(len(b) for b in read_documents(url, batch_size=1 << 20))
    print(documents, peak())
"""


def test_reading_an_object_much_larger_than_a_batch_takes_bounded_memory(s3):
    big = _jsonl(40000, 100)  # ~28 MB, 28 batches
    s3.put(s3.bucket, "small.jsonl", _jsonl(100, 100))
    s3.put(s3.bucket, "big.jsonl", big)
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, f"s3://{s3.bucket}/small.jsonl",
         f"s3://{s3.bucket}/big.jsonl"], env=dict(os.environ, PYTHONPATH=str(ROOT / "src")),
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (small_docs, small_peak), (big_docs, big_peak) = \
        [tuple(map(int, line.split())) for line in done.stdout.split("\n") if line]
    assert (small_docs, big_docs) == (100, 40000)
    # a few blocks and batches, not the object
    assert big_peak - small_peak < min(24 << 20, len(big) // 2), (big_peak, small_peak)


def test_http_reads_give_the_records_of_the_local_files(tmp_path):
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "docs.jsonl.gz").write_bytes(gzip.compress(_jsonl(300, 20)))
    pq.write_table(pa.Table.from_pylist([{"id": f"p{i}", "text": f"page {i}"}
                                         for i in range(50)]), folder / "pages.parquet",
                   row_group_size=10)
    with http_server(folder) as base:
        for name in ("docs.jsonl.gz", "pages.parquet"):
            assert _ids(read_documents(f"{base}/{name}", batch_size=2000)) == \
                _ids(read_documents(folder / name, batch_size=2000))
        with pytest.raises(InputError, match="no such object"):
            list(read_documents(f"{base}/missing.jsonl"))
