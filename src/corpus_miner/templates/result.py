"""The templates of a run: one row per template (JSONL), and the patterns a cleaner applies.

Row fields: pattern (text form, pattern.py), max_gap, df (documents with an occurrence),
occurrences, tokens_covered (tokens inside the occurrences of the template and of the patterns it
absorbed, overlaps counted once), anchor_tokens, slots (per slot: len_hist, distinct, top
[[filler, count]], type), examples ([document id, occurrence text]), subsumes ({"templates":
[absorbed patterns], "phrases": [exact phrases whose every occurrence lies inside this
template's spans]}).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from corpus_miner.errors import InputError
from corpus_miner.io.atomic import atomic_path, text_output
from corpus_miner.io.locations import base_name, is_remote
from corpus_miner.templates.matching import TemplateOccurrences
from corpus_miner.templates.pattern import Pattern
from corpus_miner.templates.slots import filler_counts, slot_layout, slot_spans, slot_summary

EXAMPLES = 3
MAX_SUBSUMED = 50


@dataclass
class TemplateTable:
    """rows: one dict per template, canonical order; patterns: every pattern applied (the
    templates and the patterns they absorbed); root: per applied pattern, the row it counts
    for."""

    rows: list[dict]
    patterns: list[Pattern] = field(default_factory=list)
    root: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rows)

    def names(self) -> list[str]:
        """Per applied pattern, the pattern text of its row."""
        return [self.rows[r]["pattern"] for r in self.root]


def describe(corpus, patterns, texts, occ: TemplateOccurrences, root, label, roots, applied,
             df, n_occ, vocab, phrases) -> TemplateTable:
    tokens = np.asarray(corpus.tokens)
    row_of = {t: i for i, t in enumerate(roots)}
    covered = np.bincount(label[label >= 0], minlength=len(patterns)) if len(label) else \
        np.zeros(len(patterns), np.int64)
    subsumed_phrases = _subsumed_phrases(phrases, label)

    def decode(ids) -> str:
        return corpus.decode(ids)

    rows = []
    for t in roots:
        pattern = patterns[t]
        rows_t = occ.of(t)
        slots = []
        for layout in slot_layout(pattern, vocab.n_vocab):
            start, end = slot_spans(pattern, layout, occ, rows_t)
            slots.append(slot_summary(filler_counts(tokens, start, end), corpus.vocab, decode))
        examples = [[str(corpus.doc_ids[int(d)]), decode(tokens[int(s):int(e)])]
                    for d, s, e in zip(occ.doc[rows_t][:EXAMPLES], occ.start[rows_t][:EXAMPLES],
                                       occ.end[rows_t][:EXAMPLES])]
        rows.append({"pattern": texts[t], "max_gap": pattern.max_gap, "df": int(df[t]),
                     "occurrences": int(n_occ[t]), "tokens_covered": int(covered[t]),
                     "anchor_tokens": pattern.n_anchor_tokens, "slots": slots,
                     "examples": examples,
                     "subsumes": {"templates": [texts[a] for a in applied
                                                if root[a] == t and a != t][:MAX_SUBSUMED],
                                  "phrases": subsumed_phrases.get(t, [])[:MAX_SUBSUMED]}})
    return TemplateTable(rows, [patterns[t] for t in applied],
                         [row_of[int(root[t])] for t in applied])


def _subsumed_phrases(coverage, label: np.ndarray) -> dict[int, list[str]]:
    """template -> texts of the exact phrases all of whose full occurrences lie in its spans."""
    if coverage is None or len(coverage.phrases) == 0 or len(coverage.occurrences.start) == 0:
        return {}
    occ, table = coverage.occurrences, coverage.phrases
    end = occ.start + table.lengths[occ.phrase] - 1
    first, last = label[occ.start], label[end]
    inside = (first >= 0) & (first == last)
    n = len(table)
    all_inside = np.bincount(occ.phrase[inside], minlength=n) == np.bincount(occ.phrase,
                                                                             minlength=n)
    owner = np.full(n, -1, dtype=np.int64)
    owner[occ.phrase[inside]] = first[inside]
    out: dict[int, list[str]] = {}
    for p in np.flatnonzero(all_inside & (owner >= 0)).tolist():
        out.setdefault(int(owner[p]), []).append(table.text(p))
    return out


def write_templates(table: TemplateTable, path) -> None:
    """One JSON row per template, atomically (.jsonl or .jsonl.gz, a file or a URL)."""
    name = base_name(path).lower()
    if not (name.endswith(".jsonl") or name.endswith(".jsonl.gz")):
        raise InputError(f"{path}: templates are written as .jsonl or .jsonl.gz")
    with atomic_path(path) as tmp, text_output(tmp, compress=name.endswith(".gz")) as out:
        for row in table.rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_template_rows(path) -> list[dict]:
    """Rows of a templates file (written by write_templates, possibly edited: a row needs
    `pattern` and `max_gap`)."""
    import gzip
    from pathlib import Path

    if is_remote(path):
        from corpus_miner.io.remote import local_copy

        with local_copy(str(path)) as copy:
            return read_template_rows(copy)
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such templates file")
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    rows = []
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for lineno, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}:{lineno}: malformed JSON ({exc.msg})") from exc
                if not isinstance(row, dict) or not isinstance(row.get("pattern"), str) \
                        or not isinstance(row.get("max_gap"), int) or row["max_gap"] < 1:
                    raise InputError(f"{path}:{lineno}: a template row needs a string "
                                     "'pattern' and an integer 'max_gap' >= 1")
                rows.append(row)
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the templates file ({exc})") from None
    return rows
