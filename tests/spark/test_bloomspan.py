"""SparkBloomSpan: the local engine's phrases, coverage and cleaning, byte for byte, whatever the
partitioning, window cap, fingerprint width, salting or task retries."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pyspark")
pytest.importorskip("pandas")

from pyspark import TaskContext  # noqa: E402

from corpus_miner import BloomSpan, synth  # noqa: E402
from corpus_miner.corpus import TokenIdAssigner  # noqa: E402
from corpus_miner.coverage import Cleaner, Coverage  # noqa: E402
from corpus_miner.errors import InputError, NotFittedError, ParameterError  # noqa: E402
from corpus_miner.io.readers import DocumentBatch  # noqa: E402
from corpus_miner.phrases.exact import mine_fhk  # noqa: E402
from corpus_miner.spark import (
    SparkBloomSpan,  # noqa: E402
    span_passes,  # noqa: E402
    stored,  # noqa: E402
)
from corpus_miner.spark.span_passes import Passes  # noqa: E402

from ..phrases.corpora import small_corpora  # noqa: E402
from ..phrases.passages import shared_passage_texts  # noqa: E402


class Corpus:
    """Texts tokenized like load_corpus does (what the local engine mines)."""

    def __init__(self, texts: list[str]):
        assigner = TokenIdAssigner()
        assigner.add_texts(pa.array(texts, pa.string()))
        self.tokens, self.doc_offsets, self.vocab = assigner.finish()
        self.texts = texts
        self.doc_ids = [f"d{i}" for i in range(len(texts))]


def web_texts(n_docs: int = 150, seed: int = 4) -> list[str]:
    docs = synth.web(n_docs, n_sites=4, vocabulary=400, mean_body_words=40, seed=seed)
    texts = [" ".join(doc) for doc in docs]
    # a periodic run and a template far longer than the window cap, in a few documents
    long_template = " ".join(f"legal{i}" for i in range(40))
    for i in range(0, n_docs, 25):
        texts[i] += " " + " ".join(["ha"] * (20 + i // 5)) + " . " + long_template
    texts[3] = ""
    return texts


TEXTS = web_texts()
SMALL = web_texts(24, seed=5)  # one partition per document stays affordable
SIGMA, MIN_LENGTH = 4, 5


@pytest.fixture(scope="module")
def corpus():
    return Corpus(TEXTS)


@pytest.fixture(scope="module")
def local(corpus):
    return BloomSpan(SIGMA, MIN_LENGTH).fit(corpus)


def frame(spark, texts, partitions: int | None = None):
    pdf = pd.DataFrame({"id": [f"d{i}" for i in range(len(texts))], "text": texts,
                        "extra": np.arange(len(texts))})
    df = spark.createDataFrame(pdf)
    return df if partitions is None else df.repartition(partitions)


def rows(df) -> list[dict]:
    return [row.asDict() for row in df.collect()]


@pytest.fixture(scope="module")
def fitted(spark, local):
    model = SparkBloomSpan(SIGMA, MIN_LENGTH, window_cap=8).fit(frame(spark, TEXTS, 3))
    return model


def test_phrases_equal_the_local_engine_in_canonical_order(fitted, local):
    assert rows(fitted.phrases_) == list(local.phrases_.rows())
    assert fitted.phrases_.columns == ["phrase", "length", "df", "occurrences"]
    assert fitted.stats_["rounds"] >= 3  # the long template needed continuation rounds
    assert len(local.phrases_) > 10


@pytest.mark.parametrize("partitions, options, bloom", [
    (1, {}, False), (2, {"window_cap": 1}, True),
    (5, {"window_cap": 2, "fingerprint_bits": 3}, False),
    (7, {"window_cap": 64, "filter_fp": 1.0}, False)])
def test_same_bytes_for_any_partitioning_and_path(spark, fitted, partitions, options, bloom,
                                                  monkeypatch):
    """Partitions {1, 2, 5, 7}; caps {1, 2, 64} force 0 to 6 continuation rounds; 3-bit
    fingerprints force collisions; key sets shipped as Bloom filters instead of exactly;
    all-positive filters."""
    if bloom:
        monkeypatch.setattr(span_passes, "EXACT_KEYS", 0)
    model = SparkBloomSpan(SIGMA, MIN_LENGTH, **options).fit(frame(spark, TEXTS, partitions))
    assert rows(model.phrases_) == rows(fitted.phrases_)


def test_one_partition_per_document_with_every_group_salted(spark):
    """#docs partitions, cap 3 and a salting threshold of 2: every group is merged in two
    levels from pieces of several partitions."""
    model = SparkBloomSpan(SIGMA, MIN_LENGTH, window_cap=3, salt_threshold=2, buckets=3)
    model.fit(frame(spark, SMALL, len(SMALL)))
    assert model.stats_["salted_groups"] > 0
    assert rows(model.phrases_) == list(BloomSpan(SIGMA, MIN_LENGTH).fit(Corpus(SMALL))
                                        .phrases_.rows())
    assert len(model.table_) > 5


def test_long_shared_passages_deep_in_continuation_rounds(spark):
    """Passages of 300 tokens in 3 documents each, all of their grams live, and a 1,000-token
    run of one word in 3 documents (6 rounds): the local engine's answer, and no reducer
    receives more window tokens than the frequent-gram chains hold (token pools)."""
    texts = shared_passage_texts(passage_length=300)
    model = SparkBloomSpan(3, 3, window_cap=32, buckets=3).fit(frame(spark, texts, 3))
    stats = model.stats_
    assert stats["rounds"] >= 5
    for r in range(stats["rounds"]):  # window pools: no reducer gets more than the chains hold
        assert 0 < stats[f"round_{r}_largest_bucket_tokens"] \
            <= stats["tokens_in_frequent_gram_chains"]
    assert rows(model.phrases_) == list(BloomSpan(3, 3).fit(Corpus(texts)).phrases_.rows())


def test_coverage_equals_the_local_engine(spark, fitted, local, corpus):
    expected = Coverage.from_miner(local, corpus)
    found = rows(fitted.coverage(frame(spark, TEXTS, 4)).orderBy("id"))
    by_id = {row["id"]: row for row in found}
    cleaner = Cleaner(mode="annotate").fit(corpus, expected)
    for d, text in enumerate(TEXTS):
        row = by_id[f"d{d}"]
        assert row["tokens"] == corpus.doc_offsets[d + 1] - corpus.doc_offsets[d]
        assert row["tokens_covered"] == expected.doc_covered[d]
        assert row["junk_spans"] == cleaner.document(d, text)[1]
    assert sum(row["tokens_covered"] for row in found) == expected.tokens_covered > 0


@pytest.mark.parametrize("mode", ["remove", "mask", "annotate"])
def test_clean_keeps_every_column_and_row_and_equals_the_cleaner(spark, fitted, local, corpus,
                                                                 mode):
    df = frame(spark, TEXTS, 3)
    cleaned = fitted.clean(df, mode=mode).toPandas()
    expected_columns = df.columns + (["junk_spans", "junk_share"] if mode == "annotate" else [])
    assert list(cleaned.columns) == expected_columns
    assert sorted(cleaned["id"]) == sorted(f"d{i}" for i in range(len(TEXTS)))
    cleaned = cleaned.set_index("id")
    cleaner = Cleaner(mode=mode).fit(corpus, Coverage.from_miner(local, corpus))
    batch = DocumentBatch(pa.array(corpus.doc_ids), pa.array(TEXTS),
                          pa.table({"id": corpus.doc_ids, "text": TEXTS}), "test", 0)
    (table,) = cleaner.transform([batch])
    for row in table.to_pylist():
        got = cleaned.loc[row["id"]]
        assert got["text"] == row["text"]
        if mode == "annotate":
            assert [list(span) for span in got["junk_spans"]] == row["junk_spans"]
            assert got["junk_share"] == pytest.approx(row["junk_share"])


@pytest.mark.parametrize("local_storage", [True, False], ids=["rows-kept", "persisted"])
def test_retried_tasks_give_the_same_answer(spark, tmp_path, monkeypatch, local_storage):
    """Every stored table and reduce output fails in partition 0 on its first attempt; Spark
    retries (master local[2,4]) and the answer is that of a clean run, with the stored tables
    kept as rows (local mode) or persisted (what a cluster does)."""
    monkeypatch.setattr(stored, "local_mode", lambda spark: local_storage)
    marker_dir = str(tmp_path)

    def flaky(batches):
        context = TaskContext.get()
        if context.partitionId() == 0 and context.attemptNumber() == 0:
            open(f"{marker_dir}/failed-{context.stageId()}", "w").close()
            raise RuntimeError("injected failure on the first attempt")
        yield from batches

    keep = Passes.keep
    monkeypatch.setattr(Passes, "keep", lambda self, df: keep(self, df.mapInArrow(flaky,
                                                                                  df.schema)))
    model = SparkBloomSpan(SIGMA, MIN_LENGTH, window_cap=8).fit(frame(spark, SMALL, 3))
    assert len(list(tmp_path.glob("failed-*"))) >= 5
    assert rows(model.phrases_) == list(BloomSpan(SIGMA, MIN_LENGTH).fit(Corpus(SMALL))
                                        .phrases_.rows())


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(small_corpora(max_docs=10), st.integers(1, 4), st.sampled_from([1, 2, 64]))
def test_hypothesis_corpora_equal_local_engine_and_fhk(spark, case, partitions, cap):
    docs, sigma, min_length = case
    texts = [" ".join(f"w{t}" for t in doc) for doc in docs]
    corpus = Corpus(texts)
    local = BloomSpan(sigma, min_length).fit(corpus)
    exact, _ = mine_fhk(corpus.tokens, corpus.doc_offsets, sigma, min_length, corpus.vocab)
    df = frame(spark, texts, partitions)
    model = SparkBloomSpan(sigma, min_length, window_cap=cap, buckets=3).fit(df)
    assert rows(model.phrases_) == list(local.phrases_.rows()) == list(exact.rows())
    covered = {row["id"]: row["tokens_covered"] for row in rows(model.coverage(df))}
    expected = Coverage.from_miner(local, corpus).doc_covered
    assert [covered[f"d{i}"] for i in range(len(texts))] == expected.tolist()


def test_errors_are_clear(spark, fitted):
    df = frame(spark, TEXTS[:10])
    with pytest.raises(InputError, match="text_col='body' is not a column"):
        SparkBloomSpan().fit(df, text_col="body")
    with pytest.raises(InputError, match="column 'extra' has type bigint, expected string"):
        SparkBloomSpan().fit(df, text_col="extra")
    with pytest.raises(ParameterError, match="sigma"):
        SparkBloomSpan(sigma=1).fit(df)
    with pytest.raises(ParameterError, match="window_cap"):
        SparkBloomSpan(window_cap=0).fit(df)
    with pytest.raises(InputError, match="cannot read documents from int"):
        SparkBloomSpan().fit(42)
    with pytest.raises(NotFittedError, match="call fit"):
        SparkBloomSpan().coverage(df)
    with pytest.raises(ParameterError, match="mode must be one of"):
        fitted.clean(df, mode="erase")
    assert not hasattr(SparkBloomSpan(), "phrases_")
    assert SparkBloomSpan(sigma=3).get_params()["sigma"] == 3
