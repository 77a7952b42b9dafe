"""The tools of the cleaning-quality benchmark: how each one is installed, run as a whole
process, and read back as removed spans.

  corpus-miner   `CM clean PAGES ARGS --mode annotate -o OUT` (CM and ARGS are parameters, so
                 any build and any flags can be scored); patterns for fragmentation from the
                 annotate output's `junk_patterns` when the build writes them, else from
                 `CM phrases PAGES ARGS` located in the removed runs (clean_tools/
                 phrase_occurrences.py, run by the build's own Python)
  line-rule      drop every line found in >= sigma pages (clean_tools/line_rule.py)
  dolma          `dolma dedupe` with paragraph dedup (paragraphs = lines; spans from its
                 attributes); no threshold: every repeat after the first copy is marked
  dt-lines       datatrove SentenceDedup over single lines, dt-3sent over 3-sentence spans
                 (its default); no threshold: all but one copy of a repeated span are removed
  dt-c4          datatrove C4QualityFilter's line rules; no threshold
Peers live in their own virtualenvs under data/peer-venvs/ (git-ignored), created on first use.
"""
from __future__ import annotations

import gzip
import json
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS_DIR = HERE / "clean_tools"
PEER_VENVS = HERE.parent / "data" / "peer-venvs"
# pinned so every run measures the same peers; boto3/fsspec pins spare pip a long backtrack
PEER_PACKAGES = {
    "dolma": ["dolma==1.2.1", "boto3==1.26.161", "fsspec==2023.6.0"],
    "datatrove": ["datatrove[processing]==0.10.1", "spacy", "orjson"],
}


def peer_python(name: str, venvs: Path = PEER_VENVS) -> Path:
    """The Python of peer `name`'s virtualenv, created and filled on first use."""
    venv = venvs / name
    stamp = venv / "installed.json"
    wanted = PEER_PACKAGES[name]
    if not (stamp.is_file() and json.loads(stamp.read_text()) == wanted):
        print(f"installing {name} into {venv} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *wanted],
                       check=True)
        stamp.write_text(json.dumps(wanted))
    return venv / "bin" / "python"


@dataclass
class Dataset:
    name: str
    pages: Path  # .jsonl.gz with id, text (and for DOM pages boilerplate_spans)
    labels: Path | None  # planted labels, or None for DOM-labelled pages
    planted: bool


@dataclass
class Tool:
    name: str
    description: str
    threshold: str  # how sigma was mapped onto the tool

    def command(self, data: Dataset, work: Path, sigma: int) -> list[str]:
        raise NotImplementedError

    def prepare(self, data: Dataset, work: Path) -> None:
        """Untimed set-up (input layout, virtualenv)."""

    def output(self, work: Path) -> tuple[Path, str]:
        """(file, how): how = annotated, removed or cleaned (clean_quality.read_removals)."""
        raise NotImplementedError

    def patterns(self, data: Dataset, work: Path) -> Path | None:
        """Untimed: a file of {"id", "junk_patterns"} for fragmentation, or None."""
        return None


@dataclass
class CorpusMiner(Tool):
    cm: str = "corpus-miner"
    args: str = "clean --sigma 20 --min-length 10"

    def _base(self) -> list[str]:
        return shlex.split(self.cm)

    def command(self, data, work, sigma):
        args = shlex.split(self.args)
        return [*self._base(), args[0], str(data.pages), *args[1:], "--mode", "annotate",
                "-o", str(work / "annotated.jsonl")]

    def output(self, work):
        return work / "annotated.jsonl", "annotated"

    def patterns(self, data, work):
        annotated = work / "annotated.jsonl"
        with open(annotated, encoding="utf-8") as handle:
            first = handle.readline()
        if first and "junk_patterns" in json.loads(first):
            return None  # the build reports its own patterns
        args = shlex.split(self.args)
        phrases = work / "phrases.jsonl"
        done = subprocess.run([*self._base(), "phrases", str(data.pages), *args[1:], "-o",
                               str(phrases)], capture_output=True, text=True)
        if done.returncode:
            print(f"{self.name}: `phrases` with these flags failed, fragmentation counts removed "
                  f"runs instead: {done.stderr.strip()[-300:]}", file=sys.stderr)
            return None
        out = work / "patterns.jsonl"
        subprocess.run([str(self._python()), str(TOOLS_DIR / "phrase_occurrences.py"),
                        str(annotated), str(phrases), str(out)], check=True)
        return out

    def _python(self) -> Path:
        """The Python next to the corpus-miner command (its build), else this one."""
        first = self._base()[0]
        found = shutil.which(first)
        if first.endswith("python") or first.endswith(("python3", "python3.11")):
            return Path(found or first)
        if found and (Path(found).parent / "python").exists():
            return Path(found).parent / "python"
        return Path(sys.executable)


class LineRule(Tool):
    def command(self, data, work, sigma):
        return [sys.executable, str(TOOLS_DIR / "line_rule.py"), str(data.pages),
                str(work / "removed.jsonl"), str(sigma)]

    def output(self, work):
        return work / "removed.jsonl", "removed"


class Dolma(Tool):
    def prepare(self, data, work):
        self.python = peer_python("dolma")
        docs = work / "documents"
        docs.mkdir(parents=True, exist_ok=True)
        lines = 0
        with gzip.open(data.pages, "rt", encoding="utf-8") as src, \
                gzip.open(docs / "pages.jsonl.gz", "wt", encoding="utf-8") as dst:
            for line in src:
                page = json.loads(line)
                lines += page["text"].count("\n") + 1
                dst.write(json.dumps({"id": page["id"], "text": page["text"],
                                      "source": data.name}) + "\n")
        self.lines = lines

    def command(self, data, work, sigma):
        return [str(self.python.parent / "dolma"), "dedupe",
                "--documents", str(work / "documents" / "*.jsonl.gz"),
                "--dedupe.name", "dups", "--dedupe.paragraphs.attribute_name", "dup_paragraphs",
                "--dedupe.skip_empty", "--bloom_filter.file", str(work / "bloom.bin"),
                "--no-bloom_filter.read_only",
                "--bloom_filter.estimated_doc_count", str(max(1000, self.lines)),
                "--bloom_filter.desired_false_positive_rate", "1e-6", "--processes", "1"]

    def output(self, work):
        attributes = work / "attributes" / "dups" / "pages.jsonl.gz"
        out = work / "removed.jsonl"
        texts = {}
        with gzip.open(work / "documents" / "pages.jsonl.gz", "rt", encoding="utf-8") as src:
            for line in src:
                page = json.loads(line)
                texts[page["id"]] = page["text"]
        with gzip.open(attributes, "rt", encoding="utf-8") as src, \
                open(out, "w", encoding="utf-8") as dst:
            for line in src:
                record = json.loads(line)
                text = texts[record["id"]]
                spans = [[s, min(e, len(text)), text[s:e].strip()]
                         for s, e, _ in record["attributes"]["dup_paragraphs"]]
                dst.write(json.dumps({"id": record["id"], "removed_spans": spans}) + "\n")
        return out, "removed"


@dataclass
class Datatrove(Tool):
    mode: str = "sentdedup-lines"

    def prepare(self, data, work):
        self.python = peer_python("datatrove")

    def command(self, data, work, sigma):
        return [str(self.python), str(TOOLS_DIR / "peer_datatrove.py"), self.mode,
                str(data.pages), str(work / "out"), str(work / "work")]

    def output(self, work):
        return work / "out" / "00000.jsonl", "cleaned"


def default_tools(cm: str) -> list[Tool]:
    threshold = "sigma documents"
    first_copy = "none: every copy after the first"
    return [
        CorpusMiner("cm-L10", "corpus-miner clean --sigma 20 --min-length 10", threshold, cm,
                    "clean --sigma 20 --min-length 10"),
        CorpusMiner("cm-L5", "corpus-miner clean --sigma 20 --min-length 5", threshold, cm,
                    "clean --sigma 20 --min-length 5"),
        LineRule("line-rule", "drop every line seen in >= 20 pages", threshold),
        Dolma("dolma", "dolma dedupe, paragraph Bloom filter", first_copy),
        Datatrove("dt-lines", "datatrove SentenceDedup, single lines", first_copy,
                  "sentdedup-lines"),
        Datatrove("dt-3sent", "datatrove SentenceDedup, 3 sentences (default)", first_copy,
                  "sentdedup-3"),
        Datatrove("dt-c4", "datatrove C4QualityFilter line rules", "none (rules)", "c4-lines"),
    ]


def parse_config(spec: str, cm: str) -> CorpusMiner:
    """`NAME:ARGS` (ARGS start with the subcommand, e.g. "clean --sigma 20 --min-length 5")."""
    name, sep, args = spec.partition(":")
    if not sep or not name or not args.strip():
        raise SystemExit(f"--config {spec!r}: expected NAME:ARGS, e.g. "
                         "'cm-lines:clean --sigma 20 --min-line-length 3'")
    return CorpusMiner(name, f"corpus-miner {args.strip()}", "sigma documents", cm, args.strip())
