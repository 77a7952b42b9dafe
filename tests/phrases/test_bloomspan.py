"""mine_bloomspan against the brute-force oracle on many small corpora, plus known answers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus_miner.errors import InputError, ParameterError
from corpus_miner.phrases.bloomspan import KEY_LAYOUTS, default_filter_bytes, mine_bloomspan
from tests.helpers import as_arrays, examples, run_python, word_ids
from tests.phrases.oracle import brute_force_mcfp

ROOT = Path(__file__).resolve().parents[2]

TOY = ["new laptop acer swift free shipping on orders over 50 dollars",
       "case for iphone 15 free shipping on orders over 50 dollars",
       "free shipping on orders over 50 dollars sony headphones",
       "sony headphones wh 1000 free shipping"]


@st.composite
def planted_corpora(draw):
    """Tiny alphabets; templates planted whole, nested (a template inside another), overlapping
    (sharing a prefix/suffix), truncated, several times in one document, at document edges."""
    alphabet = draw(st.integers(1, 5))
    word = st.integers(0, alphabet - 1)
    base = draw(st.lists(st.lists(word, min_size=2, max_size=9), min_size=1, max_size=3))
    templates = list(base)
    for t in base:
        templates.append(t[1:-1] or t)                     # nested inside t
        templates.append(t[len(t) // 2:] + draw(st.lists(word, max_size=3)))  # overlaps t's end
    n_docs = draw(st.integers(1, 9))
    docs = []
    for _ in range(n_docs):
        doc = []
        for _ in range(draw(st.integers(0, 5))):
            if draw(st.booleans()):
                t = templates[draw(st.integers(0, len(templates) - 1))]
                cut = draw(st.integers(0, 1))
                doc += t[cut:] if draw(st.booleans()) else t
            else:
                doc += draw(st.lists(word, max_size=4))
        docs.append(doc)
    sigma = draw(st.integers(2, max(2, min(n_docs, 5))))
    min_length = draw(st.integers(2, 6))
    return docs, alphabet, sigma, min_length


@settings(max_examples=examples(500), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(planted_corpora(), st.sampled_from([None, 64, 128, 4096]), st.integers(1, 3),
       st.sampled_from(KEY_LAYOUTS))
def test_matches_brute_force(case, filter_bytes, num_hashes, key_layout):
    docs, alphabet, sigma, min_length = case
    tokens, offsets = as_arrays(docs)
    table, stats = mine_bloomspan(tokens, offsets, sigma, min_length,
                                  [str(i) for i in range(alphabet)], filter_bytes=filter_bytes,
                                  num_hashes=num_hashes, key_layout=key_layout)
    assert table.key_set() == brute_force_mcfp(docs, sigma, min_length)
    assert len(table.key_set()) == len(table)  # no phrase twice
    assert stats["phrases"] == len(table)


@settings(max_examples=400, deadline=None)
@given(planted_corpora())
def test_equals_fhk(case):
    from corpus_miner.phrases.exact import mine_fhk

    docs, alphabet, sigma, min_length = case
    tokens, offsets = as_arrays(docs)
    vocab = [str(i) for i in range(alphabet)]
    ours, _ = mine_bloomspan(tokens, offsets, sigma, min_length, vocab)
    theirs, _ = mine_fhk(tokens, offsets, sigma, min_length, vocab)
    assert ours.key_set() == theirs.key_set()
    assert list(ours.rows()) == list(theirs.rows())  # same canonical order too


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planted_corpora(), st.sampled_from(KEY_LAYOUTS))
def test_suffix_array_path_for_every_seed_matches_brute_force(case, key_layout):
    """With a zero growth budget every seed goes through seed_suffix_array: same answer, same
    coverage as the depth-first growth."""
    import corpus_miner.phrases.bloomspan as bloomspan

    docs, alphabet, sigma, min_length = case
    tokens, offsets = as_arrays(docs)
    vocab = [str(i) for i in range(alphabet)]
    grown, grown_stats = mine_bloomspan(tokens, offsets, sigma, min_length, vocab)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bloomspan, "GROWTH_BUDGET_PER_OCCURRENCE", 0)
        patch.setattr(bloomspan, "GROWTH_BUDGET_FLOOR", 0)
        table, stats = mine_bloomspan(tokens, offsets, sigma, min_length, vocab,
                                      key_layout=key_layout)
    assert table.key_set() == brute_force_mcfp(docs, sigma, min_length)
    assert list(table.rows()) == list(grown.rows())
    if "note" in stats:  # empty corpus or sigma above the document count: no growth at all
        return
    assert stats["covered_tokens"] == grown_stats["covered_tokens"]
    assert grown_stats["seeds_grown_by_suffix_array"] == 0
    assert stats["seeds_grown_by_suffix_array"] == stats["seeds"] - stats["seeds_left_pruned"] \
        - stats["seeds_skipped_by_mask"]


def test_article_toy_example():
    docs, vocab = word_ids(TOY)
    tokens, offsets = as_arrays(docs)
    table, stats = mine_bloomspan(tokens, offsets, 3, 2, vocab)
    assert list(table.rows()) == [{"phrase": "free shipping on orders over 50 dollars",
                                   "length": 7, "df": 3, "occurrences": 3}]
    # Psi order grows "free shipping" (df 4) first; the five inner seeds are in the same batch,
    # which sees no dead bits of its own finds (growth.py), and are left-pruned: "free" precedes
    # "shipping on" everywhere, and so on
    assert stats["seeds"] == 6 and stats["seeds_left_pruned"] == 5
    assert stats["covered_tokens"] == 21


def test_inner_seeds_of_an_earlier_batch_find_are_skipped_by_the_dead_mask(monkeypatch):
    """One seed per batch: the phrase found from "free shipping" ends before the window
    "50 dollars sony" (in fewer than sigma documents) or at a document end, so its inner
    positions are dead and the five inner seeds are skipped without growing."""
    import corpus_miner.phrases.growth as growth

    monkeypatch.setattr(growth, "SEEDS_PER_BATCH", 1)
    docs, vocab = word_ids(TOY)
    tokens, offsets = as_arrays(docs)
    table, stats = mine_bloomspan(tokens, offsets, 3, 2, vocab)
    assert len(table) == 1 and stats["seeds"] == 6 and stats["seeds_skipped_by_mask"] == 5


def test_synthetic1_known_answer():
    """The article's Synthetic 1 in miniature: unique background words, three phrases inserted
    into 3, 5 and 4 documents -> exactly those three phrases."""
    rng = np.random.default_rng(1)
    phrases = [("this is the first test sentence", 3), ("another unique phrase for testing", 5),
               ("a third sentence", 4)]
    n_docs, words_per_doc = 40, 200
    background = [[f"w{d}_{i}" for i in range(words_per_doc)] for d in range(n_docs)]
    for text, support in phrases:
        for d in rng.choice(n_docs, size=support, replace=False):
            at = int(rng.integers(0, len(background[d]) + 1))
            background[d][at:at] = text.split()
    docs, vocab = word_ids(" ".join(b) for b in background)
    tokens, offsets = as_arrays(docs)
    table, stats = mine_bloomspan(tokens, offsets, 3, 2, vocab)
    assert {(r["phrase"], r["df"]) for r in table.rows()} == {(t, s) for t, s in phrases}
    assert stats["share_after_word_filter"] < 0.01


def test_repeats_inside_one_document_do_not_count_as_support():
    docs = [[1, 2, 3] * 10, [1, 2, 3], [4, 5, 6]]
    tokens, offsets = as_arrays(docs)
    table, _ = mine_bloomspan(tokens, offsets, 2, 2, [str(i) for i in range(7)])
    assert table.key_set() == {((1, 2, 3), 2, 11)}


def test_sigma_above_documents_is_a_reported_empty_answer():
    docs, vocab = word_ids(TOY)
    tokens, offsets = as_arrays(docs)
    table, stats = mine_bloomspan(tokens, offsets, 5, 2, vocab)
    assert len(table) == 0 and "exceeds the 4 documents" in stats["note"]
    table, stats = mine_bloomspan(np.zeros(0, np.uint32), np.zeros(1, np.int64), 2, 2, [])
    assert len(table) == 0
    table, stats = mine_bloomspan(tokens, offsets, 2, 2**62, vocab)  # no window that long
    assert len(table) == 0 and "exceeds the longest document" in stats["note"]


def test_stats_are_complete_and_consistent():
    docs, vocab = word_ids(TOY * 3)
    tokens, offsets = as_arrays(docs)
    _, stats = mine_bloomspan(tokens, offsets, 3, 2, vocab)
    for key in ("tokens", "documents", "bigrams", "candidates_after_word_filter",
                "share_after_word_filter", "candidates_after_counting_filter",
                "share_after_counting_filter", "seeds", "seeds_skipped_by_mask",
                "seeds_left_pruned", "phrases", "peak_rss_mb", "seconds_total"):
        assert key in stats
    assert stats["bigrams"] >= stats["candidates_after_word_filter"] \
        >= stats["candidates_after_counting_filter"] >= stats["seed_occurrences"]
    assert set(stats["seconds"]) >= {"word_df", "counting_filter", "candidates", "exact_seeds",
                                     "psi_order", "growth", "output"}


@pytest.mark.parametrize("kwargs, message", [
    (dict(sigma=1), "sigma=1"), (dict(sigma=2.5), "sigma=2.5"),
    (dict(min_length=1), "min_length=1"),
    (dict(filter_bytes=10), "filter_bytes=10"), (dict(filter_bytes=1 << 40), "filter_bytes="),
    (dict(num_hashes=0), "num_hashes=0"), (dict(num_hashes=9), "num_hashes=9")])
def test_parameter_errors(kwargs, message):
    docs, vocab = word_ids(TOY)
    tokens, offsets = as_arrays(docs)
    args = dict(sigma=3, min_length=2) | kwargs
    with pytest.raises(ParameterError, match=message.replace(".", r"\.")):
        mine_bloomspan(tokens, offsets, args.pop("sigma"), args.pop("min_length"), vocab, **args)


def test_corpus_layout_errors():
    with pytest.raises(InputError, match="doc_offsets"):
        mine_bloomspan(np.arange(5, dtype=np.uint32), np.array([0, 3]), 2, 2, list("abcde"))
    with pytest.raises(InputError, match="outside the vocabulary"):
        mine_bloomspan(np.arange(5, dtype=np.uint32), np.array([0, 5]), 2, 2, ["a"])


def test_default_filter_size_is_bounded():
    assert default_filter_bytes(0, 20) == 4096
    assert default_filter_bytes(10_000_000, 20) == 2_500_000  # lambda = 20 / 4 windows a cell
    assert default_filter_bytes(10_000_000, 3) == 13_333_333
    assert default_filter_bytes(10_000_000, 2) == 20_000_000
    assert default_filter_bytes(10_000_000, 1000) == 2_500_000  # thresholds stop at 255
    assert default_filter_bytes(10**12, 20) == 1 << 30


@pytest.mark.parametrize("period", [1, 2, 3])
def test_periodic_runs_do_not_rescan_the_run_at_every_occurrence(period):
    # A document of one repeated token (tables of zeros, "ha ha ha", base64 padding) made the
    # fast path compare the rest of the run at every occurrence of every node: cubic, 8,000
    # repeated tokens took 80 s and a 5M-token line never finished. The extension is now bounded
    # by the nearest document end first, so comparisons stay linear in the occurrences scanned.
    from corpus_miner.phrases.exact import mine_fhk

    run = [w % period for w in range(1500)]
    docs = [run, [9] + run[:1000] + [8], run[:1200]]
    tokens, offsets = as_arrays(docs)
    vocab = [str(i) for i in range(10)]
    ours, stats = mine_bloomspan(tokens, offsets, 2, 3, vocab)
    theirs, _ = mine_fhk(tokens, offsets, 2, 3, vocab)
    assert list(ours.rows()) == list(theirs.rows()) and len(ours) > 0
    assert stats["tokens_compared_in_growth"] <= 2 * stats["occurrences_scanned_in_growth"]


def test_long_periodic_runs_go_to_the_suffix_array_path():
    """20,000 repeats of one word in three documents: the depth-first growth would scan ~3e8
    occurrences; the seed is handed to the suffix-array path after its budget."""
    import corpus_miner.phrases.bloomspan as bloomspan
    from corpus_miner.phrases.exact import mine_fhk

    docs = [[0] * 20_000, [9] + [0] * 12_000 + [8], [0] * 15_000 + [1, 2, 3] * 400]
    tokens, offsets = as_arrays(docs)
    vocab = [str(i) for i in range(10)]
    ours, stats = mine_bloomspan(tokens, offsets, 2, 3, vocab)
    theirs, _ = mine_fhk(tokens, offsets, 2, 3, vocab)
    assert list(ours.rows()) == list(theirs.rows()) and len(ours) > 0
    assert stats["seeds_grown_by_suffix_array"] >= 1
    seed_occurrences = stats["seed_occurrences"]
    budget = stats["seeds"] * bloomspan.GROWTH_BUDGET_FLOOR \
        + bloomspan.GROWTH_BUDGET_PER_OCCURRENCE * seed_occurrences
    assert stats["occurrences_scanned_in_growth"] <= budget + seed_occurrences


def test_seed_too_big_for_a_suffix_array_grows_depth_first_after_all(monkeypatch):
    import corpus_miner.phrases.bloomspan as bloomspan
    import corpus_miner.phrases.seed_suffix_array as seed_suffix_array

    docs = [[0, 1] * 40, [2] + [0, 1] * 25 + [2], [1, 0] * 30 + [3], [0, 1, 2, 3] * 5]
    tokens, offsets = as_arrays(docs)
    monkeypatch.setattr(bloomspan, "GROWTH_BUDGET_PER_OCCURRENCE", 0)
    monkeypatch.setattr(bloomspan, "GROWTH_BUDGET_FLOOR", 0)
    monkeypatch.setattr(seed_suffix_array, "MAX_TEXT_LENGTH", 0)
    table, stats = mine_bloomspan(tokens, offsets, 2, 3, ["a", "b", "c", "d"])
    assert table.key_set() == brute_force_mcfp(docs, 2, 3) and len(table) > 0
    assert stats["seeds_grown_by_suffix_array"] == 0


def test_periodic_run_matches_brute_force():
    docs = [[0, 1] * 40, [2] + [0, 1] * 25 + [2], [1, 0] * 30 + [3]]
    tokens, offsets = as_arrays(docs)
    table, _ = mine_bloomspan(tokens, offsets, 2, 3, ["a", "b", "c", "d"])
    assert table.key_set() == brute_force_mcfp(docs, 2, 3)


def test_kernels_without_jit():
    """The same kernels run as plain Python (NUMBA_DISABLE_JIT=1) give the oracle's answer."""
    script = """
        import warnings, numpy as np
        warnings.simplefilter("ignore")
        from tests.phrases.oracle import brute_force_mcfp
        from corpus_miner.phrases.bloomspan import mine_bloomspan
        rng = np.random.default_rng(3)
        for trial in range(25):
            docs = [list(rng.integers(0, 3, size=int(rng.integers(0, 9)))) for _ in range(6)]
            tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
            offsets = np.cumsum([0] + [len(d) for d in docs])
            table, _ = mine_bloomspan(tokens, offsets, 2, 2, ["a", "b", "c"], filter_bytes=64,
                                      key_layout=("packed", "unpacked")[trial % 2])
            assert table.key_set() == brute_force_mcfp(docs, 2, 2), (docs, table.key_set())
        print("ok")
    """
    assert run_python(script, jit=False).strip() == "ok"


def test_answer_and_stats_do_not_depend_on_the_thread_count():
    """Every stage runs on numba.get_num_threads() threads; rows and every count in the stats
    are the same with 1 and 3 threads (small batches, so that many batches and slices run)."""
    script = """
        import hashlib, json, numpy as np
        import corpus_miner.phrases.growth as growth
        import corpus_miner.phrases.seeds as seeds
        from corpus_miner import synth
        from corpus_miner.phrases.bloomspan import mine_bloomspan
        growth.SEEDS_PER_BATCH, growth.SEEDS_PER_SLICE, seeds.KEYS_PER_BUCKET = 64, 4, 512
        docs = synth.web(400, n_sites=8, seed=3)
        vocab = sorted({w for d in docs for w in d})
        ids = {w: i for i, w in enumerate(vocab)}
        tokens = np.array([ids[w] for d in docs for w in d], dtype=np.uint32)
        offsets = np.cumsum([0] + [len(d) for d in docs])
        out = {}
        for sigma, min_length in ((5, 6), (2, 3)):
            table, stats = mine_bloomspan(tokens, offsets, sigma, min_length, vocab)
            for key in ("seconds", "cpu_seconds", "seconds_total", "cpu_seconds_total", "threads"):
                stats.pop(key)
            stats = {k: v for k, v in stats.items() if "rss" not in k}
            rows = hashlib.sha256(json.dumps(list(table.rows())).encode()).hexdigest()
            out[f"{sigma}/{min_length}"] = [rows, stats]
        print(json.dumps(out, sort_keys=True))
    """
    results = [json.loads(run_python(script, NUMBA_NUM_THREADS=threads))
               for threads in ("1", "3")]
    assert results[0] == results[1]
    assert all(stats["phrases"] > 0 and stats["seeds"] > 64 for _, stats in results[0].values())
