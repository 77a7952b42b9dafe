"""Where the benchmarks find their data.

Real corpora: `benchmarks/corpora/build_corpora.sh data/corpora` builds them (Debian
documentation pages, HTML stripped to text, templates kept; one NAME.jsonl.gz per package) into
the git-ignored `data/corpora`; set CORPUS_MINER_CORPORA to use another folder."""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPORA = Path(os.environ.get("CORPUS_MINER_CORPORA", REPO / "data" / "corpora"))


def corpus_file(name: str) -> Path:
    """The gzipped JSONL file of corpus `name`; exits with how to build it when missing."""
    path = CORPORA / f"{name}.jsonl.gz"
    if not path.is_file():
        raise SystemExit(f"{path} is missing: build the corpora with "
                         f"`benchmarks/corpora/build_corpora.sh {CORPORA}` "
                         "(or set CORPUS_MINER_CORPORA to the folder that holds them)")
    return path
