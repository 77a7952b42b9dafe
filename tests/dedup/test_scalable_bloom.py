"""ScalableBloomFilter: the false-positive promise holds however many documents come; layers are
determined by document ordinals (so batches do not matter and disjoint parts merge)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.dedup import BloomFilter, ScalableBloomFilter, bloom_size, key_fp_prob
from corpus_miner.dedup.scalable_bloom import layer_shape
from corpus_miner.errors import ParameterError

from . import reference as ref


def _random_keys(rng, n_docs, bands):
    return rng.integers(0, 2**64 - 1, size=(n_docs, bands), dtype=np.uint64, endpoint=True)


@pytest.mark.parametrize("fp_prob,capacity,n_docs", [(0.1, 50, 6_000), (0.02, 200, 2_000),
                                                      (0.1, 20_000, 6_000)])
def test_false_positive_rate_stays_below_fp_prob_whatever_the_fill(fp_prob, capacity, n_docs):
    """A filter sized for 200 documents took 2,000 and flagged 1,419 unique ones (fp_prob 1e-5).
    Growing by layers, unique documents stay below fp_prob: the measured rate is within three
    standard errors of at most fp_prob, and near the sum of the layers' rates as predicted from
    their fill."""
    rng = np.random.default_rng(7)
    bands = 9
    bloom = ScalableBloomFilter(capacity, fp_prob, bands)
    bloom.add(_random_keys(rng, n_docs, bands))
    assert bloom.n_documents == n_docs
    assert sum(bloom.rates) < fp_prob and bloom.rates[0] == fp_prob / 2
    queries = 200_000
    measured = bloom.contains_any(_random_keys(rng, queries, bands)).mean()
    assert measured <= fp_prob + 3 * math.sqrt(fp_prob / queries), measured
    per_layer = []
    for layer, documents in zip(bloom.layers, bloom.documents):
        key_rate = (1 - math.exp(-layer.num_hashes * documents * bands / layer.num_bits)) \
            ** layer.num_hashes
        per_layer.append(1 - (1 - key_rate) ** bands)
    predicted = 1 - math.prod(1 - rate for rate in per_layer)
    assert abs(measured - predicted) <= 5 * math.sqrt(predicted / queries) + 0.05 * predicted


def test_layers_double_capacity_and_halve_the_rate_left():
    bloom = ScalableBloomFilter(100, 1e-3, 4)
    bloom.add(np.arange(4 * 1000, dtype=np.uint64).reshape(1000, 4))
    assert bloom.documents == [100, 200, 400, 300]
    assert bloom.rates == [1e-3 / 2, 1e-3 / 4, 1e-3 / 8, 1e-3 / 16]
    for i, layer in enumerate(bloom.layers):
        assert (layer.num_bits, layer.num_hashes) == layer_shape(100 << i, bloom.rates[i], 4)
    assert bloom.num_bits == sum(layer.num_bits for layer in bloom.layers)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(0, 40), min_size=3, max_size=3), max_size=60),
       st.integers(1, 7), st.data())
def test_query_then_insert_follows_the_rule_and_batches_do_not_matter(rows, capacity, data):
    """A document is flagged when it shares a key with an earlier one (never missed; layers of a
    few documents can add a false positive); cutting the input into batches changes neither
    flags nor bits, and add() sets the same bits."""
    keys = np.array(rows, np.uint64).reshape(-1, 3)
    whole = ScalableBloomFilter(capacity, 1e-12, 3)
    flags = whole.query_then_insert(keys).tolist()
    rule = ref.dedup_rule(keys.tolist())[0]
    assert all(flag >= expected for flag, expected in zip(flags, rule))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(keys)), max_size=4)))
    parts = ScalableBloomFilter(capacity, 1e-12, 3)
    got = []
    for start, stop in zip([0, *cuts], [*cuts, len(keys)]):
        got += parts.query_then_insert(keys[start:stop]).tolist()
    assert got == flags and parts == whole
    added = ScalableBloomFilter(capacity, 1e-12, 3)
    added.add(keys)
    assert added == whole and (not len(keys) or added.contains_any(keys).all())
    roomy = ScalableBloomFilter(64, 1e-12, 3)  # one layer of thousands of bits: exact here
    assert roomy.query_then_insert(keys).tolist() == rule


def test_disjoint_parts_merge_layer_by_layer_and_overfilling_merges_are_refused():
    """Each document goes into the layer of its ordinal (here 0-99, 100-299, 300-699); filters
    of the even and of the odd documents, built layer by layer, merge into the whole."""
    rng = np.random.default_rng(3)
    keys = _random_keys(rng, 700, 5)
    whole = ScalableBloomFilter(100, 1e-4, 5)
    whole.add(keys)
    bounds = [0, 100, 300, 700]
    parts = []
    for offset in (0, 1):
        layers, documents = [], []
        for index, (start, stop) in enumerate(zip(bounds, bounds[1:])):
            layer = BloomFilter(*layer_shape(100 << index, whole.rates[index], 5))
            layer.add(keys[start + offset:stop:2])
            layers.append(layer)
            documents.append(len(keys[start + offset:stop:2]))
        parts.append(ScalableBloomFilter(100, 1e-4, 5, layers, documents, whole.rates[:3]))
    assert not parts[0].filled_in_order()
    assert (parts[0] | parts[1]) == whole and (parts[0] | parts[1]).filled_in_order()
    with pytest.raises(ParameterError, match="merging would put 200 documents in layer 0"):
        whole.merge(whole)
    with pytest.raises(ParameterError, match="other parameters"):
        whole.merge(ScalableBloomFilter(100, 1e-5, 5))


def test_restoring_checks_every_layer_against_its_plan():
    shape = layer_shape(10, 0.05, 2)
    ScalableBloomFilter(10, 0.1, 2, [BloomFilter(*shape)], [3], [0.05])
    with pytest.raises(ParameterError, match="layer 0 has"):
        ScalableBloomFilter(10, 0.1, 2, [BloomFilter(shape[0] + 8, shape[1])], [3], [0.05])
    with pytest.raises(ParameterError, match="holds 11 documents, its capacity is 10"):
        ScalableBloomFilter(10, 0.1, 2, [BloomFilter(*shape)], [11], [0.05])
    with pytest.raises(ParameterError, match="rate 0.2 is not the plan's 0.05"):
        ScalableBloomFilter(10, 0.1, 2, [BloomFilter(*layer_shape(10, 0.2, 2))], [3], [0.2])
    with pytest.raises(ParameterError, match="shape"):
        ScalableBloomFilter(10, 0.1, 2).add(np.zeros((3, 4), np.uint64))


def test_a_filter_with_its_whole_budget_used_refuses_to_grow():
    """An index of the first format used the whole fp_prob for its one filter: it can take the
    documents it was sized for, and refuses more instead of breaking the promise."""
    legacy_shape = bloom_size(4 * 2, key_fp_prob(0.01, 2))  # the plain rule, no prime, no floor
    full = ScalableBloomFilter(4, 0.01, 2, [BloomFilter(*legacy_shape)], [3], [0.01])
    full.add(np.arange(2, dtype=np.uint64).reshape(1, 2))
    with pytest.raises(ParameterError, match="no false-positive budget left to grow"):
        full.add(np.arange(2, dtype=np.uint64).reshape(1, 2))
