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


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    """spark://127.0.0.1:PORT of a standalone cluster started from pyspark's own jars: a master
    and two workers of one core each, all on 127.0.0.1, ended (with their executors) when the
    session ends. Skips with the reason when Java or the cluster cannot start. A test drives it
    from a separate Python process: this one's SparkContext is the local test session."""
    pyspark = pytest.importorskip("pyspark")
    import shutil
    import signal
    import subprocess
    from pathlib import Path

    home = Path(pyspark.__file__).parent
    spark_class = home / "bin" / "spark-class"
    if not spark_class.exists():
        pytest.skip(f"no bin/spark-class in this pyspark ({home.name}) to start a cluster with")
    if shutil.which("java") is None and "JAVA_HOME" not in os.environ:
        pytest.skip("no java on PATH (nor JAVA_HOME) to start a standalone cluster")
    folder = tmp_path_factory.mktemp("spark-cluster")
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable, "SPARK_NO_DAEMONIZE": "1"}
    port, ui_port = _free_port(), _free_port()
    master = f"spark://127.0.0.1:{port}"
    processes = []

    def start(name: str, *args: str) -> None:
        with open(folder / f"{name}.log", "wb") as log:  # the child keeps its own descriptor
            processes.append(subprocess.Popen(
                [str(spark_class), *args], stdout=log, stderr=subprocess.STDOUT, env=env,
                cwd=folder, start_new_session=True))  # its own group: executors end with it

    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
              "--port", str(port), "--webui-port", str(ui_port))
        for worker in (1, 2):
            start(f"worker{worker}", "org.apache.spark.deploy.worker.Worker", master,
                  "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
                  "--webui-port", str(_free_port()), "--work-dir", str(folder / f"work{worker}"))
        if not _workers_alive(ui_port, 2, processes, CLUSTER_START_SECONDS):
            logs = " | ".join((folder / f"{name}.log").read_text(errors="replace")[-300:]
                              for name in ("master", "worker1"))
            pytest.skip(f"the standalone cluster did not start in {CLUSTER_START_SECONDS} s: "
                        f"{logs}")
        yield master
    finally:
        for process in processes:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


CLUSTER_START_SECONDS = 120  # two JVMs start after the master's on a shared 2-core machine


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _workers_alive(ui_port: int, wanted: int, processes, timeout: float) -> bool:
    """Whether the master's status page lists `wanted` ALIVE workers within timeout seconds
    (False at once when a process of the cluster has ended)."""
    import json
    import time
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(process.poll() is not None for process in processes):
            return False
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as page:
                status = json.load(page)
            if sum(w.get("state") == "ALIVE" for w in status.get("workers", [])) >= wanted:
                return True
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    return False
