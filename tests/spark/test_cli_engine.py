"""`--engine spark`: phrases, report, clean and dedup write the local engine's outputs byte for
byte (through corpus_miner.cli.main, on the shared test session)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pandas")

from corpus_miner import synth  # noqa: E402
from corpus_miner.cli import main  # noqa: E402

# whole-line and edge phrases do not run on Spark yet: 0 turns off the local defaults
PARAMS = ["--sigma", "4", "--min-length", "5", "--min-line-length", "0", "--min-edge-length", "0"]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Web pages in three inputs: a JSONL file without ids (row numbers), a JSONL.gz file and a
    Parquet file; order and ids must survive across them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path_factory.mktemp("engine")
    docs = synth.web(90, n_sites=4, vocabulary=300, mean_body_words=40, seed=3)
    pages = [{"id": f"p{i}", "url": f"https://site{i % 4}.example/{i}", "text": " ".join(d)}
             for i, d in enumerate(docs)]
    pages[7]["text"] = pages[3]["text"]  # a copy for dedup to find
    first = folder / "a.jsonl"
    first.write_text("".join(json.dumps({k: v for k, v in page.items() if k != "id"}) + "\n"
                             for page in pages[:30]), encoding="utf-8")
    import gzip

    second = folder / "b.jsonl.gz"
    with gzip.open(second, "wt", encoding="utf-8") as out:
        out.writelines(json.dumps(page) + "\n" for page in pages[30:60])
    third = folder / "c.parquet"
    pq.write_table(pa.Table.from_pylist(pages[60:]), third)
    return [str(first), str(second), str(third)]


def both(args: list[str], outputs: list, tmp_path) -> list[tuple[bytes, bytes]]:
    """Run the command with each engine; the bytes of each output file per engine."""
    found = []
    for engine in ("local", "spark"):
        named = [str(tmp_path / f"{engine}-{name}") for name in outputs]
        command = [part.format(*named) for part in args]
        extra = ["--engine", "spark", "--master", "local[2]"] if engine == "spark" else []
        assert main(command + extra) == 0
        found.append([Path(path).read_bytes() for path in named])
    return list(zip(*found, strict=True))


def test_phrases_and_report_are_byte_identical(inputs, tmp_path):
    for local, spark in both(["phrases", *inputs, *PARAMS, "-o", "{0}"], ["p.tsv"], tmp_path):
        assert local == spark and local.count(b"\n") > 5
    report = ["report", *inputs, *PARAMS, "-o", "{0}", "--json", "{1}", "--group-by",
              "url:host", "--examples", "2", "--top", "5"]
    (html_local, html_spark), (json_local, json_spark) = both(report, ["r.html", "r.json"],
                                                              tmp_path)
    assert json_local == json_spark
    assert html_local == html_spark
    data = json.loads(json_local)
    assert data["hogs_by_psi"][0]["examples"] and len(data["groups"]) == 4


@pytest.mark.parametrize("mode", ["remove", "annotate"])
def test_clean_writes_the_same_records(inputs, tmp_path, mode):
    command = ["clean", *inputs, *PARAMS, "-o", "{0}", "--mode", mode, "--drop-above", "0.95"]
    ((local, spark),) = both(command, ["c.jsonl"], tmp_path)
    assert local == spark and local.count(b"\n") > 50


@pytest.mark.parametrize("extra", [[], ["--expected-items", "200"]])
def test_dedup_writes_the_same_records(inputs, tmp_path, extra):
    ((local, spark),) = both(["dedup", *inputs, "-o", "{0}", "--annotate", "--num-perm", "64",
                              "--threshold", "0.5", *extra], ["d.jsonl"], tmp_path)
    assert local == spark


def test_refusals_are_one_line(inputs, tmp_path, capsys):
    spark = ["--engine", "spark", "--master", "local[2]"]
    assert main(["clean", *inputs, *PARAMS, "-o", str(tmp_path / "x.jsonl"), "--keep-first",
                 *spark]) == 2
    assert "--keep-first is not available with --engine spark" in capsys.readouterr().err
    assert main(["phrases", str(tmp_path / "missing.jsonl"), *spark]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    for command in ("phrases", "report", "clean"):
        output = ["-o", str(tmp_path / "x.jsonl")] if command == "clean" else []
        for option in ("--min-line-length", "--min-edge-length"):
            assert main([command, *inputs, option, "2", *output, *spark]) == 2
            err = capsys.readouterr().err.strip()
            assert err.endswith(f"(or pass {option} 0)") and "\n" not in err
            assert f"{option} is not supported with --engine spark yet" in err


ON_CLUSTER = {  # command -> (arguments, output file); a few, for the time a cluster run takes
    "dedup": (["--annotate", "--num-perm", "64", "--threshold", "0.5"], "d.jsonl"),
    "phrases": (PARAMS, "p.tsv"),
    "clean": ([*PARAMS, "--mode", "annotate", "--drop-above", "0.95"], "c.jsonl"),
}


@pytest.fixture(scope="module")
def cluster_outputs(spark_cluster, inputs, tmp_path_factory):
    """command -> the bytes it wrote with --engine spark on the standalone cluster. The three
    commands run in one Python process of their own (one driver for all three): this process's
    SparkContext belongs to the local test session."""
    import os
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("cluster-outputs")
    commands = [[name, *inputs, *arguments, "-o", str(folder / output), "--engine", "spark",
                 "--master", spark_cluster] for name, (arguments, output) in ON_CLUSTER.items()]
    script = ("import json, sys\nfrom corpus_miner.cli import main\n"
              "sys.exit(max(main(command) for command in json.loads(sys.argv[1])))\n")
    done = subprocess.run([sys.executable, "-c", script, json.dumps(commands)],
                          capture_output=True, text=True, timeout=900,
                          env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
    assert done.returncode == 0, done.stderr[-2000:]
    return {name: (folder / output).read_bytes() for name, (_, output) in ON_CLUSTER.items()}


@pytest.mark.parametrize("command", sorted(ON_CLUSTER))
def test_standalone_cluster_writes_the_local_outputs(cluster_outputs, inputs, tmp_path, command):
    arguments, output = ON_CLUSTER[command]
    assert main([command, *inputs, *arguments, "-o", str(tmp_path / output)]) == 0
    local = (tmp_path / output).read_bytes()
    assert local == cluster_outputs[command] and local.count(b"\n") > 5
