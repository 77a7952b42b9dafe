"""Every kernel is compiled for one set of argument types: a second type (an int32 array here, a
read-only one there, a literal 0 passed by a kernel) silently costs a second compile on a first
run. The commands run with an empty numba cache, so that the kernels called by kernels compile
too and show their signatures."""

from tests.helpers import run_python

# Kernels meant to take several types (none today): name -> number of signatures allowed.
SEVERAL_TYPES: dict[str, int] = {}

QUICK_START = """
    import json, sys
    from pathlib import Path
    from numba.core import event
    from numba.core.registry import CPUDispatcher
    from corpus_miner.cli import main

    compiled = set()  # every function numba compiles, numba's own helpers included

    class Listener(event.Listener):
        def on_start(self, ev):
            py_func = getattr(ev.data["dispatcher"], "py_func", None)
            if py_func is not None:
                compiled.add(f"{py_func.__module__}.{py_func.__qualname__}")

        def on_end(self, ev):
            pass

    event.register("numba:compile", Listener())

    work = Path(sys.argv[1])
    mining = ["--sigma", "3", "--min-length", "5"]
    web, clean = str(work / "web.jsonl.gz"), str(work / "clean.jsonl")
    for argv in (["generate", "web", "--docs", "300", "-o", web],
                 ["stats", web],
                 ["tokenize", web, "-o", str(work / "corpus")],
                 ["phrases", web, *mining, "-o", str(work / "p.tsv")],
                 ["phrases", str(work / "corpus"), *mining, "-o", str(work / "p2.tsv")],
                 ["phrases", web, *mining, "--algorithm", "fhk", "-o", str(work / "p3.tsv")],
                 ["report", web, *mining, "--json", str(work / "r.json")],
                 ["clean", web, *mining, "-o", clean],
                 ["dedup", clean, "-o", str(work / "u.jsonl")],
                 ["dedup", web, "--mode", "minhash_lsh", "--sketch", "minhash", "-o",
                  str(work / "u.parquet")],
                 ["index", "build", clean, "-o", str(work / "index")],
                 ["index", "query", str(work / "index"), web, "-o", str(work / "n.jsonl")]):
        assert main(argv) == 0, argv
    kernels = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("corpus_miner."):
            for value in vars(module).values():
                if isinstance(value, CPUDispatcher) and value.py_func.__module__ == name:
                    kernels[f"{name}.{value.py_func.__name__}"] = [str(s) for s in value.signatures]
    print(json.dumps({"kernels": kernels, "compiled": sorted(compiled)}))
"""


def test_the_commands_compile_each_kernel_once(tmp_path):
    import json

    output = run_python(QUICK_START, str(tmp_path), NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    report = json.loads(output.splitlines()[-1])
    kernels = report["kernels"]
    assert len([k for k, sigs in kernels.items() if sigs]) > 80  # the commands ran their kernels
    several = {k: sigs for k, sigs in kernels.items() if len(sigs) > SEVERAL_TYPES.get(k, 1)}
    assert several == {}
    # numba compiles its slice-shape error message (string formatting, 2-3 s on a first run) for
    # a kernel that assigns an array to a slice; kernels copy with loops (_numba/arrays.py)
    formatting = [name for name in report["compiled"]
                  if "raise_with_shape_context" in name or name.startswith("numba.cpython.unicode")]
    assert formatting == []
