"""Ground truth for near-duplicate evaluation, built from real documents (benchmarks/data_paths.py).

Near-duplicates are planted with controlled edits of a real document: word insertions, deletions,
substitutions (a fraction of the words), truncation (keep a prefix), paragraph moves (move blocks
of lines elsewhere). Exact Jaccard similarity of the character-shingle sets is then computed for
every candidate pair (planted pairs, pairs any method matched, and pairs sharing a band key of a
low-threshold, exact band table), which gives each document the best Jaccard it has with an earlier
document: the quantity the dedup rule thresholds.
"""

from __future__ import annotations

import gzip
import json

import numpy as np

from corpus_miner.dedup import LSHBloom, band_keys_for_texts
from corpus_miner.dedup.shingles import shingle_batch

from data_paths import corpus_file

EDIT_KINDS = ("insert", "delete", "substitute", "truncate", "move")


def load_texts(names, limit_per_corpus=None, min_chars=0, max_chars=None) -> list[tuple[str, str]]:
    """(id, text) of real documents, in file order."""
    docs = []
    for name in names:
        kept = 0
        with gzip.open(corpus_file(name), "rt", encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                text = record.get("text") or ""
                if len(text) < min_chars:
                    continue
                if max_chars is not None:
                    text = text[:max_chars]
                docs.append((f"{name}:{record.get('id')}", text))
                kept += 1
                if limit_per_corpus is not None and kept >= limit_per_corpus:
                    break
    return docs


def edit(text: str, kind: str, strength: float, rng: np.random.Generator) -> str:
    """A near-duplicate of text: `strength` in (0, 1) is the fraction of words / text affected."""
    words = text.split(" ")
    n_edit = max(1, int(round(strength * len(words))))
    if kind == "insert":
        for _ in range(n_edit):
            words.insert(int(rng.integers(len(words) + 1)), rng.choice(words))
        return " ".join(words)
    if kind == "delete":
        drop = set(rng.choice(len(words), size=min(n_edit, len(words) - 1), replace=False).tolist())
        return " ".join(w for i, w in enumerate(words) if i not in drop)
    if kind == "substitute":
        for i in rng.choice(len(words), size=min(n_edit, len(words)), replace=False):
            letters = rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=len(words[i]) or 1)
            words[i] = "".join(letters)
        return " ".join(words)
    if kind == "truncate":
        return text[: max(1, int(len(text) * (1 - strength)))]
    if kind == "move":
        lines = text.split("\n")
        if len(lines) < 4:
            lines = [" ".join(words[i:i + 12]) for i in range(0, len(words), 12)]
        block = max(1, int(len(lines) * strength / 2))
        for _ in range(2):
            start = int(rng.integers(max(1, len(lines) - block)))
            moved, rest = lines[start:start + block], lines[:start] + lines[start + block:]
            at = int(rng.integers(len(rest) + 1))
            lines = rest[:at] + moved + rest[at:]
        return "\n".join(lines)
    raise ValueError(f"unknown edit kind {kind!r}")


def plant_near_duplicates(docs, n_copies, seed=0, strengths=(0.01, 0.03, 0.05, 0.1, 0.2, 0.35)):
    """Originals in file order, each planted copy inserted at a random later position; each copy
    gets one edit kind (in turn) at a strength drawn from `strengths`.

    Returns (ids, texts, planted) with planted = list of (copy position, original position, kind,
    strength)."""
    rng = np.random.default_rng(seed)
    order = [(doc_id, text, None) for doc_id, text in docs]
    sources = rng.choice(len(docs), size=n_copies, replace=True)
    for c, src in enumerate(sources):
        kind = EDIT_KINDS[c % len(EDIT_KINDS)]
        strength = float(rng.choice(list(strengths)))
        doc_id, text = docs[src]
        copy = edit(text, kind, strength, rng)
        order.append((f"{doc_id}#copy{c}-{kind}-{strength}", copy, (doc_id, kind, strength)))
    # keep originals first in file order, copies spread after their original
    position = {doc_id: i for i, (doc_id, _, _) in enumerate(order[: len(docs)])}
    keyed = []
    for doc_id, text, meta in order:
        if meta is None:
            keyed.append((position[doc_id], 0, doc_id, text, meta))
        else:
            after = position[meta[0]] + rng.uniform(0, len(docs) - position[meta[0]])
            keyed.append((after, 1, doc_id, text, meta))
    keyed.sort(key=lambda item: (item[0], item[1]))
    ids = [k[2] for k in keyed]
    texts = [k[3] for k in keyed]
    index = {doc_id: i for i, doc_id in enumerate(ids)}
    planted = [(index[k[2]], index[k[4][0]], k[4][1], k[4][2]) for k in keyed if k[4] is not None]
    return ids, texts, planted


def shingle_sets(texts, shingle_size=5):
    hashes, offsets = shingle_batch(texts, shingle_size)
    return [np.unique(hashes[offsets[d]:offsets[d + 1]]) for d in range(len(texts))]


def exact_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) == 0 and len(b) == 0:
        return 1.0
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)


def candidate_pairs(texts, extra_pairs=(), low_threshold=0.3, max_group=300):
    """Pairs (i < j) sharing a band key at a low threshold (J >= ~0.4 found w.h.p.), plus extras."""
    # a seed no evaluated method uses: candidates must not be selected by the signatures under test
    model = LSHBloom(mode="minhash_lsh", threshold=low_threshold, num_perm=256, sketch="minhash",
                     seed=987654321)
    keys = band_keys_for_texts(texts, model.params.validated())
    pairs = set((min(i, j), max(i, j)) for i, j in extra_pairs if i != j)
    for band in range(keys.shape[1]):
        order = np.argsort(keys[:, band], kind="stable")
        column = keys[order, band]
        cuts = np.flatnonzero(np.diff(column)) + 1
        for group in np.split(order, cuts):
            if len(group) < 2:
                continue
            group = np.sort(group)[:max_group]
            for x in range(len(group)):
                for y in range(x + 1, len(group)):
                    pairs.add((int(group[x]), int(group[y])))
    return pairs


def best_earlier_jaccard(texts, pairs, shingle_size=5):
    """Per document: max exact Jaccard with an earlier document over the candidate pairs (0 if
    none)."""
    sets = shingle_sets(texts, shingle_size)
    best = np.zeros(len(texts))
    for i, j in pairs:
        best[j] = max(best[j], exact_jaccard(sets[i], sets[j]))
    return best
