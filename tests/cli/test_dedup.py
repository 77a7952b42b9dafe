"""`corpus-miner dedup` and `corpus-miner index build|query` through corpus_miner.cli.main(argv)."""

import argparse
import gzip
import io
import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from corpus_miner.cli import main
from corpus_miner.dedup import LSHBloom

WORDS = [f"tok{i}" for i in range(300)]


def _docs(seed=0, n=30):
    """n random documents; every 4th is followed by a lightly edited copy (1 word changed)."""
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS, 120))
        docs.append({"id": f"s{seed}-{i}", "text": text, "n": i})
        if i % 4 == 0:
            words = text.split()
            words[60] = "EDITED"
            docs.append({"id": f"s{seed}-{i}-copy", "text": " ".join(words), "n": -i})
    return docs


def _write_jsonl(path, docs):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as handle:
        for doc in docs:
            handle.write(json.dumps(doc) + "\n")
    return str(path)


def _read_jsonl(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.mark.parametrize("extra", [[], ["--mode", "minhash_lsh"], ["--expected-items", "100"],
                                   ["--sketch", "minhash"]])
def test_dedup_writes_unique_documents_in_order_with_all_fields(tmp_path, extra):
    docs = _docs()
    source = _write_jsonl(tmp_path / "in.jsonl.gz", docs)
    out = tmp_path / "out.jsonl"
    assert main(["dedup", source, "-o", str(out), *extra]) == 0
    kept = _read_jsonl(out)
    assert [d["id"] for d in kept] == [d["id"] for d in docs if not d["id"].endswith("-copy")]
    assert kept[0] == docs[0]  # every field, unchanged


def test_dedup_matches_the_library(tmp_path):
    docs = _docs(seed=3) + _docs(seed=3)[:5]  # exact repeats at the end too
    source = _write_jsonl(tmp_path / "in.jsonl", docs)
    assert main(["dedup", source, "-o", str(tmp_path / "o.jsonl"), "--annotate",
                 "--num-perm", "64"]) == 0
    flags = [d["is_duplicate"] for d in _read_jsonl(tmp_path / "o.jsonl")]
    expected = LSHBloom(num_perm=64).deduplicate([d["text"] for d in docs]).is_duplicate
    assert flags == expected.tolist()


def test_dedup_over_several_files_and_stdin_matches_the_library(tmp_path, monkeypatch):
    """lshbloom sized by the input: files are read twice (keys, then records); stdin is kept."""
    parts = [_docs(seed=4)[:10], _docs(seed=4)[5:20], _docs(seed=5)]  # copies across files
    sources = [_write_jsonl(tmp_path / f"in{i}.jsonl", docs) for i, docs in enumerate(parts)]
    docs = [doc for part in parts for doc in part]
    expected = LSHBloom().deduplicate([d["text"] for d in docs]).is_duplicate.tolist()
    assert main(["dedup", *sources, "-o", str(tmp_path / "files.jsonl"), "--annotate"]) == 0
    assert [d["is_duplicate"] for d in _read_jsonl(tmp_path / "files.jsonl")] == expected
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(
        "".join(json.dumps(d) + "\n" for d in docs).encode())))
    assert main(["dedup", "-", "-o", str(tmp_path / "stdin.jsonl"), "--annotate"]) == 0
    assert [d["is_duplicate"] for d in _read_jsonl(tmp_path / "stdin.jsonl")] == expected


@pytest.mark.parametrize("command", [["dedup"], ["dedup", "--mode", "minhash_lsh"]])
def test_dedup_to_stdout_equals_the_file_output(tmp_path, capsys, command):
    source = _write_jsonl(tmp_path / "in.jsonl", _docs())
    out = tmp_path / "out.jsonl"
    assert main([*command[:1], source, "-o", str(out), *command[1:]]) == 0
    capsys.readouterr()
    assert main([*command[:1], source, "-o", "-", *command[1:]]) == 0
    captured = capsys.readouterr()
    assert captured.out == out.read_text(encoding="utf-8") and captured.out
    assert "dedup:" in captured.err


def test_dedup_refuses_inputs_that_change_between_its_two_reads(tmp_path, capsys, monkeypatch):
    import corpus_miner.cli.dedup as cli_dedup
    import corpus_miner.cli.dedup_common as dedup_common

    source = _write_jsonl(tmp_path / "in.jsonl", _docs())
    reads = []
    real_read = cli_dedup._read

    def growing_read(args, stats, label="reading", *rest):
        reads.append(label)
        yield from real_read(args, stats, label, *rest)
        if len(reads) == 2:  # the second read finds one more document
            extra = _write_jsonl(tmp_path / "more.jsonl", _docs(seed=9)[:1])
            yield from real_read(argparse.Namespace(**{**vars(args), "inputs": [extra]}), stats,
                                 label, *rest)

    monkeypatch.setattr(cli_dedup, "_read", growing_read)
    monkeypatch.setattr(dedup_common, "_read", growing_read)  # the shared helpers read with it
    out = tmp_path / "out.jsonl"
    assert main(["dedup", source, "-o", str(out)]) == 2
    assert "inputs changed" in capsys.readouterr().err and not out.exists()


def test_annotate_minhash_lsh_names_the_earlier_document(tmp_path):
    docs = _docs()
    source = _write_jsonl(tmp_path / "in.jsonl", docs)
    out = tmp_path / "out.parquet"
    assert main(["dedup", source, "-o", str(out), "--annotate", "--mode", "banding"]) == 0
    table = pq.read_table(out).to_pylist()
    assert len(table) == len(docs)
    for row in table:
        if row["id"].endswith("-copy"):
            assert row["is_duplicate"] and row["duplicate_of"] == row["id"][: -len("-copy")]
        else:
            assert not row["is_duplicate"] and row["duplicate_of"] is None


def test_index_build_then_query(tmp_path, capsys):
    reference = _docs(seed=1)
    new = _docs(seed=2)[:6] + [reference[0], reference[4]]  # two documents already indexed
    ref_path = _write_jsonl(tmp_path / "ref.jsonl", reference)
    new_path = _write_jsonl(tmp_path / "new.jsonl", new)
    index = tmp_path / "index"
    for mode, extra in (("lshbloom", []), ("lshbloom", ["--expected-items", "50"]),
                        ("minhash_lsh", [])):
        assert main(["index", "build", ref_path, "-o", str(index), "--mode", mode, *extra]) == 0
        assert LSHBloom.load(index).n_documents_ == len(reference)
        assert (index / "metadata.json").is_file()
        out = tmp_path / f"new-{mode}.jsonl"
        assert main(["index", "query", str(index), new_path, "-o", str(out)]) == 0
        assert [d["id"] for d in _read_jsonl(out)] == [d["id"] for d in new[:6]]
        annotated = tmp_path / f"ann-{mode}.jsonl"
        assert main(["index", "query", str(index), new_path, "-o", str(annotated),
                     "--annotate"]) == 0
        rows = _read_jsonl(annotated)
        assert [r["is_duplicate"] for r in rows] == [False] * 6 + [True, True]
        if mode == "minhash_lsh":
            assert ([r["duplicate_of"] for r in rows[-2:]]
                    == [reference[0]["id"], reference[4]["id"]])
    assert "index query" in capsys.readouterr().err


def test_dedup_save_index_is_queryable(tmp_path):
    docs = _docs()
    source = _write_jsonl(tmp_path / "in.jsonl", docs)
    assert main(["dedup", source, "-o", str(tmp_path / "o.jsonl"), "--save-index",
                 str(tmp_path / "idx")]) == 0
    model = LSHBloom.load(tmp_path / "idx")
    assert model.n_documents_ == len(docs) and model.query([docs[1]["text"]]).is_duplicate.all()


@pytest.mark.parametrize("argv,message", [
    (["--threshold", "1.5"], "threshold"),
    (["--num-bands", "999"], "num_bands"),
    (["--fp-prob", "0"], "fp_prob"),
])
def test_bad_parameters_are_one_line_errors(tmp_path, capsys, argv, message):
    source = _write_jsonl(tmp_path / "in.jsonl", _docs()[:3])
    assert main(["dedup", source, "-o", str(tmp_path / "o.jsonl"), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("corpus-miner: error:") and message in err and "\n" not in err
    assert not (tmp_path / "o.jsonl").exists()


def test_query_with_a_non_index_folder_fails_cleanly(tmp_path, capsys):
    source = _write_jsonl(tmp_path / "in.jsonl", _docs()[:3])
    (tmp_path / "folder").mkdir()
    assert main(["index", "query", str(tmp_path / "folder"), source,
                 "-o", str(tmp_path / "o.jsonl")]) == 2
    assert "not a corpus-miner index" in capsys.readouterr().err
    assert main(["dedup", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "o.jsonl")]) == 2


def _unique_docs(n, seed=0):
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{i}" for i in range(20_000)]
    return [{"id": f"u{i}", "text": " ".join(rng.choice(vocabulary, 60))} for i in range(n)]


def test_too_small_expected_items_grows_the_filter_instead_of_removing_unique_documents(
        tmp_path, capsys):
    """--expected-items 200 on 2,000 documents flagged 1,419 of them, exit 0."""
    docs = _unique_docs(2000)
    source = _write_jsonl(tmp_path / "in.jsonl", docs)
    out = tmp_path / "out.jsonl"
    assert main(["dedup", source, "-o", str(out), "--expected-items", "200",
                 "--num-perm", "64"]) == 0
    assert len(_read_jsonl(out)) == 2000
    err = capsys.readouterr().err
    assert "2,000 documents outgrew a Bloom filter sized for --expected-items 200" in err
    assert main(["index", "build", source, "-o", str(tmp_path / "idx"), "--expected-items", "200",
                 "--num-perm", "64"]) == 0
    assert "grew to 4 layers" in capsys.readouterr().err
    index = LSHBloom.load(tmp_path / "idx")
    assert index.n_documents_ == 2000 and index.query([d["text"] for d in docs]).is_duplicate.all()
    fresh = _write_jsonl(tmp_path / "new.jsonl", _unique_docs(500, seed=1))
    assert main(["index", "query", str(tmp_path / "idx"), fresh,
                 "-o", str(tmp_path / "q.jsonl")]) == 0
    assert len(_read_jsonl(tmp_path / "q.jsonl")) == 500


def test_dedup_refuses_a_same_size_input_swapped_between_its_two_reads(tmp_path, capsys,
                                                                        monkeypatch):
    """The two reads compared document counts only: a file of as many documents put in place
    between them was written with the first file's flags (502 false duplicates of 1,500)."""
    import corpus_miner.cli.dedup as cli_dedup
    import corpus_miner.cli.dedup_common as dedup_common

    first, second = _docs(seed=1), _docs(seed=2)
    assert len(first) == len(second)
    source = tmp_path / "in.jsonl"
    _write_jsonl(source, first)
    real_read = cli_dedup._read

    def swapping_read(args, stats, label="reading", *rest):
        if label == "writing":
            _write_jsonl(source, second)
        yield from real_read(args, stats, label, *rest)

    monkeypatch.setattr(cli_dedup, "_read", swapping_read)
    monkeypatch.setattr(dedup_common, "_read", swapping_read)  # the shared helpers read with it
    out = tmp_path / "out.jsonl"
    assert main(["dedup", str(source), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "inputs changed between dedup's two reads" in err and "\n" not in err
    assert not out.exists() and not list(tmp_path.glob(".out*"))


@pytest.mark.parametrize("argv,message", [
    (["--fp-prob", "1e-300"], r"fp_prob \(per document\) must be in \[1e-15, 1\)"),
    (["--expected-items", "100000000000000"], "does not fit in this machine's"),
    (["--expected-items", "0"], "expected_items must be >= 1"),
])
def test_extreme_parameters_are_one_line_errors(tmp_path, capsys, argv, message):
    source = _write_jsonl(tmp_path / "in.jsonl", _docs()[:3])
    for command in (["dedup", source, "-o", str(tmp_path / "o.jsonl")],
                    ["index", "build", source, "-o", str(tmp_path / "idx")]):
        assert main([*command, *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("corpus-miner: error:") and "\n" not in err
        assert __import__("re").search(message, err), err
    assert not (tmp_path / "o.jsonl").exists() and not (tmp_path / "idx").exists()


def test_many_permutations_work_end_to_end(tmp_path):
    """--num-perm 65536 spent 134 s choosing bands."""
    docs = _docs()[:4]
    source = _write_jsonl(tmp_path / "in.jsonl", docs + docs[:1])
    assert main(["dedup", source, "-o", str(tmp_path / "o.jsonl"), "--num-perm", "65536",
                 "--annotate"]) == 0
    assert [d["is_duplicate"] for d in _read_jsonl(tmp_path / "o.jsonl")][-1] is True
