"""What a command costs before it does any work: first-run kernel compiles, kernel-cache loads,
imports. Each command is a fresh process, as a user runs it.

Phases (all on the README's quick-start corpus, `generate web --docs 5000`, unless said):
- cold: the README quick start (generate, phrases, report, clean, dedup) and then stats,
  tokenize, phrases on the saved corpus, index build and index query, in that order, on a fresh
  install: numba's cache (NUMBA_CACHE_DIR) and corpus-miner's own cache (XDG_CACHE_HOME) point at
  empty folders, so each command compiles what the commands before it did not; a cold command
  starts its prewarm process (cli/prewarm.py), whose CPU seconds count in the command's;
- cold_noprewarm: the same with CORPUS_MINER_PREWARM=0, alternating with cold in each repeat;
- warm: the same commands again with those caches filled;
- one_line: every command on a one-document input (warm caches): what each start costs;
- imports: `python -X importtime` of the one-line runs (seconds of imports, and whether numba,
  pandas and scipy were imported at all);
- kernels: the cold and warm sequence once more in-process with numba's Dispatcher.compile timed
  per kernel (exclusive of kernels compiled inside it): signatures compiled per kernel, compile
  seconds (cold), cache-load seconds (warm).
Wall and CPU (user + sys) seconds per process, the 1-minute load average around each run; the
summary takes medians over --repeats and checks the targets of issue 12: the quick start
(excluding pip install) under 40 s, each command's first-run compile (cold minus warm) under 6 s,
a warm command on a one-line input under 0.6 s wall.

--python runs the commands with another interpreter (say a virtualenv's bin/python with a
different install); every row records the install: "core" (`pip install .`) plus the optional
packages that change start-up when present (pandas, scipy, pyspark).

Usage: python benchmarks/bench_first_run.py [--repeats 3] [--docs 5000] [--work DIR]
       [--phases cold,cold_noprewarm,warm,one_line,imports,kernels] [--tag NAME] [--python PATH]
Writes benchmarks/results/bench_first_run.csv (every run), bench_first_run_summary.csv (medians
and targets) and bench_first_run_kernels.csv (per kernel), each row tagged with --tag.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
QUICK_START = ("generate", "phrases", "report", "clean", "dedup")
TARGET_QUICK_START_S = 40.0
TARGET_COMPILE_S = 6.0
TARGET_ONE_LINE_S = 0.6
# Optional packages whose presence changes what a start-up imports (numba imports scipy and its
# BLAS when present; pyarrow probes pandas types).
OPTIONAL = ("pandas", "scipy", "pyspark")


def commands(docs: int) -> list[tuple[str, list[str]]]:
    """(name, argv) of the measured commands, in order; paths are relative to the work folder.
    The first five are the README quick start."""
    mining = ["--sigma", "20", "--min-length", "10"]
    return [
        ("generate", ["generate", "web", "--docs", str(docs), "-o", "demo/web.jsonl.gz"]),
        ("phrases", ["phrases", "demo/web.jsonl.gz", *mining, "-o", "demo/phrases.tsv"]),
        ("report", ["report", "demo/web.jsonl.gz", *mining, "-o", "demo/report.html", "--json",
                    "demo/report.json"]),
        ("clean", ["clean", "demo/web.jsonl.gz", *mining, "-o", "demo/clean.jsonl.gz"]),
        ("dedup", ["dedup", "demo/clean.jsonl.gz", "-o", "demo/unique.jsonl.gz"]),
        ("stats", ["stats", "demo/web.jsonl.gz"]),
        ("tokenize", ["tokenize", "demo/web.jsonl.gz", "-o", "demo/corpus"]),
        ("phrases_saved", ["phrases", "demo/corpus", *mining, "-o", "demo/phrases2.tsv"]),
        ("index_build", ["index", "build", "demo/clean.jsonl.gz", "-o", "demo/index"]),
        ("index_query", ["index", "query", "demo/index", "demo/web.jsonl.gz", "-o",
                         "demo/new.jsonl.gz"]),
    ]


def one_line_commands() -> list[tuple[str, list[str]]]:
    """The same commands on one.jsonl, a one-document file (index query uses one_index)."""
    mining = ["--sigma", "20", "--min-length", "10"]
    return [
        ("generate", ["generate", "web", "--docs", "1", "-o", "one/gen.jsonl"]),
        ("stats", ["stats", "one.jsonl"]),
        ("tokenize", ["tokenize", "one.jsonl", "-o", "one/corpus"]),
        ("phrases", ["phrases", "one.jsonl", *mining, "-o", "one/phrases.tsv"]),
        ("report", ["report", "one.jsonl", *mining, "--json", "one/report.json"]),
        ("clean", ["clean", "one.jsonl", *mining, "-o", "one/clean.jsonl"]),
        ("dedup", ["dedup", "one.jsonl", "-o", "one/unique.jsonl"]),
        ("index_build", ["index", "build", "one.jsonl", "-o", "one/index"]),
        ("index_query", ["index", "query", "one_index", "one.jsonl", "-o", "one/new.jsonl"]),
        ("help", ["--help"]),
    ]


PYTHON = sys.executable  # --python


def install_of(python: str) -> str:
    """"core", or "core+" the optional packages installed for `python`."""
    code = ("import importlib.util as u; "
            f"print(' '.join(m for m in {OPTIONAL!r} if u.find_spec(m)))")
    found = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return "+".join(["core", *found.stdout.split()])


def run(argv: list[str], cwd: Path, env: dict, python_flags: tuple[str, ...] = ()) -> dict:
    """Wall and CPU (user + sys) seconds of `python -m corpus_miner ARGV` in a fresh process, the
    1-minute load average around it, and its stderr."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen([PYTHON, *python_flags, "-m", "corpus_miner", *argv],
                                 cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    if child.returncode:
        raise RuntimeError(f"corpus-miner {' '.join(argv)} failed: {stderr[-2000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "load_1min": (load + os.getloadavg()[0]) / 2, "stderr": stderr}


def fresh_caches(root: Path) -> dict:
    """An environment whose numba and corpus-miner caches are empty folders under root."""
    for name in ("numba-cache", "xdg-cache"):
        shutil.rmtree(root / name, ignore_errors=True)
        (root / name).mkdir(parents=True)
    return {**os.environ, "NUMBA_CACHE_DIR": str(root / "numba-cache"),
            "XDG_CACHE_HOME": str(root / "xdg-cache")}


def reset_outputs(work: Path) -> None:
    for name in ("demo", "one"):
        shutil.rmtree(work / name, ignore_errors=True)
        (work / name).mkdir()


def import_seconds(stderr: str) -> tuple[float, set[str]]:
    """(seconds of the top-level imports, which of numba and OPTIONAL were imported) from
    -X importtime."""
    total, imported = 0, set()
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line.split(":", 1)[1].split("|")
        if not name.startswith("  "):  # depth 0 (one space after the bar)
            total += int(cumulative)
        imported.add(name.strip())
    return total / 1e6, imported & {"numba", *OPTIONAL}


# ------------------------------------------------------------------------- kernel probe

PROBE = r"""
import atexit, json, os, sys, time
from numba.core import dispatcher, sigutils
from numba.core.compiler_lock import global_compiler_lock

records, stack = [], []
original = dispatcher.Dispatcher.compile


def compile(self, sig):
    # numba compiles under this lock: a thread that waited for another's compile of the same
    # signature finds it done here, and is not counted
    with global_compiler_lock:
        return timed(self, sig)


def timed(self, sig):
    args = tuple(sigutils.normalize_signature(sig)[0])
    if args in self.overloads:
        return original(self, sig)
    hits, before = sum(self._cache_hits.values()), len(self.overloads)
    stack.append(0.0)
    start = time.perf_counter()
    try:
        return original(self, sig)
    finally:
        seconds = time.perf_counter() - start
        inner = stack.pop()
        if stack:
            stack[-1] += seconds
        if len(self.overloads) > before:  # not a thread that waited while another compiled it
            records.append({"kernel": f"{self.py_func.__module__}.{self.py_func.__qualname__}",
                            "signature": str(args), "seconds": seconds - inner,
                            "cache_hit": sum(self._cache_hits.values()) > hits,
                            "nested": bool(stack)})


dispatcher.Dispatcher.compile = compile
atexit.register(lambda: open(os.environ["PROBE_OUT"], "w").write(json.dumps(records)))
from corpus_miner.cli import main
sys.exit(main(sys.argv[1:]))
"""


def probe(argv: list[str], cwd: Path, env: dict, out: Path) -> list[dict]:
    """Per-kernel compile records of one command run in-process under the probe."""
    done = subprocess.run([PYTHON, "-c", PROBE, *argv], cwd=cwd,
                          env={**env, "PROBE_OUT": str(out)}, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    if done.returncode:
        raise RuntimeError(f"probe of {' '.join(argv)} failed: {done.stderr.decode()[-2000:]}")
    return json.loads(out.read_text())


def kernel_rows(cold: list[dict], warm: list[dict], command: str) -> list[dict]:
    """One row per corpus-miner kernel: signatures compiled, seconds compiling (cold), seconds
    loading from the cache (warm). numba's own helpers compiled inside are summed apart."""
    rows: dict[str, dict] = {}
    for phase, records in (("cold", cold), ("warm", warm)):
        for r in records:
            name = r["kernel"] if r["kernel"].startswith("corpus_miner") else "(numba internals)"
            row = rows.setdefault(name, {"command": command, "kernel": name, "signatures": set(),
                                         "called_from": set(), "compile_s": 0.0, "load_s": 0.0})
            row["signatures"].add(r["signature"])
            row["called_from"].add("kernel" if r["nested"] else "python")
            row["compile_s" if phase == "cold" else "load_s"] += r["seconds"]
    out = []
    for row in rows.values():
        row["signatures"] = len(row["signatures"]) if row["kernel"] != "(numba internals)" else ""
        row["called_from"] = "+".join(sorted(row["called_from"]))
        out.append(row)
    return sorted(out, key=lambda r: -r["compile_s"])


# ------------------------------------------------------------------------- phases

def measure_sequence(work: Path, env: dict, docs: int, phase: str, repeat: int,
                     rows: list[dict]) -> None:
    for name, argv in commands(docs):
        result = run(argv, work, env)
        rows.append({"phase": phase, "command": name, "repeat": repeat, **_round(result)})
        print(f"{phase:9s} {name:14s} wall {result['wall_s']:7.2f} s  cpu {result['cpu_s']:6.2f} s"
              f"  load {result['load_1min']:.1f}", flush=True)


def prepare_one_line(work: Path, env: dict) -> None:
    (work / "one.jsonl").write_text(json.dumps({"id": "1", "text": "hello world"}) + "\n")
    shutil.rmtree(work / "one_index", ignore_errors=True)
    run(["index", "build", "one.jsonl", "-o", "one_index"], work, env)


def _round(result: dict) -> dict:
    return {k: round(v, 3) for k, v in result.items() if isinstance(v, float)}


def summarize(rows: list[dict], tag: str) -> list[dict]:
    def median(phase, command, key):
        values = [r[key] for r in rows if r["phase"] == phase and r["command"] == command]
        return statistics.median(values) if values else None

    def one_line(name):
        """The one-line medians and what the command imported."""
        one = median("one_line", name, "wall_s")
        first = next((r for r in rows if r["phase"] == "imports" and r["command"] == name), {})
        walls = [r["wall_s"] for r in rows if r["phase"] == "one_line" and r["command"] == name]
        return {"one_line_wall_s": one, "one_line_cpu_s": median("one_line", name, "cpu_s"),
                # the fastest run: the one that had a core to itself on a shared machine
                "one_line_wall_min_s": min(walls) if walls else None,
                "one_line_load_1min": median("one_line", name, "load_1min"),
                "import_s": median("imports", name, "import_s"),
                **{key: first.get(key) for key in ("imports_numba",
                                                   *(f"imports_{m}" for m in OPTIONAL))},
                "target_one_line_ok": None if one is None else one < TARGET_ONE_LINE_S}

    names = [name for name, _ in commands(1)]
    summary = []
    for name in names:
        cold, warm = median("cold", name, "wall_s"), median("warm", name, "wall_s")
        cold_cpu, warm_cpu = median("cold", name, "cpu_s"), median("warm", name, "cpu_s")
        alone = median("cold_noprewarm", name, "wall_s")
        alone_cpu = median("cold_noprewarm", name, "cpu_s")
        compile_s = cold - warm if cold is not None and warm is not None else None
        summary.append({
            "tag": tag, "command": name, "cold_wall_s": cold, "cold_cpu_s": cold_cpu,
            "warm_wall_s": warm, "warm_cpu_s": warm_cpu, "first_run_extra_wall_s": compile_s,
            "first_run_extra_cpu_s": (cold_cpu - warm_cpu if cold_cpu is not None
                                      and warm_cpu is not None else None),
            "noprewarm_extra_wall_s": (alone - warm if alone is not None and warm is not None
                                       else None),
            "noprewarm_extra_cpu_s": (alone_cpu - warm_cpu if alone_cpu is not None
                                      and warm_cpu is not None else None),
            "target_compile_ok": None if compile_s is None else compile_s < TARGET_COMPILE_S,
            **one_line(name),
        })
    extra = [name for name, _ in one_line_commands() if name not in names]
    for name in extra:
        summary.append({"tag": tag, "command": name, **one_line(name)})
    totals = {}
    for phase in ("cold", "cold_noprewarm"):
        for key in ("wall_s", "cpu_s"):
            per_repeat: dict[int, float] = {}
            for r in rows:
                if r["phase"] == phase and r["command"] in QUICK_START:
                    per_repeat[r["repeat"]] = per_repeat.get(r["repeat"], 0.0) + r[key]
            totals[phase, key] = statistics.median(per_repeat.values()) if per_repeat else None
    loads = [r["load_1min"] for r in rows if "load_1min" in r]
    total = totals["cold", "wall_s"]
    summary.append({"tag": tag, "command": "quick_start_total", "cold_wall_s": total,
                    "cold_cpu_s": totals["cold", "cpu_s"],
                    "noprewarm_wall_s": totals["cold_noprewarm", "wall_s"],
                    "noprewarm_cpu_s": totals["cold_noprewarm", "cpu_s"],
                    "target_compile_ok": None if total is None else total < TARGET_QUICK_START_S,
                    "load_1min_median": statistics.median(loads) if loads else None})
    for row in summary:
        for key, value in row.items():
            if isinstance(value, float):
                row[key] = round(value, 3)
    return summary


def write_csv(path: Path, rows: list[dict], append: bool) -> None:
    if not rows:
        return
    fields: list[str] = []
    for row in rows:
        fields += [k for k in row if k not in fields]
    existing = []
    if append and path.exists():
        with open(path, newline="") as handle:
            existing = list(csv.DictReader(handle))
        fields += [k for k in (existing[0] if existing else {}) if k not in fields]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(existing + rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--work", default=None, help="work folder (default: a temporary one)")
    parser.add_argument("--phases", default="cold,cold_noprewarm,warm,one_line,imports,kernels")
    parser.add_argument("--tag", default="", help="label of this run in the CSV files")
    parser.add_argument("--results", default=str(RESULTS))
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter that runs the commands (default: this one)")
    args = parser.parse_args(argv)
    global PYTHON
    PYTHON = args.python
    install = install_of(PYTHON)
    print(f"install: {install} ({PYTHON})", flush=True)
    phases = set(args.phases.split(","))
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    work = Path(args.work or tempfile.mkdtemp(prefix="first-run-"))
    work.mkdir(parents=True, exist_ok=True)
    caches = work / "caches"
    rows: list[dict] = []
    kernels: list[dict] = []
    env = None
    for repeat in range(args.repeats):
        if "cold_noprewarm" in phases:
            env = {**fresh_caches(caches), "CORPUS_MINER_PREWARM": "0"}
            reset_outputs(work)
            measure_sequence(work, env, args.docs, "cold_noprewarm", repeat, rows)
        if "cold" in phases:
            env = {**fresh_caches(caches), "CORPUS_MINER_PREWARM": "1"}
            reset_outputs(work)
            measure_sequence(work, env, args.docs, "cold", repeat, rows)
    if env is None:  # no cold phase: fill the caches once, unmeasured
        env = fresh_caches(caches)
        reset_outputs(work)
        if phases & {"warm", "kernels"}:
            for _, argv in commands(args.docs):
                run(argv, work, env)
    prepare_one_line(work, env)
    if not phases & {"cold", "cold_noprewarm", "warm", "kernels"}:
        reset_outputs(work)  # one-line phases only: what they load is what they compiled
        for _, argv in one_line_commands():
            run(argv, work, env)
    for repeat in range(args.repeats):
        if "warm" in phases:
            reset_outputs(work)
            measure_sequence(work, env, args.docs, "warm", repeat, rows)
        if "one_line" in phases:
            reset_outputs(work)
            for name, argv in one_line_commands():
                result = run(argv, work, env)
                rows.append({"phase": "one_line", "command": name, "repeat": repeat,
                             **_round(result)})
                print(f"one_line  {name:14s} wall {result['wall_s']:7.2f} s  cpu "
                      f"{result['cpu_s']:6.2f} s  load {result['load_1min']:.1f}", flush=True)
        if "imports" in phases:
            reset_outputs(work)
            for name, argv in one_line_commands():
                result = run(argv, work, env, ("-X", "importtime"))
                seconds, imported = import_seconds(result["stderr"])
                # -X importtime lists an import that failed too: count installed modules only
                rows.append({"phase": "imports", "command": name, "repeat": repeat,
                             "import_s": round(seconds, 3), "imports_numba": "numba" in imported,
                             **{f"imports_{m}": m in imported and m in install.split("+")
                                for m in OPTIONAL}})
    if "kernels" in phases:  # one process: what the command alone compiles
        probe_env = {**fresh_caches(work / "probe-caches"), "CORPUS_MINER_PREWARM": "0"}
        reset_outputs(work)
        cold = {name: probe(argv, work, probe_env, work / f"probe-{name}.json")
                for name, argv in commands(args.docs)}
        reset_outputs(work)
        for name, argv in commands(args.docs):
            warm = probe(argv, work, probe_env, work / f"probe-{name}.json")
            kernels += [{"tag": args.tag, **row} for row in kernel_rows(cold[name], warm, name)]
    summary = summarize(rows, args.tag)
    for row in summary + kernels:
        row["install"] = install
    for row in rows:
        row["tag"], row["install"] = args.tag, install
    write_csv(results / "bench_first_run.csv", rows, append=True)
    write_csv(results / "bench_first_run_summary.csv", summary, append=True)
    write_csv(results / "bench_first_run_kernels.csv", kernels, append=True)
    for row in summary:
        print({k: v for k, v in row.items() if v not in (None, "")})
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
