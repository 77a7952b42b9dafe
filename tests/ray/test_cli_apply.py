"""`corpus-miner report`, `clean` and `dedup` with `--engine ray` write the local engine's
outputs byte for byte (through corpus_miner.cli.main, on the session's Ray cluster)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

pytest.importorskip("ray")
pytestmark = pytest.mark.filterwarnings(r"ignore:::ray\.data\.context")

from corpus_miner import synth  # noqa: E402
from corpus_miner.cli import main  # noqa: E402

# whole-line and edge phrases do not run on Ray yet: `both` turns off the local defaults
PARAMS = ["--sigma", "4", "--min-length", "5"]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Web pages in three inputs: a JSONL file without ids (row numbers), a JSONL.gz file and a
    Parquet file; order, ids and groups must survive across them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path_factory.mktemp("ray-engine")
    docs = synth.web(90, n_sites=4, vocabulary=300, mean_body_words=40, seed=3)
    pages = [{"id": f"p{i}", "url": f"https://site{i % 4}.example/{i}", "text": " ".join(d)}
             for i, d in enumerate(docs)]
    pages[7]["text"] = pages[3]["text"]  # copies for dedup to find, within and across inputs
    pages[70]["text"] = pages[12]["text"]
    first = folder / "a.jsonl"
    first.write_text("".join(json.dumps({k: v for k, v in page.items() if k != "id"}) + "\n"
                             for page in pages[:30]), encoding="utf-8")
    second = folder / "b.jsonl.gz"
    with gzip.open(second, "wt", encoding="utf-8") as out:
        out.writelines(json.dumps(page) + "\n" for page in pages[30:60])
    third = folder / "c.parquet"
    pq.write_table(pa.Table.from_pylist(pages[60:]), third)
    return [str(first), str(second), str(third)]


def both(args: list[str], outputs: list, tmp_path,
         local=("--min-line-length", "0", "--min-edge-length", "0")
         ) -> list[tuple[bytes, bytes]]:
    """The bytes of each output of the command, (local engine's, Ray engine's)."""
    found = []
    for engine in ("local", "ray"):
        named = [str(tmp_path / f"{engine}-{name}") for name in outputs]
        command = [part.format(*named) for part in args]
        extra = ["--engine", "ray"] if engine == "ray" else list(local)
        assert main(command + extra) == 0
        found.append([Path(path).read_bytes() for path in named])
    return list(zip(*found, strict=True))


def test_report_is_byte_identical(ray_cluster, inputs, tmp_path, capsys):
    report = ["report", *inputs, *PARAMS, "-o", "{0}", "--json", "{1}", "--group-by",
              "url:host", "--examples", "2", "--top", "5"]
    (html_local, html_ray), (json_local, json_ray) = both(report, ["r.html", "r.json"], tmp_path)
    assert json_local == json_ray
    assert html_local == html_ray
    data = json.loads(json_local)
    assert data["hogs_by_psi"][0]["examples"] and len(data["groups"]) == 4
    assert "--engine ray mines no whole-line and edge phrases yet" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["remove", "mask", "annotate"])
def test_clean_writes_the_same_records(ray_cluster, inputs, tmp_path, mode):
    command = ["clean", *inputs, *PARAMS, "-o", "{0}", "--mode", mode, "--drop-above", "0.95",
               "--json", "{1}"]
    (local, ray), (json_local, json_ray) = both(command, ["c.jsonl", "c.json"], tmp_path)
    assert local == ray and local.count(b"\n") > 50
    assert json.loads(json_local) == json.loads(json_ray)


@pytest.mark.parametrize("extra", [["--annotate"], [], ["--annotate", "--mode", "minhash_lsh"],
                                   ["--annotate", "--expected-items", "20"]])
def test_dedup_writes_the_same_records_and_index(ray_cluster, inputs, tmp_path, extra):
    from corpus_miner.dedup import LSHBloom

    options = ["--num-perm", "64", "--threshold", "0.5", *extra]
    for engine in ("local", "ray"):
        assert main(["dedup", *inputs, "-o", str(tmp_path / f"{engine}.jsonl"), "--save-index",
                     str(tmp_path / f"{engine}-index"), *options]
                    + (["--engine", "ray"] if engine == "ray" else [])) == 0
    local, ray = (tmp_path / "local.jsonl").read_bytes(), (tmp_path / "ray.jsonl").read_bytes()
    assert local == ray
    assert (local.count(b"\n") == 90) if extra else (0 < local.count(b"\n") <= 88)
    indexes = [LSHBloom.load(tmp_path / f"{engine}-index") for engine in ("local", "ray")]
    assert indexes[0].metadata() == indexes[1].metadata()
    assert indexes[0].n_documents_ == indexes[1].n_documents_ == 90
    states = [index.to_state() for index in indexes]
    if "minhash_lsh" in extra:
        assert states[0].band_table.items()[0].tolist() == states[1].band_table.items()[0].tolist()
        assert states[0].ids.to_pylist() == states[1].ids.to_pylist()
        assert b'"duplicate_of"' in local
    else:
        assert states[0].bloom == states[1].bloom


@pytest.mark.parametrize("extra", [[], ["--mode", "minhash_lsh"], ["--expected-items", "20"]])
def test_index_build_writes_the_local_index(ray_cluster, inputs, tmp_path, extra, capsys):
    from corpus_miner.dedup import LSHBloom

    options = ["--num-perm", "64", "--threshold", "0.5", *extra]
    for engine in ("local", "ray"):
        assert main(["index", "build", *inputs, "-o", str(tmp_path / engine), *options]
                    + (["--engine", "ray"] if engine == "ray" else [])) == 0
    local, ray = (LSHBloom.load(tmp_path / engine) for engine in ("local", "ray"))
    assert local.metadata() == ray.metadata()

    def snapshots(model):  # each file's digest, as `index add` checks them; not the time
        return [{k: v for k, v in snap.items() if k != "time"} for snap in model.snapshots_]
    assert snapshots(local) == snapshots(ray) and len(snapshots(local)[0]["inputs"]) == 3
    states = local.to_state(), ray.to_state()
    if "minhash_lsh" in extra:
        assert states[0].band_table.items()[0].tolist() == states[1].band_table.items()[0].tolist()
        assert states[0].ids.to_pylist() == states[1].ids.to_pylist()
    else:
        assert states[0].bloom == states[1].bloom
    # an index built on Ray serves `index add` of the local engine, which refuses a file it has
    capsys.readouterr()
    assert main(["index", "add", str(tmp_path / "ray"), inputs[0], "-o",
                 str(tmp_path / "new.jsonl")]) == 2
    assert "this input was added to the index before" in capsys.readouterr().err


def test_refusals_are_one_line(ray_cluster, inputs, tmp_path, capsys):
    ray = ["--engine", "ray"]
    assert main(["clean", *inputs, *PARAMS, "-o", str(tmp_path / "x.jsonl"), "--keep-first",
                 *ray]) == 2
    assert "--keep-first is not available with --engine ray" in capsys.readouterr().err
    assert main(["dedup", *inputs, "-o", str(tmp_path / "d.jsonl"), "--expected-items", "9",
                 "--shards", "2", *ray]) == 2
    assert "--shards N needs the number of documents" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing.jsonl"), *ray]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(errors) == 1 and "missing.jsonl: no such file" in errors[0]
    for command in ("report", "clean"):
        output = ["-o", str(tmp_path / "x.jsonl")] if command == "clean" else []
        for option in ("--min-line-length", "--min-edge-length"):
            assert main([command, *inputs, option, "2", *output, *ray]) == 2
            err = capsys.readouterr().err.strip()
            assert f"{option} is not supported with --engine ray yet" in err
            assert "\n" not in err
