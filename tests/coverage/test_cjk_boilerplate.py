"""A boilerplate paragraph shared by sigma Chinese or Japanese documents, with different text around
it, is found as one phrase, reported as written and cleaned out exactly, through the CLI."""

from __future__ import annotations

import json
import random

import pytest

from corpus_miner.cli import main
from corpus_miner.corpus import join_tokens, tokenize

SIGMA, MIN_LENGTH = 6, 12
BOILERPLATE = {
    "zh": "本网站使用cookie来改善您的体验。继续浏览即表示您同意我们的隐私政策。",
    "ja": "このサイトではクッキーを使用しています。詳しくはプライバシーポリシーをご覧ください。",
}
# Surrounding text: random sentences over a large character pool, so that no other run of
# MIN_LENGTH tokens repeats in SIGMA documents and nothing extends the paragraph.
POOL = {"zh": [chr(c) for c in range(0x4E00, 0x4E00 + 3000)],
        "ja": [chr(c) for c in range(0x3041, 0x3097)] + [chr(c) for c in range(0x30A1, 0x30FB)]
        + [chr(c) for c in range(0x6000, 0x6000 + 2000)]}


def _sentence(rng: random.Random, pool: list[str]) -> str:
    return "".join(rng.choice(pool) for _ in range(rng.randint(8, 30))) + rng.choice("。！？")


def _documents(language: str, n_docs: int = 20, seed: int = 1) -> tuple[list[dict], dict]:
    """n_docs pages; SIGMA + 2 of them hold the paragraph (at the start, middle or end, as its
    own paragraph). Returns the rows and, for each holder, its text without the paragraph."""
    rng = random.Random(seed)
    holders = set(rng.sample(range(n_docs), SIGMA + 2))
    rows, expected = [], {}
    for i in range(n_docs):
        paragraphs = ["".join(_sentence(rng, POOL[language]) for _ in range(rng.randint(1, 4)))
                      for _ in range(rng.randint(1, 4))]
        if i in holders:
            expected[f"{language}-{i}"] = "\n\n".join(paragraphs)
            paragraphs.insert(rng.choice([0, len(paragraphs) // 2, len(paragraphs)]),
                              BOILERPLATE[language])
        rows.append({"id": f"{language}-{i}", "text": "\n\n".join(paragraphs)})
    return rows, expected


@pytest.mark.parametrize("language", ["zh", "ja"])
def test_shared_paragraph_is_found_reported_and_cleaned_exactly(language, tmp_path, capsys):
    rows, expected = _documents(language)
    source = tmp_path / "pages.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                      encoding="utf-8")
    params = ["--sigma", str(SIGMA), "--min-length", str(MIN_LENGTH)]
    paragraph_tokens = tokenize(BOILERPLATE[language])
    assert len(paragraph_tokens) >= 30  # one token per character (and one for "cookie")

    # found: exactly one phrase, the paragraph's tokens, in the documents that hold it
    phrases = tmp_path / "phrases.jsonl"
    assert main(["phrases", str(source), *params, "-o", str(phrases)]) == 0
    found = [json.loads(line) for line in phrases.read_text(encoding="utf-8").splitlines()]
    assert [(tokenize(r["phrase"]), r["df"], r["length"]) for r in found] == [
        (paragraph_tokens, len(expected), len(paragraph_tokens))]
    # written as it reads: no spaces between the CJK characters
    assert found[0]["phrase"] == join_tokens(paragraph_tokens)
    assert " " not in found[0]["phrase"].replace(" cookie ", "")

    # reported: the hog is the paragraph, shown as written in the original text
    report, html = tmp_path / "report.json", tmp_path / "report.html"
    assert main(["report", str(source), *params, "--json", str(report), "-o", str(html)]) == 0
    data = json.loads(report.read_text(encoding="utf-8"))
    n_tokens = sum(len(tokenize(r["text"])) for r in rows)
    covered = len(expected) * len(paragraph_tokens)
    assert (data["tokens"], data["tokens_covered"]) == (n_tokens, covered)
    hog = data["hogs_by_psi"][0]
    assert hog["phrase"] == found[0]["phrase"]
    assert all(ex["match"] == BOILERPLATE[language].rstrip("。") for ex in hog["examples"])
    assert BOILERPLATE[language].rstrip("。") in html.read_text(encoding="utf-8")

    # cleaned: every holder equals its text without the paragraph; other pages are untouched;
    # the same with the phrase list read back instead of mining
    for extra in ([], ["--phrases", str(phrases)]):
        cleaned = tmp_path / "clean.jsonl"
        assert main(["clean", str(source), *(extra or params), "-o", str(cleaned)]) == 0
        out = [json.loads(line) for line in cleaned.read_text(encoding="utf-8").splitlines()]
        assert [r["id"] for r in out] == [r["id"] for r in rows]
        for original, row in zip(rows, out):
            assert row["text"] == expected.get(row["id"], original["text"])
    capsys.readouterr()
