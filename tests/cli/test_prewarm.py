"""The prewarm process of a first run: it compiles exactly the kernels of the command's later
stages (so the command finds them in the cache), and it never outlives the command."""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

import numba
import psutil
import pytest

from corpus_miner.cli import build_parser
from corpus_miner.cli.prewarm import ENV_SWITCH, Prewarm, prewarm_for
from tests.helpers import ROOT, run_python

needs_jit = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="nothing compiles without JIT")

# Runs a command and prints the corpus-miner kernels it compiled (loads from the cache are not
# compile events).
COMPILED_BY_COMMAND = """
    import json, sys
    from numba.core import event
    from corpus_miner.cli import main

    compiled = set()

    class Listener(event.Listener):
        def on_start(self, ev):
            py_func = getattr(ev.data["dispatcher"], "py_func", None)
            if py_func is not None and py_func.__module__.startswith("corpus_miner."):
                compiled.add(f"{py_func.__module__}.{py_func.__name__}")

        def on_end(self, ev):
            pass

    event.register("numba:compile", Listener())
    assert main(sys.argv[1:]) == 0
    print(json.dumps(sorted(compiled)))
"""


def _env(tmp_path, **extra) -> dict:
    return {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT),
            "NUMBA_DISABLE_JIT": "0", ENV_SWITCH: "1", **extra}


def _prewarm(argv, env, tmp_path) -> None:
    """The prewarm process of `argv`, run to its end (its stdin pipe stays open meanwhile: it
    ends at end-of-file there)."""
    with open(tmp_path / "stderr", "w+b") as err:
        child = subprocess.Popen([sys.executable, "-m", "corpus_miner.cli.prewarm", *argv],
                                 env=env, cwd=ROOT, stdin=subprocess.PIPE,
                                 stdout=subprocess.DEVNULL, stderr=err)
        code = child.wait(timeout=600)
        child.stdin.close()
        err.seek(0)
        assert code == 0, err.read()[-3000:]
    (tmp_path / "stderr").unlink()


def _compiled_by(argv, tmp_path) -> set[str]:
    output = run_python(COMPILED_BY_COMMAND, *argv, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
                        **{ENV_SWITCH: "0"})
    return set(json.loads(output.splitlines()[-1]))


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    path = tmp_path_factory.mktemp("web") / "web.jsonl"
    from corpus_miner.cli import main

    assert main(["generate", "web", "--docs", "200", "-o", str(path)]) == 0
    return path


@needs_jit
def test_after_the_phrases_prewarm_only_the_tokenizer_compiles(tmp_path, web):
    argv = ["phrases", str(web), "--sigma", "5", "--min-length", "8", "-o",
            str(tmp_path / "p.tsv")]
    _prewarm(argv, _env(tmp_path), tmp_path)
    assert list(tmp_path.iterdir()) == [tmp_path / "cache"]  # it wrote nothing else
    compiled = _compiled_by(argv, tmp_path)
    # the tokenizer only: phrases reads its inputs once, so it keeps no texts digest
    assert compiled and all(name.startswith("corpus_miner.corpus.") for name in compiled)


@needs_jit
def test_after_the_dedup_prewarm_only_choosing_bands_and_the_digest_compile(tmp_path, web):
    argv = ["dedup", str(web), "-o", str(tmp_path / "u.jsonl")]
    _prewarm(argv, _env(tmp_path), tmp_path)
    compiled = _compiled_by(argv, tmp_path)
    first = {"corpus_miner.dedup.banding", "corpus_miner.io.digest", "corpus_miner._numba.hashing"}
    assert compiled and {name.rsplit(".", 1)[0] for name in compiled} <= first


def _args(argv) -> argparse.Namespace:
    return build_parser(argv).parse_args(argv)


@pytest.mark.parametrize("argv, expected", [
    (["phrases", "in.jsonl"], True),
    (["report", "in.jsonl", "--json", "r.json"], True),
    (["dedup", "in.jsonl", "-o", "u.jsonl"], True),
    (["phrases", "in.jsonl", "--algorithm", "fhk"], False),  # kernels of its own
    (["phrases", "in.jsonl", "--engine", "spark"], False),
    (["stats", "in.jsonl"], False),  # one stage
])
def test_which_commands_prewarm(monkeypatch, argv, expected):
    monkeypatch.delenv(ENV_SWITCH, raising=False)
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "0")
    assert (prewarm_for(_args(argv), argv) is not None) == expected
    monkeypatch.setenv(ENV_SWITCH, "0")
    assert prewarm_for(_args(argv), argv) is None


@pytest.mark.parametrize("load, cores, switch, expected", [
    (0.5, 2, None, True), (1.5, 2, None, False), (4.5, 2, None, False), (4.5, 8, None, True),
    (4.5, 2, "1", True)])
def test_it_starts_only_with_a_core_to_spare(monkeypatch, load, cores, switch, expected):
    from corpus_miner.cli import prewarm

    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    monkeypatch.delenv(ENV_SWITCH, raising=False)
    if switch is not None:
        monkeypatch.setenv(ENV_SWITCH, switch)
    assert prewarm._core_to_spare() == expected


def _gone(pid: int, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while True:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def test_stop_ends_the_prewarm_process(monkeypatch, tmp_path, web):
    monkeypatch.setenv(ENV_SWITCH, "1")
    prewarm = Prewarm(["phrases", str(web), "-o", str(tmp_path / "p.tsv")])
    prewarm.start()
    assert prewarm.process is not None and prewarm.process.poll() is None
    pid = prewarm.process.pid
    prewarm.stop()
    assert _gone(pid, within=0)


def test_the_prewarm_process_ends_when_the_command_dies(tmp_path, web):
    code = f"""
    import os, sys
    from corpus_miner.cli.prewarm import Prewarm
    prewarm = Prewarm(["phrases", {str(web)!r}, "-o", {str(tmp_path / "p.tsv")!r}])
    prewarm.start()
    print(prewarm.process.pid, flush=True)
    os._exit(0)  # as if killed: no stop()
    """
    pid = int(run_python(code, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
                         **{ENV_SWITCH: "1"}).split()[0])
    assert _gone(pid, within=10)  # its work on an empty cache takes longer than that


@needs_jit
def test_a_terminated_command_stops_its_prewarm(tmp_path, web):
    """SIGTERM while the command compiles (empty cache): the command ends, so does the prewarm
    process, and nothing is left behind."""
    command = subprocess.Popen(
        [sys.executable, "-m", "corpus_miner", "phrases", str(web), "-o",
         str(tmp_path / "p.tsv")], env=_env(tmp_path), cwd=ROOT, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    parent = psutil.Process(command.pid)
    children: list[psutil.Process] = []
    deadline = time.monotonic() + 120
    while not children and command.poll() is None and time.monotonic() < deadline:
        children = parent.children()
        time.sleep(0.02)
    assert children, "the cold command started no prewarm process"
    command.send_signal(signal.SIGTERM)
    assert command.wait(timeout=60) == 128 + signal.SIGTERM
    assert all(_gone(child.pid) for child in children)
    assert not (tmp_path / "p.tsv").exists()
