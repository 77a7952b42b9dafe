"""Quality of near-duplicate detection: lshbloom, minhash_lsh (classic MinHash and OPH) and
datasketch's MinHashLSH with the same (bands, rows), on real documents with planted near-duplicates.

Ground truth (benchmarks/groundtruth.py): a document is a true near-duplicate when some EARLIER
document has exact Jaccard >= threshold on the character 5-shingle sets. Each method flags documents
with the same rule (query, then insert every document). Per band of "best earlier Jaccard" we report
how many documents each method flags; overall precision / recall / F1 at the threshold.

Bloom false-positive rate: an index is fitted on reference documents and queried with other
documents that share no band key with them (checked with the exact band table); the fraction
flagged is the measured per-document rate, compared with the configured fp_prob (the index's first
layer takes half of fp_prob and at least 2^20 bits, so it measures below it). The sizing rule
itself is measured on one filter of random band keys, also where real data is too small for the
rate (1e-4, 1e-5).

Usage: python benchmarks/eval_dedup_quality.py [--originals 1500] [--copies 900]
Writes benchmarks/results/dedup_quality.csv and dedup_bloom_fp.csv.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_miner.dedup import BloomFilter, LSHBloom  # noqa: E402
from corpus_miner.dedup.shingles import normalize_texts  # noqa: E402

from csv_table import write_csv  # noqa: E402
from groundtruth import best_earlier_jaccard, candidate_pairs, load_texts, plant_near_duplicates  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
BANDS = [(0.0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.8), (0.8, 0.85), (0.85, 0.9), (0.9, 0.95),
         (0.95, 1.0001)]
CORPUS_NAMES = ["openjdk-17-doc", "perl-doc", "python3.11-doc", "postgresql-doc-15",
                "host-copyright", "manpages", "ruby3.1-doc"]


def datasketch_flags(texts, num_perm, bands, rows, seed, shingle_size=5):
    from datasketch import MinHash, MinHashLSH
    normalized = normalize_texts(texts).to_pylist()
    lsh = MinHashLSH(num_perm=num_perm, params=(bands, rows))
    flags, matched = [], []
    for d, text in enumerate(normalized):
        starts = range(max(1, len(text) - shingle_size + 1))
        grams = {text[i:i + shingle_size].encode() for i in starts}
        m = MinHash(num_perm=num_perm, seed=seed)
        m.update_batch(list(grams))
        hits = lsh.query(m)
        flags.append(bool(hits))
        matched.extend((int(h), d) for h in hits)
        lsh.insert(str(d), m)
    return np.array(flags), matched


def metrics(flags, truth_j, threshold):
    truth = truth_j >= threshold
    tp = int((flags & truth).sum())
    fp = int((flags & ~truth).sum())
    fn = int((~flags & truth).sum())
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return tp, fp, fn, precision, recall, f1


def quality(args):
    docs = load_texts(CORPUS_NAMES, limit_per_corpus=args.originals // len(CORPUS_NAMES) + 1,
                      min_chars=400, max_chars=20_000)[: args.originals]
    ids, texts, planted = plant_near_duplicates(docs, args.copies, seed=args.seed)
    print(f"{len(texts)} documents ({len(planted)} planted copies)", flush=True)
    runs = {}
    configs = [("lshbloom", "minhash"), ("minhash_lsh", "minhash"), ("lshbloom", "oph"),
               ("minhash_lsh", "oph")]
    bands = rows = None
    extra_pairs = [(orig, copy) for copy, orig, _, _ in planted]
    for mode, sketch in configs:
        model = LSHBloom(threshold=args.threshold, num_perm=args.num_perm, mode=mode, sketch=sketch,
                         seed=args.seed)
        start = time.perf_counter()
        result = model.deduplicate(texts, ids=list(range(len(texts))))
        runs[f"{mode}/{sketch}"] = (result.is_duplicate, time.perf_counter() - start)
        bands, rows = model.bands_, model.rows_
        if mode == "minhash_lsh":
            extra_pairs += [(int(o), d) for d, o in enumerate(result.duplicate_of) if o >= 0]
    start = time.perf_counter()
    ds_flags, ds_pairs = datasketch_flags(texts, args.num_perm, bands, rows, args.seed)
    runs["datasketch/minhash"] = (ds_flags, time.perf_counter() - start)
    extra_pairs += ds_pairs
    pairs = candidate_pairs(texts, extra_pairs)
    truth_j = best_earlier_jaccard(texts, pairs)
    print(f"{len(pairs)} candidate pairs; {int((truth_j >= args.threshold).sum())} true "
          f"near-duplicates at J >= {args.threshold}", flush=True)

    rows_out = []
    for name, (flags, seconds) in runs.items():
        method, sketch = name.split("/")
        for low, high in BANDS:
            inside = (truth_j >= low) & (truth_j < high)
            n = int(inside.sum())
            flagged = int(flags[inside].sum())
            rows_out.append({"method": method, "sketch": sketch,
                             "jaccard_band": f"{low:.2f}-{min(high, 1):.2f}",
                             "n_docs": n, "flagged": flagged,
                             "flag_rate": round(flagged / n, 4) if n else "",
                             "above_threshold": low >= args.threshold})
        tp, fp, fn, precision, recall, f1 = metrics(flags, truth_j, args.threshold)
        rows_out.append({"method": method, "sketch": sketch, "jaccard_band": "ALL",
                         "n_docs": len(texts), "flagged": int(flags.sum()), "tp": tp, "fp": fp,
                         "fn": fn, "precision": round(precision, 4), "recall": round(recall, 4),
                         "f1": round(f1, 4), "seconds": round(seconds, 3)})
        print(f"{method:12s} {sketch:8s} P={precision:.4f} R={recall:.4f} F1={f1:.4f} "
              f"(tp={tp} fp={fp} fn={fn}) {seconds:.2f}s", flush=True)
    exact = runs["minhash_lsh/minhash"][0]
    bloom = runs["lshbloom/minhash"][0]
    print(f"lshbloom vs minhash_lsh (classic): {int((bloom != exact).sum())} disagreements, "
          f"{int((bloom & ~exact).sum())} extra flags (Bloom FPs), "
          f"{int((~bloom & exact).sum())} missed")
    write_csv(RESULTS / "dedup_quality.csv", rows_out)
    sketch_error(texts, pairs, args)


def sketch_error(texts, pairs, args):
    """Jaccard estimates of OPH vs classic MinHash against the exact Jaccard of candidate pairs."""
    from corpus_miner.dedup import LSHBloomParams, signatures_for_texts

    from groundtruth import exact_jaccard, shingle_sets
    sets = shingle_sets(texts)
    pair_array = np.array(sorted(pairs), dtype=np.int64)
    exact = np.array([exact_jaccard(sets[i], sets[j]) for i, j in pair_array])
    rows_out = []
    for sketch in ("minhash", "oph"):
        params = LSHBloomParams(num_perm=args.num_perm, sketch=sketch, seed=args.seed).validated()
        sig = signatures_for_texts(texts, params)
        estimate = (sig[pair_array[:, 0]] == sig[pair_array[:, 1]]).mean(axis=1)
        for low, high in [(0.0, 0.5), (0.5, 0.8), (0.8, 0.9), (0.9, 1.0001), (0.0, 1.0001)]:
            inside = (exact >= low) & (exact < high)
            error = estimate[inside] - exact[inside]
            rows_out.append({"sketch": sketch, "num_perm": args.num_perm,
                             "jaccard_band": f"{low:.2f}-{min(high, 1):.2f}",
                             "pairs": int(inside.sum()),
                             "bias": round(float(error.mean()), 5) if inside.any() else "",
                             "rmse": (round(float(np.sqrt((error ** 2).mean())), 5)
                                      if inside.any() else "")})
            print(f"sketch {sketch:8s} J in [{low:.2f},{min(high, 1):.2f}): "
                  f"{int(inside.sum()):6d} pairs "
                  f"bias {rows_out[-1]['bias']} rmse {rows_out[-1]['rmse']}")
    write_csv(RESULTS / "dedup_sketch_error.csv", rows_out)


def bloom_fp(args):
    """Measured per-document FP of lshbloom vs configured fp_prob (real docs and random keys)."""
    docs = load_texts(["openjdk-17-doc", "perl-doc", "python3.11-doc", "host-copyright",
                       "postgresql-doc-15", "manpages"], min_chars=200, max_chars=5000)
    texts = [t for _, t in docs]
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(texts))
    reference = [texts[i] for i in order[: len(texts) // 2]]
    queries = [texts[i] for i in order[len(texts) // 2:]]
    rows_out = []
    # The filter is sized for expected_items documents of `bands` DISTINCT keys each; documents that
    # are near-duplicates of each other share keys and fill it less. So index only the reference
    # documents the exact table keeps (they share no key with each other), at capacity.
    exact = LSHBloom(mode="minhash_lsh", threshold=args.threshold, num_perm=args.num_perm)
    keep = exact.deduplicate(reference).keep
    reference_unique = [text for text, kept in zip(reference, keep) if kept]
    unique = ~exact.query(queries).is_duplicate
    for fp_prob in (0.2, 0.05, 0.01):
        bloom = LSHBloom(mode="lshbloom", threshold=args.threshold, num_perm=args.num_perm,
                         fp_prob=fp_prob).fit(reference_unique)
        flagged = bloom.query(queries).is_duplicate[unique]
        measured = float(flagged.mean())
        rows_out.append({"data": "real documents", "fp_prob": fp_prob, "bands": bloom.bands_,
                         "indexed_docs": len(reference_unique),
                         "queried_unique_docs": int(unique.sum()),
                         "false_positives": int(flagged.sum()), "measured_fp": round(measured, 6),
                         "ratio": round(measured / fp_prob, 3),
                         "num_bits": bloom.index_.num_bits, "num_hashes": bloom.index_.num_hashes})
    bands = 13
    for fp_prob in (1e-2, 1e-3, 1e-4, 1e-5):
        n_docs, n_queries = 100_000, max(200_000, round(40 / fp_prob))
        bloom = BloomFilter.for_documents(n_docs, bands, fp_prob)
        bloom.add(rng.integers(0, 2**64 - 1, size=(n_docs, bands), dtype=np.uint64, endpoint=True))
        hits = 0
        for start in range(0, n_queries, 1_000_000):
            size = min(1_000_000, n_queries - start)
            batch = rng.integers(0, 2**64 - 1, size=(size, bands), dtype=np.uint64, endpoint=True)
            hits += int(bloom.contains_any(batch).sum())
        measured = hits / n_queries
        rows_out.append({"data": "random band keys", "fp_prob": fp_prob, "bands": bands,
                         "indexed_docs": n_docs, "queried_unique_docs": n_queries,
                         "false_positives": hits, "measured_fp": measured,
                         "ratio": round(measured / fp_prob, 3),
                         "num_bits": bloom.num_bits, "num_hashes": bloom.num_hashes})
    for row in rows_out:
        print(f"{row['data']:17s} fp_prob={row['fp_prob']:<7g} measured={row['measured_fp']:.3g} "
              f"ratio={row['ratio']} ({row['false_positives']}/{row['queried_unique_docs']})")
    write_csv(RESULTS / "dedup_bloom_fp.csv", rows_out)



def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--originals", type=int, default=1500)
    parser.add_argument("--copies", type=int, default=900)
    parser.add_argument("--threshold", type=float, default=0.85)
    parser.add_argument("--num-perm", type=int, default=256)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-fp", action="store_true")
    args = parser.parse_args(argv)
    quality(args)
    if not args.skip_fp:
        bloom_fp(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
