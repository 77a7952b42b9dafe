"""What a command costs before its work: imports only of what it uses, and the "compiling kernels
(first run only)" notice on a terminal."""

import io
import sys

import numba
import pytest

from corpus_miner.cli.compile_notice import NOTICE, compile_notice
from tests.helpers import run_python

IMPORTED = """
    import sys
    from corpus_miner.cli import main
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
    print(" ".join(m for m in ("numba", "pyarrow", "pandas", "numpy") if m in sys.modules))
"""


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["stats", "--help"],
                                  ["dedup", "--help"], ["index", "query", "--help"],
                                  ["clean", "--help"], ["generate", "--help"]])
def test_help_imports_no_numeric_library(argv):
    assert run_python(IMPORTED, *argv).splitlines()[-1].split() == []


def test_a_command_imports_only_its_own_module(tmp_path):
    code = IMPORTED + """
    print(" ".join(sorted(m for m in sys.modules if m.startswith("corpus_miner.cli."))))
    """
    lines = run_python(code, "generate", "synthetic1", "--docs", "1", "--words-per-doc", "5",
                       "-o", str(tmp_path / "one.jsonl")).splitlines()
    assert lines[-2].split() == ["numpy"]  # the article's corpora need no kernel, no Arrow
    assert "corpus_miner.cli.dedup" not in lines[-1]
    assert "corpus_miner.cli.generate" in lines[-1]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _on_terminal(monkeypatch):
    """stderr is a terminal (called in the test itself: pytest sets its capture after fixtures)."""
    stream = _Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(sys, "__stderr__", stream)
    return stream


def _fresh_kernel(module="corpus_miner.test_kernel"):
    def add_one(x):
        return x + 1

    add_one.__module__ = module
    return numba.njit(add_one)  # not cached: compiles in every process


needs_jit = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="nothing compiles without JIT")


@needs_jit
def test_terminal_sees_the_notice_while_kernels_compile(monkeypatch):
    terminal = _on_terminal(monkeypatch)
    kernel = _fresh_kernel()
    with compile_notice() as counter:
        assert kernel(1) == 2
    shown = terminal.getvalue()
    assert f"\r{NOTICE}: 0 compiled, 0 s" in shown  # while compiling
    assert "\r\x1b[K" in shown  # erased before the command goes on
    assert shown.endswith("corpus-miner: compiled 1 kernels in " + shown.split(" in ")[-1])
    assert "(first run only: later runs load them from the cache)\n" in shown
    assert counter.kernels == 1


@needs_jit
def test_no_notice_without_compiling(monkeypatch):
    terminal = _on_terminal(monkeypatch)
    kernel = _fresh_kernel()
    kernel(1)
    with compile_notice() as counter:
        assert kernel(2) == 3
    assert terminal.getvalue() == ""
    assert counter.kernels == 0


@needs_jit
def test_pipes_get_no_notice(capsys):
    kernel = _fresh_kernel()
    with compile_notice() as counter:
        kernel(1)
    assert capsys.readouterr().err == ""
    assert counter.started is not None  # it did compile


@needs_jit
def test_a_progress_bar_on_screen_gets_a_plain_line(monkeypatch):
    _on_terminal(monkeypatch)
    bar_proxy = _Terminal()  # rich puts its proxy in sys.stderr while a bar is drawn
    monkeypatch.setattr(sys, "stderr", bar_proxy)
    with compile_notice():
        _fresh_kernel()(1)
    assert bar_proxy.getvalue().startswith(f"{NOTICE}...\n")
    assert "\r" not in bar_proxy.getvalue().split("\n")[0]


@needs_jit
def test_numba_helpers_are_not_counted_as_kernels(monkeypatch):
    terminal = _on_terminal(monkeypatch)
    with compile_notice() as counter:
        _fresh_kernel("tests.somewhere")(1)
    assert counter.kernels == 0
    assert "compiled 0 kernels" in terminal.getvalue()


def test_the_listener_comes_with_the_commands_numba_import():
    code = """
        import sys
        from corpus_miner.cli.compile_notice import compile_notice
        with compile_notice():
            assert "numba" not in sys.modules
            import numba
            from numba.core import event
            print(len(event._registered["numba:compile"]))
        print(len(event._registered["numba:compile"]), sys.meta_path[0].__class__.__name__)
    """
    inside, after = run_python(code).splitlines()
    assert int(inside) == int(after.split()[0]) + 1  # registered inside, removed after
    assert after.split()[1] != "_AfterNumbaImport"
