"""An input rewritten or grown between a command's two reads is refused, on every engine and
every two-read command (issue 22): `dedup` and `clean` read their inputs once to decide (flags,
the cleaning mask) and again to write the records, `report` again for its example contexts;
what the second read gives must be what the first read gave, or nothing is written.

The change is a real file change made from another thread at the right moment: the inputs are
a.jsonl then b.jsonl, read in that order, and a.jsonl is replaced as soon as any process of the
run (this one, or a Spark worker) opens b.jsonl for the first time, i.e. after the first read
of a.jsonl and before the second."""

from __future__ import annotations

import ctypes
import json
import os
import select
import threading

import pytest

from corpus_miner.cli import main

BANNER = "we use cookies to improve your experience by using this site you accept our policy"


def _lines(n: int, tag: str, word: str = "page") -> str:
    return "".join(json.dumps({"id": f"{tag}{i}", "text": f"{BANNER} {tag} {word} {i} of {i * 7}"})
                   + "\n" for i in range(n))


class ReplaceWhenOpened(threading.Thread):
    """Replaces `target` by `content` (a rename, like an editor or a pipeline writing a new
    version) as soon as `trigger` is first opened, by any process (this one, or a Spark worker).

    The opens are inotify events, queued by the kernel: the first one is seen however short the
    open was and however loaded the machine is. Polling the processes' open files missed a first
    read now and then and fired on the second read instead, after the input had been read twice
    the same way."""

    _IN_OPEN = 0x20

    def __init__(self, trigger, target, content: str):
        super().__init__(daemon=True)
        self.target, self.content = target, content
        self.done = threading.Event()
        self.stop = threading.Event()
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0 or self._libc.inotify_add_watch(
                self._fd, os.fsencode(trigger), self._IN_OPEN) < 0:
            raise OSError(ctypes.get_errno(), "inotify")

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                if select.select([self._fd], [], [], 0.05)[0]:
                    fresh = self.target.with_name(".fresh")
                    fresh.write_text(self.content, encoding="utf-8")
                    os.replace(fresh, self.target)
                    self.done.set()
                    return
        finally:
            os.close(self._fd)


@pytest.fixture
def inputs(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(_lines(40, "a"), encoding="utf-8")
    b.write_text(_lines(500, "b"), encoding="utf-8")
    return a, b


COMMANDS = {
    "dedup": ["dedup", "{a}", "{b}", "--num-perm", "16", "-o", "{out}"],
    "clean": ["clean", "{a}", "{b}", "--sigma", "5", "--min-length", "6", "-o", "{out}"],
    # the second read gives the example contexts, from texts the figures were not made from
    "report": ["report", "{a}", "{b}", "--sigma", "5", "--min-length", "6", "--json", "{out}"],
}
CHANGES = {
    # the same ids and token counts, other words: only the texts tell, and old flags are wrong
    "rewritten": _lines(40, "a", "other"),
    "grown": _lines(45, "a"),
}


def _refused(inputs, tmp_path, capsys, command: str, change: str, engine: str) -> None:
    a, b = inputs
    out = tmp_path / "out.jsonl"
    argv = [part.format(a=a, b=b, out=out) for part in COMMANDS[command]]
    if engine == "spark":
        argv += ["--engine", "spark", "--master", "local[1]"]
    watcher = ReplaceWhenOpened(b, a, CHANGES[change])
    watcher.start()
    try:
        code = main(argv)
    finally:
        watcher.stop.set()
        watcher.join()
    err = capsys.readouterr().err
    assert watcher.done.is_set(), "the input was not replaced during the run"
    assert code == 2, err
    lines = [line for line in err.splitlines() if "error" in line]
    # the digest's message, or the id check of `clean` that a grown input meets first
    assert len(lines) == 1 and "changed" in lines[0] and "run again" in lines[0], err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl"]


@pytest.mark.parametrize("change", sorted(CHANGES))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_local_engine_refuses_inputs_changed_between_its_reads(inputs, tmp_path, capsys,
                                                               command, change):
    _refused(inputs, tmp_path, capsys, command, change, "local")


@pytest.mark.parametrize(("command", "change"), [("dedup", "rewritten"), ("clean", "rewritten")])
def test_spark_engine_refuses_inputs_changed_between_its_reads(inputs, tmp_path, capsys,
                                                               command, change):
    pytest.importorskip("pyspark")
    _refused(inputs, tmp_path, capsys, command, change, "spark")


def test_unchanged_inputs_are_written(inputs, tmp_path):
    a, b = inputs
    for command in COMMANDS.values():
        out = tmp_path / "out.jsonl"
        assert main([part.format(a=a, b=b, out=out) for part in command]) == 0
        assert out.stat().st_size > 0
