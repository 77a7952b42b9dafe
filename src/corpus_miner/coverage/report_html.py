"""One self-contained HTML page for a coverage report: inline CSS and SVG, no script, no network.

`render_html(data, title)` takes the dict of CoverageReport.to_dict() and returns the page.
"""

from __future__ import annotations

from html import escape

MAX_GROUP_ROWS = 60
MATCH_CHARS = 320  # longer matches are shown as head ... tail

_CSS = """
:root{--ink:#1d2433;--muted:#5b6579;--line:#e3e7ef;--bg:#f6f7fb;--card:#fff;--accent:#3b5bdb;
--junk:#e8590c;--junk-soft:#fff0e6;--ok:#2f9e44;--mark:#ffe3c2}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:28px 28px 60px}
header h1{margin:0 0 4px;font-size:26px;letter-spacing:-.01em}
header p{margin:0;color:var(--muted)}
h2{font-size:19px;margin:34px 0 6px}
h2+p.lead{margin:0 0 14px;color:var(--muted)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(190px,1fr));gap:14px;margin-top:22px}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:14px 16px}
.card .k{color:var(--muted);font-size:12.5px;text-transform:uppercase;letter-spacing:.05em}
.card .v{font-size:28px;font-weight:650;margin-top:2px;font-variant-numeric:tabular-nums}
.card .s{color:var(--muted);font-size:13px}
.card.hero{border-color:#f7c9a8;background:linear-gradient(135deg,#fff,var(--junk-soft))}
.card.hero .v{color:var(--junk);font-size:36px}
.split{margin-top:18px;background:var(--card);border:1px solid var(--line);border-radius:12px;
padding:14px 16px}
.splitbar{display:flex;height:16px;border-radius:8px;overflow:hidden;background:#dfe6f5}
.splitbar .c{background:var(--junk)}
.legend{display:flex;gap:18px;margin-top:8px;font-size:13px;color:var(--muted)}
.dot{display:inline-block;width:10px;height:10px;border-radius:3px;margin-right:6px;
vertical-align:-1px}
.panel{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:16px}
.chips{display:flex;flex-wrap:wrap;gap:8px;margin-top:12px}
.chip{border:1px solid var(--line);border-radius:999px;padding:2px 10px;font-size:13px;
background:#fafbfe;font-variant-numeric:tabular-nums}
.chip b{color:var(--muted);font-weight:600;margin-right:4px}
table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);
border-radius:12px;overflow:hidden;font-size:14px}
th{text-align:left;font-weight:600;color:var(--muted);font-size:12.5px;text-transform:uppercase;
letter-spacing:.04em;background:#fafbfe;padding:9px 10px;border-bottom:1px solid var(--line)}
td{padding:8px 10px;border-bottom:1px solid var(--line);vertical-align:top}
tr:last-child td{border-bottom:0}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.rank{color:var(--muted);width:34px}
.bar{position:relative;min-width:110px;height:18px;background:#eef1f7;border-radius:4px}
.bar span{position:absolute;left:0;top:0;bottom:0;background:var(--junk);opacity:.75;
border-radius:4px}
.bar em{position:relative;font-style:normal;font-size:12px;padding-left:6px;line-height:18px}
details summary{cursor:pointer;list-style:none}
details summary::-webkit-details-marker{display:none}
details summary .phrase::before{content:"\\25B8";color:var(--muted);margin-right:6px}
details[open] summary .phrase::before{content:"\\25BE"}
.phrase{font-size:14px;word-break:break-word}
td.phrase{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
.ex{margin:8px 0 4px 18px;padding:8px 10px;border-left:3px solid var(--mark);background:#fffaf4;
border-radius:0 6px 6px 0;font-size:13.5px;word-break:break-word}
.ex .doc{display:block;color:var(--muted);font-size:12px;margin-bottom:2px}
mark{background:var(--mark);color:inherit;border-radius:3px;padding:0 1px}
.muted{color:var(--muted)}
.tokens{margin:6px 0 0 18px;color:var(--muted);font-size:12px;word-break:break-word;
font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.tokens b{font-family:system-ui,sans-serif;font-weight:600;margin-right:4px}
.snippet{color:var(--muted);font-size:13px;word-break:break-word}
.twocol{display:grid;grid-template-columns:1fr;gap:18px}
footer{margin-top:40px;color:var(--muted);font-size:13px;border-top:1px solid var(--line);
padding-top:14px}
footer code{background:#eef1f7;border-radius:4px;padding:0 4px}
svg text{font:12px system-ui,sans-serif;fill:#5b6579}
"""


def _pct(x: float, digits: int = 1) -> str:
    return f"{100 * x:.{digits}f}%"


def _num(x) -> str:
    return f"{int(x):,}"


def _bar(share: float, label: str | None = None) -> str:
    width = max(0.0, min(1.0, share)) * 100
    return (f'<div class="bar"><span style="width:{width:.1f}%"></span>'
            f'<em>{escape(label if label is not None else _pct(share))}</em></div>')


def _histogram_svg(edges: list[float], counts: list[int]) -> str:
    width, height, left, bottom, top, right = 760, 230, 46, 30, 16, 22
    plot_w, plot_h = width - left - right, height - bottom - top
    peak = max(counts) if counts and max(counts) > 0 else 1
    n = len(counts)
    step = plot_w / max(n, 1)
    parts = [f'<svg viewBox="0 0 {width} {height}" width="100%" role="img" '
             'aria-label="documents by covered share">']
    for frac in (0.25, 0.5, 0.75, 1.0):  # horizontal grid lines with counts
        y = top + plot_h * (1 - frac)
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" '
                     'stroke="#e3e7ef"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                     f'{_num(round(peak * frac))}</text>')
    for i, count in enumerate(counts):
        h = plot_h * count / peak
        x = left + i * step + 1.5
        lo, hi = edges[i], edges[i + 1]
        # colour goes from calm blue (unique text) to orange (template)
        r = int(59 + (232 - 59) * lo)
        g = int(91 + (89 - 91) * lo)
        b = int(219 + (12 - 219) * lo)
        parts.append(f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{step - 3:.1f}" '
                     f'height="{h:.1f}" rx="3" fill="rgb({r},{g},{b})"><title>'
                     f'{_pct(lo, 0)}-{_pct(hi, 0)} covered: {_num(count)} documents</title></rect>')
        if count and h > 14:
            parts.append(f'<text x="{x + (step - 3) / 2:.1f}" y="{top + plot_h - h + 13:.1f}" '
                         f'text-anchor="middle" style="fill:#fff;font-size:10.5px">'
                         f'{_num(count)}</text>')
        elif count:
            parts.append(f'<text x="{x + (step - 3) / 2:.1f}" y="{top + plot_h - h - 3:.1f}" '
                         f'text-anchor="middle" style="font-size:10.5px">{_num(count)}</text>')
    baseline = top + plot_h
    parts.append(f'<line x1="{left}" x2="{width - right}" y1="{baseline}" y2="{baseline}" '
                 'stroke="#9aa3b5"/>')
    for frac in (0, 0.25, 0.5, 0.75, 1.0):
        x = left + plot_w * frac
        parts.append(f'<text x="{x:.1f}" y="{baseline + 18}" text-anchor="middle">'
                     f'{_pct(frac, 0)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _match(text: str) -> str:
    if len(text) <= MATCH_CHARS:
        return escape(text)
    half = MATCH_CHARS // 2
    return escape(text[:half]) + ' <span class="muted">[…]</span> ' + escape(text[-half:])


def _examples(examples: list[dict]) -> str:
    out = []
    for ex in examples:
        before = ("…" if ex["truncated_before"] else "") + ex["before"]
        after = ex["after"] + ("…" if ex["truncated_after"] else "")
        out.append(f'<div class="ex"><span class="doc">document {escape(ex["doc"])}</span>'
                   f'{escape(before)}<mark>{_match(ex["match"])}</mark>{escape(after)}</div>')
    return "".join(out)


def _hogs_table(rows: list[dict], covered_total: int, open_first: bool = False) -> str:
    if not rows:
        return '<p class="muted">No repeated phrases at these parameters.</p>'
    peak = max(max(r["tokens_covered"] for r in rows), 1)
    body = []
    for i, r in enumerate(rows, 1):
        # label: the phrase as it reads in the first example (case, punctuation), else its tokens
        label = r["examples"][0]["match"] if r["examples"] else r["phrase"]
        short = label if len(label) <= 170 else label[:167] + "…"
        tokens = r["phrase"] if len(r["phrase"]) <= 400 else r["phrase"][:400] + " …"
        full = f'<div class="tokens"><b>tokens</b> {escape(tokens)}</div>'
        examples = _examples(r["examples"]) or (
            '<div class="ex muted">no example contexts collected</div>')
        opened = " open" if open_first and i == 1 else ""
        share = r["tokens_covered"] / covered_total if covered_total else 0.0
        covered_bar = _bar(r["tokens_covered"] / peak, _num(r["tokens_covered"]))
        line = (' <span class="muted" title="counted and handled only where it is a whole '
                'line">whole line</span>' if r.get("whole_line") else "")
        if r.get("edge"):
            line = (f' <span class="muted" title="counted and handled only where it is glued '
                    f'to the {r["edge"]} of a paragraph">{r["edge"]} edge</span>')
        body.append(
            f'<tr><td class="rank">{i}</td><td><details{opened}><summary><span class="phrase">'
            f'{escape(short)}</span>{line}</summary>{full}{examples}</details></td>'
            f'<td class="n">{_num(r["length"])}</td><td class="n">{_num(r["df"])}</td>'
            f'<td class="n">{_num(r["psi"])}</td>'
            f'<td>{covered_bar}</td><td class="n">{_pct(share)}</td></tr>')
    return ('<table><thead><tr><th>#</th><th>phrase (click for examples)</th><th class="n">'
            'length</th><th class="n">df</th><th class="n">length × df</th><th>tokens covered'
            '</th><th class="n">of covered</th></tr></thead><tbody>' + "".join(body)
            + "</tbody></table>")


def _templates_table(rows: list[dict], total: int, threshold: float) -> str:
    if not rows:
        return (f'<p class="muted">No document is {_pct(threshold, 0)} or more covered.</p>')
    body = "".join(
        f'<tr><td class="phrase">{escape(r["doc"])}</td><td class="n">{_num(r["tokens"])}</td>'
        f'<td>{_bar(r["share"])}</td><td class="snippet">{escape(r["snippet"][:220])}'
        f'{"…" if len(r["snippet"]) > 220 else ""}</td></tr>' for r in rows)
    more = (f'<p class="muted">Showing the {len(rows)} most covered of {_num(total)}; '
            '<code>corpus-miner clean --drop-above SHARE</code> leaves such documents out.</p>'
            if total > len(rows) else "")
    return ('<table><thead><tr><th>document</th><th class="n">tokens</th><th>covered</th>'
            f'<th>beginning of the text</th></tr></thead><tbody>{body}</tbody></table>{more}')


def _slot_templates(data: dict) -> str:
    """The templates with slots, each once with its slots (report --slots / --templates)."""
    found = data.get("templates")
    if not found:
        return ""
    body = []
    for r in found["rows"]:
        slots = "".join(
            f'<li>{escape(s["type"])}, {_num(s["distinct"])} distinct: '
            + ", ".join(f'{escape(str(f))} ({_num(c)})' for f, c in s["top"]) + "</li>"
            for s in r["slots"])
        examples = "".join(f"<li><code>{escape(str(d))}</code> {escape(str(t))}</li>"
                           for d, t in r["examples"])
        body.append(f'<tr><td class="phrase">{escape(r["pattern"])}<details><summary>slots and '
                    f'examples</summary><ul>{slots}</ul><ul>{examples}</ul></details></td>'
                    f'<td class="n">{_num(r["df"])}</td><td class="n">{_num(r["occurrences"])}'
                    f'</td><td class="n">{_num(r["tokens_covered"])}</td></tr>')
    return (f'<h2>Templates with slots</h2><p class="lead">{_num(found["count"])} templates '
            f'cover {_num(found["tokens_covered"])} tokens; with the phrases '
            f'{_pct(found["coverage_with_phrases"])} of the corpus. <code>&lt;*&gt;</code> is a '
            'free slot, <code>&lt;num&gt;</code> and <code>&lt;month&gt;</code> typed ones.</p>'
            '<table><thead><tr><th>pattern</th><th class="n">df</th><th class="n">occurrences'
            '</th><th class="n">tokens covered</th></tr></thead><tbody>' + "".join(body)
            + "</tbody></table>")


def _groups_table(groups: list[dict], spec: str) -> str:
    rows = groups[:MAX_GROUP_ROWS]
    body = "".join(
        f'<tr><td class="phrase">{escape(g["group"])}</td><td class="n">{_num(g["documents"])}'
        f'</td><td class="n">{_num(g["tokens"])}</td><td class="n">{_num(g["tokens_covered"])}'
        f'</td><td>{_bar(g["coverage"])}</td><td class="n">{_pct(g["mean_document_share"])}</td>'
        f'<td class="n">{_num(g["template_documents"])}</td></tr>' for g in rows)
    more = (f'<p class="muted">Showing the {len(rows)} groups with the most covered tokens of '
            f'{_num(len(groups))}; all are in the JSON summary.</p>'
            if len(groups) > len(rows) else "")
    return (f'<table><thead><tr><th>{escape(spec)}</th><th class="n">documents</th>'
            '<th class="n">tokens</th><th class="n">covered</th><th>coverage</th>'
            '<th class="n">mean doc share</th><th class="n">template docs</th></tr></thead>'
            f'<tbody>{body}</tbody></table>{more}')


def render_html(data: dict, title: str) -> str:
    mined = data["source"] == "mined"
    params = (f"σ = {data['sigma']}, minimum length {data['min_length']} tokens" if mined
              else "reviewed phrase list")
    inputs = ", ".join(data.get("inputs") or []) or "corpus"
    covered, tokens = data["tokens_covered"], data["tokens"]
    deciles = "".join(f'<span class="chip"><b>p{10 * (i + 1)}</b>{_pct(x)}</span>'
                      for i, x in enumerate(data["document_share_deciles"]))
    hist = data["document_share_histogram"]
    cards = [
        ("hero", "corpus covered", _pct(data["coverage"]),
         f"{_num(covered)} of {_num(tokens)} tokens"),
        ("", "documents", _num(data["documents"]),
         f"median document {_pct(data['median_document_share'])} covered"),
        ("", "almost all template", _num(data["template_documents"]),
         f"documents ≥ {_pct(data['template_share'], 0)} covered"),
        ("", "repeated phrases", _num(data["phrases"]), params),
    ]
    card_html = "".join(f'<div class="card {cls}"><div class="k">{escape(k)}</div>'
                        f'<div class="v">{escape(v)}</div><div class="s">{escape(s)}</div></div>'
                        for cls, k, v, s in cards)
    groups = ""
    if data.get("groups") is not None:
        groups = (f'<h2>By {escape(data["group_by"])}</h2><p class="lead">Which sources carry '
                  'the most repeated text (sorted by covered tokens).</p>'
                  + _groups_table(data["groups"], data["group_by"]))
    definition = (
        f"A token is <b>covered</b> when it lies inside an occurrence of a phrase of at least "
        f"{data['min_length']} tokens found in at least {data['sigma']} documents (equivalently, "
        "of a frequent window of that length: pieces of the listed phrases count wherever they "
        "repeat)." if mined else
        "A token is <b>covered</b> when it lies inside an occurrence of a listed phrase.")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{escape(title)}</title><style>{_CSS}</style></head>
<body><main>
<header><h1>{escape(title)}</h1><p>{escape(inputs)} · {escape(params)}</p></header>
<section class="cards">{card_html}</section>
<section class="split"><div class="splitbar"><div class="c" style="width:{100 * data['coverage']:.2f}%"></div></div>
<div class="legend"><span><span class="dot" style="background:var(--junk)"></span>repeated text {_pct(data['coverage'])}</span>
<span><span class="dot" style="background:#dfe6f5"></span>everything else {_pct(1 - data['coverage'])}</span></div></section>

<h2>How covered are the documents?</h2>
<p class="lead">Documents by the share of their tokens that is repeated text (documents without tokens are left out).</p>
<div class="panel">{_histogram_svg(hist['edges'], hist['documents'])}
<div class="chips"><span class="chip"><b>deciles</b></span>{deciles}</div></div>

<h2>Biggest hogs: tokens actually covered</h2>
<p class="lead">Each covered token counted once, for the highest-ranked (length × df) phrase covering it.</p>
{_hogs_table(data['hogs_by_tokens_covered'], covered, open_first=True)}

<h2>Biggest hogs: length × df</h2>
<p class="lead">The article's ranking Ψ = |P| × df(P): the room a phrase would take if its occurrences did not overlap.</p>
{_hogs_table(data['hogs_by_psi'], covered)}

<h2>Documents that are almost entirely template</h2>
<p class="lead">Covered share ≥ {_pct(data['template_share'], 0)}; most covered first.</p>
{_templates_table(data['template_document_examples'], data['template_documents'], data['template_share'])}
{_slot_templates(data)}
{groups}
<footer><p>{definition} Tokens are lowercase runs of letters, marks and digits, so case and
punctuation do not matter for matching; contexts are shown from the original text.</p>
<p>Made by <code>corpus-miner report</code>. Remove or annotate what you see here with
<code>corpus-miner clean</code> using the same parameters.</p></footer>
</main></body></html>
"""
