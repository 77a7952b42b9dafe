"""Edge phrases: short sequences glued to the start or the end of a paragraph, at a sentence break.

Definition (docs/how-it-works/line-aware-phrases.md; lines and paragraphs as in phrases/lines.py).
A token *follows a sentence break* when it is in TokenCorpus.sentence_starts (the text between
it and the token before holds one of . ! ? : followed by whitespace, or a CJK full stop,
exclamation, question mark or colon: corpus.tokenizer.sentence_starts). A line *opens* a
paragraph when it starts one, and *closes* it when the next line of its document, if any,
starts one. A token sequence Q is a *start-edge piece* of a line that opens a paragraph when
the line is longer than Q, starts with Q, and its token right after Q follows a sentence break;
an *end-edge piece* of a line that closes a paragraph when the line is longer than Q, ends with
Q, and Q's first token follows a sentence break. Q is a start (end) *edge phrase* at (sigma,
min_edge_length, min_length) when min_edge_length <= |Q| < min_length and at least sigma
documents have a line of which it is a start-edge (end-edge) piece. The two sides are counted
apart: the same tokens can be an edge phrase at one side only. Its df is that number of
documents and its occurrences the number of such lines. An edge phrase covers its edge
occurrences; the pieces of one line side are all prefixes (suffixes) of the line, so what they
cover together is the longest of them.

How. The pieces are enumerated from the sentence starts (each names at most one piece per
side: the one that ends, or begins, there), in corpus order, and counted by lines.py's
hash-group-verify machinery, exact whatever the hash does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from corpus_miner._numba.readonly import read_only
from corpus_miner.errors import InputError
from corpus_miner.phrases.lines import (
    FULL_HASH,
    frequent_sequences,
    line_ends,
    match_lines,
    paragraph_firsts,
    paragraph_lasts,
    sequence_hashes,
)
from corpus_miner.phrases.result import END_EDGE, START_EDGE, PhraseTable

SIDES = (START_EDGE, END_EDGE)


def corpus_sentences(corpus) -> np.ndarray:
    """The sentence starts of a TokenCorpus, or InputError when it has none."""
    starts = getattr(corpus, "sentence_starts", None)
    if starts is None:
        raise InputError("this corpus has no sentence starts (tokenized without them, or saved "
                         "by an older corpus-miner): edge phrases need them; tokenize the "
                         "original documents again asking for them (load_corpus(..., "
                         "sentences=True), `corpus-miner tokenize --sentences`)")
    return np.ascontiguousarray(starts, dtype=np.int64)


def edge_pieces(doc_offsets: np.ndarray, line_starts: np.ndarray, paragraph_starts: np.ndarray,
                sentence_starts: np.ndarray, side: int, shortest: int, longest: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """(starts, lengths) of every `side` edge piece (module docstring) of shortest to longest
    tokens, in corpus order."""
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    line_starts = np.ascontiguousarray(line_starts, dtype=np.int64)
    sentence = np.ascontiguousarray(sentence_starts, dtype=np.int64)
    paragraph_starts = np.ascontiguousarray(paragraph_starts, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    if not len(line_starts) or not len(sentence) or shortest > longest:
        return empty, empty
    line = np.searchsorted(line_starts, sentence, side="right") - 1  # the line holding it
    inside = line >= 0  # every document's first token starts a line: always, in a corpus
    sentence, line = sentence[inside], line[inside]
    first = line_starts[line]
    if side == START_EDGE:
        edge_line = paragraph_firsts(line_starts, paragraph_starts)[line]
        starts, lengths = first, sentence - first
    else:
        edge_line = paragraph_lasts(line_starts, paragraph_starts, doc_offsets)[line]
        starts, lengths = sentence, line_ends(line_starts, doc_offsets)[line] - sentence
    # sentence > first: the piece is not the whole line
    keep = edge_line & (sentence > first) & (lengths >= shortest) & (lengths <= longest)
    return starts[keep], lengths[keep]


def mine_edge_phrases(tokens: np.ndarray, doc_offsets: np.ndarray, line_starts: np.ndarray,
                      paragraph_starts: np.ndarray, sentence_starts: np.ndarray, sigma: int,
                      min_edge_length: int, min_length: int, vocab: Sequence[str],
                      hash_mask: np.uint64 = FULL_HASH) -> PhraseTable:
    """Every edge phrase (module docstring), start side and end side, in canonical order, edge
    set. tokens, doc_offsets, line_starts, paragraph_starts, sentence_starts: a TokenCorpus's
    arrays."""
    tokens = read_only(np.ascontiguousarray(tokens, dtype=np.uint32))
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    phrases: list[list[int]] = []
    df: list[int] = []
    occurrences: list[int] = []
    sides: list[int] = []
    for side in SIDES:
        starts, lengths = edge_pieces(doc_offsets, line_starts, paragraph_starts,
                                      sentence_starts, side, min_edge_length, min_length - 1)
        heads, found_df, found_occ = frequent_sequences(tokens, doc_offsets, starts, lengths,
                                                        sigma, hash_mask)
        phrases += [tokens[starts[h]:starts[h] + lengths[h]].tolist() for h in heads]
        df += found_df
        occurrences += found_occ
        sides += [side] * len(heads)
    return PhraseTable.from_lists(phrases, df, occurrences, vocab, edge=sides).sorted()


def edge_matches(tokens: np.ndarray, doc_offsets: np.ndarray, line_starts: np.ndarray,
                 paragraph_starts: np.ndarray, sentence_starts: np.ndarray, table: PhraseTable,
                 hash_mask: np.uint64 = FULL_HASH) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(phrase, document, start) of every edge piece equal to an edge phrase of `table` at its
    side, in corpus order: the edge occurrences of its phrases (its other phrases have none)."""
    tokens = read_only(np.ascontiguousarray(tokens, dtype=np.uint32))
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    sides = table.edge_sides
    found: list[tuple[np.ndarray, np.ndarray]] = []
    mask = np.uint64(hash_mask)
    for side in SIDES:
        members = np.flatnonzero(sides == side)
        if not len(members):
            continue
        part = table.take(members)
        lengths_of = part.lengths
        starts, lengths = edge_pieces(doc_offsets, line_starts, paragraph_starts,
                                      sentence_starts, side, int(lengths_of.min()),
                                      int(lengths_of.max()))
        if not len(starts):
            continue
        starts, lengths = read_only(starts), read_only(lengths)
        piece_hashes = sequence_hashes(tokens, starts, read_only(starts + lengths), mask)
        phrase_tokens = read_only(np.ascontiguousarray(part.tokens, dtype=np.uint32))
        phrase_offsets = read_only(np.ascontiguousarray(part.offsets, dtype=np.int64))
        phrase_hashes = sequence_hashes(phrase_tokens, read_only(phrase_offsets[:-1].copy()),
                                        read_only(phrase_offsets[1:].copy()), mask)
        order = np.argsort(phrase_hashes, kind="stable").astype(np.int64)
        phrase = match_lines(tokens, starts, lengths, read_only(piece_hashes), phrase_tokens,
                             phrase_offsets, read_only(order), read_only(phrase_hashes[order]))
        hit = phrase >= 0
        found.append((members[phrase[hit]], starts[hit]))
    if not found:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    phrase = np.concatenate([p for p, _ in found]).astype(np.int64)
    start = np.concatenate([s for _, s in found]).astype(np.int64)
    order = np.argsort(start, kind="stable")
    phrase, start = phrase[order], start[order]
    doc = (np.searchsorted(doc_offsets, start, side="right") - 1).astype(np.int64)
    return phrase, doc, start
