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
