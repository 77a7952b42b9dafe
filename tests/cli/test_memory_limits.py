"""Commands under an address-space limit (`ulimit -v`, issue 22): they end, in one line and
exit 2 when the memory runs out, with nothing left behind, or succeed; they never hang (numba
loaded scipy's OpenBLAS, whose start-up spun forever when its threads could not get stacks) nor
end in a traceback or an abort (LLVM aborts when it cannot map a compiled kernel: the command
then runs in a child watched by a parent, cli/supervise.py). Real processes with
resource.setrlimit; a process that does not end in time is killed with SIGKILL (it may ignore
SIGTERM) and fails the test."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers import ROOT

BANNER = "we use cookies to improve your experience by using this site you accept our policy"


def _limited(megabytes: int):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
    return limit


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("limits")
    (folder / "small.jsonl").write_text("".join(
        json.dumps({"id": i, "text": f"{BANNER} page {i}"}) + "\n" for i in range(50)))
    (folder / "large.jsonl").write_text("".join(
        json.dumps({"id": i, "text": f"{BANNER} page {i} words {i * 7} and more {i % 13}"}) + "\n"
        for i in range(20000)))
    return folder


COMMANDS = {
    "phrases": ["phrases", "{src}", "--sigma", "3", "--min-length", "4", "-o", "{out}.tsv"],
    "clean": ["clean", "{src}", "--sigma", "3", "--min-length", "4", "-o", "{out}.jsonl"],
    "dedup": ["dedup", "{src}", "-o", "{out}.jsonl"],
}


@pytest.mark.parametrize("megabytes", [1000, 1500])
@pytest.mark.parametrize("size", ["small", "large"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_memory_limit_ends_in_success_or_one_line(corpus, tmp_path, command, size, megabytes):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    # compiled first without a limit, so that the run under the limit measures the command's
    # own memory (compiling under it is test_compiling_under_a_tight_limit)
    warm = tmp_path.parent / f"{tmp_path.name}-warm"
    warm.mkdir()
    subprocess.run([sys.executable, "-m", "corpus_miner", *[part.format(
        src=corpus / "small.jsonl", out=warm / "w") for part in COMMANDS[command]]], env=env,
        capture_output=True, timeout=600, check=True)
    out = tmp_path / "out"
    argv = [part.format(src=corpus / f"{size}.jsonl", out=out) for part in COMMANDS[command]]
    try:
        done = subprocess.run([sys.executable, "-m", "corpus_miner", *argv], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=300,
                              preexec_fn=_limited(megabytes))  # killed with SIGKILL on timeout
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command} under a {megabytes} MB limit did not end in 300 s")
    lines = done.stderr.splitlines()
    if done.returncode == 0:
        assert any(p.name.startswith("out.") for p in tmp_path.iterdir()), done.stderr
    else:
        assert done.returncode == 2, done.stderr[-2000:]
        assert len(lines) == 1 and "memory" in lines[0], done.stderr[-2000:]
        assert list(tmp_path.iterdir()) == []  # no output, no temporary file
    if size == "small":
        assert done.returncode == 0, done.stderr[-2000:]  # start-up itself fits


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_tight_memory_limit_never_hangs(corpus, tmp_path, command):
    """600 MB: the command ends (it hung for ever when OpenBLAS started), in success or the
    one-line message."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    argv = [part.format(src=corpus / "small.jsonl", out=tmp_path / "out")
            for part in COMMANDS[command]]
    try:
        done = subprocess.run([sys.executable, "-m", "corpus_miner", *argv], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=300,
                              preexec_fn=_limited(600))
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command} under a 600 MB limit did not end in 300 s")
    _success_or_one_line(done, tmp_path)


def _success_or_one_line(done: subprocess.CompletedProcess, folder) -> None:
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    if done.returncode != 0:
        assert done.returncode == 2, done.stderr[-2000:]
        assert len(done.stderr.splitlines()) == 1 and "memory" in done.stderr, done.stderr
        assert list(folder.iterdir()) == []


@pytest.mark.parametrize("megabytes", [600, 800])
def test_compiling_under_a_tight_limit(corpus, tmp_path, megabytes):
    """A cold numba cache: the kernels compile under the limit, where LLVM aborted the process
    ("LLVM ERROR: Unable to allocate section memory!") or the interpreter failed with a
    SystemError traceback."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"),
               NUMBA_CACHE_DIR=str(tmp_path.parent / f"{tmp_path.name}-cache"))
    argv = [part.format(src=corpus / "small.jsonl", out=tmp_path / "out")
            for part in COMMANDS["phrases"]]
    try:
        done = subprocess.run([sys.executable, "-m", "corpus_miner", *argv], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=300,
                              preexec_fn=_limited(megabytes))
    except subprocess.TimeoutExpired:
        pytest.fail(f"phrases under a {megabytes} MB limit did not end in 300 s")
    _success_or_one_line(done, tmp_path)


@pytest.mark.parametrize(("who", "signum", "code", "message"), [
    ("worker", signal.SIGABRT, 2, "out of memory"),
    ("command", signal.SIGTERM, 128 + signal.SIGTERM, "stopped by SIGTERM")])
def test_a_crash_or_a_stop_under_a_limit_is_one_line_and_leaves_nothing(
        corpus, tmp_path, who, signum, code, message):
    """While the output is half written, the process doing the work dies of SIGABRT (what
    LLVM's abort is), or the command (the watching parent) gets SIGTERM, which it passes on:
    one line, the exit code, and the temporary file is gone."""
    import psutil

    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    out = tmp_path / "out"
    out.mkdir()
    argv = [part.format(src=corpus / "large.jsonl", out=out / "o") for part in COMMANDS["clean"]]
    argv += ["--min-length", "2"]
    parent = subprocess.Popen([sys.executable, "-m", "corpus_miner", *argv], cwd=tmp_path,
                              env=env, stderr=subprocess.PIPE, text=True,
                              preexec_fn=_limited(4000))
    try:
        deadline = time.monotonic() + 240
        while not _written(out) and parent.poll() is None:  # records, not the writability probe
            assert time.monotonic() < deadline, "no temporary output appeared"
            time.sleep(0.001)
        children = psutil.Process(parent.pid).children()
        assert parent.poll() is None and len(children) == 1, "the command ended too soon"
        (children[0] if who == "worker" else parent).send_signal(signum)
        _, stderr = parent.communicate(timeout=120)
    finally:
        parent.kill()
    assert parent.returncode == code, stderr
    assert len(stderr.splitlines()) == 1 and message in stderr, stderr
    assert list(out.iterdir()) == []


def _written(folder) -> bool:
    for tmp in folder.glob(".o.jsonl.*.tmp"):
        try:
            if tmp.stat().st_size > 0:
                return True
        except OSError:  # removed since the glob
            pass
    return False


def test_the_command_line_keeps_scipy_out(tmp_path):
    code = ("import sys\nfrom corpus_miner.cli import entry_point\nsys.argv = ['corpus-miner', "
            "'generate', 'synthetic1', '--docs', '20', '-o', 'g.jsonl']\n"
            "import atexit\natexit.register(lambda: print('scipy' in sys.modules))\n"
            "entry_point()\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("crash, code, shown", [
    ("raise ValueError('a bug of its own')", 1, "ValueError: a bug of its own"),
    ("raise MemoryError()", 2, "out of memory"),
    ("import os; os.abort()", 2, "out of memory")])
def test_only_a_failed_allocation_is_reported_as_out_of_memory(tmp_path, monkeypatch, capfd,
                                                               crash, code, shown):
    """The watching parent names the memory only when the child died of a signal or of an error
    that names a failed allocation; any other traceback is passed through with its exit code.
    The child here is a stand-in interpreter that crashes as told, in place of the command."""
    from corpus_miner.cli import supervise

    stand_in = tmp_path / "python"
    stand_in.write_text(f"#!{sys.executable}\n{crash}\n")
    stand_in.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(stand_in))
    assert supervise.run_supervised(["phrases"]) == code
    err = capfd.readouterr().err
    assert shown in err
    if code == 1:
        assert "Traceback (most recent call last)" in err and "out of memory" not in err
