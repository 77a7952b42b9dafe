"""deduplicate(update=True) and is_new, batch after batch (and across a save and load), against
one deduplicate() over everything."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.dedup import LSHBloom
from corpus_miner.errors import InputError, ParameterError

BASES = ["the quick brown fox jumps over the lazy dog near the river bank",
         "a completely different page about cooking pasta with tomato sauce",
         "weather report: sunny spells, light winds and a chance of rain later"]


@st.composite
def corpora(draw):
    texts = []
    for _ in range(draw(st.integers(1, 25))):
        base = draw(st.sampled_from(BASES + [""]))
        edit = draw(st.sampled_from(["", " again", " x", "!", " and more words here"]))
        texts.append(base + edit if draw(st.booleans()) else draw(st.text(max_size=30)))
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(texts) - 1)), max_size=4)))
    return texts, [c for c in cuts if c < len(texts)]


@settings(max_examples=40, deadline=None)
@given(corpora(), st.sampled_from(["lshbloom", "minhash_lsh"]), st.booleans())
def test_batches_answer_as_one_deduplicate(case, mode, reload):
    texts, cuts = case
    params = dict(threshold=0.5, num_perm=64, mode=mode, expected_items=100)
    ids = [f"d{i}" for i in range(len(texts))]
    whole = LSHBloom(**params).deduplicate(texts, ids)
    model = LSHBloom(**params)
    flags, matches = [], []
    bounds = [0, *cuts, len(texts)]
    for k, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        if reload and k == 1:  # a later run continues from the saved index
            import tempfile

            with tempfile.TemporaryDirectory() as tmp:
                model.save(tmp + "/index")
                model = LSHBloom.load(tmp + "/index")
        part = model.deduplicate(texts[lo:hi], ids[lo:hi], update=True)
        flags += part.is_duplicate.tolist()
        matches += part.duplicate_of_id or []
    assert flags == whole.is_duplicate.tolist()
    if mode == "minhash_lsh":
        assert matches == whole.duplicate_of_id
    assert model.n_documents_ == len(texts)


def test_is_new_takes_a_batch_of_columns_or_texts():
    model = LSHBloom(threshold=0.5, num_perm=64)
    batch = {"id": [1, 2, 3], "text": [BASES[0], BASES[0] + "!", None]}
    assert model.is_new(batch) == [True, False, True]
    assert model.is_new([BASES[1], BASES[0]]) == [True, False]
    assert model.is_new({"text": []}) == []
    with pytest.raises(InputError, match="no 'body' column"):
        model.is_new(batch, text_field="body")
    assert model.n_documents_ == 5


@settings(max_examples=25, deadline=None)
@given(corpora(), st.sampled_from(["lshbloom", "minhash_lsh"]))
def test_one_shot_unique_equals_update_on_an_empty_index(case, mode):
    """add="unique" means one rule with or without update: one-shot on a list is the same
    as continuing from nothing (fp_prob tiny, so the filter's size decides no flag)."""
    texts, cuts = case
    params = dict(threshold=0.5, num_perm=64, mode=mode, fp_prob=1e-9)
    one_shot = LSHBloom(**params).deduplicate(texts, add="unique")
    model = LSHBloom(**params)
    bounds = [0, *cuts, len(texts)]
    flags = [flag for lo, hi in zip(bounds, bounds[1:])
             for flag in model.deduplicate(texts[lo:hi], update=True, add="unique")
             .is_duplicate.tolist()]
    assert flags == one_shot.is_duplicate.tolist()
    streamed = LSHBloom(**params).deduplicate(iter(texts), add="unique")
    assert streamed.is_duplicate.tolist() == flags
    assert model.n_documents_ == len(texts) - sum(flags)


def test_one_shot_takes_the_parameters_set_since_the_last_fit():
    texts = [BASES[0], BASES[0] + "!", BASES[1]]
    model = LSHBloom(threshold=0.5, num_perm=64).fit(BASES)
    model.set_params(num_perm=32, num_bands=8)
    again = model.deduplicate(texts).is_duplicate.tolist()
    assert again == LSHBloom(threshold=0.5, num_perm=32, num_bands=8).deduplicate(
        texts).is_duplicate.tolist()
    assert (model.bands_, model.rows_) == (8, 4)
    assert model.fit(texts).bands_ == 8


def test_add_must_be_all_or_unique():
    with pytest.raises(ParameterError, match="add must be 'all' or 'unique', got 'some'"):
        LSHBloom(num_perm=64).deduplicate(BASES, update=True, add="some")
