"""--engine spark on s3:// inputs and outputs: the executors read the objects through
corpus-miner's reader with the driver's storage options (no Hadoop S3A connector needed), the
outputs are the local engine's on the same files on disk, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pandas")

from corpus_miner.cli import main  # noqa: E402
from tests.spark.test_cli_engine import PARAMS, inputs  # noqa: E402, F401 - the fixture

SPARK = ["--engine", "spark", "--master", "local[2]"]


def test_spark_reads_and_writes_s3_like_the_local_engine_on_files(s3, inputs, tmp_path):  # noqa: F811
    for path in inputs:
        s3.put(s3.bucket, f"in/{Path(path).name}", Path(path).read_bytes())
    remote = [f"s3://{s3.bucket}/in/*"]  # a.jsonl, b.jsonl.gz, c.parquet: the local order
    # the executors get the endpoint and keys from the driver, not from their environment
    options = ["--storage-options", json.dumps({"endpoint_url": s3.endpoint, "key": s3.key,
                                                "secret": s3.secret})]
    assert main(["phrases", *inputs, *PARAMS, "-o", str(tmp_path / "p.tsv")]) == 0
    assert main(["phrases", *remote, *PARAMS, "-o", f"s3://{s3.bucket}/p.tsv", *options,
                 *SPARK]) == 0
    assert s3.get(s3.bucket, "p.tsv") == (tmp_path / "p.tsv").read_bytes()
    dedup = ["dedup", "--annotate", "--num-perm", "64", "--threshold", "0.5"]
    assert main([*dedup, *inputs, "-o", str(tmp_path / "d.jsonl")]) == 0
    assert main([*dedup, *remote, "-o", f"s3://{s3.bucket}/d.jsonl", *options, *SPARK]) == 0
    assert s3.get(s3.bucket, "d.jsonl") == (tmp_path / "d.jsonl").read_bytes()
