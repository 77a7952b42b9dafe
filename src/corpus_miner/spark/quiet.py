"""Spark's own noise kept off the user's terminal, and --master checked before any JVM starts.

The driver JVM writes its start-up banner, log4j lines and executor stack traces to the stderr
it inherits, and so do the Python workers it starts; py4j logs through `logging` and pyspark's
accumulator server prints an EOFError traceback when a worker's connection closes early. The
commands print their own one-line messages: unless asked (`--verbose`), the JVM is started
with its stderr in an anonymous temporary file, py4j's loggers are quiet and the accumulator
server's connection errors are dropped.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import sys
import tempfile
from collections.abc import Iterator

from corpus_miner.errors import ParameterError

_LOCAL = re.compile(r"local(\[(\*|[1-9][0-9]*)(,\s*([1-9][0-9]*))?\])?")
_CLUSTER = re.compile(r"local-cluster\[[1-9][0-9]*,\s*[1-9][0-9]*,\s*[1-9][0-9]*\]")
_STANDALONE = re.compile(r"spark://([^/:\s,]+:[0-9]+)(,[^/:\s,]+:[0-9]+)*")
_OTHER = re.compile(r"(yarn|k8s://\S+|mesos://\S+)")
CONNECT_SECONDS = 3.0


def check_master(master: str) -> None:
    """ParameterError (one line) unless `master` is a Spark master URL Spark would accept:
    local, local[N], local[*], local[N,F], local-cluster[N,C,M], yarn, k8s://..., mesos://...,
    or spark://HOST:PORT[,HOST:PORT] with at least one master accepting connections."""
    text = master.strip() if isinstance(master, str) else ""
    if _LOCAL.fullmatch(text) or _CLUSTER.fullmatch(text) or _OTHER.fullmatch(text):
        return
    if _STANDALONE.fullmatch(text):
        hosts = text[len("spark://"):].split(",")
        for host in hosts:
            name, port = host.rsplit(":", 1)
            try:
                with socket.create_connection((name, int(port)), timeout=CONNECT_SECONDS):
                    return
            except (OSError, ValueError):
                continue
        raise ParameterError(f"--master {master}: no Spark master accepts connections at "
                             f"{', '.join(hosts)}; start it or name another master")
    raise ParameterError(f"--master {master!r}: not a Spark master; use local[N] (N >= 1 "
                         "worker threads), local[*], spark://HOST:PORT, yarn or k8s://URL")


@contextlib.contextmanager
def quiet_start(verbose: bool) -> Iterator[None]:
    """While a session starts: the JVM (and the workers it will start) get an anonymous
    temporary file as stderr unless `verbose`; the file is theirs for the rest of their life."""
    if verbose:
        yield
        return
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    try:
        saved = os.dup(2)
    except OSError:  # no stderr descriptor: nothing to keep quiet
        yield
        return
    log = tempfile.TemporaryFile(prefix="corpus-miner-spark-")
    try:
        os.dup2(log.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        log.close()  # the JVM keeps its own descriptor of the (unlinked) file


def quiet_python(spark, verbose: bool) -> None:
    """Unless `verbose`: py4j's loggers silent (and the root logger, which py4j's Ctrl-C path
    uses, given a handler that drops records instead of the default one to stderr), and
    pyspark's accumulator server without the traceback of a worker connection that closed
    early (EOFError)."""
    if verbose:
        return
    for name in ("py4j", "py4j.java_gateway", "py4j.clientserver"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.CRITICAL)
        logger.propagate = False
    root = logging.getLogger()
    if not root.handlers:  # py4j also calls logging.exception(), which would set up stderr
        root.addHandler(logging.NullHandler())
    server = getattr(spark.sparkContext, "_accumulatorServer", None)
    if server is not None and not getattr(server, "_corpus_miner_quiet", False):
        def handle_error(request, client_address) -> None:  # socketserver prints otherwise
            return None

        server.handle_error = handle_error
        server._corpus_miner_quiet = True


def jvm_pid(spark) -> int | None:
    """The process id of the session's driver JVM (asked while it answers; at a Ctrl-C the
    gateway may be busy or gone)."""
    try:
        return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    except Exception:  # noqa: BLE001 - a remote or odd gateway: nothing to end later
        return None


def end_jvm(pid: int | None) -> None:
    """Kill the driver JVM `pid` this process started, and the Python workers it started
    (when a signal stops a command-line run; the process is about to end)."""
    import psutil

    if pid is None:
        return
    with contextlib.suppress(psutil.Error):
        jvm = psutil.Process(pid)
        family = [jvm, *jvm.children(recursive=True)]
        for member in family:
            with contextlib.suppress(psutil.Error):
                member.kill()
        psutil.wait_procs(family, timeout=30)
