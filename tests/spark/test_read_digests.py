"""The texts digest of Spark's read of the inputs is taken as the executors read them (issue 22):
a unit read again by a later job (no cache, or a recomputed task) that gives other texts is
refused, and the driver's second read is checked against what the executors read, not against
a digest job of its own that may read the file as it is later."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("pyspark")

from corpus_miner.errors import InputError  # noqa: E402
from corpus_miner.io import read_documents  # noqa: E402
from corpus_miner.io.digest import OrderedDigest, checked_reread  # noqa: E402
from corpus_miner.spark.documents import documents_frame, read_digests  # noqa: E402

BANNER = "we use cookies to improve your experience by using this site you accept our policy"


def _lines(n: int, tag: str, word: str = "page") -> str:
    return "".join(json.dumps({"id": f"{tag}{i}", "text": f"{BANNER} {tag} {word} {i} of {i * 7}"})
                   + "\n" for i in range(n))


def _replace(path, content: str) -> None:
    fresh = path.with_name(".fresh")
    fresh.write_text(content, encoding="utf-8")
    os.replace(fresh, path)


@pytest.fixture
def inputs(tmp_path):
    a, b, empty = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    a.write_text(_lines(30, "a"), encoding="utf-8")
    b.write_text(_lines(20, "b"), encoding="utf-8")
    empty.write_text("", encoding="utf-8")
    return [a, empty, b]


def test_the_executors_digests_check_the_drivers_read(spark, inputs):
    """What the driver reads of unchanged inputs passes against the executors' digests (an
    empty unit between two others included); the per-unit digests are each file's own."""
    docs = documents_frame(spark, inputs, digested=True)
    assert docs.count() == 50
    digests = read_digests(docs, "clean")
    for path, state in zip(inputs, digests.states, strict=True):
        own = OrderedDigest()
        for batch in read_documents([path]):
            own.update(batch.texts, own.documents)
        assert state == own.state()
    assert sum(len(b) for b in checked_reread(read_documents(inputs), digests, "clean")) == 50
    _replace(inputs[0], _lines(30, "a", "other"))
    with pytest.raises(InputError, match="changed between clean's two reads"):
        list(checked_reread(read_documents(inputs), digests, "clean"))


def test_a_unit_that_gives_other_texts_on_a_later_read_is_refused(spark, inputs):
    """Two jobs over a frame that is not cached read every file twice: a file replaced between
    them is refused, though the driver's read would agree with the second job's."""
    docs = documents_frame(spark, inputs, digested=True)
    assert docs.count() == 50
    _replace(inputs[0], _lines(30, "a", "other"))
    assert docs.count() == 50
    with pytest.raises(InputError, match=r"changed while dedup read them \(.*a\.jsonl"):
        read_digests(docs, "dedup")


def test_an_undigested_frame_has_no_digests_to_give(spark, inputs):
    docs = documents_frame(spark, inputs)
    assert docs.count() == 50
    with pytest.raises(ValueError, match="digested=True"):
        read_digests(docs, "clean")
