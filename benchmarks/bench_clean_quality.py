"""Cleaning quality side by side: corpus-miner settings and the field's tools on planted pages
(every character labelled) and on DOM-labelled real documentation pages.

    python benchmarks/bench_clean_quality.py [--planted DIR] [--real DIR] [--datasets A,B]
        [--tools cm-L10,line-rule,...] [--corpus-miner CMD] [--config NAME:ARGS ...]
        [--sigma 20] [--explain TOOL] [--out benchmarks/results/clean_quality.csv]

Datasets: `planted` (DIR from planted_pages.py; generated with its defaults when missing) and
the DOM-labelled corpora in --real (benchmarks/corpora/build_corpora.sh with DOM_LABELS=1).
Every tool runs as its own whole process (wall seconds and peak RSS of that process tree,
after an untimed warm-up on 300 pages for corpus-miner, whose numba cache fills once);
untimed set-up (a peer's virtualenv and input layout) is not counted. Rows: one per tool x
dataset x kind ("all" holds recall, precision, F1, content loss, fragmentation, time, RSS; the
kind rows hold that kind's recall). Rows of tools not run this time are kept from the previous
table. Also writes a plot (same name, .png) and prints the table.
"""
from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from clean_peers import CorpusMiner, Dataset, Tool, default_tools, parse_config  # noqa: E402
from clean_quality import (  # noqa: E402
    GroundTruth,
    explain,
    format_causes,
    loss_causes,
    read_jsonl,
    read_removals,
    score,
)
from csv_table import write_csv  # noqa: E402

REPO = HERE.parent
REAL = ("python3.11-doc", "openjdk-17-doc", "postgresql-doc-15", "debian-reference-en",
        "debian-reference-zh-cn", "debian-reference-ja")
KIND_ORDER = ("fixed", "slots", "short", "glued", "dom")
COLUMNS = ["tool", "dataset", "kind", "chars", "recall", "precision", "f1", "content_loss",
           "removed_share", "fragmentation", "templates_touched", "patterns_from", "seconds",
           "peak_rss_mb", "description", "threshold", "command", "measured_at"]

# runs one command (stdout, stderr to files) and prints {"seconds", "peak_rss_mb"} of it alone
_MEASURE = """
import json, resource, subprocess, sys, time
log = open(sys.argv[1], "w")
start = time.perf_counter()
done = subprocess.run(sys.argv[2:], stdout=log, stderr=subprocess.STDOUT)
seconds = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_rss_mb": rss, "returncode": done.returncode}))
"""


def measure(command: list[str], log: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(log), *command],
                         capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    if result["returncode"]:
        tail = log.read_text(errors="replace")[-1500:]
        raise SystemExit(f"{' '.join(command)} failed ({result['returncode']}):\n{tail}")
    return result


def datasets(args) -> list[Dataset]:
    wanted = args.datasets.split(",") if args.datasets else None
    found = []
    if wanted is None or "planted" in wanted:
        if not (args.planted / "labels.jsonl.gz").is_file():
            from planted_pages import main as plant

            plant(["-o", str(args.planted), "--sigma", str(args.sigma)])
        found.append(Dataset("planted", args.planted / "pages.jsonl.gz",
                             args.planted / "labels.jsonl.gz", True))
    for name in REAL:
        if wanted is not None and name not in wanted:
            continue
        path = args.real / f"{name}.jsonl.gz"
        if path.is_file():
            found.append(Dataset(name, path, None, False))
        elif wanted is not None:
            raise SystemExit(f"{path} is missing: build it with DOM_LABELS=1 "
                             f"benchmarks/corpora/build_corpora.sh {args.real}")
    return found


def shown(command: list[str], work: Path) -> str:
    """The command as the table shows it: scratch paths as WORK/..., this checkout's as
    relative paths, any other absolute path (an interpreter, a peer's virtualenv) by its name,
    so that the table names no folder of the machine it was measured on."""
    def portable(arg: str) -> str:
        for root, name in ((str(work), "WORK"), (str(REPO), ".")):
            arg = arg.replace(root + "/", name + "/")
        return re.sub(r"(?<![^\s=])/(?:[^/\s]+/)+([^/\s]+)", r"\1", arg)

    return " ".join(portable(arg) for arg in command)


def run_tool(tool: Tool, data: Dataset, truth: GroundTruth, work: Path, sigma: int) -> list:
    work.mkdir(parents=True, exist_ok=True)
    tool.prepare(data, work)
    command = tool.command(data, work, sigma)
    timing = measure(command, work / "log.txt")
    path, how = tool.output(work)
    removals = read_removals(path, how, truth)
    patterns = tool.patterns(data, work) if data.planted else None
    if patterns is not None:
        for record in read_jsonl(patterns):
            removal = removals.get(str(record["id"]))
            if removal is not None:
                removal.patterns = [(s, e, str(p)) for s, e, p in record["junk_patterns"]]
    metrics = score(truth, removals)
    common = {"tool": tool.name, "dataset": data.name, "description": tool.description,
              "threshold": tool.threshold, "command": shown(command, work),
              "measured_at": datetime.date.today().isoformat()}
    rows = [{**common, "kind": "all", "chars": metrics["scored_chars"],
             **{k: metrics.get(k) for k in ("recall", "precision", "f1", "content_loss",
                                            "removed_share", "fragmentation",
                                            "templates_touched", "patterns_from")},
             "seconds": round(timing["seconds"], 2), "peak_rss_mb": round(timing["peak_rss_mb"])}]
    for kind in KIND_ORDER:
        if kind in metrics["kinds"]:
            rows.append({**common, "kind": kind, "chars": metrics["kinds"][kind]["chars"],
                         "recall": metrics["kinds"][kind]["recall"]})
    return rows, removals


def _round(rows: list[dict]) -> list[dict]:
    return [{k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}
            for row in rows]


def _num(value) -> float:
    return float("nan") if value in (None, "") else float(value)


def print_table(rows: list[dict]) -> None:
    by = {(r["tool"], r["dataset"], r["kind"]): r for r in rows}
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        kinds = [k for k in KIND_ORDER if any(key[1:] == (dataset, k) for key in by)]
        print(f"\n{dataset}")
        print(f"{'tool':12s} {'F1':>6s} {'recall':>6s} {'prec':>6s} {'loss%':>6s} "
              + " ".join(f"{k:>6s}" for k in kinds) + f" {'frag':>6s} {'s':>7s} {'MB':>6s}")
        for tool in dict.fromkeys(r["tool"] for r in rows if r["dataset"] == dataset):
            a = by[(tool, dataset, "all")]
            cells = [_num(a["f1"]), _num(a["recall"]), _num(a["precision"]),
                     100 * _num(a["content_loss"])]
            cells += [_num(by[(tool, dataset, k)]["recall"]) if (tool, dataset, k) in by
                      else float("nan") for k in kinds]
            print(f"{tool:12s} " + " ".join(f"{c:6.3f}" for c in cells)
                  + f" {_num(a.get('fragmentation')):6.2f} {_num(a['seconds']):7.1f}"
                  f" {_num(a['peak_rss_mb']):6.0f}")


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    planted = [r for r in rows if r["dataset"] == "planted"]
    tools = list(dict.fromkeys(r["tool"] for r in rows))
    metrics = ["f1", "fixed", "slots", "short", "glued"]
    width = 0.8 / max(1, len(tools))
    for t, tool in enumerate(tools):
        values = []
        for m in metrics:
            kind = "all" if m == "f1" else m
            key = "f1" if m == "f1" else "recall"
            hit = [_num(r[key]) for r in planted if r["tool"] == tool and r["kind"] == kind]
            values.append(hit[0] if hit else 0.0)
        axes[0].bar([i + t * width for i in range(len(metrics))], values, width, label=tool)
    axes[0].set_xticks([i + 0.4 - width / 2 for i in range(len(metrics))],
                       ["F1", "fixed", "slots", "short", "glued"])
    axes[0].set_title("planted pages: F1 and recall per kind")
    axes[0].legend(fontsize=7)
    real = [s for s in sets if s != "planted"]
    for t, tool in enumerate(tools):
        values = [next((_num(r["f1"]) for r in rows if r["tool"] == tool and r["dataset"] == s
                        and r["kind"] == "all"), 0.0) for s in real]
        axes[1].bar([i + t * width for i in range(len(real))], values, width, label=tool)
    axes[1].set_xticks([i + 0.4 - width / 2 for i in range(len(real))],
                       [s.replace("debian-reference", "deb-ref") for s in real], fontsize=7)
    axes[1].set_title("DOM-labelled real pages: F1")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}", file=sys.stderr)


def _previous(path: Path) -> list[dict]:
    """The rows of the table as it was (kept for the tools not run this time)."""
    if not path.is_file():
        return []
    import csv

    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _save(path: Path, rows: list[dict], ran: set, kept: list[dict] | None = None) -> None:
    old = [r for r in (kept if kept is not None else _previous(path))
           if (r["tool"], r["dataset"]) not in ran]
    write_csv(path, old + rows, COLUMNS, announce=False)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--planted", type=Path, default=REPO / "data" / "planted")
    parser.add_argument("--real", type=Path, default=REPO / "data" / "corpora-dom")
    parser.add_argument("--datasets", default=None, help="comma-separated (default: all found)")
    parser.add_argument("--tools", default=None, help="comma-separated tool names (default all)")
    parser.add_argument("--corpus-miner", default="corpus-miner",
                        help="the corpus-miner command of the build to score")
    parser.add_argument("--config", action="append", default=[], metavar="NAME:ARGS",
                        help="an extra corpus-miner configuration, e.g. "
                        "'cm-lines:clean --sigma 20 --min-line-length 3' (repeatable)")
    parser.add_argument("--sigma", type=int, default=20)
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default temp)")
    parser.add_argument("--explain", default=None, metavar="TOOL",
                        help="print random removed content and missed boilerplate of TOOL, "
                        "and its removed content by cause")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "clean_quality.csv")
    args = parser.parse_args(argv)
    tools = default_tools(args.corpus_miner) + [parse_config(c, args.corpus_miner)
                                                for c in args.config]
    if args.tools:
        names = args.tools.split(",")
        unknown = set(names) - {t.name for t in tools}
        if unknown:
            raise SystemExit(f"unknown tools {sorted(unknown)}; known: "
                             f"{', '.join(t.name for t in tools)}")
        tools = [t for t in tools if t.name in names]
    data = datasets(args)
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        work = Path(tmp)
        first = next((t for t in tools if isinstance(t, CorpusMiner)), None)
        if first is not None and data:  # warm-up: fill the numba cache, untimed
            head = work / "warmup-pages.jsonl"
            with open(head, "w", encoding="utf-8") as out:
                for n, record in enumerate(read_jsonl(data[0].pages)):
                    if n == 300:
                        break
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
            warm = Dataset("warmup", head, None, False)
            measure(first.command(warm, work / "warmup", args.sigma)[:-2]
                    + ["-o", str(work / "warmup.jsonl")], work / "warmup.log")
        rows, ran = [], set()
        kept = _previous(args.out)
        for ds in data:
            truth = GroundTruth.load(ds.pages, ds.labels)
            for tool in tools:
                print(f"{ds.name}: {tool.name} ...", file=sys.stderr)
                tool_rows, removals = run_tool(tool, ds, truth, work / ds.name / tool.name,
                                               args.sigma)
                rows += _round(tool_rows)
                ran.add((tool.name, ds.name))
                _save(args.out, rows, ran, kept)  # after every tool: a stopped run keeps rows
                if args.explain == tool.name:
                    print(f"\n{ds.name} / {tool.name}: removed content by cause")
                    for line in format_causes(truth, loss_causes(truth, removals)):
                        print("  " + line)
                    for name, examples in explain(truth, removals).items():
                        print(f"\n{ds.name} / {tool.name}: {name}")
                        for line in examples:
                            print("  " + line)
    rows = [r for r in kept if (r["tool"], r["dataset"]) not in ran] + rows
    print_table(rows)
    plot(rows, args.out.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
