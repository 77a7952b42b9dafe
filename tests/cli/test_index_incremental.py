"""`index add`, `index merge`, `index info` and `dedup --against` (issue 25), against one-shot
dedup over the concatenation as the oracle: the same flags, the same index, both modes."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus_miner.cli import main
from corpus_miner.dedup import LSHBloom
from tests.helpers import ROOT

from .test_dedup import _docs, _read_jsonl, _write_jsonl

DOCS = _docs(seed=5, n=24) + _docs(seed=6, n=16) + _docs(seed=5, n=24)[3:9]  # reposts later on
MODES = {"lshbloom": ["--expected-items", "8"],  # small first layer: several layers grow
         "minhash_lsh": ["--mode", "minhash_lsh"]}


def _flags(path):
    return [(d["id"], d["is_duplicate"], d.get("duplicate_of")) for d in _read_jsonl(path)]


def _same_index(a, b) -> bool:
    a, b = LSHBloom.load(a), LSHBloom.load(b)
    if a.mode_ != b.mode_ or a.n_documents_ != b.n_documents_:
        return False
    if a.mode_ == "lshbloom":
        return a.index_ == b.index_
    keys_a, docs_a = a.index_.items()
    keys_b, docs_b = b.index_.items()
    return bool(np.array_equal(keys_a, keys_b) and np.array_equal(docs_a, docs_b)
                and a.ids_.equals(b.ids_))


def _add_all(tmp, parts, extra, index="index"):
    outputs = []
    for k, part in enumerate(parts):
        source = _write_jsonl(tmp / f"s{k}.jsonl", part)
        out = tmp / f"u{k}.jsonl"
        assert main(["index", "add", str(tmp / index), source, "-o", str(out), "--annotate",
                     "--id-field", "id", *extra]) == 0
        outputs.append(out)
    return outputs


@pytest.mark.parametrize("mode", sorted(MODES))
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(0, len(DOCS)), min_size=1, max_size=4))
def test_snapshots_added_one_by_one_equal_one_dedup_of_their_concatenation(
        tmp_path_factory, mode, cuts):
    tmp = tmp_path_factory.mktemp("split")
    bounds = [0, *sorted(cuts), len(DOCS)]
    parts = [DOCS[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
    outputs = _add_all(tmp, parts, MODES[mode])
    everything = _write_jsonl(tmp / "all.jsonl", DOCS)
    assert main(["dedup", everything, "-o", str(tmp / "one.jsonl"), "--annotate", "--id-field",
                 "id", "--save-index", str(tmp / "one_index"), *MODES[mode]]) == 0
    added = [flag for out in outputs for flag in _flags(out)]
    assert added == _flags(tmp / "one.jsonl")
    assert sum(flag[1] for flag in added) >= 6  # the reposts are found
    assert _same_index(tmp / "index", tmp / "one_index")
    snapshots = LSHBloom.load(tmp / "index").snapshots_
    assert [s["documents"] for s in snapshots] == [len(p) for p in parts]


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
@settings(max_examples=10, deadline=None)
@given(cuts=st.lists(st.integers(0, len(DOCS)), min_size=1, max_size=5))
def test_deduplicate_update_equals_deduplicate_over_the_concatenation(mode, cuts):
    texts = [d["text"] for d in DOCS]
    ids = [d["id"] for d in DOCS]
    bounds = [0, *sorted(cuts), len(texts)]
    model = LSHBloom(num_perm=64, mode=mode, expected_items=8)
    flags, named = [], []
    for a, b in zip(bounds, bounds[1:]):
        result = model.deduplicate(texts[a:b], ids[a:b], update=True)
        flags += result.is_duplicate.tolist()
        named += result.duplicate_of_id or [None] * (b - a)
    one = LSHBloom(num_perm=64, mode=mode, expected_items=8)
    expected = one.deduplicate(iter(texts), iter(ids))
    assert flags == expected.is_duplicate.tolist()
    assert named == (expected.duplicate_of_id or [None] * len(texts))
    if mode == "lshbloom":
        assert model.index_ == one.index_


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_merge_of_disjoint_parts_answers_like_one_index_on_their_union(tmp_path, mode):
    first, second = DOCS[:30], DOCS[30:]
    extra = ["--expected-items", str(len(DOCS))] if mode == "lshbloom" else MODES[mode]
    for name, part in (("a", first), ("b", second), ("union", DOCS)):
        source = _write_jsonl(tmp_path / f"{name}.jsonl", part)
        assert main(["index", "build", source, "-o", str(tmp_path / name), "--id-field", "id",
                     *extra]) == 0
    assert main(["index", "merge", str(tmp_path / "a"), str(tmp_path / "b"), "-o",
                 str(tmp_path / "merged")]) == 0
    assert _same_index(tmp_path / "merged", tmp_path / "union")
    probe = _write_jsonl(tmp_path / "probe.jsonl", _docs(seed=5, n=30) + _docs(seed=9, n=10))
    for name in ("merged", "union"):
        assert main(["index", "query", str(tmp_path / name), probe, "-o",
                     str(tmp_path / f"q_{name}.jsonl"), "--annotate", "--id-field", "id"]) == 0
    assert _flags(tmp_path / "q_merged.jsonl") == _flags(tmp_path / "q_union.jsonl")
    merged = LSHBloom.load(tmp_path / "merged")
    assert [s["inputs"][0]["name"] for s in merged.snapshots_] == [
        str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]


def _one_line_error(capsys, argv, *needles):
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err
    return err


@pytest.mark.parametrize("option,value,name", [
    ("--seed", "2", "seed is 1 in"), ("--num-perm", "128", "num_perm is 256"),
    ("--mode", "minhash_lsh", "mode is 'lshbloom'"), ("--fp-prob", "0.001", "fp_prob is 1e-05"),
    ("--expected-items", "64", "first layer capacity (expected_items) is 32"),
    ("--shingle-size", "4", "shingle_size is 5"), ("--sketch", "minhash", "sketch is 'oph'")])
def test_mismatched_merges_are_refused_naming_the_parameter(tmp_path, capsys, option, value,
                                                            name):
    source = _write_jsonl(tmp_path / "a.jsonl", DOCS[:20])
    other = _write_jsonl(tmp_path / "b.jsonl", DOCS[20:])
    assert main(["index", "build", source, "--expected-items", "32", "-o",
                 str(tmp_path / "a")]) == 0
    base = {"--expected-items": "32"}
    base[option] = value
    assert main(["index", "build", other, "-o", str(tmp_path / "b"),
                 *[item for pair in base.items() for item in pair]]) == 0
    _one_line_error(capsys, ["index", "merge", str(tmp_path / "a"), str(tmp_path / "b"), "-o",
                             str(tmp_path / "c")], name)
    assert not (tmp_path / "c").exists()


def test_bloom_merges_over_a_layers_capacity_are_refused(tmp_path, capsys):
    for name, part in (("a", DOCS[:20]), ("b", DOCS[20:40])):
        source = _write_jsonl(tmp_path / f"{name}.jsonl", part)
        assert main(["index", "build", source, "--expected-items", "30", "-o",
                     str(tmp_path / name)]) == 0
    _one_line_error(capsys, ["index", "merge", str(tmp_path / "a"), str(tmp_path / "b"), "-o",
                             str(tmp_path / "c")], "40 documents in layer 0, sized for 30",
                    "--expected-items 40")
    _one_line_error(capsys, ["index", "merge", str(tmp_path / "a"), str(tmp_path / "a"), "-o",
                             str(tmp_path / "c")], "both absorbed the input")


def test_add_refuses_an_input_twice_and_parameters_the_index_does_not_have(tmp_path, capsys):
    source = _write_jsonl(tmp_path / "s.jsonl", DOCS[:20])
    copy = _write_jsonl(tmp_path / "renamed.jsonl", DOCS[:20])
    index, out = str(tmp_path / "index"), str(tmp_path / "u.jsonl")
    assert main(["index", "add", index, source, "-o", out]) == 0
    before = json.loads((tmp_path / "index" / "metadata.json").read_text())
    _one_line_error(capsys, ["index", "add", index, copy, "-o", out],
                    "this input was added to the index before (as", "--force")
    _one_line_error(capsys, ["index", "add", index, source, "-o", out, "--seed", "7"],
                    "--seed 7 differs from the index's seed 1")
    assert json.loads((tmp_path / "index" / "metadata.json").read_text()) == before
    assert main(["index", "add", index, copy, "-o", out, "--force", "--annotate"]) == 0
    assert all(d["is_duplicate"] for d in _read_jsonl(out))  # every document seen before
    assert LSHBloom.load(index).n_documents_ == 40


def test_damaged_indexes_are_one_line_errors(tmp_path, capsys):
    source = _write_jsonl(tmp_path / "s.jsonl", DOCS[:20])
    index = tmp_path / "index"
    assert main(["index", "build", source, "-o", str(index)]) == 0
    layer = index / "gen-000001" / "bloom_0.bin"
    layer.write_bytes(layer.read_bytes()[:-5])
    for argv in (["index", "info", str(index)],
                 ["index", "add", str(index), source, "-o", str(tmp_path / "u.jsonl")],
                 ["index", "query", str(index), source, "-o", str(tmp_path / "q.jsonl")],
                 ["dedup", source, "--against", str(index), "-o", str(tmp_path / "d.jsonl")]):
        _one_line_error(capsys, argv, "bloom_0.bin is truncated")
    pointer = json.loads((index / "metadata.json").read_text())
    pointer["version"] = 9
    (index / "metadata.json").write_text(json.dumps(pointer))
    _one_line_error(capsys, ["index", "info", str(index)], "version 9 is not supported",
                    "upgrade corpus-miner")


def test_dedup_against_indexes_drops_their_matches_too(tmp_path):
    bench = _write_jsonl(tmp_path / "bench.jsonl", DOCS[:10])
    other = _write_jsonl(tmp_path / "other.jsonl", DOCS[40:50])
    for name, source in (("bench", bench), ("other", other)):
        assert main(["index", "build", source, "-o", str(tmp_path / name), "--mode",
                     "minhash_lsh", "--id-field", "id"]) == 0
    train = _write_jsonl(tmp_path / "train.jsonl", DOCS)
    for extra in ([], ["--expected-items", "16"], ["--mode", "minhash_lsh"]):
        out = tmp_path / "out.jsonl"
        assert main(["dedup", train, "--annotate", "--id-field", "id", "-o", str(out),
                     "--against", str(tmp_path / "bench"), str(tmp_path / "other"),
                     *extra]) == 0
        assert main(["dedup", train, "--annotate", "--id-field", "id", "-o",
                     str(tmp_path / "plain.jsonl"), *extra]) == 0
        bench_model, other_model = (LSHBloom.load(tmp_path / n) for n in ("bench", "other"))
        texts = [d["text"] for d in DOCS]
        against = bench_model.query(texts).is_duplicate | other_model.query(texts).is_duplicate
        plain = np.array([d["is_duplicate"] for d in _read_jsonl(tmp_path / "plain.jsonl")])
        got = [d["is_duplicate"] for d in _read_jsonl(out)]
        assert got == (plain | against).tolist() and against[:10].all()
        if "minhash_lsh" in extra:  # a match only in an index names the index's document
            first = _read_jsonl(out)[0]
            assert first["duplicate_of"] == DOCS[0]["id"]


def test_info_describes_the_index(tmp_path, capsys):
    index = str(tmp_path / "index")
    _add_all(tmp_path, [DOCS[:20], DOCS[20:]], ["--expected-items", "8"])
    capsys.readouterr()
    assert main(["index", "info", index, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["documents"] == len(DOCS) and len(info["snapshots"]) == 2
    assert len(DOCS) == 56 and [layer["documents"] for layer in info["layers"]] == [8, 16, 32]
    assert info["snapshots"][1]["inputs"][0]["documents"] == len(DOCS) - 20
    assert 0 <= info["fp_now"] < info["fp_bound"] < info["fp_prob"] == 1e-5
    assert info["bytes"] == sum(layer["bytes"] for layer in info["layers"])
    assert main(["index", "info", index]) == 0
    text = capsys.readouterr().out
    assert "layer 2: 32 of 32 documents" in text and "snapshots: 2" in text


KILLED_ADD = """
    import sys
    from corpus_miner.cli import main
    sys.exit(main(["index", "add", sys.argv[1], sys.argv[2], "-o", sys.argv[3],
                   "--expected-items", "8"]))
"""


def test_kill_9_at_any_moment_of_add_leaves_the_old_index_or_the_new(tmp_path):
    """SIGKILL at random moments of `index add` (no handler runs): the index loads and is the
    old one or the new one, the output is absent or complete, and the next add leaves no
    temporary file in the index folder."""
    first = _write_jsonl(tmp_path / "first.jsonl", DOCS[:30])
    second = _write_jsonl(tmp_path / "second.jsonl", DOCS[30:] * 3)
    index, out = tmp_path / "index", tmp_path / "u.jsonl"
    assert main(["index", "add", str(index), first, "-o", str(tmp_path / "u0.jsonl"),
                 "--expected-items", "8"]) == 0
    old = LSHBloom.load(index)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    complete = None
    rng = np.random.default_rng(1)
    outcomes = set()
    for _ in range(6):
        started = time.monotonic()
        child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(KILLED_ADD), str(index),
                                  second, str(out)], cwd=ROOT, env=env,
                                 stderr=subprocess.DEVNULL)
        time.sleep(float(rng.uniform(0.5, 4.0)))
        child.send_signal(signal.SIGKILL)
        child.wait()
        now = LSHBloom.load(index)
        if now.n_documents_ == old.n_documents_:
            assert now.index_ == old.index_
            outcomes.add("old")
        else:
            assert now.n_documents_ == old.n_documents_ + len(DOCS[30:]) * 3
            outcomes.add("new")
            break
        if out.exists():
            complete = complete or out.read_bytes()
            assert len(_read_jsonl(out)) == len(DOCS[30:]) * 3
        assert time.monotonic() - started < 120
    final = tmp_path / "final.jsonl"
    code = main(["index", "add", str(index), second, "-o", str(final), "--expected-items", "8",
                 *(["--force"] if "new" in outcomes else [])])
    assert code == 0
    assert [p.name for p in index.iterdir() if p.name.endswith(".tmp")] == []
    assert LSHBloom.load(index).n_documents_ >= old.n_documents_ + len(DOCS[30:]) * 3


def _unique_mode_reference(bands_keys):
    """Plain Python: a document is flagged when one of its band keys belongs to an earlier
    unique document; only unique documents' keys are kept."""
    kept: dict[int, int] = {}
    flags, firsts, ordinal = [], [], 0
    for keys in bands_keys:
        hits = [kept[int(k)] for k in keys if int(k) in kept]
        flags.append(bool(hits))
        firsts.append(min(hits) if hits else -1)
        if not hits:
            for k in keys:
                kept.setdefault(int(k), ordinal)
            ordinal += 1
    return flags, firsts


@pytest.mark.parametrize("mode", ["lshbloom", "minhash_lsh"])
@settings(max_examples=8, deadline=None)
@given(cuts=st.lists(st.integers(0, len(DOCS)), min_size=1, max_size=4))
def test_adding_only_unique_documents_matches_a_plain_reference(mode, cuts):
    texts = [d["text"] for d in DOCS]
    ids = [d["id"] for d in DOCS]
    bounds = [0, *sorted(cuts), len(texts)]
    model = LSHBloom(num_perm=64, mode=mode, expected_items=8)
    flags, named = [], []
    for a, b in zip(bounds, bounds[1:]):
        result = model.deduplicate(texts[a:b], ids[a:b], add="unique", update=True)
        flags += result.is_duplicate.tolist()
        named += result.duplicate_of_id or [None] * (b - a)
    expected, firsts = _unique_mode_reference(model._band_keys(texts))
    assert flags == expected and sum(flags) >= 6
    uniques = [t for t, dup in zip(texts, flags) if not dup]
    assert model.n_documents_ == len(uniques)
    reference = LSHBloom(num_perm=64, mode=mode, expected_items=8)
    reference.partial_fit(uniques, [i for i, dup in zip(ids, flags) if not dup])
    if mode == "lshbloom":
        assert model.index_ == reference.index_
    else:
        unique_ids = [i for i, dup in zip(ids, flags) if not dup]
        assert named == [unique_ids[f] if f >= 0 else None for f in firsts]
        assert model.ids_.to_pylist() == unique_ids


def test_index_add_unique_keeps_only_what_was_kept(tmp_path):
    parts = [DOCS[:30], DOCS[30:]]
    for k, part in enumerate(parts):
        source = _write_jsonl(tmp_path / f"s{k}.jsonl", part)
        assert main(["index", "add", str(tmp_path / "index"), source, "-o",
                     str(tmp_path / f"u{k}.jsonl"), "--add", "unique", "--annotate"]) == 0
    flags = [d["is_duplicate"] for k in range(2) for d in _read_jsonl(tmp_path / f"u{k}.jsonl")]
    model = LSHBloom.load(tmp_path / "index")
    assert model.n_documents_ == flags.count(False)
    assert [s["added"] for s in model.snapshots_] == [
        [d["is_duplicate"] for d in _read_jsonl(tmp_path / f"u{k}.jsonl")].count(False)
        for k in range(2)]


def test_two_adds_at_once_take_turns_and_lose_nothing(tmp_path):
    """Both runs load, flag and write: the lock spans the whole add, so the second builds on
    the first's generation instead of replacing it."""
    index = tmp_path / "index"
    first = _write_jsonl(tmp_path / "first.jsonl", DOCS[:20])
    assert main(["index", "add", str(index), first, "-o", str(tmp_path / "u0.jsonl")]) == 0
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    children = []
    for k, part in enumerate((DOCS[20:40], DOCS[40:])):
        source = _write_jsonl(tmp_path / f"part{k}.jsonl", part)
        children.append(subprocess.Popen(
            [sys.executable, "-m", "corpus_miner", "index", "add", str(index), source, "-o",
             str(tmp_path / f"u{k + 1}.jsonl")], cwd=ROOT, env=env, stderr=subprocess.PIPE,
            text=True))
    for child in children:
        _, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
    model = LSHBloom.load(index)
    assert model.n_documents_ == len(DOCS) and len(model.snapshots_) == 3
