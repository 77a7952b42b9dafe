"""A class-data-sharing (CDS) archive of the Spark driver JVM's classes, kept in the user cache.

Starting a local Spark session loads ~10,000 classes from Spark's jars, and the first job loads
thousands more; that is most of the ~7 s a session and its first read take before any work.
Java 17 can write the classes a JVM loaded to an archive when it exits (-XX:ArchiveClassesAtExit)
and map that archive at the next start (-XX:SharedArchiveFile): the session then starts in about
half the time (benchmarks/bench_spark_start.py).

The first session of an installation writes the archive: its JVM dumps at exit (~10 s, once),
and this process waits for it, then publishes the file under a name holding its size, by an
atomic rename. A JVM killed while dumping leaves only a temporary file (a truncated archive would
crash the JVM that maps it, so one is never published). The archive is keyed by Spark's jars and
the Java runtime: another installation or Java uses its own (the KEEP_ARCHIVES newest are kept),
and an unusable archive is ignored by the JVM (-Xshare:auto, its warnings silenced).

Skipped (the session starts as before) when the class path is not Spark's own jars (a JVM dumps
only jars, and an extra directory makes its dump fail), when the cache is not writable, and after
a dump failed once for the key.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
from pathlib import Path

from corpus_miner.io.cache import cache_dir

QUIET = "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"
"""The JVM's CDS warnings go to stdout, where CLI commands may write their output."""
CLASS_PATH_ENV = ("SPARK_CLASSPATH", "SPARK_DIST_CLASSPATH", "HADOOP_CONF_DIR", "YARN_CONF_DIR",
                  "SPARK_PREPEND_CLASSES")
"""Variables with which Spark's launcher puts more than its jars on the class path."""
DUMP_WAIT_SECONDS = 120
KEEP_ARCHIVES = 4
"""Archives kept in the cache (~150-200 MB each): one per Spark installation, newest first."""


class ClassArchive:
    """The archive of one Spark installation and Java runtime: `java_options()` for a new driver
    JVM, and `after_start(process)` once the session's JVM runs."""

    def __init__(self, directory: Path, key: str):
        self.directory = directory
        self.key = key
        self.failed = directory / f"classes-{key}.failed"
        self._dump_to: Path | None = None

    @classmethod
    def for_this_spark(cls, conf: dict) -> ClassArchive | None:
        """The archive of the Spark that pyspark starts, or None when it cannot be used."""
        try:
            key = _installation_key(conf)
        except OSError:
            return None
        return None if key is None else cls(cache_dir() / "spark", key)

    def published(self) -> Path | None:
        """The complete archive of this key, if one was published."""
        for path in self.directory.glob(f"classes-{self.key}.*.jsa"):
            size = path.name.split(".")[-2]
            try:
                if size.isdigit() and path.stat().st_size == int(size):
                    return path
            except OSError:
                continue
        return None

    def java_options(self) -> str | None:
        """Options that map the published archive, or that dump one at exit; None to do
        neither (a dump failed before, the cache is not writable)."""
        if any(c in str(self.directory) for c in " \t\"'\\"):
            return None  # Spark splits the options at blanks
        found = self.published()
        if found is not None:
            return f"-XX:SharedArchiveFile={found} {QUIET}"
        if self.failed.exists() or self._dumping_elsewhere():
            return None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._dump_to = self.directory / f".classes-{self.key}.{os.getpid()}.tmp"
            self._dump_to.unlink(missing_ok=True)
        except OSError:
            return None
        return f"-XX:ArchiveClassesAtExit={self._dump_to} {QUIET}"

    def _dumping_elsewhere(self) -> bool:
        """Whether a live process is writing this key's archive (one dump is enough)."""
        for path in self.directory.glob(f".classes-{self.key}.*.tmp"):
            try:
                os.kill(int(path.name.split(".")[-2]), 0)
                return True
            except (ValueError, ProcessLookupError):
                path.unlink(missing_ok=True)  # its process died before publishing it
            except PermissionError:
                return True
        return False

    def after_start(self, process) -> None:
        """Register the wait for the dump of `process` (the driver JVM) at this process's exit."""
        if self._dump_to is not None and process is not None:
            atexit.register(self.finish_dump, process)

    def finish_dump(self, process) -> None:
        """Let the JVM exit (it does when its stdin closes), wait for its dump, publish it when
        the JVM exited cleanly; otherwise remember the failure."""
        dumped = self._dump_to
        if dumped is None:
            return
        self._dump_to = None
        try:
            if process.stdin is not None:
                process.stdin.close()
            code = process.wait(timeout=DUMP_WAIT_SECONDS)
        except Exception:  # a dump that does not end in time is abandoned: kill it
            process.kill()
            code = None
        try:
            if code == 0 and dumped.exists() and dumped.stat().st_size > 0:
                final = dumped.with_name(f"classes-{self.key}.{dumped.stat().st_size}.jsa")
                os.replace(dumped, final)
                self._forget_old(final)
            else:
                dumped.unlink(missing_ok=True)
                self.failed.touch()
        except OSError:
            pass

    def _forget_old(self, kept: Path) -> None:
        """Drop this key's earlier archives and all but the KEEP_ARCHIVES - 1 newest archives of
        other installations (virtualenvs sharing the cache each have their own)."""
        others = []
        for path in self.directory.glob("classes-*.jsa"):
            if path == kept:
                continue
            if path.name.startswith(f"classes-{self.key}."):
                path.unlink(missing_ok=True)
            else:
                others.append((path.stat().st_mtime, path))
        for _, path in sorted(others, reverse=True)[KEEP_ARCHIVES - 1:]:
            path.unlink(missing_ok=True)


def _installation_key(conf: dict) -> str | None:
    """A digest of Spark's jars and the Java runtime the launcher will run, or None when the
    class path would hold more than Spark's jars."""
    from pyspark.find_spark_home import _find_spark_home

    if any(os.environ.get(name) for name in CLASS_PATH_ENV) or any(
            "extraClassPath" in key for key in conf):
        return None
    home = Path(_find_spark_home()).resolve()
    conf_dir = Path(os.environ.get("SPARK_CONF_DIR") or home / "conf")
    if conf_dir.is_dir() and any(conf_dir.iterdir()):
        return None
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if not java or not os.path.exists(java):
        return None
    java = os.path.realpath(java)
    digest = hashlib.sha1()
    for path in [Path(java)] + sorted((home / "jars").glob("*.jar")):
        stat = path.stat()
        digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]
