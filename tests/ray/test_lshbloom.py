"""RayLSHBloom (issue 27) against the local LSHBloom: for snapshots cut anywhere into blocks
anywhere, deduplicate (one-shot and update=True, both `add` rules), fit, partial_fit and query
give the local engine's flags and, byte for byte, its index, both modes; a task that dies once
changes nothing; the index folder goes both ways."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus_miner.dedup import LSHBloom
from corpus_miner.errors import ParameterError
from tests.spark.corpus import planted_corpus

pytest.importorskip("ray")
pytestmark = pytest.mark.filterwarnings(r"ignore:::ray\.data\.context")

from corpus_miner.ray import RayLSHBloom  # noqa: E402

IDS, TEXTS, IS_COPY = planted_corpus()
N = 70  # the first rows: copies of earlier rows among them
PARAMS = dict(num_perm=64, expected_items=8)  # a small first layer: layers grow


def _blocks(ray, start: int, stop: int, cuts: list[int]) -> list:
    """Rows start..stop-1 as object refs of Arrow tables cut at `cuts` (empty blocks too)."""
    bounds = [start, *sorted(min(max(c, start), stop) for c in cuts), stop]
    return [ray.put(pa.table({"id": IDS[a:b], "text": TEXTS[a:b]}))
            for a, b in zip(bounds, bounds[1:])]


def _same_index(found: RayLSHBloom, local: LSHBloom) -> bool:
    a, b = found.to_local(), local
    if a.n_documents_ != b.n_documents_ or a.params_ != b.params_:
        return False
    if a.mode_ == "lshbloom":
        return a.index_ == b.index_
    (ka, da), (kb, db) = a.index_.items(), b.index_.items()
    return bool((ka == kb).all() and (da == db).all() and a.ids_.equals(b.ids_))


def _flags(dataset) -> tuple[list, list | None]:
    rows = dataset.take_all()
    named = [r["duplicate_of"] for r in rows] if rows and "duplicate_of" in rows[0] else None
    return [r["is_duplicate"] for r in rows], named


@pytest.mark.parametrize("mode, add", [("lshbloom", "all"), ("minhash_lsh", "all"),
                                       ("lshbloom", "unique"), ("minhash_lsh", "unique")])
@settings(max_examples=2, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(snapshots=st.lists(st.integers(1, N - 1), max_size=2, unique=True),
       blocks=st.lists(st.integers(0, N), max_size=4))
def test_snapshots_on_ray_equal_the_local_engine(ray_cluster, mode, add, snapshots, blocks):
    bounds = [0, *sorted(snapshots), N]
    on_ray = RayLSHBloom(mode=mode, in_flight=2, **PARAMS)
    local = LSHBloom(mode=mode, **PARAMS)
    for a, b in zip(bounds, bounds[1:]):
        found = on_ray.deduplicate(_blocks(ray_cluster, a, b, blocks), annotate=True,
                                   update=True, add=add)
        expected = local.deduplicate(TEXTS[a:b], IDS[a:b], update=True, add=add)
        flags, named = _flags(found)
        assert flags == expected.is_duplicate.tolist()
        assert named == (expected.duplicate_of_id if mode == "minhash_lsh" else None)
        assert _same_index(on_ray, local)
    assert local.n_documents_ > 0


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
@settings(max_examples=2, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blocks=st.lists(st.integers(0, N), max_size=4), cut=st.integers(0, N))
def test_one_shot_fit_partial_fit_and_query_equal_the_local_engine(ray_cluster, mode, blocks,
                                                                   cut):
    local = LSHBloom(mode=mode, num_perm=64)
    expected = local.deduplicate(TEXTS[:N], IDS[:N])
    on_ray = RayLSHBloom(mode=mode, num_perm=64)
    flags, _ = _flags(on_ray.deduplicate(_blocks(ray_cluster, 0, N, blocks), annotate=True))
    assert flags == expected.is_duplicate.tolist() and _same_index(on_ray, local)
    unique = on_ray.deduplicate(_blocks(ray_cluster, 0, N, blocks)).take_all()
    assert [r["id"] for r in unique] == [i for i, d in zip(IDS, expected.is_duplicate) if not d]

    fitted = RayLSHBloom(mode=mode, num_perm=64).fit(_blocks(ray_cluster, 0, cut, blocks))
    local_fit = LSHBloom(mode=mode, num_perm=64).fit(TEXTS[:cut], IDS[:cut])
    assert _same_index(fitted, local_fit) if cut else not fitted.n_documents_
    grown = RayLSHBloom(mode=mode, **PARAMS).partial_fit(_blocks(ray_cluster, 0, cut, blocks))
    grown.partial_fit(_blocks(ray_cluster, cut, N, blocks))
    local_grown = LSHBloom(mode=mode, **PARAMS).partial_fit(TEXTS[:cut], IDS[:cut])
    assert _same_index(grown, local_grown.partial_fit(TEXTS[cut:N], IDS[cut:N]))

    asked = TEXTS[N - 20:]  # indexed documents and new ones
    answer = grown.query(ray_cluster.data.from_arrow(pa.table({"text": asked})),
                         return_band_keys=True).take_all()
    wanted = local_grown.query(asked, return_band_keys=True)
    assert [r["is_duplicate"] for r in answer] == wanted.is_duplicate.tolist()
    assert np.array([r["band_keys"] for r in answer]).view(np.uint64).tolist() \
        == wanted.band_keys.tolist()
    if mode == "minhash_lsh":
        assert [r["duplicate_of"] for r in answer] == wanted.duplicate_of_id
    assert any(wanted.is_duplicate) and not all(wanted.is_duplicate)


def crashing_once(marker: str):
    """A map_batches function whose first call, over the whole cluster, kills its worker."""
    def passing(batch: pa.Table) -> pa.Table:
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return batch
        os._exit(1)

    return passing


def test_a_task_that_dies_once_gives_the_same_flags_and_index(ray_cluster, tmp_path):
    table = pa.table({"id": IDS[:N], "text": TEXTS[:N]})
    marker = str(tmp_path / "crashed")
    ds = ray_cluster.data.from_arrow([table.slice(0, 30), table.slice(30)]) \
        .map_batches(crashing_once(marker), batch_format="pyarrow", batch_size=None)
    on_ray = RayLSHBloom(mode="minhash_lsh", num_perm=64)
    flags, named = _flags(on_ray.deduplicate(ds, annotate=True))
    assert os.path.exists(marker)  # a worker died
    local = LSHBloom(mode="minhash_lsh", num_perm=64)
    expected = local.deduplicate(TEXTS[:N], IDS[:N])
    assert flags == expected.is_duplicate.tolist() and named == expected.duplicate_of_id
    assert _same_index(on_ray, local) and sum(flags) > 5


def test_index_folders_go_both_ways_and_parameters_are_checked(ray_cluster, tmp_path):
    local = LSHBloom(**PARAMS)
    local.deduplicate(TEXTS[:30], IDS[:30], update=True)
    local.save(tmp_path / "index")
    on_ray = RayLSHBloom.load(tmp_path / "index")
    flags, _ = _flags(on_ray.deduplicate(_blocks(ray_cluster, 30, N, [50]), annotate=True,
                                         update=True))
    assert flags == local.deduplicate(TEXTS[30:N], IDS[30:N], update=True).is_duplicate.tolist()
    on_ray.save(tmp_path / "index")
    assert LSHBloom.load(tmp_path / "index").index_ == local.index_
    first = RayLSHBloom(mode="minhash_lsh", num_perm=64).fit(_blocks(ray_cluster, 0, 10, [4]))
    merged = first.merge(LSHBloom(mode="minhash_lsh", num_perm=64).fit(TEXTS[10:N], IDS[10:N]))
    whole = LSHBloom(mode="minhash_lsh", num_perm=64).fit(TEXTS[:N], IDS[:N])
    assert _same_index(merged, whole) and merged.metadata()["n_documents"] == N
    with pytest.raises(ParameterError, match="other parameters than the fitted index's"):
        on_ray.set_params(seed=2).deduplicate(_blocks(ray_cluster, 0, 5, []), update=True)
    with pytest.raises(ParameterError, match="add must be 'all' or 'unique'"):
        RayLSHBloom().deduplicate(_blocks(ray_cluster, 0, 5, []), add="some")
    with pytest.raises(ParameterError, match="in_flight"):
        RayLSHBloom(in_flight=0).fit(_blocks(ray_cluster, 0, 5, []))
