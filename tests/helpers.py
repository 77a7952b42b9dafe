"""Helpers shared by the tests: small corpora as the arrays a TokenCorpus holds, and code run in
a fresh interpreter (to compare the kernels interpreted by Python with the compiled ones)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def examples(n: int) -> int:
    """max_examples for a hypothesis test with many: n, times EXAMPLES_SCALE when set (e.g.
    EXAMPLES_SCALE=4 for the longer run the suite made before it had to fit in 15 minutes)."""
    return max(1, round(n * float(os.environ.get("EXAMPLES_SCALE", "1"))))


def as_arrays(docs) -> tuple[np.ndarray, np.ndarray]:
    """Documents as lists of token ids -> (uint32 tokens, int64 doc_offsets)."""
    tokens = np.array([t for doc in docs for t in doc], dtype=np.uint32)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum([len(doc) for doc in docs], out=offsets[1:])
    return tokens, offsets


def word_ids(texts) -> tuple[list[list[int]], list[str]]:
    """Whitespace-split texts -> (documents as id lists, vocabulary), ids in order of first
    appearance."""
    vocab: dict[str, int] = {}
    docs = [[vocab.setdefault(word, len(vocab)) for word in text.split()] for text in texts]
    return docs, list(vocab)


def encode_words(docs) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Documents as lists of words -> (tokens, doc_offsets, vocabulary)."""
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(word, len(vocab)) for word in doc] for doc in docs]
    return (*as_arrays(ids), list(vocab))


def run_python(code: str, *args: str, jit: bool = True, timeout: float = 300,
               **env_vars: str) -> str:
    """Runs `code` in a fresh interpreter at the repository root (so `tests.` imports work),
    with numba's JIT on or off (NUMBA_DISABLE_JIT) and `env_vars` set; returns its stdout, or
    fails the test with the end of its stderr."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="0" if jit else "1", PYTHONPATH=str(ROOT), **env_vars)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout
