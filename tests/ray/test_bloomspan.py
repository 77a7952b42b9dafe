"""RayBloomSpan on a local Ray cluster against the local engine: any number of blocks, window
cap, bucket count and salting gives BloomSpan's phrases in the same canonical order."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus_miner.errors import InputError, ParameterError
from tests.phrases.corpora import small_corpora
from tests.phrases.passages import shared_passage_texts
from tests.phrases.test_distributed import as_texts, local_rows

pytest.importorskip("ray")
# Ray Data's context warns about its own deprecated defaults as it starts (ray 2.60)
pytestmark = pytest.mark.filterwarnings(r"ignore:::ray\.data\.context")

from corpus_miner.ray import RayBloomSpan  # noqa: E402


def blocks(texts: list[str], n: int) -> list[pa.Array]:
    """Documents dealt round-robin to n blocks (some may be empty)."""
    return [pa.array(texts[i::n], pa.string()) for i in range(n)]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_corpora(), st.sampled_from([1, 2, 5, 50]), st.sampled_from([1, 2, 1024]),
       st.sampled_from([1, 3]), st.sampled_from([2, 10**9]))
def test_any_blocks_give_the_local_answer(ray_cluster, case, n_blocks, cap, buckets, salt):
    docs, sigma, min_length = case
    texts = as_texts(docs)
    miner = RayBloomSpan(sigma=sigma, min_length=min_length, window_cap=cap, buckets=buckets,
                         salt_threshold=salt).fit(blocks(texts, min(n_blocks, len(texts))))
    assert list(miner.phrases_.rows()) == local_rows(texts, sigma, min_length)


def test_long_passages_run_many_rounds(ray_cluster):
    texts = shared_passage_texts()
    miner = RayBloomSpan(sigma=3, min_length=3, window_cap=16, buckets=3,
                         salt_threshold=4).fit(blocks(texts, 5))
    assert list(miner.phrases_.rows()) == local_rows(texts, 3, 3)
    assert miner.stats_["rounds"] >= 5


def test_a_ray_dataset_with_null_texts(ray_cluster):
    texts = ["cookie banner accept all", None, "cookie banner accept all now",
             "news: cookie banner accept all", ""]
    ds = ray_cluster.data.from_items([{"id": i, "text": t} for i, t in enumerate(texts)]
                                     ).repartition(2)
    miner = RayBloomSpan(sigma=3, min_length=2).fit(ds)
    assert list(miner.phrases_.rows()) == local_rows([t or "" for t in texts], 3, 2)
    assert [r["phrase"] for r in miner.phrases_.rows()] == ["cookie banner accept all"]
    with pytest.raises(InputError, match="no column 'body'"):
        RayBloomSpan(sigma=3, min_length=2).fit(ds, text_col="body")


def test_bad_input_and_parameters_fail_in_one_line(ray_cluster):
    with pytest.raises(InputError, match="pages.jsonl: no such file"):
        RayBloomSpan().fit("pages.jsonl")
    with pytest.raises(InputError, match="not a mix"):
        RayBloomSpan().fit([pa.array(["a b c"]), "a b c"])
    with pytest.raises(InputError, match="cannot read documents from int"):
        RayBloomSpan().fit(3)
    with pytest.raises(ParameterError, match="window_cap"):
        RayBloomSpan(window_cap=0).fit([pa.array(["a"])])
    with pytest.raises(ParameterError):
        RayBloomSpan(sigma=0).fit([pa.array(["a"])])
