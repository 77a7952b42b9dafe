"""The oracle itself, on examples small enough to check by hand (the article's included)."""

from tests.helpers import word_ids

from .oracle import brute_force_mcfp, substring_support

TOY = [
    "new laptop acer swift free shipping on orders over 50 dollars",
    "case for iphone 15 free shipping on orders over 50 dollars",
    "free shipping on orders over 50 dollars sony headphones",
    "sony headphones wh 1000 free shipping",
]


def as_text(answer, inverse):
    return {(" ".join(inverse[t] for t in ids), df, occ) for ids, df, occ in answer}


def test_article_toy_example_sigma_3():
    docs, inverse = word_ids(TOY)
    assert as_text(brute_force_mcfp(docs, 3, 2), inverse) == {
        ("free shipping on orders over 50 dollars", 3, 3)}


def test_article_toy_example_sigma_2_adds_sony_headphones():
    docs, inverse = word_ids(TOY)
    # "free shipping" (df 4) stays inside the longer phrase; "sony headphones" reaches df 2.
    assert as_text(brute_force_mcfp(docs, 2, 2), inverse) == {
        ("free shipping on orders over 50 dollars", 3, 3), ("sony headphones", 2, 2)}


def test_article_suffix_array_example():
    docs, inverse = word_ids(["A B C D", "X A B C", "A B C Y"])
    assert as_text(brute_force_mcfp(docs, 3, 2), inverse) == {("A B C", 3, 3)}
    # "B C" has the same support but is a piece of "A B C", so it is not maximal.
    assert as_text(brute_force_mcfp(docs, 3, 1), inverse) == {("A B C", 3, 3)}


def test_df_counts_documents_and_occurrences_count_overlaps():
    docs = [[1, 1, 1, 1], [1, 1], [2]]
    doc_sets, occurrences = substring_support(docs)
    assert doc_sets[(1, 1)] == {0, 1}
    assert occurrences[(1, 1)] == 4  # three overlapping in doc 0, one in doc 1
    assert brute_force_mcfp(docs, 2, 2) == {((1, 1), 2, 4)}
    # Inside one document a phrase repeated many times is still df 1.
    assert brute_force_mcfp([[5, 6] * 10, [7]], 2, 2) == set()


def test_min_length_drops_short_maximal_phrases_without_promoting_their_pieces():
    docs = [[1, 2, 3], [1, 2, 3], [4, 5]]
    assert brute_force_mcfp(docs, 2, 3) == {((1, 2, 3), 2, 2)}
    assert brute_force_mcfp(docs, 2, 4) == set()


def test_sigma_above_document_count_gives_nothing():
    assert brute_force_mcfp([[1, 2], [1, 2]], 3, 2) == set()
    assert brute_force_mcfp([], 2, 2) == set()


def test_phrases_never_cross_documents():
    # "2 1" appears only across the boundary between documents: not a phrase.
    assert brute_force_mcfp([[1, 2], [1, 2], [1, 2]], 2, 2) == {((1, 2), 3, 3)}
