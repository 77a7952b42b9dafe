import dataclasses
import json
import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.dedup import LSHBloom, LSHBloomParams
from corpus_miner.errors import FormatError, InputError, NotFittedError, ParameterError

from . import reference as ref

WORDS = [f"w{i:03d}x" for i in range(400)]


def make_corpus(n_base=40, seed=0):
    """Random documents plus edited copies (few substitutions: Jaccard well above 0.85)."""
    rng = np.random.default_rng(seed)
    base = [" ".join(rng.choice(WORDS, 150)) for _ in range(n_base)]
    texts = []
    for i, doc in enumerate(base):
        texts.append(doc)
        if i % 3 == 0:
            words = doc.split()
            words[int(rng.integers(len(words)))] = "changed"
            texts.append(" ".join(words))
        if i % 5 == 0:
            texts.append(doc.upper())  # same after normalisation
    return texts


@pytest.mark.parametrize("kwargs,match", [
    ({"threshold": 0.0}, "threshold"), ({"threshold": 1.0}, "threshold"),
    ({"threshold": float("nan")}, "threshold"), ({"num_perm": 0}, "num_perm"),
    ({"num_bands": 300}, "num_bands"), ({"num_bands": 0}, "num_bands"),
    ({"fp_prob": 0.0}, "fp_prob"), ({"fp_prob": 1.5}, "fp_prob"), ({"mode": "exact"}, "mode"),
    ({"sketch": "simhash"}, "sketch"), ({"shingle_size": 0}, "shingle_size"),
    ({"expected_items": 0}, "expected_items"), ({"max_shingles": 0}, "max_shingles"),
    ({"seed": -1}, "seed"), ({"shingle_kind": "line"}, "shingle_kind"),
    ({"num_perm": 2.5}, "num_perm"),
])
def test_bad_parameters_get_clear_errors_at_fit(kwargs, match):
    model = LSHBloom(**kwargs)  # __init__ only stores
    with pytest.raises(ParameterError, match=match):
        model.fit(["some text"])


def test_aliases_and_params_dataclass():
    assert LSHBloom(mode="bloom").fit(["a"]).mode_ == "lshbloom"
    assert LSHBloom(mode="bloom_filter").fit(["a"]).mode_ == "lshbloom"
    assert LSHBloom(mode="banding").fit(["a"]).mode_ == "minhash_lsh"
    params = LSHBloom(threshold=0.7).params
    assert isinstance(params, LSHBloomParams) and params.threshold == 0.7
    with pytest.raises(dataclasses.FrozenInstanceError):
        params.threshold = 0.5  # frozen


def test_not_fitted_errors():
    model = LSHBloom()
    for call in (lambda: model.query(["a"]).is_duplicate, lambda: model.save("x"), model.metadata):
        with pytest.raises(NotFittedError, match="fit"):
            call()


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
@pytest.mark.parametrize("sketch", ["minhash", "oph"])
def test_deduplicate_follows_the_rule_including_in_batch(mode, sketch):
    texts = make_corpus()
    ids = [f"doc{i}" for i in range(len(texts))]
    model = LSHBloom(mode=mode, sketch=sketch, num_perm=64, threshold=0.8, fp_prob=1e-9)
    result = model.deduplicate(texts, ids)
    is_dup, dup_of = ref.dedup_rule(model._band_keys(texts).tolist())
    assert result.is_duplicate.tolist() == is_dup
    assert sum(is_dup) >= 20  # every planted copy (14 edited + 8 uppercase) is in one batch
    if mode == "minhash_lsh":
        assert result.duplicate_of.tolist() == dup_of
        assert result.duplicate_of_id == [ids[d] if d >= 0 else None for d in dup_of]
    else:
        assert result.duplicate_of is None


def test_originals_kept_copies_removed():
    texts = ["alpha beta gamma delta " * 20, "zeta eta theta iota " * 20,
             "ALPHA beta gamma delta " * 20]
    result = LSHBloom(num_perm=64).deduplicate(texts)
    assert result.is_duplicate.tolist() == [False, False, True]
    assert result.unique_indices().tolist() == [0, 1]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["aaaa bbbb", "cccc dddd", "aaaa bbbc", "", "eeee"]), max_size=12),
       st.sampled_from(["lshbloom", "minhash_lsh"]))
def test_rule_on_tiny_inputs(texts, mode):
    model = LSHBloom(mode=mode, num_perm=16, threshold=0.5, fp_prob=1e-9)
    result = model.deduplicate(texts)
    assert result.is_duplicate.tolist() == ref.dedup_rule(model._band_keys(texts).tolist())[0]


def test_lshbloom_agrees_with_minhash_lsh_except_bloom_false_positives():
    texts = make_corpus(n_base=200, seed=4)
    exact = LSHBloom(mode="minhash_lsh", num_perm=64).deduplicate(texts).is_duplicate
    strict = LSHBloom(num_perm=64).deduplicate(texts).is_duplicate
    assert np.array_equal(strict, exact)
    loose = LSHBloom(num_perm=64, fp_prob=0.3).deduplicate(texts).is_duplicate
    assert (loose >= exact).all()  # Bloom can only add (false) duplicates, never miss one


def test_result_independent_of_batching():
    texts = make_corpus(seed=2)
    for mode in ("lshbloom", "minhash_lsh"):
        whole = LSHBloom(mode=mode, num_perm=64, expected_items=len(texts)).deduplicate(texts)
        stream = LSHBloom(mode=mode, num_perm=64, expected_items=len(texts))
        parts = [stream.deduplicate(texts[i:i + 7], update=True)
                 for i in range(0, len(texts), 7)]
        streamed = np.concatenate([p.is_duplicate for p in parts])
        assert streamed.tolist() == whole.is_duplicate.tolist()


def test_streams_need_no_expected_items_and_equal_the_batch_answer():
    """Without a count the filter starts at a default capacity and grows; the flags are those of
    the exact band table (no false positive at fp_prob=1e-9)."""
    texts = make_corpus(seed=2)
    stream = LSHBloom(num_perm=64, fp_prob=1e-9, expected_items=5)
    parts = [stream.deduplicate(texts[i:i + 7], update=True) for i in range(0, len(texts), 7)]
    exact = LSHBloom(mode="minhash_lsh", num_perm=64).deduplicate(texts).is_duplicate
    assert np.concatenate([p.is_duplicate for p in parts]).tolist() == exact.tolist()
    assert len(stream.index_.layers) > 1 and stream.n_documents_ == len(texts)
    assert LSHBloom().partial_fit(["a"]).n_documents_ == 1


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
def test_fit_transform_query_against_reference_only(mode):
    texts = make_corpus(seed=3)
    reference, new = texts[:30], texts[30:]
    model = LSHBloom(mode=mode, num_perm=64).fit(reference, ids=[f"r{i}" for i in range(30)])
    result = model.query(new, return_band_keys=True)
    is_dup, keys = result.is_duplicate, result.band_keys
    assert model.query(new).is_duplicate.tolist() == is_dup.tolist()  # transform: the flags alone
    ref_keys = set(model._band_keys(reference).ravel().tolist())
    expected = [bool(set(row) & ref_keys) for row in keys.tolist()]
    assert is_dup.tolist() == expected
    assert model.query(reference).is_duplicate.all()
    if mode == "minhash_lsh":
        first_doc = {}
        for d, row in enumerate(model._band_keys(reference).tolist()):
            for key in row:
                first_doc.setdefault(key, d)
        expected_of = [min([first_doc[k] for k in row if k in first_doc], default=-1)
                       for row in keys.tolist()]
        matched = model.query(new)
        assert matched.duplicate_of.tolist() == expected_of
        assert matched.duplicate_of_id == [f"r{d}" if d >= 0 else None for d in expected_of]
        assert model.query(reference[:2]).duplicate_of_id == ["r0", "r0"]  # doc 1 copies doc 0


def test_partial_fit_equals_fit():
    texts = make_corpus(seed=5)
    whole = LSHBloom(num_perm=64, expected_items=len(texts)).fit(texts)
    parts = LSHBloom(num_perm=64, expected_items=len(texts))
    parts.partial_fit(texts[:20]).partial_fit(texts[20:])
    assert parts.index_ == whole.index_ and parts.n_documents_ == len(texts)


def test_clusters_are_connected_components():
    texts = ["one two three four five six " * 5, "seven eight nine ten " * 8,
             "ONE two three four five six " * 5, "something else entirely, really " * 4,
             "Seven eight nine ten " * 8, "one  two three four five six " * 5]
    result = LSHBloom(mode="minhash_lsh", num_perm=64).deduplicate(texts)
    assert [c.tolist() for c in result.clusters()] == [[0, 2, 5], [1, 4]]
    assert result.duplicate_of.tolist() == [-1, -1, 0, -1, 1, 0]


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
def test_save_load_round_trip(tmp_path, mode):
    texts = make_corpus(seed=6)
    model = LSHBloom(mode=mode, num_perm=64, sketch="minhash", seed=9).fit(
        pa.array(texts), ids=pa.array([f"id{i}" for i in range(len(texts))]))
    model.save(tmp_path / "index")
    loaded = LSHBloom.load(tmp_path / "index")
    assert loaded.params_ == model.params_ and loaded.metadata() == model.metadata()
    probe = make_corpus(seed=7) + texts[:5]
    assert loaded.query(probe).is_duplicate.tolist() == model.query(probe).is_duplicate.tolist()
    if mode == "minhash_lsh":
        assert loaded.query(texts[:5]).duplicate_of_id == model.query(texts[:5]).duplicate_of_id


def test_corrupt_index_refused(tmp_path):
    LSHBloom(num_perm=32).fit(["a b c d e f g"]).save(tmp_path / "i")
    generation = tmp_path / "i" / "gen-000001"
    meta_path = generation / "metadata.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps(dict(meta, bands=meta["bands"] + 1)))
    with pytest.raises(FormatError, match="does not match its checksum"):
        LSHBloom.load(tmp_path / "i")
    meta_path.write_text(json.dumps(meta))
    (generation / "bloom_0.bin").write_bytes(b"\0" * 3)
    with pytest.raises(FormatError, match="bloom_0.bin is truncated"):
        LSHBloom.load(tmp_path / "i")
    with pytest.raises(FormatError, match="no metadata.json"):
        LSHBloom.load(tmp_path)


def test_ids_must_match_texts():
    with pytest.raises(InputError, match="ids"):
        LSHBloom(mode="minhash_lsh").deduplicate(["a", "b"], ids=["x"])


def test_partition_local_filters_merged_equal_a_local_fit(tmp_path):
    """What the Spark engine does: per-partition filters of the same plan, OR-merged."""
    from corpus_miner.dedup import LSHBloomState, ScalableBloomFilter, band_keys_for_texts
    from corpus_miner.dedup.bandtable import BandTable

    texts = make_corpus(seed=8)
    params = LSHBloomParams(num_perm=64, seed=5).validated()
    bands, _ = params.bands_rows
    parts = [texts[0::3], texts[1::3], texts[2::3]]
    merged = None
    for part in parts:
        local = ScalableBloomFilter(len(texts), params.fp_prob, bands)
        local.add(band_keys_for_texts(part, params))
        merged = local if merged is None else merged.merge(local)
    spark_like = LSHBloom.from_state(LSHBloomState(params, len(texts), bloom=merged))
    local_fit = LSHBloom(num_perm=64, seed=5).fit(texts)
    assert spark_like.index_ == local_fit.index_
    spark_like.save(tmp_path / "i")
    assert LSHBloom.load(tmp_path / "i").query(texts).is_duplicate.all()
    with pytest.raises(ParameterError, match="ScalableBloomFilter"):
        LSHBloomState(params, len(texts), band_table=BandTable())
    with pytest.raises(ParameterError, match="holds 0 documents"):
        LSHBloomState(params, len(texts),
                      bloom=ScalableBloomFilter(len(texts), params.fp_prob, bands))


def test_document_level_false_positive_rate_at_a_deliberately_high_fp_prob():
    """Through the whole pipeline, unique documents are flagged at the rate the filter's fill
    predicts, below fp_prob: 40,000 short documents fill a first layer (which gets half of
    fp_prob, the other half being kept for layers it may grow) past its 2^20-bit minimum."""
    rng = np.random.default_rng(12)
    vocabulary = np.array([f"v{i}" for i in range(50_000)])
    words = rng.choice(vocabulary, (44_000, 8))
    texts = [" ".join(row) for row in words.tolist()]  # mutually unique (checked below)
    reference, queries = texts[:40_000], texts[40_000:]
    exact = LSHBloom(mode="minhash_lsh", num_perm=32, threshold=0.8).fit(reference)
    unique = ~exact.query(queries).is_duplicate
    assert unique.sum() > 3900
    bloom = LSHBloom(num_perm=32, threshold=0.8, fp_prob=0.1).fit(reference)
    measured = bloom.query(queries).is_duplicate[unique].mean()
    (layer,) = bloom.index_.layers
    keys = len(reference) * bloom.bands_
    key_rate = (1 - math.exp(-layer.num_hashes * keys / layer.num_bits)) ** layer.num_hashes
    predicted = 1 - (1 - key_rate) ** bloom.bands_
    assert 0.02 < predicted <= 0.05
    assert abs(measured - predicted) < 4 * math.sqrt(predicted / unique.sum()), \
        (measured, predicted)


def test_numpy_scalar_parameters_are_accepted_and_saved_as_plain_numbers(tmp_path):
    # Parameter grids hand out numpy scalars; they were refused ("must be an integer, got
    # np.int64(128)") although BloomSpan takes them.
    import numpy as np

    texts = ["the same page of text", "the same page of text", "something else entirely"]
    model = LSHBloom(threshold=np.float32(0.5), num_perm=np.int64(64), num_bands=np.int32(16),
                     seed=np.uint8(3), shingle_size=np.int16(4)).fit(texts)
    plain = LSHBloom(threshold=0.5, num_perm=64, num_bands=16, seed=3, shingle_size=4).fit(texts)
    assert np.array_equal(model._band_keys(texts), plain._band_keys(texts))
    model.save(tmp_path / "index")  # json.dumps fails on numpy scalars
    assert LSHBloom.load(tmp_path / "index").params_.num_perm == 64
    with pytest.raises(ParameterError, match="num_perm"):
        LSHBloom(num_perm=np.float64(64)).fit(texts)


def test_a_single_string_is_refused_not_split_into_characters():
    with pytest.raises(InputError, match="sequence of documents, got one str"):
        LSHBloom().deduplicate("one document, not a list")
    with pytest.raises(InputError, match="sequence of documents"):
        LSHBloom().fit("abc")


def test_estimator_convention():
    model = LSHBloom(threshold=0.7, mode="bloom", expected_items=np.int64(5))
    assert model.get_params()["mode"] == "bloom" and model.expected_items == np.int64(5)
    assert repr(model) == "LSHBloom(threshold=0.7, mode='bloom', expected_items=np.int64(5))"
    assert not model.is_fitted() and not hasattr(model, "index_")
    with pytest.raises(NotFittedError, match=r"call fit\(\), deduplicate\(\) or LSHBloom.load"):
        model.bands_  # noqa: B018
    model.set_params(threshold=0.9).fit(["a b c", "d e f"])
    assert model.params_.threshold == 0.9 and model.params_.mode == model.mode_ == "lshbloom"
    assert model.threshold == 0.9 and model.n_documents_ == 2 and model.ids_ is None
    model.set_params(mode="banding").fit(["x"])  # refitting replaces every learned attribute
    assert model.mode_ == "minhash_lsh" and model.ids_.to_pylist() == [0]
    with pytest.raises(ParameterError, match="no parameter 'colour'"):
        model.set_params(colour="red")


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
def test_generators_are_read_once_in_batches_and_give_the_list_answer(mode, monkeypatch):
    import corpus_miner.dedup.lshbloom as lshbloom

    monkeypatch.setattr(lshbloom, "STREAM_BATCH", 7)
    texts = make_corpus(seed=21)
    ids = [f"g{i}" for i in range(len(texts))]
    listed = LSHBloom(mode=mode, num_perm=64, fp_prob=1e-9).deduplicate(texts, ids)
    streamed = LSHBloom(mode=mode, num_perm=64, fp_prob=1e-9, expected_items=4)
    result = streamed.deduplicate((t for t in texts), (i for i in ids))
    assert result.is_duplicate.tolist() == listed.is_duplicate.tolist()
    if mode == "minhash_lsh":
        assert result.duplicate_of_id == listed.duplicate_of_id
        assert [c.tolist() for c in result.clusters()] == [c.tolist() for c in listed.clusters()]
    else:
        assert len(streamed.index_.layers) > 1
    fitted = LSHBloom(mode=mode, num_perm=64).fit(iter(texts[:30]), iter(ids[:30]))
    assert fitted.n_documents_ == 30
    probe = iter(texts[25:40])
    assert fitted.query(probe).is_duplicate.tolist() == \
        fitted.query(texts[25:40]).is_duplicate.tolist()
    assert len(fitted.query(iter([]), return_band_keys=True).band_keys) == 0


def test_mixed_id_types_are_one_line_errors():
    with pytest.raises(InputError, match="ids must all have one type, got int, str"):
        LSHBloom(mode="minhash_lsh").deduplicate(["a b c d e", "f g h i j"], ids=[1, "b"])
    model = LSHBloom(mode="minhash_lsh").partial_fit(["a b c d e"], ids=["a"])
    with pytest.raises(InputError, match="ids of this batch are"):
        model.partial_fit(["f g h i j"], ids=[[1]])
    model.partial_fit(["k l m n o"], ids=pa.array(["c"], pa.large_string()))  # cast: same values
    assert model.ids_.to_pylist() == ["a", "c"]


def test_lone_surrogates_are_one_line_errors():
    """A lone surrogate (e.g. from a decoded UTF-16 fragment) cannot be UTF-8: a traceback
    before."""
    for call in (lambda: LSHBloom(num_perm=64).deduplicate(["fine", "broken \ud800 text"]),
                 lambda: LSHBloom(num_perm=64).fit(["a"]).query(["\udfff"]).is_duplicate):
        with pytest.raises(InputError, match="cannot be UTF-8 encoded"):
            call()


@pytest.mark.parametrize("call,message", [
    (lambda: LSHBloom().fit(None), "iterable of strings in input order, got NoneType"),
    (lambda: LSHBloom().deduplicate({"b", "a"}), "in input order, got set"),
    (lambda: LSHBloom().fit({"id": "text"}), "got dict"),
    (lambda: LSHBloom()._fit_keys([[1] * 13]), "uint64 array of shape"),
    (lambda: LSHBloom()._deduplicate_keys(np.ones((2, 13)) / 2), "got float64"),
    (lambda: LSHBloom(mode="minhash_lsh").fit(["a", "b"], ids=["x\ud800", "y"]),
     "not valid Unicode"),
    (lambda: LSHBloom(mode="minhash_lsh").fit(iter(["a", "b"]), iter(["x"])), "got 1 ids for 2"),
    (lambda: LSHBloom(mode="minhash_lsh").fit(iter(["a"]), iter(["x", "y"])),
     "more ids than texts"),
])
def test_hostile_api_inputs_are_one_line_errors(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_a_huge_expected_items_only_presizes_the_band_table_within_reason():
    """minhash_lsh pre-allocated expected_items x bands slots: 32 PiB for 10^14 documents."""
    model = LSHBloom(mode="minhash_lsh", expected_items=10**14).partial_fit(["a b c d e"] * 3)
    assert model.query(["a b c d e"]).duplicate_of.tolist() == [0]
