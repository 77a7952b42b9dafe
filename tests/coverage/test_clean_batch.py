"""The batched cleaner (one kernel call per batch) against the plain per-document reference
(`token_spans` + `remove_runs` / `mask_runs` / `run_char_spans` on Python strings)."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_miner.corpus import token_spans, tokenize
from corpus_miner.coverage.clean import Cleaner, mask_runs, remove_runs, run_char_spans
from corpus_miner.coverage.coverage import aligned_batches
from corpus_miner.coverage.cut_kernels import SPACE, TERMINAL, cut_char_table
from corpus_miner.errors import InputError
from corpus_miner.io.readers import DocumentBatch
from corpus_miner.io.strings import StringList

WORDS = ["Hello", "WORLD", "straße", "École", "中文", "naïve", "e\u0301t\u0301e", "İstanbul",
         "İ", "ΣΑΣ", "Σ", "σς", "x2", "42", "ÆØÅ", "Ωμέγα", "我们使用", "コーヒー", "か\u3099",
         "\u0301x", "\u0301", "สวัสดี", "ǅ", "ﬁ", "🙂", "a\u200db", "k\u0308\u0301"]
GLUE = ["", "", "", ".", ",", "!", "(", ")", "©", "—", "'s", ":", "。", "、", "「", "」", "।",
        "?!", "‼", "..."]
SEPARATORS = [" ", " ", "\n", "\n\n", "", "", "\r\n", "\r\n\r\n", "\t", "\xa0", "\u3000",
              " \n ", "\r", "\x85", "\u2028", "\n\n\n"]
MODES = ("remove", "mask", "annotate")


@st.composite
def document(draw):
    """A text of words, glued punctuation and separators (None: a null text)."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from([None, "", " ", "\n\n", "...", "。"]))
    parts = [draw(st.sampled_from(SEPARATORS + [""]))]
    for _ in range(draw(st.integers(1, 12))):
        if draw(st.integers(0, 7)) == 0:
            parts.append(draw(st.text(max_size=6)))
        else:
            parts.append(draw(st.sampled_from(GLUE)) + draw(st.sampled_from(WORDS))
                         + draw(st.sampled_from(GLUE)))
        parts.append(draw(st.sampled_from(SEPARATORS)))
    return "".join(parts[:-1] if draw(st.booleans()) else parts)


@st.composite
def corpus_cases(draw):
    texts = draw(st.lists(document(), min_size=1, max_size=12))
    counts = [len(tokenize(t or "")) for t in texts]
    doc_offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(counts, out=doc_offsets[1:])
    bits = draw(st.lists(st.booleans(), min_size=int(doc_offsets[-1]),
                         max_size=int(doc_offsets[-1])))
    mask = np.array(bits, dtype=np.uint8)
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(texts) - 1)), max_size=3)))
    cuts = [c for c in cuts if c < len(texts)]
    mask_text = draw(st.sampled_from(["[…]", "", "<J>", "\r\n\r\n\r\n", "中"]))
    return texts, doc_offsets, mask, cuts, mask_text


def batches_of(texts: list, cuts: list[int]):
    """DocumentBatches (as the readers make them) of the texts, cut before the given indices."""
    bounds = [0, *cuts, len(texts)]
    for lo, hi in zip(bounds, bounds[1:]):
        column = pa.array(texts[lo:hi], pa.string())
        records = pa.table({"id": pa.array([str(i) for i in range(lo, hi)]), "text": column})
        yield DocumentBatch(records.column("id").combine_chunks(), pc.fill_null(column, ""),
                            records, "test", lo)


def reference(text: str | None, runs: np.ndarray, mode: str, mask_text: str):
    """(text, spans) of one document by the plain per-document functions."""
    if text is None:
        return None, None
    starts, ends = token_spans(text)
    if len(runs) == 0:
        return text, []
    spans = run_char_spans(starts, ends, runs)
    if mode == "remove":
        return remove_runs(text, starts, ends, runs), spans
    if mode == "mask":
        return mask_runs(text, starts, ends, runs, mask_text), spans
    return text, spans


def runs_of(bits: np.ndarray) -> np.ndarray:
    edges = np.flatnonzero(np.diff(np.concatenate([[0], bits.astype(np.int8), [0]])))
    return edges.reshape(-1, 2).astype(np.int64)


@settings(max_examples=400, deadline=None)
@given(corpus_cases(), st.sampled_from(MODES))
def test_batched_cleaning_equals_the_per_document_reference(case, mode):
    texts, doc_offsets, mask, cuts, mask_text = case
    cleaner = Cleaner(mode=mode, mask_text=mask_text).fit_mask(mask, doc_offsets)
    out = pa.concat_tables(cleaner.transform(batches_of(texts, cuts)))
    for d, text in enumerate(texts):
        runs = runs_of(mask[doc_offsets[d]:doc_offsets[d + 1]])
        want_text, want_spans = reference(text, runs, mode, mask_text)
        row = out.slice(d, 1).to_pylist()[0]
        assert row["text"] == want_text, (text, runs)
        if mode == "annotate":
            assert row["junk_spans"] == want_spans
            assert row["junk_share"] == (None if text is None else cleaner.doc_share_[d])
        assert cleaner.document(d, text)[:2] == (want_text, want_spans) if text is not None \
            else True


def test_cut_table_is_str_isspace_and_terminal_punctuation():
    table = cut_char_table()
    points = [cp for cp in range(len(table)) if not 0xD800 <= cp < 0xE000]
    spaces = {cp for cp in points if chr(cp).isspace()}
    assert set(np.flatnonzero(table & SPACE).tolist()) == spaces
    terminal = regex.compile(r"\p{Terminal_Punctuation}")
    assert set(np.flatnonzero(table & TERMINAL).tolist()) == {
        cp for cp in points if terminal.fullmatch(chr(cp))}


@pytest.mark.parametrize("mode", MODES)
def test_a_changed_text_names_its_document(mode):
    texts = ["one two three", "four five six", "seven eight"]
    doc_offsets = np.array([0, 3, 6, 8], dtype=np.int64)
    cleaner = Cleaner(mode=mode).fit_mask(np.ones(8, dtype=np.uint8), doc_offsets)
    changed = texts[:1] + ["four five six and more"] + texts[2:]
    with pytest.raises(InputError, match=re.escape("document 1: text has 5 tokens but the "
                                                   "corpus had 3")):
        list(cleaner.transform(batches_of(changed, [1])))


@pytest.mark.parametrize("as_list", [False, True])
def test_every_id_is_checked_against_the_corpus(as_list):
    ids = ["a", "bb", "ccc", "dd", "é"]
    doc_ids = ids if as_list else StringList.from_strings(ids)

    def batches(found):
        for lo, hi in ((0, 2), (2, 5)):
            texts = pa.array([""] * (hi - lo))
            yield DocumentBatch(pa.array(found[lo:hi]), texts, pa.table({"text": texts}), "in", lo)

    assert [doc for doc, _ in aligned_batches(batches(ids), doc_ids, 5)] == [0, 2]
    for changed, doc in ((["a", "bb", "ccc", "de", "é"], 3), (["a", "bb", "ccc", "dd", "e"], 4),
                         (["a", "bb", "ccc", "d", "dé"], 3)):  # the same bytes, cut elsewhere
        with pytest.raises(InputError, match=f"document {doc} has id"):
            list(aligned_batches(batches(changed), doc_ids, 5))


_PLAIN_SCRIPT = """
import json, sys
import numpy as np
import pyarrow as pa
from corpus_miner.coverage import cut_kernels
from corpus_miner.coverage.clean import Cleaner
a = json.loads(sys.argv[1])
out = {"numba": type(cut_kernels.cut_rows).__name__}
for mode in ("remove", "mask", "annotate"):
    cleaner = Cleaner(mode=mode).fit_mask(np.array(a["mask"], dtype=np.uint8),
                                          np.array(a["offsets"], dtype=np.int64))
    out[mode] = [cleaner.document(d, text)[:2] for d, text in enumerate(a["texts"])]
print(json.dumps(out, ensure_ascii=False))
"""


def test_cleaning_without_jit_matches_compiled():
    """NUMBA_DISABLE_JIT=1 runs the cut kernels as plain Python: same texts and spans."""
    import json

    from tests.helpers import run_python

    texts = ["Hello, WORLD. 中文。广告。后文\r\n\r\nİstanbul e\u0301te", "", "a b\u0301 c", "x"]
    counts = [len(tokenize(t)) for t in texts]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    mask = (np.arange(offsets[-1]) % 3 != 1).astype(np.uint8)
    payload = {"texts": texts, "offsets": offsets.tolist(), "mask": mask.tolist()}
    plain = json.loads(run_python(_PLAIN_SCRIPT, json.dumps(payload), jit=False))
    assert plain.pop("numba") == "function"  # really ran without the JIT
    for mode in MODES:
        cleaner = Cleaner(mode=mode).fit_mask(mask, offsets)
        assert plain[mode] == [list(cleaner.document(d, t)[:2]) for d, t in enumerate(texts)]
