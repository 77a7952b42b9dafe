"""The cleaning-quality metrics against hand-made cases and a per-character brute force."""
from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from clean_quality import GroundTruth, Removal, by_template, explain, read_removals, score


def _truth(pages):
    truth = GroundTruth()
    for doc_id, text, spans in pages:
        truth.add(doc_id, text, spans)
    return truth


def test_hand_made_page():
    text = "Home | About\n\nReal words here.\n\nUpdated on May 3 by Ann"
    spans = [[0, 14, "fixed", "header"], [14, 32, "content", "p"],
             [32, len(text), "slots", "byline"]]
    truth = _truth([("a", text, spans)])
    # removes "Home | About" and "Updated on May" (not "3 by Ann") and the word "here"
    cut = [(0, 12), (25, 29), (32, 46)]
    result = score(truth, {"a": Removal(cut)})
    fixed, slots = 9, len("UpdatedonMay3byAnn")  # letters and digits only
    content = len("Realwordshere")
    assert result["kinds"]["fixed"] == {"chars": fixed, "removed": fixed, "recall": 1.0}
    assert result["kinds"]["slots"]["removed"] == len("UpdatedonMay")
    assert math.isclose(result["recall"], (fixed + 12) / (fixed + slots))
    assert math.isclose(result["precision"], (fixed + 12) / (fixed + 12 + 4))
    assert math.isclose(result["content_loss"], 4 / content)
    # one pattern per removed run: the byline is touched by one pattern
    assert result["fragmentation"] == 1.0 and result["templates_touched"] == 1.0


def test_by_template_folds_the_site_suffix_and_counts_scored_characters():
    pages = [("a", "Home | A\n\nwords\n\nPage 2 of 9",
              [[0, 10, "fixed", "header:site1"], [10, 17, "content", "p"],
               [17, 28, "slots", "page_of"]]),
             ("b", "Home | B\n\nmore\n\nPage 3 of 9",
              [[0, 10, "fixed", "header:site2"], [10, 16, "content", "p"],
               [16, 27, "slots", "page_of"]])]
    truth = _truth(pages)
    removals = {"a": Removal([(0, 10), (10, 12)]), "b": Removal([(0, 4), (16, 27)])}
    rows = {(r["kind"], r["template"]): r for r in by_template(truth, removals)}
    assert set(rows) == {("fixed", "header"), ("content", "p"), ("slots", "page_of")}
    assert rows[("fixed", "header")]["chars"] == 10 and rows[("fixed", "header")]["removed"] == 9
    assert rows[("content", "p")]["removed"] == 2  # "wo" of "words"
    assert rows[("slots", "page_of")] == {"kind": "slots", "template": "page_of", "chars": 16,
                                          "removed": 8, "recall": 0.5, "missed": 8}
    order = [r["kind"] for r in by_template(truth, removals)]
    assert order[-1] == "content"  # boilerplate rows first, most missed first


def test_a_document_the_tool_dropped_counts_as_removed_entirely():
    truth = _truth([("a", "ab cd", [[0, 3, "fixed", "x"], [3, 5, "content", "p"]])])
    result = score(truth, {})
    assert result["recall"] == 1.0 and result["content_loss"] == 1.0


def test_fragmentation_counts_distinct_patterns_per_template():
    pages = []
    for i in range(3):
        text = f"Page {i} of 9\nbody text"
        pages.append((f"d{i}", text, [[0, 12, "slots", "page_of"], [12, len(text), "content",
                                                                      "p"]]))
    truth = _truth(pages)
    whole = {f"d{i}": Removal([(0, 12)], [(0, 12, "page <*> of <*>")]) for i in range(3)}
    pieces = {f"d{i}": Removal([(0, 4), (7, 11)], [(0, 4, "page"), (7, 11, "of 9")])
              for i in range(3)}
    assert score(truth, whole)["fragmentation"] == 1.0
    assert score(truth, pieces)["fragmentation"] == 2.0
    runs = {f"d{i}": Removal([(0, 12)]) for i in range(3)}  # each removed text differs
    assert score(truth, runs)["fragmentation"] == 3.0


def test_cleaned_output_is_aligned_and_explained(tmp_path):
    text = "Share this: Twitter\nA real sentence stays.\nAdvertisement"
    truth = _truth([("a", text, [[0, 20, "short", "share"], [20, 43, "content", "p"],
                                 [43, len(text), "short", "ad"]])])
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"id": "a", "text": "A real sentence\nAdvertisement"}) + "\n")
    removals = read_removals(out, "cleaned", truth)
    result = score(truth, removals)
    assert result["kinds"]["short"]["recall"] == len("SharethisTwitter") / len(
        "SharethisTwitterAdvertisement")
    assert result["content_loss"] == len("stays") / len("Arealsentencestays")
    examples = explain(truth, removals)
    assert examples["removed content"] == ["a [content:p] A real sentence [[stays.]]"]
    assert examples["missed boilerplate"] == ["a [short:ad] [[Advertisement]]"]


KIND = st.sampled_from(["content", "fixed", "slots", "short", "glued"])


@st.composite
def pages(draw):
    out = []
    for d in range(draw(st.integers(1, 4))):
        pieces = draw(st.lists(st.tuples(st.text("ab .\n", min_size=1, max_size=8), KIND),
                               min_size=1, max_size=6))
        text, spans, at = "", [], 0
        for piece, kind in pieces:
            spans.append([at, at + len(piece), kind, f"t{len(piece) % 2}"])
            text += piece
            at += len(piece)
        cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=6)))
        out.append((f"d{d}", text, spans, list(zip(cuts[::2], cuts[1::2]))))
    return out


@settings(max_examples=200, deadline=None)
@given(pages())
def test_metrics_match_a_per_character_count(data):
    truth = _truth([(d, t, s) for d, t, s, _ in data])
    result = score(truth, {d: Removal(c) for d, _, _, c in data})
    total, removed = {}, {}
    for _, text, spans, cuts in data:
        for start, end, kind, _ in spans:
            for i in range(start, end):
                if not text[i].isalnum():
                    continue
                total[kind] = total.get(kind, 0) + 1
                if any(s <= i < e for s, e in cuts):
                    removed[kind] = removed.get(kind, 0) + 1
    boiler = [k for k in total if k != "content"]
    b_total = sum(total[k] for k in boiler)
    b_removed = sum(removed.get(k, 0) for k in boiler)
    all_removed = b_removed + removed.get("content", 0)
    if b_total:
        assert math.isclose(result["recall"], b_removed / b_total)
    if all_removed:
        assert math.isclose(result["precision"], b_removed / all_removed)
    if total.get("content"):
        assert math.isclose(result["content_loss"], removed.get("content", 0) / total["content"])
    for kind in boiler:
        assert result["kinds"][kind]["recall"] == removed.get(kind, 0) / total[kind]


def test_a_cleaned_record_without_text_is_an_emptied_page(tmp_path):
    truth = _truth([("a", "ab cd", [[0, 3, "fixed", "x"], [3, 5, "content", "p"]])])
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"id": "a"}) + "\n")  # datatrove leaves out an empty text
    result = score(truth, read_removals(out, "cleaned", truth))
    assert result["recall"] == 1.0 and result["content_loss"] == 1.0


def test_loss_causes_on_a_hand_made_page():
    from clean_quality import LOSS_CAUSES, loss_causes

    parts = [("Home | Menu\n", "fixed", "header"), ("Uses of thing here.\n", "content", "title"),
             ("Words of real content in a line.\n", "content", "p"),
             ("A quote seen on many pages.\n", "content", "repeat_above_sigma"),
             ("Alone line\n", "content", "p"), ("Footer text", "fixed", "footer")]
    text, spans = "", []
    for part, kind, tag in parts:
        spans.append([len(text), len(text) + len(part), kind, tag])
        text += part
    truth = _truth([("a", text, spans)])

    def at(word, n=None):
        start = text.index(word)
        return start, start + (len(word) if n is None else n)

    cut = [(0, at("Uses of")[1]),  # the header and the start of the title: one run
           at("of real"),          # inside a content line
           at("line."),            # the end of a content line
           at("quote seen"),       # inside the confuser paragraph
           at("Alone line")]       # a whole line
    counts = loss_causes(truth, {"a": Removal(cut)})
    assert set(counts) == set(LOSS_CAUSES)
    assert counts == {
        "content repeated on more than sigma pages": len("quoteseen"),
        "content repeated on fewer than sigma pages": 0,
        "run continuing boilerplate": len("Usesof"),
        "whole content line": len("Aloneline"),
        "start or end of a content line": len("line"),
        "inside a content line": len("ofreal")}
    # every removed content character has exactly one cause
    assert sum(counts.values()) == score(truth, {"a": Removal(cut)})["content_loss"] * sum(
        len(p.replace(" ", "").replace(".", "").replace("\n", ""))
        for p, kind, _ in parts if kind == "content")


def test_edge_probe_covers_glued_sentences_only_at_a_sentence_break():
    from probe_edge_phrases import edge_cover

    glued = "Follow us on social media today."
    texts = [f"Header\n\nSome content number {i} ends here. {glued}\n\n"
             f"The words of the page {i} go on\nRead all about value {i} and more"
             for i in range(3)]
    phrases, covered = edge_cover(texts, sigma=3, min_edge=3, min_length=10)
    assert ("end", ("follow", "us", "on", "social", "media", "today")) in phrases
    for text, spans in zip(texts, covered):
        assert [text[a:b] for a, b in spans] == [glued[:-1]]  # up to its last token
    # "the words of" starts 3 paragraphs, but meets the rest at no sentence break
    loose, _ = edge_cover(texts, sigma=3, min_edge=3, min_length=10, any_break=True)
    assert ("end", ("go", "on")) not in loose  # shorter than min_edge
    assert ("start", ("the", "words", "of")) in loose and ("start", ("the", "words", "of")) \
        not in phrases
