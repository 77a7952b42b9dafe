"""One Python API: `BloomSpan().fit(X)` for every kind of documents (corpus_miner.sources), and
`coverage`, `report` and `clean` on the local miner, checked against the command line's outputs
on the same data and against a brute-force coverage oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpus_miner import BloomSpan
from corpus_miner.cli import main
from corpus_miner.corpus import load_corpus, tokenize
from corpus_miner.errors import InputError, NotFittedError, OutputError, ParameterError
from corpus_miner.phrases.result import read_phrases
from tests.coverage.test_clean import MIN_LENGTH, SIGMA, web_documents, write_jsonl

PARAMS = ["--sigma", str(SIGMA), "--min-length", str(MIN_LENGTH)]
# report and clean also mine whole-line and edge phrases by default; the miner fixture mines none
NO_LINES = [*PARAMS, "--min-line-length", "0", "--min-edge-length", "0"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("api")
    docs = web_documents(seed=11, n_docs=60)
    docs[7]["text"] = None  # a null text is an empty document everywhere
    path = write_jsonl(folder / "web.jsonl", docs)
    cli_phrases = folder / "phrases.jsonl"
    assert main(["phrases", str(path), *PARAMS, "-o", str(cli_phrases)]) == 0
    return {"docs": docs, "path": path, "phrases": read_phrases(cli_phrases), "folder": folder}


def _table(docs) -> pa.Table:
    return pa.table({"id": [d["id"] for d in docs], "url": [d["url"] for d in docs],
                     "text": pa.array([d["text"] for d in docs], pa.string())})


def _kinds(data) -> dict:
    docs, path = data["docs"], data["path"]
    table = _table(docs)
    texts = [d["text"] for d in docs]
    return {
        "str path": str(path),
        "Path": path,
        "list of Path": [path],
        "glob": str(path.parent / "web.json*"),
        "Table": table,
        "RecordBatch": table.combine_chunks().to_batches()[0],
        "RecordBatchReader": pa.RecordBatchReader.from_batches(table.schema,
                                                               table.to_batches(max_chunksize=7)),
        "TokenCorpus": load_corpus(path),
        "list of texts": texts,
        "generator of texts": (t for t in texts),
        "pyarrow strings": pa.array(texts, pa.string()),
    }


KINDS = ["str path", "Path", "list of Path", "glob", "Table", "RecordBatch",
         "RecordBatchReader", "TokenCorpus", "list of texts", "generator of texts",
         "pyarrow strings"]


@pytest.mark.parametrize("kind", KINDS)
def test_fit_any_kind_of_documents_gives_the_command_lines_phrases(data, kind):
    miner = BloomSpan(sigma=SIGMA, min_length=MIN_LENGTH).fit(_kinds(data)[kind])
    assert list(miner.phrases_.rows()) == data["phrases"]
    assert len(data["phrases"]) > 3
    assert miner.stats_["documents"] == len(data["docs"])


def test_fit_reads_the_named_text_and_id_columns(data):
    docs = data["docs"]
    table = pa.table({"key": [d["id"] for d in docs],
                      "body": pa.array([d["text"] for d in docs], pa.string())})
    miner = BloomSpan(sigma=SIGMA, min_length=MIN_LENGTH).fit(table, text_col="body",
                                                              id_col="key")
    assert list(miner.phrases_.rows()) == data["phrases"]
    rows = miner.coverage(table)  # the fit's columns are the defaults
    assert rows.column_names == ["key", "tokens", "tokens_covered", "junk_spans"]
    assert rows.column("key").to_pylist() == [d["id"] for d in docs]


@pytest.mark.parametrize("bad, message", [
    (42, "cannot read documents from int"),
    ({"text": "a"}, "cannot read documents from dict"),
    (b"bytes", "cannot read documents from bytes"),
    (["a text", 3], "holds a int"),
    ([Path("a.jsonl"), "a text"], "mixing paths"),
    (pa.array([1, 2]), "must hold strings"),
    (pa.table({"body": ["x"]}), "no column 'text'"),
])
def test_anything_else_is_a_clear_input_error(bad, message):
    with pytest.raises(InputError, match=message):
        BloomSpan(sigma=2, min_length=2).fit(bad)


def test_a_list_of_strings_that_name_files_is_refused(data):
    with pytest.raises(InputError, match="pass pathlib.Path objects"):
        BloomSpan(sigma=2, min_length=2).fit([str(data["path"])])


def test_a_pandas_frame_gives_the_phrases_of_its_table(data):
    pytest.importorskip("pandas")
    table = _table(data["docs"]).rename_columns(["id", "url", "body"])
    frame = table.to_pandas()
    miner = BloomSpan(sigma=SIGMA, min_length=MIN_LENGTH).fit(frame, text_col="body")
    assert list(miner.phrases_.rows()) == data["phrases"]
    assert miner.stats_["documents"] == len(frame)
    with pytest.raises(InputError, match="text_col='text' is not a column of the DataFrame"):
        BloomSpan(sigma=2, min_length=2).fit(frame)
    with pytest.raises(InputError, match="cannot read documents from DataFrame"):
        BloomSpan(sigma=2, min_length=2).fit(type("DataFrame", (), {"__iter__": list})())


def test_parameters_are_checked_before_reading():
    with pytest.raises(ParameterError, match="sigma"):
        BloomSpan(sigma=1).fit("no/such/file.jsonl")
    with pytest.raises(NotFittedError, match="call fit"):
        BloomSpan().coverage(["a b"])


# -- coverage, report and clean equal the command line's -----------------------------------------

@pytest.fixture(scope="module")
def miner(data):
    """Without whole-line phrases: compared with the commands at --min-line-length 0 (the
    whole-line defaults have a test of their own below)."""
    return BloomSpan(sigma=SIGMA, min_length=MIN_LENGTH).fit(data["path"])


@pytest.mark.parametrize("kind", ["Path", "Table", "list of texts"])
def test_coverage_rows_equal_the_annotations_of_clean(data, miner, kind, tmp_path):
    annotated = tmp_path / "annotated.jsonl"
    assert main(["clean", str(data["path"]), *NO_LINES, "--mode", "annotate", "-o",
                 str(annotated)]) == 0
    expected = [json.loads(line) for line in annotated.read_text(encoding="utf-8").splitlines()]
    rows = miner.coverage(_kinds(data)[kind]).to_pylist()
    assert len(rows) == len(expected)
    for row, record, doc in zip(rows, expected, data["docs"], strict=True):
        if kind != "list of texts":  # texts alone have row numbers as ids
            assert row["id"] == doc["id"]
        assert row["tokens"] == len(tokenize(doc["text"] or ""))
        if doc["text"] is None:  # the cleaner leaves a null text as it was
            assert row["tokens_covered"] == 0 and record["junk_spans"] is None
            continue
        assert row["junk_spans"] == record["junk_spans"]
        assert row["tokens_covered"] == pytest.approx(record["junk_share"] * row["tokens"])
    assert sum(row["tokens_covered"] for row in rows) > 0


@pytest.mark.parametrize("kind", ["Path", "Table"])
def test_report_equals_the_commands_json(data, miner, kind, tmp_path):
    js = tmp_path / "report.json"
    assert main(["report", str(data["path"]), *NO_LINES, "--json", str(js),
                 "--group-by", "url:host", "--top", "7", "--examples", "2"]) == 0
    expected = json.loads(js.read_text(encoding="utf-8"))
    found = miner.report(_kinds(data)[kind], group_by="url:host", top=7, examples=2).to_dict()
    if kind != "Path":
        expected["inputs"] = []  # the command names its input files; a Table has none
    assert json.loads(json.dumps(found, ensure_ascii=False)) == expected
    assert expected["hogs_by_psi"][0]["examples"] and expected["groups"]


def test_line_phrases_report_and_clean_like_the_commands_defaults(tmp_path):
    from corpus_miner.phrases.params import CLEAN_MIN_EDGE_LENGTH, CLEAN_MIN_LINE_LENGTH

    docs = web_documents(seed=12, n_docs=30)
    for i, doc in enumerate(docs):  # a short paragraph of its own, and inside a longer line
        doc["text"] = f"{doc['text']}\n\nshare this post\n" if i % 3 else \
            f"{doc['text']} and share this post today"
    path = write_jsonl(tmp_path / "lines.jsonl", docs)
    miner = BloomSpan(sigma=SIGMA, min_length=MIN_LENGTH, min_line_length=CLEAN_MIN_LINE_LENGTH,
                      min_edge_length=CLEAN_MIN_EDGE_LENGTH).fit(path)
    assert miner.phrases_.whole_line_mask.any()
    js, cleaned = tmp_path / "report.json", tmp_path / "clean.jsonl"
    assert main(["report", str(path), *PARAMS, "--json", str(js)]) == 0
    assert json.loads(json.dumps(miner.report(path).to_dict(), ensure_ascii=False)) \
        == json.loads(js.read_text(encoding="utf-8"))
    assert main(["clean", str(path), *PARAMS, "-o", str(cleaned)]) == 0
    miner.clean(path, output=tmp_path / "api.jsonl")
    assert (tmp_path / "api.jsonl").read_bytes() == cleaned.read_bytes()


def test_report_of_a_token_corpus_has_the_figures_without_contexts(data, miner):
    found = miner.report(load_corpus(data["path"])).to_dict()
    whole = miner.report(data["path"]).to_dict()
    assert found["tokens_covered"] == whole["tokens_covered"] > 0
    assert found["hogs_by_psi"][0]["examples"] == [] != whole["hogs_by_psi"][0]["examples"]
    with pytest.raises(ParameterError, match="group_by"):
        miner.report(load_corpus(data["path"]), group_by="url")


@pytest.mark.parametrize("mode, options, cli", [
    ("remove", {}, []),
    ("mask", {"mask_text": "<cut>"}, ["--mask-text", "<cut>"]),
    ("annotate", {}, []),
    ("remove", {"keep_first": True, "drop_above": 0.5}, ["--keep-first", "--drop-above", "0.5"]),
])
def test_clean_writes_the_commands_bytes(data, miner, tmp_path, mode, options, cli):
    for suffix in (".jsonl", ".parquet"):
        expected, found = tmp_path / f"cli{suffix}", tmp_path / f"api{suffix}"
        assert main(["clean", str(data["path"]), *NO_LINES, "--mode", mode, *cli, "-o",
                     str(expected)]) == 0
        stats = miner.clean(data["path"], mode=mode, output=found, **options)
        if suffix == ".jsonl":
            assert found.read_bytes() == expected.read_bytes()
        else:
            assert pq.read_table(found).equals(pq.read_table(expected))
            assert stats["documents_written"] == pq.read_table(found).num_rows
    returned = miner.clean(_table(data["docs"]), mode=mode, **options)
    assert returned.column("text").to_pylist() == pq.read_table(expected).column("text") \
        .to_pylist()


def test_clean_refuses_documents_without_text(data, miner, tmp_path):
    with pytest.raises(ParameterError, match="TokenCorpus"):
        miner.clean(load_corpus(data["path"]))
    with pytest.raises(ParameterError, match="mask_text only applies"):
        miner.clean(data["path"], mode="remove", mask_text="x")
    with pytest.raises(InputError, match="TokenCorpus keeps no text"):
        miner.coverage(load_corpus(data["path"]))


def _brute_force_covered(texts: list[str], phrases: list[str], window: int) -> list[int]:
    """Covered tokens per text: inside an occurrence of a window of a phrase (coverage.py)."""
    windows = set()
    for phrase in phrases:
        words = tokenize(phrase)
        windows.update(tuple(words[i:i + window]) for i in range(len(words) - window + 1))
    counts = []
    for text in texts:
        words = tokenize(text)
        covered = [False] * len(words)
        for i in range(len(words) - window + 1):
            if tuple(words[i:i + window]) in windows:
                covered[i:i + window] = [True] * window
        counts.append(sum(covered))
    return counts


def test_phrases_mined_elsewhere_cover_new_documents_exactly(data):
    """Other documents: other vocabulary ids, words the mined corpus never had (mapped to ids
    no token has), phrase pieces in new places."""
    phrases = [row["phrase"] for row in data["phrases"]]
    first = tokenize(phrases[0])
    texts = ["brand new words " + " ".join(first) + " more",
             "zebra " + " ".join(first[:MIN_LENGTH]) + " yak " + " ".join(first[-MIN_LENGTH:]),
             " ".join(tokenize(phrases[1])) + " unseen",
             "nothing repeated here at all", ""]
    expected = _brute_force_covered(texts, phrases, MIN_LENGTH)
    assert min(expected[:3]) > 0
    miner = BloomSpan(sigma=SIGMA, min_length=MIN_LENGTH).fit(data["path"])
    rows = miner.coverage(texts).to_pylist()
    assert [row["tokens_covered"] for row in rows] == expected
    report = miner.report(texts)
    assert report.coverage.doc_covered.tolist() == expected


def test_clean_never_writes_over_its_input(data, miner, tmp_path):
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(data["path"].read_bytes())
    with pytest.raises(OutputError):
        miner.clean(copy, output=copy)
    assert copy.read_bytes() == data["path"].read_bytes()


# The one LSHBloom API (issue 24): these names, the same on every engine
LSHBLOOM_METHODS = {"fit", "partial_fit", "deduplicate", "query", "merge", "save", "load",
                    "metadata", "to_state", "from_state", "get_params", "set_params",
                    "is_fitted", "check_is_fitted"}


def _public_methods(cls) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")
            and callable(getattr(cls, name))}


def test_lshbloom_has_one_method_per_job():
    from corpus_miner import LSHBloom

    assert _public_methods(LSHBloom) == LSHBLOOM_METHODS | {"is_new"}


def test_spark_lshbloom_has_the_same_methods_with_the_same_arguments():
    pytest.importorskip("pyspark")
    import inspect

    from corpus_miner import LSHBloom
    from corpus_miner.spark import SparkLSHBloom

    spark_only = {"to_local", "from_local", "unpersist"}
    assert _public_methods(SparkLSHBloom) == LSHBLOOM_METHODS | spark_only
    for name in ("deduplicate", "query", "partial_fit"):
        local = set(inspect.signature(getattr(LSHBloom, name)).parameters)
        on_spark = set(inspect.signature(getattr(SparkLSHBloom, name)).parameters)
        shared = {"update", "add", "return_band_keys"} & local
        assert shared <= on_spark, (name, shared - on_spark)


def test_ray_lshbloom_has_the_same_methods_with_the_same_arguments():
    pytest.importorskip("ray")
    import inspect

    from corpus_miner import LSHBloom
    from corpus_miner.ray import RayLSHBloom

    assert _public_methods(RayLSHBloom) == LSHBLOOM_METHODS | {"to_local", "from_local"}
    for name in ("deduplicate", "query", "partial_fit"):
        local = set(inspect.signature(getattr(LSHBloom, name)).parameters)
        on_ray = set(inspect.signature(getattr(RayLSHBloom, name)).parameters)
        shared = {"update", "add", "return_band_keys"} & local
        assert shared <= on_ray, (name, shared - on_ray)
    params = set(LSHBloom().get_params())
    assert set(RayLSHBloom().get_params()) == params | {"in_flight"}
