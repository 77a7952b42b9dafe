"""Small web-like corpora for the integration tests, written as JSONL."""

from __future__ import annotations

import json
import random
from pathlib import Path

TEMPLATES = ["Home | News | Sport | Weather © 2024 Example Media.",
             "Accept all cookies? We use cookies to improve your experience.",
             "Share this article: Facebook · Twitter · E-mail",
             "广告。订阅我们的新闻。"]
WORDS = ("river stone cloud lamp cedar maple quartz ember Straße naïve x2 42 東京 garden "
         "hotel bottle school doctor cheese city valley").split()


def pages(seed: int, n: int, copies: int, blanks: bool = True) -> list[dict]:
    """Pages with templates around random words; `copies` of them re-posted with one word
    changed (near-duplicates), and (blanks) an empty and a null text."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        body = " ".join(rng.choice(WORDS) + rng.choice(["", "", ".", ","]) for _ in range(60))
        head, tail = rng.sample(TEMPLATES, 2)
        docs.append({"id": f"p{seed}-{i}", "url": f"https://site{i % 3}.example/{i}",
                     "text": f"{head}\n\n{body}\n{tail}"})
    for j in range(copies):
        words = docs[j]["text"].split(" ")
        words[len(words) // 2] = "changed"
        docs.append({"id": f"p{seed}-copy{j}", "url": "https://reposts.example/",
                     "text": " ".join(words)})
    if blanks:
        docs.append({"id": f"p{seed}-empty", "text": ""})
        docs.append({"id": f"p{seed}-null", "text": None})
    return docs


EMPTY = {f"p{seed}-{kind}" for seed in range(5) for kind in ("empty", "null")}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def mined_pages(root: Path) -> tuple[Path, list[Path], Path]:
    """Two input files under root/in (an empty and a null text in each) and the phrase list
    `corpus-miner phrases --sigma 4 --min-length 4` mines from them: (root, inputs, phrases)."""
    from corpus_miner.cli import main

    first = write_jsonl(root / "in" / "a.jsonl", pages(1, 30, 0))
    second = write_jsonl(root / "in" / "b.jsonl", pages(2, 25, 0))
    phrases = root / "phrases.tsv"
    assert main(["phrases", str(first), str(second), "--sigma", "4", "--min-length", "4", "-o",
                 str(phrases)]) == 0
    return root, [first, second], phrases
