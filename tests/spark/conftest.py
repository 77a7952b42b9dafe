"""One local Spark session for all Spark tests (session start costs seconds: share it).

master local[2,4]: two worker threads, and a failed task is retried up to 4 times, which the
retry-invariance test relies on. Test modules call pytest.importorskip("pyspark") themselves, so
without the `spark` extra they are skipped cleanly.
"""

from __future__ import annotations

import os
import sys

import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/spark/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and active.sparkContext.master != "local[2,4]":
        # an in-process CLI test (--engine spark) left its session: getOrCreate would return it,
        # with its master and without the retries this fixture promises
        active.stop()
    session = (SparkSession.builder.master("local[2,4]").appName("corpus-miner-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.sql.adaptive.enabled", "false")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
