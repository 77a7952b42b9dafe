"""Command line: `corpus-miner SUBCOMMAND ...`. Thin: parse flags, call the library, print.

Each capability registers its subcommands from its own module in this package; user errors
(CorpusMinerError) become one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Iterator

from corpus_miner.cli.common import print_read_problems
from corpus_miner.cli.compile_notice import compile_notice
from corpus_miner.cli.outputs import check_outputs
from corpus_miner.cli.parser import build_parser  # noqa: F401 - the commands' parser
from corpus_miner.cli.prewarm import prewarm_for
from corpus_miner.errors import CorpusMinerError
from corpus_miner.io.atomic import discard_stdout, os_reason, writing_stdout
from corpus_miner.io.locations import is_remote
from corpus_miner.io.signals import Terminated, raising_signals


def main(argv: list[str] | None = None) -> int:
    """Run one command; user errors are one line on stderr and exit code 2, a signal stops the
    command with the usual 128 + signal number after its outputs are cleaned up."""
    if sys.stderr is None:  # started with stderr closed: print(file=None) would go to stdout,
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - into records written there
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return 2
    prewarm = prewarm_for(args, argv)  # the next stages' kernels, compiled by a second process
    try:
        with raising_signals(), _storage(args):
            check_outputs(args)  # every output, before any work
            try:
                with compile_notice(on_first_compile=prewarm and prewarm.start):
                    code = int(args.handler(args) or 0)
            finally:
                if prewarm is not None:
                    prewarm.stop()
            with writing_stdout():
                if sys.stdout is not None:
                    sys.stdout.flush()
            print_read_problems(getattr(args, "read_stats", None))
            return code
    except BaseException as exc:  # noqa: BLE001 - each kind is handled or re-raised below
        return _exit_code(exc)


@contextlib.contextmanager
def _storage(args: argparse.Namespace) -> Iterator[None]:
    """--storage-options for every URL of the command, and one version of every object it
    reads (an object replaced between two reads of the inputs is refused)."""
    from corpus_miner.io.storage import parse_storage_options, using_storage_options

    text = getattr(args, "storage_options", None)
    options = parse_storage_options(text) if text is not None else None
    with using_storage_options(options):
        if not any(is_remote(item) for item in getattr(args, "inputs", None) or ()):
            yield
            return
        from corpus_miner.io.remote import consistent_reads

        with consistent_reads():
            yield


def _exit_code(exc: BaseException) -> int:
    """The exit code (and one line on stderr) for an exception that ended a command."""
    stop = _stopping_signal(exc)
    if isinstance(stop, KeyboardInterrupt):
        print("corpus-miner: interrupted", file=sys.stderr)
        return 130
    if isinstance(stop, Terminated):
        print(f"corpus-miner: stopped by {stop.name}", file=sys.stderr)
        return 128 + stop.signum
    if isinstance(exc, CorpusMinerError):
        return _fail(str(exc))
    if isinstance(exc, BrokenPipeError):  # `corpus-miner clean ... -o - | head`: stop quietly
        discard_stdout()
        return 0
    if isinstance(exc, MemoryError) or _no_thread(exc):
        from corpus_miner.cli.supervise import out_of_memory

        return _fail(out_of_memory())
    if isinstance(exc, OSError):  # not attributed to an input or output by the library
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"{where}{os_reason(exc)}")
    raise exc


def _no_thread(exc: BaseException) -> bool:
    """A thread that could not start (its stack is memory, refused under `ulimit -v`)."""
    return isinstance(exc, RuntimeError) and "can't start new thread" in str(exc)


def _stopping_signal(exc: BaseException | None) -> BaseException | None:
    """The KeyboardInterrupt or Terminated behind `exc`: a signal handled inside a callback
    from compiled code (numba, Arrow) reaches us wrapped, e.g. as a SystemError."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, (KeyboardInterrupt, Terminated)):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _fail(message: str) -> int:
    print(f"corpus-miner: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def entry_point() -> None:
    from corpus_miner.cli.lean import lean_process
    from corpus_miner.cli.supervise import needs_supervision, run_supervised

    if needs_supervision():  # under `ulimit -v`: a crash of the command must still be one line
        sys.exit(run_supervised(sys.argv[1:]))
    lean_process()
    code = main()
    # The process ends here. Left alone, the interpreter's exit collects every object still
    # held (numba's type system, registries and compiled libraries) and finalises them one by
    # one, a visible share of a short command (figures: the first-run benchmark page). The
    # outputs are complete and closed, stdout is flushed: freezing them lets the process end.
    gc.freeze()
    sys.exit(code)
