"""A local SparkSession whose Python workers run this interpreter (the one with corpus-miner).

Spark starts `python3` from PATH for its workers unless PYSPARK_PYTHON says otherwise; in a
virtualenv that is usually an interpreter without corpus-miner, and the pandas UDFs then fail to
import it. Users bringing their own session must set PYSPARK_PYTHON themselves (see README).
"""

from __future__ import annotations

import os
import sys

from corpus_miner.spark.class_archive import ClassArchive


def local_session(master: str = "local[2]", app_name: str = "corpus-miner",
                  shuffle_partitions: int | None = None, class_archive: bool = True, **conf):
    """getOrCreate a session on `master` with PYSPARK_PYTHON defaulting to sys.executable.

    Extra Spark settings come as keyword arguments with dots written as "__"
    (e.g. spark__driver__memory="4g").
    class_archive: start a new driver JVM with the class archive of this Spark installation
        (spark/class_archive.py: about half the start-up time; the first session writes it).
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf = {key.replace("__", "."): str(value) for key, value in conf.items()}
    archive = None
    if class_archive and SparkContext._gateway is None:  # else getOrCreate reuses the JVM
        archive = ClassArchive.for_this_spark(conf)
        options = archive.java_options() if archive is not None else None
        if options is not None:
            key = "spark.driver.extraJavaOptions"
            conf[key] = f"{conf[key]} {options}" if conf.get(key) else options
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
