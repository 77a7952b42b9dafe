"""A local SparkSession whose Python workers run this interpreter (the one with corpus-miner).

Spark starts `python3` from PATH for its workers unless PYSPARK_PYTHON says otherwise; in a
virtualenv that is usually an interpreter without corpus-miner, and the pandas UDFs then fail to
import it. Users bringing their own session must set PYSPARK_PYTHON themselves (see README).
"""

from __future__ import annotations

import os
import sys

from corpus_miner.spark.class_archive import ClassArchive

JIT_OPTIONS = "-XX:TieredStopAtLevel=1"
"""The driver JVM compiles with C1 only, not the optimizing C2. A local session is a short job:
over a 113M-token profile run on local[2] C2's compiler threads took 6.0 CPU s even at 10x its
default thresholds (1.4 with C1), more than its faster code saved. Side by side
(benchmarks/bench_spark_bloomspan.py --java-options) the fit took 31.9-32.9 s and 50.0-51.4 CPU
s with C1, 34.7-35.2 s and 56.3 CPU s with C2 at 10x. C1's code is slower where the JVM itself
computes (busy-machine runs hinted at ~7%), so for local jobs of about a billion tokens or more
pass spark__driver__extraJavaOptions="-XX:TieredStopAtLevel=4". On a cluster the driver runs no
tasks. Options the caller passes come after these, so they win."""


def local_session(master: str = "local[2]", app_name: str = "corpus-miner",
                  shuffle_partitions: int | None = None, class_archive: bool = True, **conf):
    """getOrCreate a session on `master` with PYSPARK_PYTHON defaulting to sys.executable.

    Extra Spark settings come as keyword arguments with dots written as "__"
    (e.g. spark__driver__memory="4g").
    class_archive: start a new driver JVM with the class archive of this Spark installation
        (spark/class_archive.py: about half the start-up time; the first session writes it).
    A new driver JVM also gets JIT_OPTIONS, before any spark__driver__extraJavaOptions.
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf = {key.replace("__", "."): str(value) for key, value in conf.items()}
    archive = None
    if SparkContext._gateway is None:  # else getOrCreate reuses the running JVM
        options = [JIT_OPTIONS]
        archive = ClassArchive.for_this_spark(conf) if class_archive else None
        if archive is not None:
            options.append(archive.java_options() or "")
        key = "spark.driver.extraJavaOptions"
        conf[key] = " ".join(option for option in options + [conf.get(key, "")] if option)
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    if shuffle_partitions is not None:
        builder = builder.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    if archive is not None:
        archive.after_start(getattr(SparkContext._gateway, "proc", None))
    return session
