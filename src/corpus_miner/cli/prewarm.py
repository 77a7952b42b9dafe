"""First run only: compile a command's later kernels in a second process while this one works.

numba compiles under one global lock per process, so a thread cannot compile ahead of the work;
a second process can, on a second core, and numba's on-disk cache is shared: each kernel it
compiles is loaded, not compiled, when the command reaches it. The command starts it when numba
first compiles something in the command (the kernel cache is cold: the event behind the "first
run" notice), never on a warm run.

The prewarm process runs the command's later stages, in reverse order, on a tiny built-in input
with the command's own parameters, so that exactly the command's signatures get compiled; the
command compiles its first stages itself meanwhile, and any kernel that both reach is compiled
twice at worst. Where a stage needs the output of earlier ones, those run as plain Python (the
kernels' `py_func`, as under NUMBA_DISABLE_JIT), so that nothing but the stage asked for
compiles.

It starts only when a core is spare (1-minute load average below the number of cores minus
one): with every core busy, a second process only takes CPU from the command (2 cores at load
4.5: phrases 13.3 s with it, 12.2 s without; at nice 10 it hardly ran). CORPUS_MINER_PREWARM=0
turns it off, =1 on whatever the load.

Safety: it reads no input and writes nothing but numba's cache (numba writes each file to a
temporary name and renames it: a kill leaves a whole file or a temporary one numba never
reads); its stdout and stderr are /dev/null; it ends when the command ends (killed by the
command on every exit path, and on its own when the command dies: its stdin is a pipe from the
command, and end-of-file there ends it), and on SIGINT/SIGTERM.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

ENV_SWITCH = "CORPUS_MINER_PREWARM"
# Commands whose later stages are prewarmed: phrases, report and clean mine phrases first.
_PLANS = {"phrases": "phrases", "report": "phrases", "clean": "phrases", "dedup": "dedup"}
# The tiny input of the phrases plan stays tiny whatever the parameters (their values do not
# change the kernels' types).
_MAX_SIGMA, _MAX_MIN_LENGTH = 40, 40


class Prewarm:
    """The prewarm process of one command: start() (at most once), stop() (always)."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = list(argv)
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        if self.process is not None or not _core_to_spare():
            return
        import subprocess  # here: every command imports this module, few start the process

        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "corpus_miner.cli.prewarm", *self.argv],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env={**os.environ, ENV_SWITCH: "0"})
        except OSError:  # no process to spare: the command compiles everything itself
            self.process = None

    def stop(self) -> None:
        process = self.process
        if process is None:
            return
        process.kill()  # SIGKILL: numba's cache files are renamed into place whole
        process.wait()
        if process.stdin is not None:
            process.stdin.close()


def _core_to_spare() -> bool:
    if os.environ.get(ENV_SWITCH) == "1":
        return True
    try:
        return os.getloadavg()[0] < (os.cpu_count() or 1) - 1
    except (AttributeError, OSError):  # no load average (Windows): cores, then
        return (os.cpu_count() or 1) > 1


def prewarm_for(args, argv: list[str]) -> Prewarm | None:
    """The Prewarm of a parsed command, or None when it has no later stages to prewarm, runs
    on Spark, or CORPUS_MINER_PREWARM=0."""
    if os.environ.get(ENV_SWITCH, "1") == "0" or os.environ.get("NUMBA_DISABLE_JIT") == "1":
        return None
    if getattr(args, "command", None) not in _PLANS:
        return None
    if getattr(args, "engine", "local") != "local":
        return None
    if getattr(args, "algorithm", "auto") == "fhk":
        return None
    return Prewarm(argv)


# ------------------------------------------------------------------------- the prewarm process

def _end_with_parent() -> None:
    """End this process when the command's end of the stdin pipe closes (the command ended,
    however it ended)."""
    def watch() -> None:
        try:
            sys.stdin.buffer.read()
        finally:
            os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


@contextmanager
def interpreted(*modules):
    """Inside: the kernels that `modules` call run as plain Python (their py_func), so running
    a stage built on them compiles nothing of theirs. Modules that import kernels from them by
    name must be imported before."""
    from numba.core.registry import CPUDispatcher

    saved = [(module, name, value) for module in modules for name, value in vars(module).items()
             if isinstance(value, CPUDispatcher)]
    for module, name, value in saved:
        setattr(module, name, value.py_func)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def tiny_corpus(sigma: int, min_length: int):
    """sigma + 2 short documents sharing a phrase of min_length + 3 tokens (and, in half of
    them, one token more), each with tokens of its own around it: every mining stage runs."""
    import numpy as np

    from corpus_miner.corpus.token_corpus import TokenCorpus

    shared = list(range(min_length + 4))
    docs, next_id = [], len(shared)
    for d in range(sigma + 2):
        phrase = shared if d % 2 else shared[:-1]
        docs.append([next_id, next_id + 1, *phrase, next_id + 2])
        next_id += 3
    tokens = np.array([t for doc in docs for t in doc], np.uint32)
    offsets = np.zeros(len(docs) + 1, np.int64)
    np.cumsum([len(doc) for doc in docs], out=offsets[1:])
    return TokenCorpus(tokens, offsets, [str(d) for d in range(len(docs))],
                       [f"w{i}" for i in range(next_id)])


def prewarm_phrases(args) -> None:
    """Growth first, then the exact seeds, then the window filter (the command needs them in
    the opposite order, after tokenizing)."""
    from corpus_miner.phrases import auto, bloomspan, doc_index, seeds, window_filter
    from corpus_miner.phrases.miner import BloomSpan

    assert bloomspan  # imported before `interpreted`: its names bound to the kernels themselves

    sigma, min_length = min(args.sigma, _MAX_SIGMA), min(args.min_length, _MAX_MIN_LENGTH)
    corpus = tiny_corpus(sigma, min_length)

    def mine() -> None:
        BloomSpan(sigma=sigma, min_length=min_length, algorithm="bloomspan").fit(corpus)

    with interpreted(window_filter, seeds, doc_index, auto):
        mine()
    with interpreted(window_filter, doc_index, auto):
        mine()
    mine()


def prewarm_dedup(args) -> None:
    """The Bloom filter (or band table) first, then the band keys, the signatures and the
    shingles (the command needs them in the opposite order, after choosing bands)."""
    import numpy as np
    import pyarrow as pa

    from corpus_miner.cli.dedup_common import _model
    from corpus_miner.dedup.banding import band_keys
    from corpus_miner.dedup.minhash import signatures

    num_perm = args.num_perm
    # any bands: their number does not change the kernels' types, and choosing them (the
    # command's first compile) is left to the command
    args.num_bands = args.num_bands or max(1, num_perm // 16)
    model = _model(args)
    params = model.params.validated()
    bands, rows = params.bands_rows
    rng = np.random.default_rng(0)
    model._deduplicate_keys(rng.integers(0, 2**63, (8, bands), dtype=np.uint64))
    band_keys(rng.integers(0, 2**63, (8, num_perm), dtype=np.uint64), bands, rows)
    hashes = rng.integers(0, 2**63, 64, dtype=np.uint64)
    signatures(hashes, np.arange(0, 65, 8, dtype=np.int64), num_perm, params.seed,
               params.sketch)
    texts = pa.array(["a prewarm text of a few words", "another prewarm text of a few words",
                      "", "x"], pa.string())
    model._band_keys(texts)


def main(argv: list[str]) -> int:
    _end_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C in the terminal: end quietly
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from corpus_miner.cli.parser import build_parser

    args = build_parser(argv).parse_args(argv)
    plan = _PLANS.get(args.command)
    if plan == "phrases":
        prewarm_phrases(args)
    elif plan == "dedup":
        prewarm_dedup(args)
    return 0


if __name__ == "__main__":
    from corpus_miner.cli.lean import lean_process

    lean_process()
    code = main(sys.argv[1:])
    os._exit(code)  # not the interpreter's exit: the stdin watcher is blocked reading
