"""PhraseTable order and phrase files: every format round-trips, hand-edited lists are read."""

import numpy as np
import pytest

from corpus_miner.errors import InputError, ParameterError
from corpus_miner.phrases.result import PhraseTable, read_phrases, write_phrases

VOCAB = ["free", "shipping", "on", "orders", "über", "a", "ab", "b"]


def table():
    return PhraseTable.from_lists([[5, 7], [6], [0, 1, 2, 3], [4, 4]], [3, 6, 3, 3], [4, 6, 3, 5],
                                  VOCAB)


def test_canonical_order_psi_then_length_then_text():
    rows = list(table().sorted().rows())
    # psi: "free shipping on orders" 12, "ab" 6, "a b" 6, "über über" 6; ties: longer first, text
    assert [r["phrase"] for r in rows] == ["free shipping on orders", "a b", "über über", "ab"]
    assert rows[0] == {"phrase": "free shipping on orders", "length": 4, "df": 3, "occurrences": 3}


def test_take_gathers_token_runs():
    taken = table().take(np.array([3, 0]))
    assert taken.text(0) == "über über" and taken.text(1) == "a b"
    assert list(taken.offsets) == [0, 2, 4]


@pytest.mark.parametrize("name", ["p.jsonl", "p.jsonl.gz", "p.tsv", "p.parquet"])
def test_write_then_read_round_trip(tmp_path, name):
    path = tmp_path / name
    write_phrases(table().sorted(), path)
    rows = read_phrases(path)
    expected = list(table().sorted().rows())
    assert [r["phrase"] for r in rows] == [r["phrase"] for r in expected]
    assert [int(r["df"]) for r in rows] == [r["df"] for r in expected]


def test_txt_list_one_phrase_per_line(tmp_path):
    path = tmp_path / "reviewed.txt"
    path.write_text("We use cookies\n\n  all rights reserved  \n", encoding="utf-8")
    assert read_phrases(path) == [{"phrase": "We use cookies"}, {"phrase": "all rights reserved"}]


def test_unknown_extension_and_bad_rows_are_clear(tmp_path):
    (tmp_path / "p.csv").write_text("phrase\n", encoding="utf-8")
    with pytest.raises(ParameterError, match=r"\.txt"):
        read_phrases(tmp_path / "p.csv")
    bad = tmp_path / "p.jsonl"
    bad.write_text('{"phrase": "ok"}\n{"nophrase": 1}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"p.jsonl:2"):
        read_phrases(bad)
    with pytest.raises(InputError, match="no such phrase file"):
        read_phrases(tmp_path / "missing.txt")


def test_canonical_order_is_psi_then_length_then_text():
    """The numpy order equals sorting by (-Psi, -length, text), also with CJK tokens (joined
    without spaces) and words that are prefixes of others."""
    import random

    rng = random.Random(1)
    latin = ["the", "a", "ab", "b", "x", "cookies", "we"]
    mixed = ["一", "가", "a", "ab", "我", "们"]
    for vocab in (latin, mixed):
        for _ in range(200):
            phrases = [[rng.randrange(len(vocab)) for _ in range(rng.randint(2, 3))]
                       for _ in range(20)]
            table = PhraseTable.from_lists(phrases, [rng.randint(1, 3) for _ in phrases],
                                           [1] * len(phrases), vocab)
            lengths, psi = table.lengths, table.lengths * table.df
            expected = sorted(range(len(table)), key=lambda i: (-int(psi[i]), -int(lengths[i]),
                                                                table.text(i)))
            assert [table.text(i) for i in table.canonical_order()] == \
                [table.text(i) for i in expected]
