"""Cleaning quality against ground truth: character-level recall, precision, F1, content loss,
recall per boilerplate kind and template fragmentation.

    python benchmarks/clean_quality.py --pages P.jsonl.gz [--labels L.jsonl.gz]
        (--annotated OUT.jsonl | --cleaned OUT.jsonl | --removed SPANS.jsonl) [--json FILE]

Ground truth: planted pages have a labels file (planted_pages.py: spans [start, end, kind,
template] that partition each text); DOM-labelled real pages carry `boilerplate_spans` ([start,
end) spans of text from outside the main content; the rest is content) in the pages file.

What a tool removed, per document id:
  --annotated  records with `junk_spans` ([start, end) offsets; `corpus-miner clean --mode
               annotate`) and optionally `junk_patterns` ([start, end, pattern] per occurrence
               of a phrase or template, for fragmentation)
  --removed    records with `removed_spans` ([start, end) or [start, end, pattern])
  --cleaned    records with the cleaned `text`: aligned to the original (deletion_align)
A document missing from the tool's output counts as removed entirely (tools that drop pages).

Scoring: only letters and digits are scored (Unicode; what the tokenizers count). Whitespace and
punctuation are not: whether a cut takes the line break or the final period is not quality, and
tools differ there by design. Boilerplate recall = removed boilerplate characters / boilerplate
characters; precision = removed boilerplate / removed; content loss = removed content / content;
recall per kind the same per boilerplate kind.

Fragmentation (planted slotted templates): per template id, the number of distinct patterns of
the tool (a phrase, a template, or for tools without patterns the removed text of a maximal
removed run, whitespace collapsed) whose occurrences overlap a scored character of one of the
template's planted occurrences; averaged over the templates that the tool touched at all. One
pattern per template is 1.0; exact phrase mining gives k+1 or more pieces for k slots.

--by-template: recall per planted template id (the labels' fourth field; a per-site suffix
":site12" / ":family3" is folded into one row), with the missed characters, commonest misses
first; content rows ("title", "paragraph", ...) show the removed content characters.
"""
from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from deletion_align import removed_spans  # noqa: E402

SCORED = re.compile(r"[^\W_]+")
CONTENT = "content"
DOM = "dom"  # the one boilerplate kind of DOM-labelled pages
NOT_SCORED = -1


def read_jsonl(path: str | Path) -> Iterator[dict]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def scored_mask(text: str) -> np.ndarray:
    """True at letters and digits."""
    mask = np.zeros(len(text), dtype=bool)
    for m in SCORED.finditer(text):
        mask[m.start():m.end()] = True
    return mask


def spans_mask(n: int, spans: Iterable) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    for span in spans:
        mask[max(0, int(span[0])):min(n, int(span[1]))] = True
    return mask


@dataclass
class Document:
    doc_id: str
    text: str
    kinds: np.ndarray  # per character: kind index, NOT_SCORED for unscored characters
    templates: list[tuple[int, int, str]]  # planted slotted-template occurrences
    spans: list  # the labels as given: [start, end, kind, template]


@dataclass
class GroundTruth:
    """Documents with per-character kinds; kind 0 is content."""
    kinds: list[str] = field(default_factory=lambda: [CONTENT])
    documents: list[Document] = field(default_factory=list)

    def kind_index(self, kind: str) -> int:
        if kind not in self.kinds:
            self.kinds.append(kind)
        return self.kinds.index(kind)

    def add(self, doc_id: str, text: str, spans: list, template_kinds=("slots",)) -> None:
        """`spans`: [start, end, kind, template] (unlabelled characters are not scored)."""
        kinds = np.full(len(text), NOT_SCORED, dtype=np.int8)
        templates = []
        for start, end, kind, template in spans:
            kinds[start:end] = self.kind_index(kind)
            if kind in template_kinds:
                templates.append((start, end, template))
        kinds[~scored_mask(text)] = NOT_SCORED
        self.documents.append(Document(doc_id, text, kinds, templates, spans))

    def add_dom(self, doc_id: str, text: str, boilerplate: list) -> None:
        spans = [[0, len(text), CONTENT, None]] + [[s, e, DOM, None] for s, e in boilerplate]
        self.add(doc_id, text, spans)

    @classmethod
    def load(cls, pages: str | Path, labels: str | Path | None = None,
             limit: int | None = None) -> GroundTruth:
        """Planted pages with their labels file, or DOM-labelled pages (no labels file; pages
        whose `boilerplate_spans` is null are left out)."""
        truth = cls()
        label_rows = read_jsonl(labels) if labels is not None else None
        for n, page in enumerate(read_jsonl(pages)):
            if limit is not None and n >= limit:
                break
            doc_id = str(page["id"])
            if label_rows is not None:
                label = next(label_rows)
                if str(label["id"]) != doc_id:
                    raise SystemExit(f"{labels}: record {n} is {label['id']!r}, "
                                     f"the pages have {doc_id!r}")
                truth.add(doc_id, page["text"], label["spans"])
            elif page.get("boilerplate_spans") is not None:
                truth.add_dom(doc_id, page["text"], page["boilerplate_spans"])
        return truth

    @property
    def ids(self) -> list[str]:
        return [d.doc_id for d in self.documents]


@dataclass
class Removal:
    """What one tool removed from one document: spans, and (start, end, pattern) occurrences."""
    spans: list[tuple[int, int]]
    patterns: list[tuple[int, int, str]] | None = None


def read_removals(path: str | Path, how: str, truth: GroundTruth) -> dict[str, Removal]:
    """Removals per document id from a tool's output (`how`: annotated, removed, cleaned)."""
    texts = {d.doc_id: d.text for d in truth.documents}
    out: dict[str, Removal] = {}
    for record in read_jsonl(path):
        doc_id = str(record["id"])
        if doc_id not in texts:
            continue
        if how == "annotated":
            spans = [(int(s), int(e)) for s, e in record["junk_spans"]]
            patterns = record.get("junk_patterns")
        elif how == "removed":
            spans = [(int(s[0]), int(s[1])) for s in record["removed_spans"]]
            patterns = ([(s[0], s[1], str(s[2])) for s in record["removed_spans"]]
                        if record["removed_spans"] and len(record["removed_spans"][0]) > 2
                        else None)
        else:
            # datatrove writes no "text" key for a page left empty
            spans = removed_spans(texts[doc_id], record.get("text", ""))
            patterns = None
        out[doc_id] = Removal(spans, [tuple(p) for p in patterns] if patterns else None)
    return out


def run_patterns(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """Each maximal removed run as its own pattern: its text with whitespace collapsed."""
    return [(s, e, " ".join(text[s:e].split())) for s, e in spans]


def score(truth: GroundTruth, removals: dict[str, Removal]) -> dict:
    """The metrics of one tool on one dataset (module docstring)."""
    n_kinds = len(truth.kinds)
    total = np.zeros(n_kinds, dtype=np.int64)
    removed = np.zeros(n_kinds, dtype=np.int64)
    per_template: dict[str, set] = {}
    patterns_from_runs = False
    for doc in truth.documents:
        scored = doc.kinds >= 0
        total += np.bincount(doc.kinds[scored], minlength=n_kinds)
        removal = removals.get(doc.doc_id)
        spans = [(0, len(doc.text))] if removal is None else removal.spans
        cut = spans_mask(len(doc.text), spans) & scored
        removed += np.bincount(doc.kinds[cut], minlength=n_kinds)
        if doc.templates and spans:
            if removal is None or removal.patterns is None:
                patterns_from_runs = True
                patterns = run_patterns(doc.text, spans)
            else:
                patterns = removal.patterns
            _overlaps(doc, patterns, per_template)
    content = int(total[0])
    boiler_total = int(total[1:].sum())
    boiler_removed = int(removed[1:].sum())
    removed_all = boiler_removed + int(removed[0])
    recall = boiler_removed / boiler_total if boiler_total else float("nan")
    precision = boiler_removed / removed_all if removed_all else float("nan")
    f1 = (2 * precision * recall / (precision + recall)
          if removed_all and boiler_total and precision + recall > 0 else 0.0)
    result = {"recall": recall, "precision": precision, "f1": f1,
              "content_loss": int(removed[0]) / content if content else float("nan"),
              "removed_share": (removed_all / (content + boiler_total)
                                if content + boiler_total else float("nan")),
              "boilerplate_share": (boiler_total / (content + boiler_total)
                                    if content + boiler_total else float("nan")),
              "scored_chars": content + boiler_total,
              "kinds": {truth.kinds[k]: {"chars": int(total[k]), "removed": int(removed[k]),
                                         "recall": (int(removed[k]) / int(total[k])
                                                    if total[k] else float("nan"))}
                        for k in range(1, n_kinds)}}
    if any(d.templates for d in truth.documents):
        counts = [len(found) for found in per_template.values() if found]
        planted = {t for d in truth.documents for _, _, t in d.templates}
        result["fragmentation"] = float(np.mean(counts)) if counts else float("nan")
        result["templates_touched"] = len(counts) / len(planted) if planted else float("nan")
        result["patterns_from"] = "removed runs" if patterns_from_runs else "tool patterns"
    return result


def by_template(truth: GroundTruth, removals: dict[str, Removal]) -> list[dict]:
    """Per planted template id (per-site suffix folded): kind, scored chars, removed, recall,
    missed (module docstring), the most missed boilerplate first, then content."""
    rows: dict[tuple[str, str], list[int]] = {}
    for doc in truth.documents:
        removal = removals.get(doc.doc_id)
        spans = [(0, len(doc.text))] if removal is None else removal.spans
        cut = spans_mask(len(doc.text), spans) & (doc.kinds >= 0)
        scored = doc.kinds >= 0
        for start, end, kind, template in doc.spans:
            name = str(template).split(":")[0] if template is not None else kind
            row = rows.setdefault((kind, name), [0, 0])
            row[0] += int(scored[start:end].sum())
            row[1] += int(cut[start:end].sum())
    out = [{"kind": kind, "template": name, "chars": chars, "removed": removed,
            "recall": removed / chars if chars else float("nan"), "missed": chars - removed}
           for (kind, name), (chars, removed) in rows.items()]
    out.sort(key=lambda r: (r["kind"] == CONTENT, -(r["removed"] if r["kind"] == CONTENT
                                                    else r["missed"]), r["template"]))
    return out


def _overlaps(doc: Document, patterns: list, per_template: dict[str, set]) -> None:
    """Add to per_template[t] every pattern overlapping a scored character of an occurrence
    of planted template t in `doc`."""
    scored = doc.kinds >= 0
    prefix = np.concatenate(([0], np.cumsum(scored)))
    for start, end, template in doc.templates:
        found = per_template.setdefault(template, set())
        for p_start, p_end, pattern in patterns:
            lo, hi = max(start, int(p_start)), min(end, int(p_end))
            if lo < hi and prefix[hi] > prefix[lo]:
                found.add(pattern)


def explain(truth: GroundTruth, removals: dict[str, Removal], n: int = 10,
            seed: int = 0) -> dict[str, list[str]]:
    """Random examples of what went wrong: removed content and missed boilerplate, one per
    maximal wrong run, as "id [kind:template] context [[run]] context"."""
    import random

    lost, missed = [], []
    for doc in truth.documents:
        removal = removals.get(doc.doc_id)
        spans = [(0, len(doc.text))] if removal is None else removal.spans
        cut = spans_mask(len(doc.text), spans)
        for start, end, kind, template in doc.spans:
            here = doc.kinds[start:end]
            index = truth.kinds.index(kind)
            shown = cut[start:end] if kind == CONTENT else ~cut[start:end]
            bucket = lost if kind == CONTENT else missed
            wrong = shown & (here == index)
            if not wrong.any():
                continue
            reach = shown & ((here == index) | (here == NOT_SCORED))
            for run_start, run_end in _runs(reach):
                if wrong[run_start:run_end].any():
                    bucket.append((doc.doc_id, kind, template, doc.text, start + run_start,
                                   start + run_end, start, end))
    rng = random.Random(seed)
    out = {}
    for name, bucket in (("removed content", lost), ("missed boilerplate", missed)):
        out[name] = [_example(*pick) for pick in rng.sample(bucket, min(n, len(bucket)))]
    return out


LOSS_CAUSES = ("content repeated on more than sigma pages",
               "content repeated on fewer than sigma pages", "run continuing boilerplate",
               "whole content line", "start or end of a content line", "inside a content line")
_ABOVE, _BELOW = "repeat_above_sigma", "repeat_below_sigma"  # planted_pages.py's confuser tags


def loss_causes(truth: GroundTruth, removals: dict[str, Removal]) -> dict[str, int]:
    """Removed content characters (scored ones) by cause, from the labels and the text alone.

    A removed run is a maximal run of removed or unscored characters. Its content characters
    count for: the planted confusers (content repeated on more / fewer than sigma pages) when
    the run touches one; "run continuing boilerplate" when the run also removes boilerplate (a
    phrase crossing from a boilerplate block into the content next to it); otherwise where the
    run sits in its text line: the whole line, its start or end, or inside it."""
    counts = dict.fromkeys(LOSS_CAUSES, 0)
    for doc in truth.documents:
        removal = removals.get(doc.doc_id)
        spans = [(0, len(doc.text))] if removal is None else removal.spans
        cut = spans_mask(len(doc.text), spans)
        lost = cut & (doc.kinds == 0)
        if not lost.any():
            continue
        tag = np.full(len(doc.text), "", dtype=object)
        for start, end, kind, template in doc.spans:
            if kind == CONTENT and template in (_ABOVE, _BELOW):
                tag[start:end] = template
        for run_start, run_end in _runs(cut | (doc.kinds == NOT_SCORED)):
            here = lost[run_start:run_end]
            n = int(here.sum())
            if not n:
                continue
            tags = set(tag[run_start:run_end][here])
            if _ABOVE in tags:
                cause = LOSS_CAUSES[0]
            elif _BELOW in tags:
                cause = LOSS_CAUSES[1]
            elif (cut[run_start:run_end] & (doc.kinds[run_start:run_end] > 0)).any():
                cause = LOSS_CAUSES[2]
            else:
                first = run_start + int(np.argmax(here))
                last = run_end - int(np.argmax(here[::-1]))
                line_start = doc.text.rfind("\n", 0, first) + 1
                line_end = doc.text.find("\n", last)
                line_end = len(doc.text) if line_end < 0 else line_end
                at_start = not (doc.kinds[line_start:first] >= 0).any()
                at_end = not (doc.kinds[last:line_end] >= 0).any()
                cause = LOSS_CAUSES[3 if at_start and at_end else 4 if at_start or at_end else 5]
            counts[cause] += n
    return counts


def format_causes(truth: GroundTruth, counts: dict[str, int]) -> list[str]:
    """One line per cause: characters, share of the content, share of the loss."""
    content = sum(int((d.kinds == 0).sum()) for d in truth.documents)
    lost = sum(counts.values())
    lines = [f"removed content {lost:,} of {content:,} characters ({lost / max(1, content):.3%})"]
    for cause, n in counts.items():
        lines.append(f"{cause:42s} {n:10,d} {n / max(1, content):8.3%} of content "
                     f"{n / max(1, lost):6.1%} of the loss")
    return lines


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.astype(np.int8), [0]))))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def _example(doc_id, kind, template, text, run_start, run_end, lo, hi, context=60) -> str:
    """The wrong run in [[...]] with up to `context` characters of its label span around it
    (whitespace at the run's edges left outside), line breaks shown as " / "."""
    while run_start < run_end and text[run_start].isspace():
        run_start += 1
    while run_end > run_start and text[run_end - 1].isspace():
        run_end -= 1
    before = text[max(lo, run_start - context):run_start]
    after = text[run_end:min(hi, run_end + context)].rstrip()
    inner = text[run_start:run_end]
    if len(inner) > 4 * context:
        inner = inner[:2 * context] + " ... " + inner[-2 * context:]
    shown = (before + "[[" + inner + "]]" + after).replace("\n", " / ")
    tag = f"{kind}:{template}" if template else kind
    return f"{doc_id} [{tag}] {shown}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", required=True)
    parser.add_argument("--labels", default=None, help="labels file of planted pages")
    output = parser.add_mutually_exclusive_group(required=True)
    output.add_argument("--annotated", help="records with junk_spans (clean --mode annotate)")
    output.add_argument("--removed", help="records with removed_spans")
    output.add_argument("--cleaned", help="records with the cleaned text")
    parser.add_argument("--json", default=None, help="write the metrics here ('-': stdout)")
    parser.add_argument("--by-template", action="store_true",
                        help="also score each planted template id (printed as a table, and "
                        "under 'templates' in --json)")
    parser.add_argument("--explain", type=int, default=0, metavar="N",
                        help="also print N random removed content and missed boilerplate spans")
    parser.add_argument("--causes", action="store_true",
                        help="also print the removed content by cause (loss_causes)")
    args = parser.parse_args(argv)
    truth = GroundTruth.load(args.pages, args.labels)
    how = "annotated" if args.annotated else "removed" if args.removed else "cleaned"
    removals = read_removals(args.annotated or args.removed or args.cleaned, how, truth)
    result = score(truth, removals)
    if args.by_template:
        result["templates"] = by_template(truth, removals)
    text = json.dumps(result, indent=1)
    if args.json and args.json != "-":
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    if args.by_template:
        print(f"\n{'kind':8} {'template':28} {'chars':>10} {'removed':>7} "
              f"{'missed (content: lost)':>22}")
        for row in result["templates"]:
            wrong = row["removed"] if row["kind"] == CONTENT else row["missed"]
            print(f"{row['kind']:8} {row['template'][:28]:28} {row['chars']:10,} "
                  f"{row['recall']:7.3f} {wrong:22,}")

    if args.causes:
        print("\n" + "\n".join(format_causes(truth, loss_causes(truth, removals))))
    if args.explain:
        for name, examples in explain(truth, removals, args.explain).items():
            print(f"\n{name}:")
            for line in examples:
                print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
