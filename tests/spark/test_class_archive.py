"""The driver JVM's class archive (spark/class_archive.py): published only after a clean dump,
used when complete, skipped when the class path is not Spark's own jars; and end to end, a second
local_session maps the archive the first one wrote, with nothing printed on stdout, and the
caller's JVM options come after local_session's own (the last one wins)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pyspark")

from corpus_miner.spark import class_archive  # noqa: E402
from corpus_miner.spark.class_archive import ClassArchive  # noqa: E402


class FakeJVM:
    """What finish_dump needs of the driver JVM's Popen: it 'dumps' when its stdin closes."""

    def __init__(self, code: int):
        self.code = code
        self.stdin = open(os.devnull, "wb")

    def wait(self, timeout=None):
        assert self.stdin.closed  # the JVM exits (and dumps) when its stdin closes
        return self.code

    def kill(self):
        self.code = -9


def dump(archive: ClassArchive, code: int, content: bytes = b"classes") -> None:
    options = archive.java_options()
    assert options.startswith("-XX:ArchiveClassesAtExit=")
    path = options.split()[0].split("=", 1)[1]
    with open(path, "wb") as out:  # what the JVM writes while it exits
        out.write(content)
    archive.finish_dump(FakeJVM(code))


def test_published_after_a_clean_dump_and_used_next(tmp_path):
    dump(ClassArchive(tmp_path, "k1"), 0)
    published = ClassArchive(tmp_path, "k1").published()
    assert published is not None and published.read_bytes() == b"classes"
    assert published.name == "classes-k1.7.jsa"
    options = ClassArchive(tmp_path, "k1").java_options()
    assert options.startswith(f"-XX:SharedArchiveFile={published} ")
    assert "-Xlog:cds=off" in options and "-Xshare:auto" in options
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_failed_dump_is_not_published_nor_retried(tmp_path):
    dump(ClassArchive(tmp_path, "k1"), 1)
    assert ClassArchive(tmp_path, "k1").published() is None
    assert not list(tmp_path.glob(".*.tmp"))
    assert ClassArchive(tmp_path, "k1").java_options() is None
    assert ClassArchive(tmp_path, "k2").java_options() is not None  # another installation


def test_a_damaged_archive_is_ignored_and_dumped_again(tmp_path):
    dump(ClassArchive(tmp_path, "k1"), 0)
    published = ClassArchive(tmp_path, "k1").published()
    os.chmod(published, 0o644)
    published.write_bytes(b"class")  # truncated: mapping it would crash the JVM
    assert ClassArchive(tmp_path, "k1").published() is None
    assert ClassArchive(tmp_path, "k1").java_options().startswith("-XX:ArchiveClassesAtExit=")


def test_installations_keep_their_own_archives(tmp_path):
    """Virtualenvs sharing the cache must not evict each other's archive (each would dump again
    at its next start); beyond KEEP_ARCHIVES installations the oldest goes, and a key's damaged
    archive goes when it is written again."""
    keep = class_archive.KEEP_ARCHIVES
    for index in range(keep + 1):
        archive = ClassArchive(tmp_path, f"k{index}")
        dump(archive, 0)
        os.utime(archive.published(), (index, index))
    assert sorted(p.name for p in tmp_path.glob("classes-*.jsa")) == \
        [f"classes-k{i}.7.jsa" for i in range(1, keep + 1)]
    damaged = ClassArchive(tmp_path, "k2").published()
    os.chmod(damaged, 0o644)
    damaged.write_bytes(b"class")
    dump(ClassArchive(tmp_path, "k2"), 0, b"more classes")
    assert not damaged.exists()
    assert ClassArchive(tmp_path, "k2").published().name == "classes-k2.12.jsa"
    assert len(list(tmp_path.glob("classes-*.jsa"))) == keep


def test_one_dump_at_a_time(tmp_path):
    elsewhere = tmp_path / f".classes-k1.{os.getppid()}.tmp"  # a live process is dumping
    elsewhere.write_bytes(b"")
    assert ClassArchive(tmp_path, "k1").java_options() is None
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    elsewhere.rename(tmp_path / f".classes-k1.{dead}.tmp")  # ... that died before publishing
    assert ClassArchive(tmp_path, "k1").java_options().startswith("-XX:ArchiveClassesAtExit=")
    assert not (tmp_path / f".classes-k1.{dead}.tmp").exists()


def test_blanks_in_the_cache_path_skip_the_archive(tmp_path):
    assert ClassArchive(tmp_path / "my cache", "k1").java_options() is None


@pytest.mark.parametrize("setting", ["SPARK_DIST_CLASSPATH", "HADOOP_CONF_DIR", "conf_dir",
                                     "extraClassPath"])
def test_only_spark_jars_on_the_class_path(tmp_path, monkeypatch, setting):
    for name in class_archive.CLASS_PATH_ENV + ("SPARK_CONF_DIR",):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "absent"))
    assert class_archive._installation_key({}) is not None
    conf = {}
    if setting == "conf_dir":  # a JVM cannot dump with a non-empty directory on its class path
        (tmp_path / "conf").mkdir()
        (tmp_path / "conf" / "spark-defaults.conf").write_text("")
        monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "conf"))
    elif setting == "extraClassPath":
        conf = {"spark.driver.extraClassPath": "/opt/more.jar"}
    else:
        monkeypatch.setenv(setting, "/opt/more")
    assert class_archive._installation_key(conf) is None


SESSION = textwrap.dedent("""
    import os, sys
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    from corpus_miner.spark import local_session
    spark = local_session("local[1]", spark__ui__enabled="false", spark__driver__memory="512m",
                          spark__driver__extraJavaOptions="-XX:TieredStopAtLevel=4")
    spark.sparkContext.setLogLevel("ERROR")
    pid = spark.sparkContext._gateway.proc.pid
    args = open(f"/proc/{pid}/cmdline").read().split("\\0")
    jit = [a for a in args if a.startswith("-XX:TieredStopAtLevel")]
    assert jit == ["-XX:TieredStopAtLevel=1", "-XX:TieredStopAtLevel=4"]
    options = [a for a in args if a.startswith("-XX:") and "Archive" in a]
    print(spark.range(5).count(), *options)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_second_session_maps_the_archive_of_the_first(tmp_path):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), PYSPARK_PYTHON=sys.executable)
    for name in class_archive.CLASS_PATH_ENV:
        env.pop(name, None)

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", SESSION], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    first = run()
    assert first.startswith("5 -XX:ArchiveClassesAtExit=")
    published = list((tmp_path / "corpus-miner" / "spark").glob("classes-*.jsa"))
    assert len(published) == 1 and published[0].stat().st_size > 1 << 20
    second = run()
    assert second == f"5 -XX:SharedArchiveFile={published[0]}\n"  # no JVM warning on stdout
