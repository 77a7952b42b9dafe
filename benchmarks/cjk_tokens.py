"""What min_length means in scripts written without spaces: tokens per sentence and per repeated
phrase, on Chinese and Japanese corpora next to English and German ones.

For each corpus: tokens under the current rule (one token per CJK/kana/Thai... character) and
under the old one (runs of letters, marks and numbers, for comparison), the longest token, tokens
per sentence (split at 。．！？.!? and line breaks; quartiles over sentences of 3+ tokens), and the
three phrases covering most tokens at the given sigma/min-length with their length in tokens.
Also the token counts of a few boilerplate sentences in English, Chinese and Japanese (the
manpages-ja colophon as the corpora have it, and common web banners).

    python benchmarks/cjk_tokens.py --corpus data/corpora/debian-reference-{zh-cn,ja,en}.jsonl.gz
    python benchmarks/cjk_tokens.py --corpus ... --sigma 10 --min-length 10

Writes benchmarks/results/cjk_tokens.csv (one row per corpus), cjk_tokens_phrases.csv and
cjk_tokens_sentences.csv.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
import regex

from corpus_miner.corpus import load_corpus, tokenize
from corpus_miner.coverage import Coverage
from corpus_miner.io import read_documents
from corpus_miner.phrases import BloomSpan

from csv_table import write_csv

RESULTS = Path(__file__).resolve().parent / "results"
OLD_RULE = regex.compile(r"[\p{L}\p{M}\p{N}]+")
SENTENCE_END = regex.compile(r"[。．！？.!?\n]+")


SENTENCES = [  # (English, Chinese, Japanese) versions of one boilerplate sentence
    ("This page is part of release 5.10 of the Linux man-pages project.", "",
     "この man ページは Linux man-pages プロジェクトのリリース 5.10 の一部である。"),
    ("A description of the project, and information about reporting bugs, can be found at "
     "https://www.kernel.org/doc/man-pages/.", "",
     "プロジェクトの説明とバグ報告に関する情報は "
     "https://www.kernel.org/doc/man-pages/ に書かれている。"),
    ("This website uses cookies to improve your experience.", "本网站使用cookie来改善您的体验。",
     "当サイトではより良い体験のためにクッキーを使用しています。"),
    ("By continuing to browse, you agree to our privacy policy.",
     "继续浏览即表示您同意我们的隐私政策。",
     "閲覧を続けることで、プライバシーポリシーに同意したものとみなされます。"),
    ("All rights reserved.", "版权所有。", "無断転載を禁じます。"),
]


def sentence_rows() -> list[dict]:
    rows = []
    for english, chinese, japanese in SENTENCES:
        rows.append({"english": english, "english_tokens": len(tokenize(english)),
                     "chinese": chinese, "chinese_tokens": len(tokenize(chinese)) or "",
                     "japanese": japanese, "japanese_tokens": len(tokenize(japanese))})
    return rows


def corpus_figures(path: str, sigma: int, min_length: int) -> tuple[dict, list[dict]]:
    name = Path(path).name.split(".")[0]
    per_sentence: list[int] = []
    old_tokens = old_longest = new_longest = 0
    for batch in read_documents([path]):
        for text in batch.texts.to_pylist():
            text = (text or "").lower()
            old = OLD_RULE.findall(text)
            old_tokens += len(old)
            old_longest = max([old_longest, *map(len, old)])
            for sentence in SENTENCE_END.split(text):
                tokens = tokenize(sentence)
                new_longest = max([new_longest, *map(len, tokens)])
                if len(tokens) >= 3:
                    per_sentence.append(len(tokens))
    corpus = load_corpus([path])
    miner = BloomSpan(sigma=sigma, min_length=min_length).fit(corpus)
    coverage = Coverage.from_miner(miner, corpus)
    q1, median, q3 = np.percentile(per_sentence, [25, 50, 75]) if per_sentence else (0, 0, 0)
    row = {"corpus": name, "documents": corpus.n_docs, "tokens": corpus.n_tokens,
           "tokens_old_rule": old_tokens, "longest_token_chars": new_longest,
           "longest_token_chars_old_rule": old_longest, "sentences": len(per_sentence),
           "tokens_per_sentence_q1": float(q1), "tokens_per_sentence_median": float(median),
           "tokens_per_sentence_q3": float(q3),
           "tokens_per_sentence_mean": round(statistics.fmean(per_sentence), 1)
           if per_sentence else 0.0,
           "sigma": sigma, "min_length": min_length, "phrases": len(miner.phrases_),
           "coverage": round(coverage.share, 4)}
    table = coverage.phrases
    top = np.argsort(-coverage.tokens_by_phrase, kind="stable")[:3]
    phrases = [{"corpus": name, "rank": k + 1, "length": int(table.lengths[p]),
                "df": int(table.df[p]), "tokens_covered": int(coverage.tokens_by_phrase[p]),
                "phrase": table.text(int(p))} for k, p in enumerate(top)]
    return row, phrases


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", nargs="+", required=True, help="JSONL(.gz) corpora")
    parser.add_argument("--sigma", type=int, default=10)
    parser.add_argument("--min-length", type=int, default=10)
    parser.add_argument("--out", type=Path, default=RESULTS / "cjk_tokens.csv")
    args = parser.parse_args(argv)
    rows, phrases = [], []
    for path in args.corpus:
        row, top = corpus_figures(path, args.sigma, args.min_length)
        rows.append(row)
        phrases += top
        print(row, flush=True)
        for p in top:
            print(f"  {p['length']:>4} tokens df {p['df']:>4}  {p['phrase'][:90]}", flush=True)
    sentences = sentence_rows()
    for row in sentences:
        print(f"  en {row['english_tokens']:>3}  zh {row['chinese_tokens'] or '-':>3}  "
              f"ja {row['japanese_tokens']:>3}  {row['english']}")
    for out, table in ((args.out, rows), (args.out.with_name(args.out.stem + "_phrases.csv"),
                                          phrases),
                       (args.out.with_name(args.out.stem + "_sentences.csv"), sentences)):
        write_csv(out, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
