"""Planted pages: real documentation paragraphs inside pages of generated sites, every character
labelled (content, or the boilerplate kind and template it was planted from).

    python benchmarks/planted_pages.py -o DIR [--pages 30000] [--sites 200] [--seed 1]
                                       [--sigma 20] [--corpora FOLDER]

Writes DIR/pages.jsonl.gz ({"id", "text", "site"}: what the tools read), DIR/labels.jsonl.gz
({"id", "spans": [[start, end, kind, template], ...]}, the same order) and DIR/meta.json (the
parameters and the share of characters per kind). The spans of a page partition its text:
every character is in exactly one span; the whitespace after a line or block belongs to it.

Content: prose lines (12-90 tokens, mostly letters, ending in . ? ! or :) and title lines (3-10
tokens) found in exactly one page of the Debian documentation corpora (benchmarks/corpora),
each used once, except the confusers below. Sites: `--sites` sites drawn by planted_world, with
lognormal sizes (sigma 1.2; most sites have at least --sigma pages, some fewer). A page is
blocks and paragraphs separated by blank lines, lines inside a block by single line breaks,
like text extracted from HTML. Confusers: content paragraphs repeated on 2 to sigma-1 pages
(2% of pages), a few repeated on 25-60 pages, anchors with typos (3% of bylines, 2% of
newsletter boxes), slots with few values (two-author sites, copyright years).

Deterministic given the parameters and the corpora: sites and pages come from random.Random
generators seeded by (seed, site) and (seed, page).
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from corpus_miner.io.atomic import atomic_path, text_output  # noqa: E402

from planted_world import (  # noqa: E402
    BREADCRUMB,
    CONTENT,
    FIXED,
    GLUED,
    KINDS,
    MONTHS,
    POSTED_IN,
    SHORT,
    SLOTS,
    TYPOS,
    Site,
    draw_site,
)

SOURCES = ("python3.11-doc", "postgresql-doc-15", "perl-doc", "manpages", "debian-reference-en",
           "openjdk-17-doc", "bible-kjv")
TOKEN = re.compile(r"[^\W_]+")
PAGES_PER_FEW_CONFUSER = 4000  # pages per content paragraph repeated on more than sigma pages


def _prose(line: str, n_tokens: int) -> bool:
    return (12 <= n_tokens <= 90 and line[-1] in ".?!:"
            and sum(ch.isalpha() for ch in line) > 0.7 * len(line))


def _title(line: str, n_tokens: int) -> bool:
    return (3 <= n_tokens <= 10 and line[0].isupper() and line[-1].isalnum()
            and sum(ch.isalpha() or ch == " " for ch in line) > 0.85 * len(line))


def content_pools(corpora: Path, sources=SOURCES) -> tuple[list[str], list[str]]:
    """(prose lines, title lines) that occur in exactly one document of the corpora, in corpus
    order; a missing corpus is skipped."""
    seen: dict[str, int] = {}
    for name in sources:
        path = corpora / f"{name}.jsonl.gz"
        if not path.is_file():
            continue
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for record in handle:
                for line in set(json.loads(record)["text"].split("\n")):
                    seen[line] = seen.get(line, 0) + 1
    prose, titles = [], []
    for line, count in seen.items():
        if count != 1 or not line.strip() or line != line.strip():
            continue
        n = len(TOKEN.findall(line))
        if _prose(line, n):
            prose.append(line)
        elif _title(line, n):
            titles.append(line)
    return prose, titles


def site_sizes(n_pages: int, n_sites: int, rng: random.Random) -> list[int]:
    """Pages per site: lognormal weights scaled to n_pages, at least 3 each."""
    weights = [math.exp(rng.gauss(0.0, 1.2)) for _ in range(n_sites)]
    spare = n_pages - 3 * n_sites
    if spare < 0:
        raise SystemExit(f"--pages {n_pages} is fewer than 3 pages per site for {n_sites} sites")
    raw = [w / sum(weights) * spare for w in weights]
    sizes = [3 + int(r) for r in raw]
    order = sorted(range(n_sites), key=lambda i: int(raw[i]) - raw[i])  # largest remainders
    for i in order[:n_pages - sum(sizes)]:
        sizes[i] += 1
    return sizes


class Page:
    """Units of one page: (text, kind, template, separator after it)."""

    def __init__(self) -> None:
        self.units: list[tuple[str, str, str, str]] = []

    def add(self, text: str, kind: str, template: str, sep: str = "\n\n") -> None:
        self.units.append((text, kind, template, sep))

    def render(self) -> tuple[str, list[list]]:
        parts, spans, at = [], [], 0
        for i, (text, kind, template, sep) in enumerate(self.units):
            piece = text + (sep if i < len(self.units) - 1 else "")
            spans.append([at, at + len(piece), kind, template])
            parts.append(piece)
            at += len(piece)
        return "".join(parts), spans


def _date(rng: random.Random) -> str:
    return f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(2016, 2025)}"


def _typo(text: str, rng: random.Random, share: float) -> str:
    if rng.random() >= share:
        return text
    for right, wrong in TYPOS.items():
        if text.startswith(right):
            return wrong + text[len(right):]
    return text


def _slot_block(site: Site, which: str, rng: random.Random, title: str,
                titles: list[str]) -> tuple[str, str]:
    """(template id, text) of one slotted block of the site."""
    if which == "byline":
        tid, wording = site.byline
        return tid, _typo(wording.format(date=_date(rng), author=rng.choice(site.authors)),
                          rng, 0.03)
    if which == "counter":
        tid, wording = site.counter
        first = 1 + 20 * rng.randint(0, 9)
        return tid, wording.format(i=rng.randint(1, 9), n=rng.randint(10, 40), a=first,
                                   b=first + 19, m=rng.randint(2, 15),
                                   things=rng.choice(("products", "items", "results")))
    if which == "price":
        tid, wording = site.price
        cents = rng.choice(("99", "49", "00", "95"))
        return tid, wording.format(p=f"{rng.randint(3, 499)}.{cents}",
                                   q=f"{rng.randint(500, 900)}.{cents}")
    if which == "related":
        tid, wording = site.related
        picks = rng.sample(titles, 3) if len(titles) >= 3 else [title] * 3
        return tid, wording.format(t1=picks[0], t2=picks[1], t3=picks[2])
    if which == "copyright":
        tid, wording = site.copyright
        return tid, wording.format(year=rng.choice(site.years), company=site.company,
                                   city=site.city)
    tid, wording = BREADCRUMB
    return tid, wording.format(category=rng.choice(site.categories), title=title)


def build_page(site: Site, rng: random.Random, title: str, titles: list[str],
               paragraphs: list[list[str]], confusers: list[tuple[str, str]]) -> Page:
    """One page of `site`: its blocks around the content title and paragraphs (lists of lines);
    `confusers` are (text, tag) content paragraphs placed among them."""
    page = Page()
    odds = site.odds

    def shown(block: str) -> bool:
        return rng.random() < odds[block]

    def fixed(block: str) -> None:
        text = site.fixed[block]
        if block == "newsletter" and rng.random() < 0.02:
            text = text.replace("newsletter", "newsleter", 1).replace("Sign up", "Sing up", 1)
        scope = f"family{site.family}" if block in ("cookie", "newsletter") else f"site{site.index}"
        page.add(text, FIXED, f"{block}:{scope}")

    def slots(block: str) -> None:
        tid, text = _slot_block(site, block, rng, title, titles)
        page.add(text, SLOTS, tid)

    if shown("cookie"):
        fixed("cookie")
    fixed("header")
    if shown("breadcrumb"):
        slots("breadcrumb")
    page.add(title, CONTENT, "title")
    if shown("byline"):
        slots("byline")
    if shown("posted_in"):
        tid, wording = POSTED_IN
        page.add(wording.format(category=rng.choice(site.categories)), SHORT, tid)
    bodies: list[tuple[list[str], str]] = [(lines, "paragraph") for lines in paragraphs]
    for text, tag in confusers:
        bodies.insert(rng.randint(0, len(bodies)), ([text], tag))
    glue_at = rng.randrange(len(bodies)) if bodies and shown("glued") else -1
    for index, (lines, tag) in enumerate(bodies):
        if index and shown("short"):
            line = rng.choice(site.short_lines)
            page.add(line, SHORT, line.lower().replace(" ", "_"))
        if index == glue_at:
            gid, snippet, prefix = rng.choice(site.glued)
            if prefix:
                page.add(snippet, GLUED, gid, " ")
                page.add("\n".join(lines), CONTENT, tag)
            else:
                page.add("\n".join(lines), CONTENT, tag, " ")
                page.add(snippet, GLUED, gid)
        else:
            page.add("\n".join(lines), CONTENT, tag)
    for block in ("counter", "price", "related"):
        if shown(block):
            slots(block)
    if shown("share"):
        page.add(site.share, SHORT, "share:" + site.share.lower().replace(" ", "_"))
    for block in ("newsletter", "about", "disclaimer"):
        if shown(block):
            fixed(block)
    if shown("footer"):
        fixed("footer")
    if shown("copyright"):
        slots("copyright")
    return page


def _confuser_plan(n_pages: int, sigma: int, prose: list[str], rng: random.Random):
    """page -> [(paragraph, tag)]: paragraphs repeated on fewer than sigma pages (2% of
    pages hold one) and one paragraph per PAGES_PER_FEW_CONFUSER pages repeated on 25-60
    pages."""
    plan: dict[int, list[tuple[str, str]]] = {}
    uses = []
    target = max(1, n_pages // 50)
    while sum(n for _, n, _ in uses) < target:
        uses.append((prose.pop(), rng.randint(2, max(2, sigma - 1)), "repeat_below_sigma"))
    for _ in range(max(1, n_pages // PAGES_PER_FEW_CONFUSER)):
        uses.append((prose.pop(), min(n_pages, rng.randint(25, 60)), "repeat_above_sigma"))
    for text, count, tag in uses:
        for page in rng.sample(range(n_pages), min(count, n_pages)):
            plan.setdefault(page, []).append((text, tag))
    return plan


def generate(corpora: Path, n_pages: int, n_sites: int, seed: int, sigma: int):
    """Yield (page record, label record) for every page, in crawl order (sites interleaved)."""
    prose, titles = content_pools(corpora)
    shuffle = random.Random(seed)
    shuffle.shuffle(prose)
    shuffle.shuffle(titles)
    sites = [draw_site(i, random.Random(seed * 1_000_003 + i)) for i in range(n_sites)]
    sizes = site_sizes(n_pages, n_sites, random.Random(seed * 31 + 7))
    order = [(s, p) for s in range(n_sites) for p in range(sizes[s])]
    shuffle.shuffle(order)
    confusers = _confuser_plan(n_pages, sigma, prose, shuffle)
    n_lines = [random.Random(seed * 7 + i).choice((2, 3, 3, 4, 4, 5)) for i in range(n_pages)]
    if sum(n_lines) > len(prose) or n_pages > len(titles):
        raise SystemExit(f"the corpora in {corpora} hold {len(prose):,} prose lines and "
                         f"{len(titles):,} titles: not enough for {n_pages:,} pages")
    site_titles: dict[int, list[str]] = {}
    title_of = {}
    for index, key in enumerate(order):
        title_of[key] = titles[index]
        site_titles.setdefault(key[0], []).append(titles[index])
    cursor = 0
    for index, (s, p) in enumerate(order):
        rng = random.Random(seed * 1_000_033 + index)
        take = prose[cursor:cursor + n_lines[index]]
        cursor += len(take)
        paragraphs, i = [], 0
        while i < len(take):  # mostly one line per paragraph, sometimes a list of lines
            width = 1 if rng.random() < 0.8 else 2
            paragraphs.append(take[i:i + width])
            i += width
        page = build_page(sites[s], rng, title_of[(s, p)], site_titles[s], paragraphs,
                          confusers.get(index, []))
        text, spans = page.render()
        doc_id = f"s{s:03d}-p{p:04d}"
        yield ({"id": doc_id, "text": text, "site": sites[s].name},
               {"id": doc_id, "spans": spans})


def write(out: Path, corpora: Path, n_pages: int, n_sites: int, seed: int, sigma: int) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    chars = {kind: 0 for kind in (CONTENT, *KINDS)}
    sizes: dict[str, int] = {}
    tokens = 0
    with atomic_path(out / "pages.jsonl.gz") as pages_tmp, \
            atomic_path(out / "labels.jsonl.gz") as labels_tmp, \
            text_output(pages_tmp, compress=True) as pages, \
            text_output(labels_tmp, compress=True) as labels:
        for page, label in generate(corpora, n_pages, n_sites, seed, sigma):
            pages.write(json.dumps(page, ensure_ascii=False) + "\n")
            labels.write(json.dumps(label, ensure_ascii=False) + "\n")
            for start, end, kind, _ in label["spans"]:
                chars[kind] += end - start
            sizes[page["site"]] = sizes.get(page["site"], 0) + 1
            tokens += len(TOKEN.findall(page["text"]))
    meta = {"pages": n_pages, "sites": n_sites, "seed": seed, "sigma": sigma,
            "sites_below_sigma": sum(1 for n in sizes.values() if n < sigma),
            "chars": chars, "tokens": tokens}
    with atomic_path(out / "meta.json") as tmp:
        tmp.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return meta


def main(argv=None) -> int:
    sys.path.insert(0, str(HERE))
    from data_paths import CORPORA

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, required=True, help="output folder")
    parser.add_argument("--pages", type=int, default=30000)
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sigma", type=int, default=20,
                        help="the threshold the confusers are planted around (20)")
    parser.add_argument("--corpora", type=Path, default=CORPORA,
                        help="folder of the Debian documentation corpora (NAME.jsonl.gz)")
    args = parser.parse_args(argv)
    meta = write(args.output, args.corpora, args.pages, args.sites, args.seed, args.sigma)
    print(json.dumps(meta), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
