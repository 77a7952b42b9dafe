import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.dedup.bloom import (
    BloomFilter,
    bloom_positions,
    bloom_size,
    key_fp_prob,
    predicted_fp,
)
from corpus_miner.errors import FormatError, ParameterError
from corpus_miner.io.artefact import metadata_checksum

from . import reference as ref

keys_strategy = st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=200)


@settings(max_examples=40, deadline=None)
@given(keys_strategy, st.integers(1, 5000), st.integers(1, 12))
def test_positions_equal_reference(keys, num_bits, num_hashes):
    got = bloom_positions(np.array(keys, np.uint64), num_bits, num_hashes)
    assert got.tolist() == [ref.bloom_positions(k, num_bits, num_hashes) for k in keys]


@settings(max_examples=60, deadline=None)
@given(keys_strategy, st.integers(8, 4000), st.integers(1, 10))
def test_no_false_negatives_and_bits_match_positions(keys, num_bits, num_hashes):
    bloom = BloomFilter(num_bits, num_hashes)
    bloom.add(np.array(keys, np.uint64))
    assert bloom.contains(np.array(keys, np.uint64)).all()
    expected = np.zeros(num_bits, np.uint8)
    for k in keys:
        expected[ref.bloom_positions(k, num_bits, num_hashes)] = 1
    assert np.array_equal(np.unpackbits(bloom.bits, bitorder="little")[:num_bits], expected)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=60), st.integers(8, 600),
       st.integers(1, 6), st.data())
def test_add_counting_marks_positions_hit_twice(keys, num_bits, num_hashes, data):
    """`twice` = exactly the positions hit by two or more insertions; a repeated key is in it."""
    keys = keys + data.draw(st.lists(st.sampled_from(keys), max_size=10))  # some keys twice
    bloom, twice = BloomFilter(num_bits, num_hashes), BloomFilter(num_bits, num_hashes)
    bloom.add_counting(np.array(keys, np.uint64), twice)
    hits = np.zeros(num_bits, np.int64)
    for k in keys:
        for position in ref.bloom_positions(k, num_bits, num_hashes):
            hits[position] += 1
    assert np.array_equal(np.unpackbits(twice.bits, bitorder="little")[:num_bits], hits >= 2)
    plain = BloomFilter(num_bits, num_hashes)
    plain.add(np.array(keys, np.uint64))
    assert bloom == plain
    repeated = [k for k in set(keys) if keys.count(k) > 1]
    assert twice.contains(np.array(repeated, np.uint64)).all()


def test_sizing_formula():
    assert math.isclose(key_fp_prob(0.01, 10), 1 - 0.99 ** 0.1)
    num_bits, num_hashes = bloom_size(1000, 0.001)
    assert num_bits == math.ceil(-1000 * math.log(0.001) / math.log(2) ** 2)
    assert num_hashes == 10
    with pytest.raises(ParameterError):
        key_fp_prob(1.0, 3)
    with pytest.raises(ParameterError):
        bloom_size(0, 0.01)


@pytest.mark.parametrize("doc_fp", [0.2, 0.05, 0.01])
def test_measured_per_document_fp_rate_matches_configuration(doc_fp):
    rng = np.random.default_rng(5)
    bands, n_docs = 13, 20_000
    bloom = BloomFilter.for_documents(n_docs, bands, doc_fp)
    bloom.add(rng.integers(0, 2**64 - 1, size=(n_docs, bands), dtype=np.uint64, endpoint=True))
    queries = rng.integers(0, 2**64 - 1, size=(100_000, bands), dtype=np.uint64, endpoint=True)
    measured = bloom.contains_any(queries).mean()
    key_rate = predicted_fp(bloom.num_bits, bloom.num_hashes, n_docs * bands)
    predicted = 1 - (1 - key_rate) ** bands
    assert doc_fp / 2 <= measured <= doc_fp * 2
    assert abs(measured - predicted) < 5 * math.sqrt(predicted / 100_000) + 0.1 * predicted


def test_default_rate_makes_false_removal_unlikely_on_ten_thousand_documents():
    rng = np.random.default_rng(9)
    bands = 13
    bloom = BloomFilter.for_documents(10_000, bands, 1e-5)
    bloom.add(rng.integers(0, 2**64 - 1, size=(10_000, bands), dtype=np.uint64, endpoint=True))
    queries = rng.integers(0, 2**64 - 1, size=(300_000, bands), dtype=np.uint64, endpoint=True)
    assert bloom.contains_any(queries).sum() <= 12  # expected 3 at 1e-5 per document


def test_query_then_insert_flags_only_repeated_keys():
    bloom = BloomFilter.for_documents(10, 2, 1e-6)
    keys = np.array([[1, 2], [3, 4], [5, 2], [1, 9], [7, 8]], np.uint64)
    assert bloom.query_then_insert(keys).tolist() == [False, False, True, True, False]


def test_merge_is_union_and_refuses_other_shapes():
    rng = np.random.default_rng(2)
    a_keys, b_keys = rng.integers(0, 2**63, (2, 500), dtype=np.uint64)
    a, b, both = (BloomFilter(20_000, 5) for _ in range(3))
    a.add(a_keys)
    b.add(b_keys)
    both.add(np.concatenate([a_keys, b_keys]))
    assert a.merge(b) == both == (b | a)
    with pytest.raises(ParameterError, match="different shapes"):
        a.merge(BloomFilter(20_000, 6))
    with pytest.raises(ParameterError, match="different shapes"):
        a.merge(BloomFilter(20_001, 5))


def test_metadata_and_bad_construction():
    bloom = BloomFilter(1000, 3)
    bloom.add(np.arange(10, dtype=np.uint64))
    meta = bloom.metadata()
    assert meta["num_bits"] == 1000 and meta["num_hashes"] == 3 and 0 < meta["bits_set"] <= 30
    with pytest.raises(ParameterError):
        BloomFilter(0, 3)
    with pytest.raises(ParameterError):
        BloomFilter(100, 0)
    with pytest.raises(ParameterError):
        BloomFilter(100, 3, np.zeros(3, np.uint8))


def test_save_load_round_trip_and_corruption(tmp_path):
    bloom = BloomFilter(10_001, 4)
    bloom.add(np.arange(1000, dtype=np.uint64) * np.uint64(7919))
    bloom.save(tmp_path / "f")
    assert BloomFilter.load(tmp_path / "f") == bloom
    assert not list(tmp_path.glob(".*"))  # no temporaries left behind

    bits = tmp_path / "f" / "bits.bin"
    raw = bytearray(bits.read_bytes())
    raw[5] ^= 0xFF
    bits.write_bytes(bytes(raw))
    with pytest.raises(FormatError, match="checksum"):
        BloomFilter.load(tmp_path / "f")
    bits.write_bytes(bytes(raw[:100]))
    with pytest.raises(FormatError, match="bits.bin is truncated"):
        BloomFilter.load(tmp_path / "f")
    bits.unlink()
    with pytest.raises(FormatError, match="missing bits.bin"):
        BloomFilter.load(tmp_path / "f")


def test_foreign_or_broken_metadata_is_refused(tmp_path):
    BloomFilter(64, 2).save(tmp_path / "f")
    meta_path = tmp_path / "f" / "metadata.json"
    meta = json.loads(meta_path.read_text())
    with pytest.raises(FormatError, match="not a corpus-miner Bloom filter folder"):
        BloomFilter.load(tmp_path)
    meta_path.write_text(json.dumps(dict(meta, version=99)))
    with pytest.raises(FormatError, match="version 99"):
        BloomFilter.load(tmp_path / "f")
    meta_path.write_text(json.dumps(dict(meta, format="something-else")))
    with pytest.raises(FormatError, match="something-else"):
        BloomFilter.load(tmp_path / "f")
    meta_path.write_text("{not json")
    with pytest.raises(FormatError, match="unreadable or corrupt"):
        BloomFilter.load(tmp_path / "f")
    meta_path.write_text(json.dumps(dict(meta, num_bits=65)))
    with pytest.raises(FormatError, match="does not match its checksum"):
        BloomFilter.load(tmp_path / "f")
    forged = dict(meta, num_bits=65)
    meta_path.write_text(json.dumps(dict(forged, checksum=metadata_checksum(forged))))
    with pytest.raises(FormatError, match="bits must be uint8 of length 9"):
        BloomFilter.load(tmp_path / "f")
    version_1 = {k: v for k, v in meta.items() if k != "checksum"}
    meta_path.write_text(json.dumps(dict(version_1, version=1)))
    assert BloomFilter.load(tmp_path / "f") == BloomFilter(64, 2)  # the format before checksums


def test_sizing_caps_hashes_at_64_and_still_reaches_the_rate():
    """A tiny rate asked for more than 64 hash functions (and was reported as "num_hashes must be
    in [1, 64], got 1000"); 64 hashes with more bits reach it."""
    for key_fp in (1e-25, 1e-60, 1e-300):
        num_bits, num_hashes = bloom_size(1000, key_fp)
        assert num_hashes == 64
        assert predicted_fp(num_bits, num_hashes, 1000) <= key_fp * (1 + 1e-9)
    assert bloom_size(1000, 1e-18)[1] < 64  # below the cap: the optimal rule, unchanged


def test_a_filter_larger_than_memory_is_refused_before_allocating():
    with pytest.raises(ParameterError, match="does not fit in this machine's .* of memory; lower "
                                             "expected_items"):
        BloomFilter.for_documents(10 ** 14, 13, 1e-5)
