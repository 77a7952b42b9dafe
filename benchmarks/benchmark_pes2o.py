"""LSHBloom vs the distributed MinHashLSH band table on Spark (the seed's peS2o benchmark).

    python benchmarks/benchmark_pes2o.py --input-path data/docs20k --out-dir runs/bench \
        --sizes 10000,20000 --num-perm 128 --num-bands 32 --shingle-size 5 --max-shingles 2048 \
        --master "local[2]" --local-io-mode pyarrow --planted 150

Input: a folder (or file) of Parquet or JSONL documents with --text-col / --id-col; the first N
documents in file order are used for each size N. For every size the script, on one Spark
session, (1) times computing the band keys alone (keys_sec: shingling + sketching + banding, the
work both indexes share), (2) builds each index with fit() and saves it --repeat times, keeping
the fastest (wall_clock_sec = fit + save; index_only_sec = fit - keys_sec), (3) runs the one-shot
deduplicate of both methods on the same rows and compares their answers.
Index sizes: lshbloom = the saved index folder (Bloom bits + metadata); minhash_lsh = the band
table written as compressed Parquet by Spark (the seed's definition), with the shared-format
folder size alongside. --planted P adds the correctness row: the first --planted-base documents
plus P planted near-copies (1% words substituted, case and spacing changed) deduplicated with
SparkLSHBloom's defaults; every copy must be found and no document removed without an earlier
document of exact Jaccard >= 0.5. Writes OUT_DIR/benchmark_results.csv.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pyarrow as pa

from corpus_miner.dedup.shingles import shingle_batch
from corpus_miner.io.atomic import atomic_path
from corpus_miner.io.readers import read_documents

GB = 1024 ** 3


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--input-path", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--sizes", default="10000", help="comma-separated document counts")
    p.add_argument("--num-perm", type=int, default=128)
    p.add_argument("--num-bands", type=int, default=32, help="0: choose from --threshold")
    p.add_argument("--shingle-size", type=int, default=5)
    p.add_argument("--max-shingles", type=int, default=2048)
    p.add_argument("--threshold", type=float, default=0.85)
    p.add_argument("--fp-prob", type=float, default=1e-5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--chunks", type=int, default=4, help="deduplicate_chunks of lshbloom")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--driver-memory", default="2g")
    p.add_argument("--partitions", type=int, default=0,
                   help="input partitions (0: 2 x Spark's default parallelism)")
    p.add_argument("--local-io-mode", choices=["pyarrow", "python", "spark", "auto"],
                   default="auto", help="how documents get into Spark (auto: spark for URIs)")
    p.add_argument("--text-col", default="text")
    p.add_argument("--id-col", default="id")
    p.add_argument("--repeat", type=int, default=3, help="index builds per method (fastest kept)")
    p.add_argument("--planted", type=int, default=0, help="planted copies for the check row")
    p.add_argument("--planted-base", type=int, default=744)
    return p.parse_args(argv)


# -- input -----------------------------------------------------------------------------------------
def read_local(path: str, limit: int, text_col: str, id_col: str) -> pa.Table:
    ids, texts, n = [], [], 0
    for batch in read_documents([path], text_field=text_col, id_field=id_col):
        take = min(len(batch), limit - n)
        ids.append(batch.ids.slice(0, take).cast(pa.string()))
        texts.append(batch.texts.slice(0, take).cast(pa.string()))
        n += take
        if n >= limit:
            break
    return pa.table({"id": pa.concat_arrays(ids), "text": pa.concat_arrays(texts)})


def load_frame(spark, args, limit: int):
    """(DataFrame id, text of the first `limit` documents, cached; its row count)."""
    mode = args.local_io_mode
    if mode == "auto":
        mode = "spark" if "://" in args.input_path else "pyarrow"
    if mode == "spark":
        from pyspark.sql import functions as F

        from corpus_miner.spark import frames

        reader = spark.read.parquet if _is_parquet(args.input_path) else spark.read.json
        # Spark packs file splits into partitions largest first, so partition order is not file
        # order: order rows by (file, split, row within the split) instead.
        file_order = F.struct(F.col("_metadata.file_path"), F.col("_metadata.file_block_start"),
                              F.monotonically_increasing_id()).alias("_file_order")
        raw = reader(args.input_path).select(F_col(args.id_col).cast("string").alias("id"),
                                             F_col(args.text_col).alias("text"), file_order)
        ordered, _, _ = frames.with_input_order(raw, "_file_order", "text")
        df = ordered.filter(F_col(frames.ORDER) < limit).drop(frames.ORDER, "_file_order")
    else:
        table = read_local(args.input_path, limit, args.text_col, args.id_col)
        if mode == "python":
            rows = list(zip(table["id"].to_pylist(), table["text"].to_pylist()))
            df = spark.createDataFrame(rows, "id string, text string")
        else:
            df = spark.createDataFrame(table)
    # Contiguous ranges of the input order, so every core gets work and the order is kept.
    partitions = args.partitions or 2 * spark.sparkContext.defaultParallelism
    from pyspark.sql import functions as F
    numbered = df.withColumn("_row", F.monotonically_increasing_id())
    df = numbered.repartitionByRange(partitions, "_row").sortWithinPartitions("_row") \
        .drop("_row").persist()
    return df, df.count()


def F_col(name):
    from pyspark.sql import functions as F
    return F.col(name)


def _is_parquet(path: str) -> bool:
    return path.endswith(".parquet") or any(Path(path).glob("*.parquet")) if "://" not in path \
        else ".parquet" in path


# -- measurements ---------------------------------------------------------------------------------
def rss_bytes() -> tuple[int, int]:
    """(this Python driver's RSS, the driver JVM's RSS: the java child process)."""
    me = psutil.Process()
    jvm = sum(child.memory_info().rss for child in me.children(recursive=True)
              if "java" in child.name().lower())
    return me.memory_info().rss, jvm


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def model_for(args, mode: str, **overrides):
    from spark_lshbloom import SparkLSHBloom

    params = dict(threshold=args.threshold, num_perm=args.num_perm, mode=mode,
                  num_bands=args.num_bands or None, fp_prob=args.fp_prob,
                  shingle_size=args.shingle_size, seed=args.seed, max_shingles=args.max_shingles,
                  deduplicate_chunks=args.chunks)
    params.update(overrides)
    return SparkLSHBloom(**params)


def keys_seconds(args, df) -> float:
    """Time to compute every band key once (shingle + sketch + band): the work both indexes
    share."""
    from pyspark.sql import functions as F

    from corpus_miner.spark import frames

    params = model_for(args, "lshbloom")._validated()
    start = time.perf_counter()
    df.select(F.sum(F.size(frames.band_keys_column(params, "text", True)))).collect()
    return time.perf_counter() - start


def build_row(args, df, n_docs: int, mode: str, out: Path) -> dict:
    """The fastest of --repeat builds (fit + save) of one index."""
    rows = [build_once(args, df, n_docs, mode, out) for _ in range(max(1, args.repeat))]
    return min(rows, key=lambda row: row["wall_clock_sec"])


def build_once(args, df, n_docs: int, mode: str, out: Path) -> dict:
    model = model_for(args, mode)
    rss0, jvm0 = rss_bytes()
    start = time.perf_counter()
    model.fit(df, text_col="text", id_col="id")
    fit_sec = time.perf_counter() - start
    saved = out / f"{mode}_index"
    start = time.perf_counter()
    if mode == "lshbloom":
        model.save(saved)
    else:  # the seed's explicit distributed index: the band table as Parquet
        model.band_table_.write.mode("overwrite").parquet(str(out / "minhash_lsh_band_table"))
    save_sec = time.perf_counter() - start
    rss1, jvm1 = rss_bytes()
    row = {"method": mode, "n_docs": n_docs, "wall_clock_sec": fit_sec + save_sec,
           "fit_sec": fit_sec, "save_sec": save_sec, "partitions": df.rdd.getNumPartitions(),
           "driver_rss_delta_gb": (rss1 - rss0) / GB, "jvm_rss_delta_gb": (jvm1 - jvm0) / GB,
           "bands": model.bands_, "rows": model.rows_}
    if mode == "lshbloom":
        size = folder_bytes(saved)
        row.update(band_entries=n_docs * model.bands_, bloom_num_bits=model.bloom.num_bits,
                   bloom_num_hashes=model.bloom.num_hashes, local_format_bytes=size)
    else:
        size = folder_bytes(out / "minhash_lsh_band_table")
        model.save(saved)
        row.update(band_entries=model.band_entries_, local_format_bytes=folder_bytes(saved))
    row.update(index_size_bytes=size, index_size_gb=size / GB)
    model.unpersist()
    return row


def dedup_flags(args, df, mode: str, **overrides) -> tuple[np.ndarray, float]:
    """is_duplicate in input order and the wall time of deduplicate + collecting its flags."""
    from pyspark.sql import functions as F

    model = model_for(args, mode, **overrides)
    start = time.perf_counter()
    numbered = df.withColumn("_pos", F.monotonically_increasing_id())
    flags = model.deduplicate(numbered, annotate=True).select("_pos", "is_duplicate").toPandas()
    seconds = time.perf_counter() - start
    model.unpersist()
    return flags.sort_values("_pos")["is_duplicate"].to_numpy(), seconds


# -- planted copies --------------------------------------------------------------------------------
def plant_copies(ids, texts, n_copies: int, seed: int):
    """Originals in order, then n_copies near-copies (1% of words substituted, case and spacing
    changed) of random originals, each appended after all originals."""
    rng = np.random.default_rng(seed)
    out_ids, out_texts = list(ids), list(texts)
    sources = rng.choice(len(texts), size=n_copies, replace=False)
    for c, src in enumerate(sources):
        words = texts[src].split()
        for position in rng.choice(len(words), size=max(1, len(words) // 100), replace=False):
            words[position] = "planted"
        copy = "\n".join(" ".join(words[i:i + 12]) for i in range(0, len(words), 12))
        out_ids.append(f"{ids[src]}#copy{c}")
        out_texts.append(copy.upper() if c % 2 else copy)
    return out_ids, out_texts, sources


def shingle_sets(texts, shingle_size: int = 5):
    hashes, offsets = shingle_batch(texts, shingle_size)
    return [np.unique(hashes[offsets[d]:offsets[d + 1]]) for d in range(len(texts))]


def jaccard(a, b) -> float:
    inter = len(np.intersect1d(a, b, assume_unique=True))
    union = len(a) + len(b) - inter
    return inter / union if union else 1.0


def planted_row(spark, args) -> dict:
    table = read_local(args.input_path, 10 * args.planted_base, args.text_col, args.id_col)
    texts_all = table["text"].to_pylist()
    keep = [i for i, t in enumerate(texts_all) if len(t.split()) >= 50][:args.planted_base]
    ids = [table["id"][i].as_py() for i in keep]
    texts = [texts_all[i] for i in keep]
    ids, texts, sources = plant_copies(ids, texts, args.planted, args.seed)
    df = spark.createDataFrame(pa.table({"id": ids, "text": texts})).persist()
    df.count()
    from pyspark.sql import functions as F

    from spark_lshbloom import SparkLSHBloom

    model = SparkLSHBloom()  # defaults, as a user would run it
    start = time.perf_counter()
    numbered = df.withColumn("_pos", F.monotonically_increasing_id())
    flags = model.deduplicate(numbered, annotate=True).select("_pos", "is_duplicate").toPandas()
    seconds = time.perf_counter() - start
    flags = flags.sort_values("_pos")["is_duplicate"].to_numpy()
    n_orig = len(ids) - args.planted
    sets = shingle_sets(texts, 5)
    copy_j = [jaccard(sets[src], sets[n_orig + c]) for c, src in enumerate(sources)]
    false_removals = 0
    for d in np.flatnonzero(flags):
        if d >= n_orig:
            continue  # a planted copy: its original is earlier
        best = max((jaccard(sets[e], sets[d]) for e in range(d)), default=0.0)
        false_removals += best < 0.5
    df.unpersist()
    return {"method": "lshbloom_planted_check", "n_docs": len(ids), "dedup_sec": seconds,
            "duplicates_found": int(flags.sum()), "copies_total": args.planted,
            "copies_found": int(flags[n_orig:].sum()), "false_removals": int(false_removals),
            "min_copy_jaccard": min(copy_j), "bands": model.bands_, "rows": model.rows_,
            "bloom_num_bits": model.bloom.num_bits, "bloom_num_hashes": model.bloom.num_hashes}


COLUMNS = ["method", "n_docs", "wall_clock_sec", "fit_sec", "save_sec", "keys_sec",
           "index_only_sec", "index_size_bytes",
           "index_size_gb", "local_format_bytes", "band_entries", "driver_rss_delta_gb",
           "jvm_rss_delta_gb", "bloom_num_bits", "bloom_num_hashes", "bands", "rows", "partitions",
           "dedup_sec", "duplicates_found", "agreement", "only_this_method", "copies_total",
           "copies_found", "false_removals", "min_copy_jaccard", "num_perm", "shingle_size",
           "max_shingles", "threshold", "fp_prob", "master", "local_io_mode"]


def main(argv=None) -> int:
    args = parse_args(argv)
    from corpus_miner.spark import local_session

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = local_session(args.master, "benchmark_pes2o", shuffle_partitions=8,
                          spark__driver__memory=args.driver_memory, spark__ui__enabled="false")
    spark.sparkContext.setLogLevel("ERROR")
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    common = {"num_perm": args.num_perm, "shingle_size": args.shingle_size,
              "max_shingles": args.max_shingles, "threshold": args.threshold,
              "fp_prob": args.fp_prob, "master": args.master, "local_io_mode": args.local_io_mode}
    rows = []
    warm, _ = load_frame(spark, args, 200)  # JIT caches and Python workers, outside the timings
    model_for(args, "lshbloom").fit(warm)
    warm.unpersist()
    measured = set()
    for size in sizes:
        df, n_docs = load_frame(spark, args, size)
        if n_docs < size:
            print(f"--sizes {size}: the input holds only {n_docs} documents"
                  + ("; already measured, skipped" if n_docs in measured else
                     f"; measuring {n_docs}"), file=sys.stderr)
        if n_docs in measured:
            df.unpersist()
            continue
        measured.add(n_docs)
        work = out_dir / f"n{n_docs}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        keys_sec = min(keys_seconds(args, df) for _ in range(max(1, args.repeat)))
        built = {mode: build_row(args, df, n_docs, mode, work)
                 for mode in ("lshbloom", "minhash_lsh")}
        for row in built.values():
            row.update(keys_sec=keys_sec, index_only_sec=row["fit_sec"] - keys_sec)
        flags = {mode: dedup_flags(args, df, mode) for mode in ("lshbloom", "minhash_lsh")}
        for mode, other in (("lshbloom", "minhash_lsh"), ("minhash_lsh", "lshbloom")):
            mine, theirs = flags[mode][0], flags[other][0]
            built[mode].update(dedup_sec=flags[mode][1], duplicates_found=int(mine.sum()),
                               agreement=float((mine == theirs).mean()),
                               only_this_method=int((mine & ~theirs).sum()), **common)
            rows.append(built[mode])
            print({k: built[mode].get(k) for k in ("method", "n_docs", "wall_clock_sec",
                                                   "index_size_bytes", "duplicates_found")},
                  file=sys.stderr)
        df.unpersist()
    if args.planted:
        rows.append({**planted_row(spark, args), **common, "num_perm": 256, "max_shingles": None,
                     "threshold": 0.85, "fp_prob": 1e-5})
        print(rows[-1], file=sys.stderr)
    with atomic_path(out_dir / "benchmark_results.csv") as tmp:
        with open(tmp, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=COLUMNS, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)
    print(f"wrote {out_dir / 'benchmark_results.csv'}", file=sys.stderr)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
