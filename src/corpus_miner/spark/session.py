"""A local SparkSession whose Python workers run this interpreter (the one with corpus-miner).

Spark starts `python3` from PATH for its workers unless PYSPARK_PYTHON says otherwise; in a
virtualenv that is usually an interpreter without corpus-miner, and the pandas UDFs then fail to
import it. Users bringing their own session must set PYSPARK_PYTHON themselves (see README).
"""

from __future__ import annotations

import os
import sys


def local_session(master: str = "local[2]", app_name: str = "corpus-miner",
                  shuffle_partitions: int | None = None, **conf):
    """getOrCreate a session on `master` with PYSPARK_PYTHON defaulting to sys.executable.

    Extra Spark settings come as keyword arguments with dots written as "__"
    (e.g. spark__driver__memory="4g").
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    if shuffle_partitions is not None:
        builder = builder.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
    for key, value in conf.items():
        builder = builder.config(key.replace("__", "."), str(value))
    return builder.getOrCreate()
