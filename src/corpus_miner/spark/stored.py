"""Keeping a DataFrame that later jobs read again, at the lowest cost the deployment allows.

Spark's DataFrame cache (persist) turns rows into column batches as it stores them. For rows
holding binary blobs of a few MB, as the BloomSpan passes store, that costs the JVM about three
times as much as keeping the rows as they are (localCheckpoint): 800 MB in 2 MB blobs took 3.4
against 1.2 JVM CPU s to store (receiving them from Python included) and 1.9 against 1.5 s to
read back (benchmarks/bench_stored.py, medians of 3). In a SparkBloomSpan fit of 113M tokens the
JVM's CPU fell from 20.0 to 15.4 s.

localCheckpoint cuts the lineage, so a block lost with its executor cannot be recomputed. In
local mode the only executor lives in the driver's JVM, so nothing can be lost without losing the
job as well: there rows are kept (lazily, by the first job that reads them). On a cluster the
DataFrame is persisted, and Spark recomputes what a lost executor held.

Kept rows are Java objects, one per row: right for a few thousand rows of large blobs, wasteful
for millions of small rows, which the columnar cache packs tightly (SparkLSHBloom's band tables
stay persisted for that reason).
"""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import DataFrame


def local_mode(spark) -> bool:
    """True for master local, local[N], local[*] and local[N, F] (one executor in the driver's
    JVM); False for clusters and local-cluster[...] (executors in their own JVMs)."""
    master = spark.sparkContext.master
    return master == "local" or master.startswith("local[")


def keep(df: DataFrame) -> DataFrame:
    """df, stored by the first job that reads it; drop() releases it."""
    if local_mode(df.sparkSession):
        return df.localCheckpoint(eager=False)
    return df.persist(StorageLevel.MEMORY_AND_DISK)


def drop(df: DataFrame) -> None:
    """Release the storage of a keep() result (blocking until its blocks are removed)."""
    if local_mode(df.sparkSession):
        # the checkpointed rows are the blocks of the RDD under the frame's LogicalRDD
        df._jdf.queryExecution().logical().rdd().unpersist(True)
    else:
        df.unpersist()
