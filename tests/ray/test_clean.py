"""A PhraseCleaner inside Ray Data's map_batches (the guide's recipe) cleans as it does in
process: the same texts, rows over drop_above left out."""

from __future__ import annotations

import pytest

from corpus_miner.coverage import PhraseCleaner
from tests.integrations.corpora import pages

pytest.importorskip("ray")
pytestmark = pytest.mark.filterwarnings(r"ignore:::ray\.data\.context")

PHRASES = ["accept all cookies? we use cookies to improve your experience",
           "home | news | sport | weather © 2024 example media"]


@pytest.mark.parametrize("drop_above", [None, 0.1])
def test_map_batches_clean_batch(ray_cluster, drop_above):
    rows = [{"id": r["id"], "text": r["text"]} for r in pages(12, 40, 0, blanks=False)]
    cleaner = PhraseCleaner(PHRASES, drop_above=drop_above)
    ds = ray_cluster.data.from_items(rows).map_batches(cleaner.clean_batch,
                                                       batch_format="numpy", batch_size=7)
    got = {r["id"]: r["text"] for r in ds.take_all()}
    result = cleaner.clean_arrow([r["text"] for r in rows])
    want = {r["id"]: text for r, text, keep in zip(rows, result.texts.to_pylist(), result.keep)
            if keep}
    assert got == want
    assert (len(want) < len(rows)) == (drop_above is not None)
    assert sum(result.handled) > 0
