"""TextsDigest: equal for the same texts in the same batches, different for any change of a
text, of the order or of a document boundary; the kernel equals a plain-Python reference, jitted
or not."""

import json

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.io.digest import TextsDigest, bytes_hash
from tests.helpers import run_python

M64 = (1 << 64) - 1
P1, P2 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F


def splitmix64(x):
    x &= M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def reference_bytes_hash(data: bytes) -> int:
    """Written from the module docstring: four xxHash64 lanes over whole 32-byte stripes, then
    the length, the lanes, the remaining whole words and the zero-padded tail through SplitMix64."""
    words = [int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data) // 8 * 8, 8)]
    lanes = [0x2545F4914F6CDD1D]
    lanes += [lanes[0] ^ P1, lanes[0] ^ P2, (lanes[0] + P1 + P2) & M64]
    stripes = len(words) - len(words) % 4
    for i in range(0, stripes, 4):
        for lane in range(4):
            value = (lanes[lane] + words[i + lane] * P2) & M64
            value = ((value << 31) | (value >> 33)) & M64
            lanes[lane] = (value * P1) & M64
    h = splitmix64(len(data) ^ lanes[0])
    for lane in lanes[1:]:
        h = splitmix64(h ^ lane)
    for word in words[stripes:]:
        h = splitmix64(h ^ word)
    return splitmix64(h ^ int.from_bytes(data[len(data) // 8 * 8:], "little"))


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200), st.integers(0, 7))
def test_bytes_hash_equals_the_reference_at_any_alignment(data, shift):
    padded = np.frombuffer(b"\0" * shift + data, np.uint8)[shift:]  # start off an 8-byte boundary
    assert bytes_hash(padded) == reference_bytes_hash(data)


def _digest(*batches, large=False):
    digest = TextsDigest()
    for texts in batches:
        digest.update(pa.array(texts, pa.large_string() if large else pa.string()))
    return digest


def test_same_texts_give_the_same_digest_whatever_the_array_layout():
    texts = ["alpha", "", "beta gamma", "δέλτα"]
    base = _digest(texts)
    assert base.documents == 4
    assert _digest(texts, large=True).value == base.value
    sliced = TextsDigest()
    sliced.update(pa.array(["junk", *texts])[1:])  # an array with an offset
    assert sliced.value == base.value


def test_any_change_changes_the_digest():
    texts = ["alpha", "beta", "gamma", "delta"]
    base = _digest(texts).value
    variants = [["alpha", "beta", "gamma", "deltb"], ["beta", "alpha", "gamma", "delta"],
                ["alph", "abeta", "gamma", "delta"], ["alpha", "beta", "gamma"],
                ["alpha", "beta", "gamma", "delta", ""]]
    digests = {_digest(variant).value for variant in variants}
    assert base not in digests and len(digests) == len(variants)
    assert _digest(texts[:2], texts[2:]).value != base  # batches are part of what is compared


def test_kernel_without_jit_equals_jitted():
    code = ("import json, numpy as np; np.seterr(over='ignore'); import pyarrow as pa\n"
            "from corpus_miner.io.digest import TextsDigest\n"
            "d = TextsDigest(); d.update(pa.array(['x' * n for n in range(70)]))\n"
            "print(json.dumps(d.value))")
    assert json.loads(run_python(code, jit=False)) == json.loads(run_python(code))


class _Batch:
    """The part of a reader's batch checked_reread looks at."""

    def __init__(self, texts):
        self.texts = pa.array(texts, pa.string())

    def __len__(self):
        return len(self.texts)


def _cuts(draw, n):
    return sorted(draw(st.lists(st.integers(0, n), max_size=4)))


def _pieces(items, cuts):
    bounds = [0, *cuts, len(items)]
    return [items[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def _unit_digests(units):
    """Each unit's OrderedDigest over its own positions, as a Spark task reading it computes."""
    from corpus_miner.io.digest import OrderedDigest, UnitDigests

    states = []
    for texts in units:
        digest = OrderedDigest()
        if texts:
            digest.update(pa.array(texts, pa.string()), 0)
        states.append(digest.state())
    return UnitDigests(tuple(states))


@st.composite
def _read_twice(draw):
    """(texts, the units of the first read, the batches of the second): any split of each."""
    texts = draw(st.lists(st.text(max_size=6), max_size=12))
    return texts, _pieces(texts, _cuts(draw, len(texts))), _pieces(texts, _cuts(draw, len(texts)))


def _reread(batches, expected):
    from corpus_miner.io.digest import checked_reread

    return [list(b.texts.to_pylist()) for b in checked_reread(
        (_Batch(b) for b in batches), expected, "clean")]


@settings(max_examples=150, deadline=None)
@given(_read_twice(), st.data())
def test_a_reread_in_any_batches_is_checked_against_the_units_of_the_first_read(case, data):
    """The same texts pass whatever the units (empty ones included) and the batches; one text
    changed, one document more or fewer, or two documents swapped is refused."""
    import pytest

    from corpus_miner.errors import InputError
    from corpus_miner.io.digest import OrderedDigest

    texts, units, batches = case
    expected = _unit_digests(units)
    assert _reread(batches, expected) == [b for b in batches]
    if len(units) == 1 and texts:  # one unit is the whole input's OrderedDigest
        whole = OrderedDigest()
        whole.update(pa.array(texts, pa.string()), 0)
        assert expected.states == (whole.state(),)
        assert _reread(batches, whole.state()) == batches
    changes = [texts + ["more"], texts[:-1]]
    if texts:
        i = data.draw(st.integers(0, len(texts) - 1))
        changes.append(texts[:i] + [texts[i] + "x"] + texts[i + 1:])
        if len(set(texts)) > 1:
            j = next(k for k in range(len(texts)) if texts[k] != texts[i])
            swapped = list(texts)
            swapped[i], swapped[j] = swapped[j], swapped[i]
            changes.append(swapped)
    for changed in changes:
        if changed == texts:
            continue
        with pytest.raises(InputError, match="changed between clean's two reads"):
            _reread(_pieces(changed, _cuts(data.draw, len(changed))), expected)


def _reference_round(lane, word):
    lane = (lane + word * P2) & M64
    lane = ((lane << 31) | (lane >> 33)) & M64
    return (lane * P1) & M64


def reference_ordered_value(texts, first):
    """Written from ordered_xor_kernel's docstring: each document's UTF-8 bytes as 8-byte
    little-endian words from its own start (the last zero-padded) through xxHash64's round,
    then the length; mixed with its index first + i; XOR over the documents."""
    acc = 0
    for i, text in enumerate(texts):
        data = text.encode()
        n, whole = len(data), len(data) // 8 * 8
        h = 0xCBF29CE484222325 ^ n
        for j in range(0, whole, 8):
            h = _reference_round(h, int.from_bytes(data[j:j + 8], "little"))
        h = splitmix64(_reference_round(h, int.from_bytes(data[whole:], "little")) ^ n)
        acc ^= splitmix64(h ^ splitmix64((first + i) ^ 0x9E3779B97F4A7C15))
    return acc


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=8), st.integers(0, 7), st.integers(0, 2**40))
def test_ordered_digest_equals_the_reference_wherever_the_texts_lie(texts, skip, first):
    """The same value for a batch sliced out of a larger array (texts at any byte offset)."""
    from corpus_miner.io.digest import OrderedDigest

    array = pa.array(["x" * skip] + texts, pa.string()).slice(1)
    digest = OrderedDigest()
    digest.update(array, first)
    assert digest.state() == (len(texts), reference_ordered_value(texts, first))
