"""Small corpora with planted slotted templates (bylines, page counters) in random text."""

from __future__ import annotations

import random

MONTHS = ["January", "March", "May", "July", "October", "December"]
NAMES = ["Priya Patel", "Ann Lee", "Bo Chen", "Mateo Ruiz", "Grace Smith", "Hiro Sato"]


def planted_texts(seed: int = 1, n_docs: int = 80, vocabulary: int = 3000) -> list[str]:
    rng = random.Random(seed)
    words = ["".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(3))
             for _ in range(vocabulary)]
    texts = []
    for _ in range(n_docs):
        parts = [" ".join(rng.choice(words) for _ in range(rng.randint(5, 30)))]
        if rng.random() < 0.8:
            parts.append(f"Updated on {rng.choice(MONTHS)} {rng.randint(1, 28)}, "
                         f"{rng.randint(2015, 2025)} by {rng.choice(NAMES)}")
        parts.append(" ".join(rng.choice(words) for _ in range(rng.randint(5, 30))))
        if rng.random() < 0.6:
            parts.append(f"Page {rng.randint(1, 9)} of {rng.randint(10, 40)}")
            parts.append(" ".join(rng.choice(words) for _ in range(rng.randint(5, 30))))
        if rng.random() < 0.5:
            parts.append(f"Written by {rng.choice(NAMES)} on {rng.choice(MONTHS)} "
                         f"{rng.randint(1, 28)}, {rng.randint(2015, 2025)}")
        parts.append(" ".join(rng.choice(words) for _ in range(rng.randint(5, 30))))
        texts.append("\n\n".join(parts))
    return texts
