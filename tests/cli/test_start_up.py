"""What a command costs before its work: imports only of what it uses, and the "compiling kernels
(first run only)" notice on a terminal."""

import importlib.util
import io
import json
import subprocess
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


def _one_line_commands(folder):
    """Every local command on a one-document input (what bench_first_run's one_line times)."""
    one = folder / "one.jsonl"
    one.write_text(json.dumps({"id": "1", "text": "hello world"}) + "\n")
    mining = ["--sigma", "2", "--min-length", "2"]
    return [
        ["generate", "web", "--docs", "1", "-o", str(folder / "gen.jsonl")],
        ["stats", str(one)],
        ["tokenize", str(one), "-o", str(folder / "corpus")],
        ["phrases", str(one), *mining, "-o", str(folder / "phrases.tsv")],
        ["report", str(one), *mining, "--json", str(folder / "report.json")],
        ["clean", str(one), *mining, "-o", str(folder / "clean.jsonl")],
        ["dedup", str(one), "-o", str(folder / "unique.jsonl"), "--save-index",
         str(folder / "index")],
        ["index", "query", str(folder / "index"), str(one), "-o", str(folder / "new.jsonl")],
    ]


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas not installed")
def test_local_commands_do_not_import_pandas(tmp_path):
    """pa.array (and every conversion of Python objects) imports pandas where it is installed:
    0.1-0.3 s of a short command that never uses it. Only the Spark engine may.

    The commands run one after the other in one interpreter (a start-up each cost ~7 s of the
    suite): an import stays in sys.modules, so the first command that imports pandas is the one
    named, and each one's exit code and records show it ran."""
    code = """
    import json, sys
    from corpus_miner.cli import main
    for argv in json.loads(sys.argv[1]):
        code = main(argv)
        print(json.dumps([argv, code, "pandas" in sys.modules, "pyarrow" in sys.modules]))
    """
    commands = _one_line_commands(tmp_path)
    ran = [json.loads(line) for line in run_python(code, json.dumps(commands)).splitlines()
           if line.startswith("[[")]
    assert [argv for argv, *_ in ran] == commands
    for argv, code, pandas, pyarrow in ran:
        assert code == 0 and not pandas, argv
        assert pyarrow, argv  # it did read or write records
    assert (tmp_path / "clean.jsonl").stat().st_size and (tmp_path / "new.jsonl").exists()


def test_the_process_exits_with_its_code_and_complete_outputs(tmp_path):
    """The entry point freezes the objects left before exiting (the interpreter's exit would
    finalise them one by one): outputs, stdout and the exit code are what main() made."""
    one = tmp_path / "one.jsonl"
    one.write_text("".join(json.dumps({"id": str(i), "text": f"a b c d {i % 3}"}) + "\n"
                           for i in range(30)))
    done = subprocess.run([sys.executable, "-m", "corpus_miner", "phrases", str(one), "--sigma",
                           "5", "--min-length", "3", "-o", "-"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("}\n")  # flushed to the last byte
    assert sorted(json.loads(line)["phrase"] for line in done.stdout.splitlines()) == [
        "a b c d 0", "a b c d 1", "a b c d 2"]
    assert done.stderr.startswith("phrases: 3 phrases")
    failed = subprocess.run([sys.executable, "-m", "corpus_miner", "stats",
                             str(tmp_path / "missing.jsonl")], capture_output=True, text=True)
    assert failed.returncode == 2 and failed.stderr.startswith("corpus-miner: error:")


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
