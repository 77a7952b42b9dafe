"""Plain-Python reference of the template definition (docs/how-it-works/templates.md): the
occurrences of a pattern with leftmost-shortest binding, df, and the fillers of every slot,
from lists of words. Written from the definition only, sharing no code with the package."""

from __future__ import annotations

from collections import Counter

MONTHS = set(("january february march april may june july august september october november "
              "december jan feb mar apr jun jul aug sep sept oct nov dec").split())


def word_class(word: str) -> str:
    if word.isdecimal():
        return "<num>"
    if word in MONTHS:
        return "<month>"
    return word


def matches_at(doc: list[str], at: int, anchor: list[str]) -> bool:
    if at < 0 or at + len(anchor) > len(doc):
        return False
    return all(word_class(doc[at + i]) == a if a in ("<num>", "<month>") else doc[at + i] == a
               for i, a in enumerate(anchor))


def occurrences(docs: list[list[str]], anchors: list[list[str]], max_gap: int, lines=None):
    """[(doc, [anchor starts])] of every occurrence, in (doc, start) order. lines[d]: the set
    of line-start indices of doc d; with them an occurrence lies inside one line."""
    out = []
    for d, doc in enumerate(docs):
        for start in range(len(doc)):
            if not matches_at(doc, start, anchors[0]):
                continue
            starts, end, ok = [start], start + len(anchors[0]), True
            for anchor in anchors[1:]:
                bound = next((q for q in range(end + 1, end + max_gap + 1)
                              if matches_at(doc, q, anchor)), None)
                if bound is None:
                    ok = False
                    break
                starts.append(bound)
                end = bound + len(anchor)
            if ok and lines is not None and any(start < i < end for i in lines[d]):
                ok = False
            if ok:
                out.append((d, starts))
    return out


def slot_fillers(docs, anchors, found) -> list[Counter]:
    """Per slot (typed runs inside anchors and free slots between them, left to right), the
    Counter of its fillers (tuples of words)."""
    slots: list[Counter] = []
    layout = []
    for a, anchor in enumerate(anchors):
        if a:
            layout.append(("free", a - 1, 0, 0))
        i = 0
        while i < len(anchor):
            if anchor[i] in ("<num>", "<month>"):
                j = i
                while j < len(anchor) and anchor[j] in ("<num>", "<month>"):
                    j += 1
                layout.append(("typed", a, i, j - i))
                i = j
            else:
                i += 1
    for kind, a, offset, length in layout:
        counter: Counter = Counter()
        for d, starts in found:
            if kind == "typed":
                s = starts[a] + offset
                counter[tuple(docs[d][s:s + length])] += 1
            else:
                s = starts[a] + len(anchors[a])
                counter[tuple(docs[d][s:starts[a + 1]])] += 1
        slots.append(counter)
    return slots


def line_end_occurrences(docs, lines, anchors, max_gap):
    """Occurrences of `anchors <*>$`: those of the anchors whose last anchor ends 1 to max_gap
    tokens before the end of its line; lines[d] is the set of line-start indices of doc d.
    [(doc, [anchor starts], end)]."""
    out = []
    for d, starts in occurrences(docs, anchors, max_gap):
        end = starts[-1] + len(anchors[-1])
        stop = next((i for i in range(end, len(docs[d])) if i in lines[d]), len(docs[d]))
        if any(starts[0] < i < end for i in lines[d]):
            continue
        if 1 <= stop - end <= max_gap:
            out.append((d, starts, stop))
    return out


def line_form_occurrences(docs, form: str, anchor: list[str], max_gap: int, max_rest: int = 64,
                          max_anchor_line: int = 8, max_block_lines: int = 12,
                          min_joined: int = 2):
    """Occurrences of a line form (templates.lines) as [(doc, start, end)] token offsets in
    the doc, from docs given as lists of paragraphs of lines of words."""
    lines = {}
    for d, doc in enumerate(docs):
        for p, paragraph in enumerate(doc):
            for i, line in enumerate(paragraph):
                lines[(d, p, i)] = tuple(line)

    def known(seq, here) -> bool:
        return any(words == tuple(seq) and where != here for where, words in lines.items())

    def joined(seq, here) -> bool:  # back-to-back known lines of >= min_joined tokens each
        return bool(seq) and any(known(seq[:j], here) and (j == len(seq) or joined(
            seq[j:], here)) for j in range(min_joined, len(seq) + 1))

    def made_of_known(seq, here) -> bool:
        return known(seq, here) or joined(seq, here)

    out = []
    for d, doc in enumerate(docs):
        at = 0
        for p, paragraph in enumerate(doc):
            first = at
            if form == "lines" and paragraph[0] == anchor and len(anchor) <= max_anchor_line \
                    and 2 <= len(paragraph) <= max_block_lines + 1 \
                    and all(len(line) <= max_rest and known(line, (d, p, i))
                            for i, line in enumerate(paragraph) if i):
                out.append((d, first, first + sum(len(line) for line in paragraph)))
            for i, line in enumerate(paragraph):
                k = len(anchor)
                filler = line[k:]
                if form == "rest" and line[:k] == anchor and 1 <= len(filler) <= max_rest \
                        and made_of_known(filler, (d, p, i)):
                    out.append((d, at, at + len(line)))
                at += len(line)
    return out
