"""az:// and abfs:// on Azurite, Microsoft's Azure Storage emulator (from npm: `npm install -g
azurite`; or CORPUS_MINER_AZURITE=path/to/azurite-blob): read, write, sharded outputs, the same
bytes as on disk. Skipped where Azurite or adlfs is not installed."""

import json
import os
import shutil
import socket
import subprocess
import time

import pytest

from corpus_miner.io import read_documents, write_records
from corpus_miner.io.storage import using_storage_options
from tests.object_store import free_port

AZURITE = os.environ.get("CORPUS_MINER_AZURITE") or shutil.which("azurite-blob")
# Azurite's documented development account (a public, fixed key)
ACCOUNT_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/"
               "KBHBeksoGMGw==")


@pytest.fixture(scope="module")
def azurite():
    if not AZURITE:
        pytest.skip("Azurite is not installed (npm install -g azurite)")
    pytest.importorskip("adlfs")
    port = free_port()
    process = subprocess.Popen([AZURITE, "--blobHost", "127.0.0.1", "--blobPort", str(port),
                                "--inMemoryPersistence", "--skipApiVersionCheck",
                                "--disableTelemetry", "--silent"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise
            time.sleep(0.1)
    options = {"connection_string": "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
               f"AccountKey={ACCOUNT_KEY};BlobEndpoint=http://127.0.0.1:{port}/devstoreaccount1;"}
    import fsspec

    fs = fsspec.filesystem("az", **options)
    fs.mkdir("corpus")
    yield fs, options
    process.terminate()
    process.wait(10)


def test_az_and_abfs_read_and_write_like_local_files(azurite, tmp_path):
    fs, options = azurite
    for name, rows in (("a.jsonl", range(0, 30)), ("b.jsonl", range(30, 50))):
        data = "".join(json.dumps({"id": str(i), "text": f"page {i} " * 5}) + "\n" for i in rows)
        (tmp_path / name).write_text(data)
        fs.pipe_file(f"corpus/in/{name}", data.encode())
    local = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    write_records(read_documents(local), tmp_path / "out.parquet")
    with using_storage_options(options):
        assert [b.ids.to_pylist() for b in read_documents("az://corpus/in/*.jsonl")] == \
            [b.ids.to_pylist() for b in read_documents(local)]
        assert write_records(read_documents("abfs://corpus/in/*.jsonl"),
                             "az://corpus/out.parquet") == 50
        write_records(read_documents("az://corpus/in/*.jsonl", batch_size=600),
                      "az://corpus/sharded/", shards=None)
        back = [i for b in read_documents("az://corpus/sharded/") for i in b.ids.to_pylist()]
    assert fs.cat("corpus/out.parquet") == (tmp_path / "out.parquet").read_bytes()
    assert back == [str(i) for i in range(50)]
    assert "corpus/sharded/_manifest.json" in fs.ls("corpus/sharded", detail=False)
