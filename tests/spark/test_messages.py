"""What `--engine spark` prints (issue 22): the local engine's warnings and notes, one line for
a bad --master (before any JVM starts), for bad input and for Ctrl-C, and none of Spark's or
py4j's own log lines unless --verbose. Lines on stderr are counted in real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

pytest.importorskip("pyspark")

from corpus_miner.cli import main  # noqa: E402
from tests.helpers import ROOT  # noqa: E402

BANNER = "we use cookies to improve your experience by using this site you accept our policy"
SPARK = ["--engine", "spark", "--master", "local[1]"]


def _write_bad(path) -> str:
    with open(path, "wb") as out:
        for i in range(8):
            out.write((json.dumps({"id": i, "text": f"{BANNER} page {i}"}) + "\n").encode())
        out.write(b'{"id": 99, "text": nope\n')
        out.write(b'{"id": 100, "text": null}\n')
        out.write(b'{"id": 101, "text": "bad \xff utf8 ' + BANNER.encode() + b'"}\n')
    return str(path)


def _run(argv, cwd, timeout=600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), SPARK_LOCAL_IP="127.0.0.1")
    try:
        return subprocess.run([sys.executable, "-m", "corpus_miner", *argv], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:  # pragma: no cover - the test fails either way
        pytest.fail(f"{argv} did not end in {timeout} s")


@pytest.mark.parametrize("master", ["garbage", "", "local[0]", "local[abc]", "local[2",
                                    "spark://127.0.0.1:1", "spark://nohost.invalid:7077"])
@pytest.mark.parametrize("command", ["phrases", "dedup"])
def test_a_bad_master_is_one_line_before_anything_starts(tmp_path, capsys, master, command):
    source = _write_bad(tmp_path / "in.jsonl")
    argv = [command, source, "--skip-bad", "-o", str(tmp_path / "out.jsonl" if command ==
                                                          "dedup" else tmp_path / "p.tsv"),
            "--engine", "spark", "--master", master]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--master" in err, err
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]


def test_spark_dedup_checks_its_parameters_before_the_session(tmp_path, capsys):
    source = _write_bad(tmp_path / "in.jsonl")
    # an unreachable master would fail the session: the parameter's line comes first
    assert main(["dedup", source, "-o", str(tmp_path / "o.jsonl"), "--threshold", "2",
                 "--engine", "spark", "--master", "spark://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "threshold" in err


def test_a_saved_corpus_on_spark_says_spark_cannot_read_it(tmp_path, capsys):
    source = _write_bad(tmp_path / "in.jsonl")
    assert main(["tokenize", source, "--skip-bad", "-o", str(tmp_path / "saved")]) == 0
    capsys.readouterr()
    assert main(["phrases", str(tmp_path / "saved"), "-o", str(tmp_path / "p.tsv"),
                 *SPARK]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "saved corpus" in err and "--engine spark" in err


def test_spark_prints_what_the_local_engine_prints(tmp_path):
    """One process per engine and command; stderr equal line for line (timings aside), with
    the warning line and the sigma note, and nothing of Spark's."""
    source = _write_bad(tmp_path / "in.jsonl")
    commands = {
        "phrases": ["phrases", source, "--skip-bad", "--sigma", "50", "--min-length", "4",
                    "-o", "{e}.tsv"],
        # whole-line and edge phrases are local only (Spark notes it): both engines run without
        "report": ["report", source, "--skip-bad", "--sigma", "3", "--min-length", "4",
                   "--min-line-length", "0", "--min-edge-length", "0", "-o", "{e}.html"],
        "clean": ["clean", source, "--skip-bad", "--sigma", "3", "--min-length", "4",
                  "--min-line-length", "0", "--min-edge-length", "0", "-o", "{e}.jsonl"],
    }
    import re

    for name, command in commands.items():
        found = {}
        for engine in ("local", "spark"):
            argv = [part.format(e=f"{name}-{engine}") for part in command]
            done = _run(argv + (SPARK if engine == "spark" else []), tmp_path)
            assert done.returncode == 0, done.stderr
            found[engine] = [re.sub(r"[0-9.]+ s\b|spark-bloomspan|bloomspan|-(local|spark)\b", "",
                                    line) for line in done.stderr.splitlines()]
        assert found["spark"] == found["local"], (name, found)
        assert any(line.startswith("warning: bad lines skipped 1, invalid utf8 replaced 1, "
                                   "null texts 1") for line in found["spark"])
        if name == "phrases":
            assert "phrases: note: sigma=50 exceeds the 10 documents" in "\n".join(found["spark"])


def test_bad_input_on_spark_is_one_line_and_verbose_shows_spark(tmp_path):
    source = _write_bad(tmp_path / "in.jsonl")
    argv = ["phrases", source, "--sigma", "3", "--min-length", "4", "-o", "p.tsv", *SPARK]
    done = _run(argv, tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "line 9: malformed JSON" in done.stderr, done.stderr
    verbose = _run([*argv, "--verbose"], tmp_path)
    assert verbose.returncode == 2 and verbose.stderr.count("\n") > 1
    assert verbose.stderr.rstrip().splitlines()[-1] == done.stderr.rstrip()
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]


def test_ctrl_c_on_spark_is_one_line_and_leaves_no_output(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": i, "text": f"{BANNER} page {i} of {i * 7}"})
                              + "\n" for i in range(20000)), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), SPARK_LOCAL_IP="127.0.0.1")
    command = subprocess.Popen(
        [sys.executable, "-m", "corpus_miner", "clean", str(source), "--sigma", "3",
         "--min-length", "4", "--min-line-length", "0", "--min-edge-length", "0", "-o",
         str(tmp_path / "out.jsonl"),
         *SPARK], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        cwd=tmp_path)

    def spark_workers() -> list:  # the Python workers of this run's JVM: the job is running
        return [p for p in psutil.process_iter() if _in_run(p, tmp_path)
                and "pyspark.daemon" in _command_line(p)]

    try:
        deadline = time.monotonic() + 300
        while not spark_workers() and command.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        running = command.poll() is None
        os.killpg(command.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        _, err = command.communicate(timeout=300)
    finally:
        if command.poll() is None:
            os.killpg(command.pid, signal.SIGKILL)
            command.communicate()
    assert running, err
    assert command.returncode == 130 and err == "corpus-miner: interrupted\n", err
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl"]
    time.sleep(2)  # the JVM and its workers were killed and waited for: none is left
    left = [p for p in psutil.process_iter() if _in_run(p, tmp_path)]
    assert not left, left


def _in_run(process, folder) -> bool:
    try:
        return os.path.realpath(process.cwd()) == os.path.realpath(folder) \
            and process.pid != os.getpid()
    except psutil.Error:
        return False


def _command_line(process) -> list:
    try:
        return process.cmdline()
    except psutil.Error:
        return []
