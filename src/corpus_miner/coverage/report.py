"""Coverage report: the figures of a Coverage, example contexts and per-group figures.

`CoverageReport(coverage, ...)` holds the options; `collect(batches)` makes one pass over the
original documents (the inputs the corpus was loaded from, in the same order) to pick up example
contexts of the biggest hogs, snippets of template documents and the group of every document;
then `to_dict()` (JSON), `to_html()` (one self-contained page) and `terminal_summary()`.
Without `collect` the report still has every figure except contexts, snippets and groups.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

import numpy as np

from corpus_miner.coverage.coverage import Coverage, aligned_batches
from corpus_miner.errors import InputError, ParameterError
from corpus_miner.io.atomic import write_text
from corpus_miner.io.jsonl import json_values
from corpus_miner.io.locations import display
from corpus_miner.io.overlap import check_apart
from corpus_miner.phrases.result import EDGE_SIDES

MISSING_GROUP = "(missing)"
_SPACES = re.compile(r"\s+")


def parse_group_by(spec: str | None) -> tuple[str, bool] | None:
    """"FIELD" or "FIELD:host" -> (field, derive host)."""
    if not spec:
        return None
    field, _, derive = spec.partition(":")
    if not field or derive not in ("", "host"):
        raise ParameterError(f"--group-by {spec!r}: expected FIELD or FIELD:host")
    return field, derive == "host"


def host_of(value: str) -> str:
    """Host name of a URL ("https://www.Example.com:8080/a" -> "www.example.com"); schemeless
    values ("example.com/a") work too. Values without a host give MISSING_GROUP."""
    value = value.strip()
    try:
        parts = urlsplit(value if "//" in value else "//" + value)
        return parts.hostname or MISSING_GROUP
    except ValueError:  # e.g. "[1, 2]" reads as a malformed IPv6 host
        return MISSING_GROUP


def _group_values(records, field: str, derive_host: bool) -> list[str]:
    """The group of each record; MISSING_GROUP where the field is null, empty or absent."""
    if field not in records.schema.names:
        return [MISSING_GROUP] * records.num_rows
    values = []
    for value in json_values(records, field):
        if value is None or value == "":
            values.append(MISSING_GROUP)
        else:
            text = value if isinstance(value, str) else json.dumps(value, sort_keys=True,
                                                                   default=str)
            values.append(host_of(text) if derive_host else text)
    return values


def _one_line(text: str) -> str:
    return _SPACES.sub(" ", text)


class CoverageReport:
    """Report of a Coverage. top: hogs per ranking; examples: contexts per hog; context_chars:
    characters shown either side; template_share: a document at or above this covered share is
    'almost entirely template'; group_by: "FIELD" or "FIELD:host"."""

    def __init__(self, coverage: Coverage, *, top: int = 25, examples: int = 3,
                 context_chars: int = 90, template_share: float = 0.9,
                 group_by: str | None = None, title: str = "Repeated text report",
                 inputs: Iterable[str] = ()):
        if top < 1 or examples < 0 or context_chars < 0:
            raise ParameterError("top must be >= 1, examples and context_chars >= 0")
        if not 0.0 < template_share <= 1.0:
            raise ParameterError(f"template_share must be in (0, 1], got {template_share}")
        self.coverage = coverage
        self.top, self.examples, self.context_chars = top, examples, context_chars
        self.template_share = template_share
        self.group_spec = group_by
        self.group_by = parse_group_by(group_by)
        self.title = title
        self.inputs = [str(x) for x in inputs]
        self.hogs_by_psi = coverage.hogs(top, "psi")
        self.hogs_by_covered = coverage.hogs(top, "covered")
        self.template_docs = coverage.template_documents(template_share)
        self.contexts: dict[int, list[dict]] = {}
        self.snippets: dict[int, str] = {}
        self.doc_ids: dict[int, str] = {}
        self.groups: list[dict] | None = None
        self.slot_templates: list[dict] | None = None
        self.template_covered: np.ndarray | None = None

    def set_templates(self, rows: list[dict], covered: np.ndarray) -> CoverageReport:
        """Add templates with slots (rows of corpus_miner.templates) and their handled-token
        mask (uint8 per token): each template is listed once with its slots, and the share of
        the corpus the phrases and templates cover together is reported."""
        self.slot_templates = rows
        self.template_covered = covered
        return self

    # -- the second pass over the original documents ---------------------------------------------
    def _wanted_examples(self) -> dict[int, list[tuple[int, int, int]]]:
        """doc -> [(phrase, token start in doc, length)]: up to `examples` full occurrences per
        hog, in distinct documents spread evenly over the documents containing the phrase."""
        cov = self.coverage
        occ = cov.occurrences
        hogs = np.union1d(self.hogs_by_psi, self.hogs_by_covered)
        wanted: dict[int, list[tuple[int, int, int]]] = {}
        if self.examples == 0 or len(hogs) == 0:
            return wanted
        picked = np.flatnonzero(np.isin(occ.phrase, hogs))
        for phrase in hogs:
            rows = picked[occ.phrase[picked] == phrase]
            docs, first = np.unique(occ.doc[rows], return_index=True)  # first occurrence per doc
            if len(docs) == 0:
                continue
            choose = np.unique(np.linspace(0, len(docs) - 1, min(self.examples, len(docs)))
                               .round().astype(np.int64))
            for j in choose:
                row = rows[first[j]]
                d = int(occ.doc[row])
                wanted.setdefault(d, []).append(
                    (int(phrase), int(occ.start[row] - cov.doc_offsets[d]),
                     int(cov.phrases.lengths[phrase])))
        return wanted

    def collect(self, batches: Iterable, doc_ids=None) -> CoverageReport:
        """One pass over DocumentBatches of the original inputs (same order as the corpus)."""
        cov = self.coverage
        wanted = self._wanted_examples()
        # the documents whose text is needed, in corpus order
        needed = np.union1d(np.fromiter(wanted, dtype=np.int64, count=len(wanted)),
                            self.template_docs[:self.top]).astype(np.int64)
        group_of_doc: list[str] = []
        fields: dict[str, None] = {}  # of all records read, for the message below
        for first, batch in aligned_batches(batches, doc_ids, cov.n_docs):
            if self.group_by is not None:
                group_of_doc += _group_values(batch.records, *self.group_by)
                fields.update(dict.fromkeys(batch.records.schema.names))
            lo, hi = np.searchsorted(needed, [first, first + len(batch)])
            for d in needed[lo:hi].tolist():
                doc_id = batch.ids[d - first]
                self.add_document(d, str(doc_id.as_py() if hasattr(doc_id, "as_py") else doc_id),
                                  batch.texts[d - first].as_py() or "", wanted.get(d, ()),
                                  batch.source)
        if self.group_by is not None:
            if fields and self.group_by[0] not in fields:
                raise InputError(f"--group-by field {self.group_by[0]!r} is in no record "
                                 f"(fields: {', '.join(fields)})")
            self.add_groups(group_of_doc)
        return self

    def add_document(self, d: int, doc_id: str, text: str, examples, source: str) -> None:
        """Snippet and example contexts of document d (its original text), for a report whose
        figures another engine computed: examples are (phrase, token start in the document,
        length) as _wanted_examples gives them."""
        from corpus_miner.corpus import token_spans

        cov = self.coverage
        self.doc_ids[d] = doc_id
        if d in self.template_docs[:self.top]:
            self.snippets[d] = _one_line(text[:400])
        if not examples:
            return
        starts, ends = token_spans(text)
        if len(starts) != cov.doc_offsets[d + 1] - cov.doc_offsets[d]:
            raise InputError(f"{source}: document {doc_id!r} changed since the corpus was "
                             "loaded; run again")
        for phrase, start, length in examples:
            s, e = int(starts[start]), int(ends[start + length - 1])
            c = self.context_chars
            self.contexts.setdefault(phrase, []).append({
                "doc": doc_id, "before": _one_line(text[max(0, s - c):s]),
                "match": _one_line(text[s:e]), "after": _one_line(text[e:e + c]),
                "truncated_before": s - c > 0, "truncated_after": e + c < len(text)})

    def add_groups(self, group_of_doc: list[str]) -> None:
        """Per-group figures from the group value of every document, in corpus order."""
        self.groups = self._group_figures(group_of_doc)

    def _group_figures(self, group_of_doc: list[str]) -> list[dict]:
        cov = self.coverage
        names, index = np.unique(np.asarray(group_of_doc, dtype=object).astype(str),
                                 return_inverse=True)
        docs = np.bincount(index, minlength=len(names))
        tokens = np.bincount(index, weights=cov.doc_tokens, minlength=len(names))
        covered = np.bincount(index, weights=cov.doc_covered, minlength=len(names))
        shares = cov.doc_share
        templ = np.bincount(index, weights=(shares >= self.template_share) & (cov.doc_tokens > 0),
                            minlength=len(names))
        mean_share = np.bincount(index, weights=shares, minlength=len(names)) / np.maximum(docs, 1)
        order = np.lexsort((names, -covered))
        return [{"group": str(names[g]), "documents": int(docs[g]), "tokens": int(tokens[g]),
                 "tokens_covered": int(covered[g]),
                 "coverage": float(covered[g] / tokens[g]) if tokens[g] else 0.0,
                 "mean_document_share": float(mean_share[g]),
                 "template_documents": int(templ[g])} for g in order]

    # -- outputs --------------------------------------------------------------------------------
    def _hog_row(self, phrase: int) -> dict:
        cov = self.coverage
        length = int(cov.phrases.lengths[phrase])
        df = int(cov.phrases.df[phrase])
        return {"rank": int(phrase) + 1, "phrase": cov.phrases.text(phrase), "length": length,
                "df": df, "occurrences": int(cov.phrases.occurrences[phrase]),
                "psi": length * df, "tokens_covered": int(cov.tokens_by_phrase[phrase]),
                "whole_line": bool(cov.phrases.whole_line_mask[phrase]),
                "edge": EDGE_SIDES[int(cov.phrases.edge_sides[phrase])],
                "examples": self.contexts.get(int(phrase), [])}

    def to_dict(self) -> dict:
        cov = self.coverage
        summary = cov.summary()
        summary["median_document_share"] = float(np.median(cov.doc_share[cov.doc_tokens > 0])) \
            if (cov.doc_tokens > 0).any() else 0.0
        summary["template_share"] = self.template_share
        summary["template_documents"] = int(len(self.template_docs))
        # a file name that is not UTF-8 (lone surrogates in Python) is shown with U+FFFD
        summary["inputs"] = [os.fsencode(display(x)).decode("utf-8", "replace")
                             for x in self.inputs]
        summary["hogs_by_psi"] = [self._hog_row(p) for p in self.hogs_by_psi]
        summary["hogs_by_tokens_covered"] = [self._hog_row(p) for p in self.hogs_by_covered]
        summary["template_document_examples"] = [
            {"doc": self.doc_ids.get(int(d), str(int(d))), "tokens": int(cov.doc_tokens[d]),
             "share": float(cov.doc_share[d]), "snippet": self.snippets.get(int(d), "")}
            for d in self.template_docs[:self.top]]
        summary["group_by"] = self.group_spec
        summary["groups"] = self.groups
        if self.slot_templates is not None and self.template_covered is not None:
            both = int(np.count_nonzero(self.template_covered | cov.covered))
            summary["templates"] = {
                "count": len(self.slot_templates),
                "tokens_covered": int(np.count_nonzero(self.template_covered)),
                "tokens_covered_with_phrases": both,
                "coverage_with_phrases": both / cov.n_tokens if cov.n_tokens else 0.0,
                "rows": self.slot_templates[:self.top]}
        return summary

    def to_html(self) -> str:
        from corpus_miner.coverage.report_html import render_html

        return render_html(self.to_dict(), self.title)

    def write_html(self, path) -> None:
        check_apart(self.inputs, [path])
        write_text(path, self.to_html())

    def write_json(self, path) -> None:
        """JSON summary to `path`, or to stdout when path is "-"."""
        check_apart(self.inputs, [path])
        write_text(path, json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n")

    def terminal_summary(self, hogs: int = 5, groups: int = 5) -> str:
        data = self.to_dict()
        params = (f"sigma {data['sigma']}, min length {data['min_length']}"
                  + (f", whole lines from {data['min_line_length']}"
                     if data.get("min_line_length") else "")
                  + (f", edges from {data['min_edge_length']}"
                     if data.get("min_edge_length") else "")
                  if data["source"] == "mined" else "reviewed phrase list")
        lines = [
            f"{data['documents']:,} documents, {data['tokens']:,} tokens ({params})",
            f"covered: {data['tokens_covered']:,} tokens = {100 * data['coverage']:.1f}% by "
            f"{data['phrases']:,} phrases; median document "
            f"{100 * data['median_document_share']:.1f}%, {data['template_documents']:,} "
            f"documents >= {100 * self.template_share:.0f}% template"]
        for row in data["hogs_by_tokens_covered"][:hogs]:
            phrase = row["phrase"] if len(row["phrase"]) <= 60 else row["phrase"][:57] + "..."
            lines.append(f"  {row['tokens_covered']:>12,} tok  df {row['df']:>7,}  len "
                         f"{row['length']:>4}  {_kind_mark(row)}{phrase}")
        if "templates" in data:
            t = data["templates"]
            lines.append(f"templates with slots: {t['count']:,}, covering "
                         f"{t['tokens_covered']:,} tokens; with the phrases "
                         f"{100 * t['coverage_with_phrases']:.1f}% of the corpus")
            for row in t["rows"][:hogs]:
                pattern = row["pattern"] if len(row["pattern"]) <= 60 else \
                    row["pattern"][:57] + "..."
                lines.append(f"  {row['tokens_covered']:>12,} tok  df {row['df']:>7,}  "
                             f"{len(row['slots'])} slots  {pattern}")
        for row in (data["groups"] or [])[:groups]:
            lines.append(f"  group {row['group'][:40]:<40} {100 * row['coverage']:5.1f}% of "
                         f"{row['tokens']:,} tokens, {row['documents']:,} docs")
        return "\n".join(lines)


def _kind_mark(row: dict) -> str:
    """The terminal summary's mark of a whole-line or edge phrase."""
    if row.get("whole_line"):
        return "[line] "
    return f"[{row['edge']}] " if row.get("edge") else ""
