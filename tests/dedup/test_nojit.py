"""The kernels run as plain Python (NUMBA_DISABLE_JIT=1) and give the jitted results."""

import json

from tests.helpers import run_python

SCRIPT = r"""
import json, warnings
import numpy as np
np.seterr(over="ignore")  # SplitMix64/FNV wrap modulo 2^64 on purpose; numba never warns
from corpus_miner.dedup.pipeline import band_keys_for_texts, signatures_for_texts
from corpus_miner.dedup.params import LSHBloomParams
from corpus_miner.dedup.bloom import BloomFilter
from corpus_miner.dedup.bandtable import BandTable, components_kernel
texts = ["The quick brown fox", "the  QUICK brown fox!", "Ünïcödé 漢字 text", "", "x"]
out = {}
for sketch in ("minhash", "oph"):
    for kind in ("char", "word"):
        p = LSHBloomParams(num_perm=16, num_bands=4, shingle_kind=kind, shingle_size=3,
                           sketch=sketch, max_shingles=6).validated()
        out[f"{sketch}-{kind}-sig"] = signatures_for_texts(texts, p).tolist()
        keys = band_keys_for_texts(texts, p)
        out[f"{sketch}-{kind}-keys"] = keys.tolist()
        bloom = BloomFilter(997, 3)
        out[f"{sketch}-{kind}-dup"] = bloom.query_then_insert(keys).tolist()
        out[f"{sketch}-{kind}-bits"] = bloom.bits.tolist()
        table = BandTable(4)
        out[f"{sketch}-{kind}-dupof"] = table.query_then_insert(keys, 0).tolist()
        out[f"{sketch}-{kind}-cc"] = components_kernel(table.lookup(keys), 0, len(texts)).tolist()
from corpus_miner.dedup.banding import choose_bands
out["bands"] = [choose_bands(t, 24) for t in (0.3, 0.85)]
print(json.dumps(out))
"""


def test_kernels_without_jit_equal_jitted():
    assert json.loads(run_python(SCRIPT, jit=False)) == json.loads(run_python(SCRIPT))
