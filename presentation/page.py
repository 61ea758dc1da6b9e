"""The report and eval pages: each one HTML file that loads nothing else.

Every text of a run (the knowledge base's and the models') is HTML-escaped
where it is placed; the only links are the sources' http(s) addresses. A
Content-Security-Policy lets only the page's own style and script run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import itertools
import math
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from presentation.page_model import (
    Bar,
    Block,
    Cell,
    EvalCase,
    EvalMetric,
    Evidence,
    Matrix,
    eval_page_model,
    report_page_model,
)
from state.result import RunResult

CELL_SYMBOLS = {
    "covered": "✓",
    "weak": "◐",
    "failed": "✗",
    "uncovered": "○",
    "not planned yet": "–",
}
CELL_MEANINGS = {
    "covered": "covered (n): verified findings so far",
    "weak": "weak (n): fewer findings than a value needs",
    "failed": "failed: why this round's task failed",
    "uncovered": "uncovered",
    "not planned yet": "not planned yet: an enumeration added it later",
}
OUTCOME_SYMBOLS = {
    "success": "✓",
    "partial": "◐",
    "retried": "↻",
    "escalated": "⚑",
    "failed": "✗",
}

_INLINE = re.compile(
    r"\*\*(?P<bold>.+?)\*\*"
    r"|<(?P<link>https?://[^\s<>]+)>"
    r"|\\(?P<char>[!-/:-@\[-`{-~])"
    r"|(?P<entity>&#?\w+;)"
)

STYLE = """
:root {
  --ink: #1b1b1b; --muted: #595959; --line: #d0d0d0;
  --green: #009E73; --yellow: #F0E442; --vermillion: #D55E00;
  --orange: #E69F00; --sky: #56B4E9; --purple: #CC79A7; --blue: #0072B2;
}
body {
  font: 15px/1.5 "DejaVu Sans", system-ui, sans-serif; color: var(--ink);
  max-width: 76rem; margin: 0 auto; padding: 1rem 1.5rem 3rem;
}
h1 { font-size: 1.5rem; margin: .2rem 0 .5rem; }
h2 { border-bottom: 2px solid var(--line); padding-bottom: .2rem; margin-top: 2rem; }
.kicker, .note, .detail { color: var(--muted); }
.kicker { margin: 0; text-transform: uppercase; font-size: .8rem; }
nav a { margin-right: 1rem; }
a:focus, [tabindex]:focus { outline: 3px solid var(--blue); outline-offset: 2px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .85rem; }
th, td { border: 1px solid var(--line); padding: .25rem .5rem; text-align: left; }
thead th { background: #f2f2f2; }
tr.group th { background: #f7f7f7; font-weight: 600; }
td.cell { border-left-width: 6px; min-width: 7rem; max-width: 18rem; }
.cell .sym, .legend .sym { font-weight: bold; display: inline-block; width: 1.1em; }
.covered { background: #bfe6dc; border-left-color: var(--green); }
.weak { background: #fbf8cf; border-left-color: #b8a800; }
.failed {
  border-left-color: var(--vermillion);
  background: repeating-linear-gradient(
    45deg, #f4d6bf 0 6px, #e8b48c 6px 8px);
}
.uncovered {
  border-left-color: var(--orange); background-color: #fdf3dc;
  background-image: radial-gradient(#e2b75c 1px, transparent 1.5px);
  background-size: 7px 7px;
}
.not-planned-yet {
  background: #f4f4f4; border-left-color: #bdbdbd; color: var(--muted);
}
.legend {
  list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .4rem 1.2rem;
}
.legend li { font-size: .85rem; }
.swatch {
  display: inline-block; width: 1.6em; text-align: center;
  border-left-style: solid; border-left-width: 6px;
}
.timeline svg { width: 100%; height: auto; font-size: 12px; }
.timeline .axis { stroke: var(--line); }
.timeline text { fill: var(--ink); }
.timeline .round { font-weight: bold; }
.timeline .band { fill: #f7f7f7; }
rect.bar { stroke: #1b1b1b; stroke-width: .5px; }
rect.bar:focus, rect.bar:hover { stroke: var(--blue); stroke-width: 3px; }
.bar.success, .dot.success { fill: var(--green); background: var(--green); }
.bar.partial, .dot.partial { fill: var(--yellow); background: var(--yellow); }
.bar.retried, .dot.retried { fill: var(--sky); background: var(--sky); }
.bar.escalated, .dot.escalated { fill: var(--purple); background: var(--purple); }
.bar.failed, .dot.failed { fill: var(--vermillion); background: var(--vermillion); }
.dot { display: inline-block; width: .9em; height: .9em; border: 1px solid #1b1b1b;
  vertical-align: middle; margin-right: .2em; }
.evidence { padding-left: 0; list-style: none; }
.evidence li { border-top: 1px solid var(--line); padding: .6rem 0; }
.claim { font-weight: bold; margin: 0 0 .2rem; }
.source { margin: 0 0 .3rem; font-size: .9rem; }
blockquote { margin: 0; padding: .4rem .8rem; background: #f7f7f7;
  border-left: 4px solid var(--line); font-size: .9rem; }
mark { background: #ffe98a; outline: 1px solid #b8a800; }
.report { border: 1px solid var(--line); padding: 0 1.2rem 1rem; }
.change { font-variant-numeric: tabular-nums; }
"""

SCRIPT = """
const detail = document.getElementById("bar-detail");
for (const bar of document.querySelectorAll("rect.bar")) {
  const show = () => { detail.textContent = bar.querySelector("title").textContent; };
  bar.addEventListener("focus", show);
  bar.addEventListener("mouseenter", show);
}
"""


def report_page(result: RunResult) -> str:
    """The report page of a run, from the result the CLI writes with `--json`."""
    page = report_page_model(result)
    links = {e.url for e in page.evidence if e.url}
    body = f"""<header>
<p class="kicker">Research report</p>
<h1>{esc(page.question)}</h1>
<p class="coverage-line">{esc(page.coverage_line)}</p>
<nav aria-label="Sections"><a href="#coverage">Coverage by round</a>
<a href="#timeline">Delegation timeline</a> <a href="#evidence">Evidence</a>
<a href="#report">Report</a></nav>
</header>
<main>
<section id="coverage" aria-labelledby="coverage-title">
<h2 id="coverage-title">Coverage by round</h2>
<p class="note">Each value of the coverage table, as it stood after each round.</p>
{_cell_legend()}
{_matrix(page.matrix)}
</section>
<section id="timeline" class="timeline" aria-labelledby="timeline-title">
<h2 id="timeline-title">Delegation timeline</h2>
<p class="note">One bar per task, grouped by round, on the run's clock.
Tab to a bar for its agent, values, duration and tokens.</p>
{_outcome_legend()}
{_timeline(page.bars)}
<p id="bar-detail" class="detail" aria-live="polite"></p>
</section>
<section id="evidence" aria-labelledby="evidence-title">
<h2 id="evidence-title">Evidence</h2>
{_evidence(page.evidence)}
</section>
<section id="report" aria-labelledby="report-title">
<h2 id="report-title">Report</h2>
<div class="report">{_blocks(page.report, links)}</div>
</section>
</main>"""
    return _document(page.question, body, SCRIPT)


def eval_page(scores: Sequence[Mapping[str, Any]]) -> str:
    """The eval page: each case without and with re-delegation, side by side."""
    page = eval_page_model(scores)
    cases = "\n".join(_eval_case(c) for c in page.cases) or "<p>No scores.</p>"
    body = f"""<header>
<p class="kicker">Evaluation</p>
<h1>Without and with re-delegation</h1>
<p class="note">Each case's metrics with no re-delegation (0 rounds) beside those
with the most rounds it ran.</p>
</header>
<main>
{cases}
</main>"""
    return _document("Evaluation", body)


def esc(text: str) -> str:
    """`text` made safe in HTML text and in quoted attributes."""
    return html.escape(text, quote=True)


def _document(title: str, body: str, script: str = "") -> str:
    scripts = f"'{_digest(script)}'" if script else "'none'"
    policy = f"default-src 'none'; style-src '{_digest(STYLE)}'; script-src {scripts}"
    tail = f"<script>{script}</script>\n" if script else ""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{esc(policy)}">
<title>{esc(title)}</title>
<style>{STYLE}</style>
</head>
<body>
{body}
{tail}</body>
</html>
"""


def _digest(text: str) -> str:
    """The Content-Security-Policy hash of an inline style or script."""
    digest = hashlib.sha256(text.encode()).digest()
    return "sha256-" + base64.b64encode(digest).decode()


def _slug(state: str) -> str:
    return state.replace(" ", "-")


def _cell_legend() -> str:
    items = "".join(
        f'<li><span class="swatch {_slug(state)}"><span class="sym" '
        f'aria-hidden="true">{CELL_SYMBOLS[state]}</span></span> {esc(meaning)}</li>'
        for state, meaning in CELL_MEANINGS.items()
    )
    return f'<ul class="legend" aria-label="Cell states">{items}</ul>'


def _matrix(matrix: Matrix) -> str:
    head = "".join(f'<th scope="col">Round {n}</th>' for n in matrix.rounds)
    width = len(matrix.rounds) + 1
    groups = []
    for group, rows in itertools.groupby(matrix.rows, key=lambda row: row.group):
        label = (
            f'<tr class="group"><th scope="rowgroup" colspan="{width}">'
            f"{esc(group)}</th></tr>\n"
            if group
            else ""
        )
        body = "\n".join(
            f'<tr><th scope="row">{esc(row.value)}</th>'
            + "".join(_cell(c) for c in row.cells)
            + "</tr>"
            for row in rows
        )
        groups.append(f"<tbody>\n{label}{body}\n</tbody>")
    return (
        '<div class="scroll" tabindex="0" role="region" aria-label="Coverage matrix">'
        '<table id="coverage-matrix" class="matrix">'
        f'<thead><tr><th scope="col">Value</th>{head}</tr></thead>'
        f"{''.join(groups)}</table></div>"
    )


def _cell(cell: Cell) -> str:
    text: str = cell.state
    if cell.state in ("covered", "weak"):
        text += f" ({cell.findings})"
    elif cell.reason:
        text += f": {cell.reason}"
    return (
        f'<td class="cell {_slug(cell.state)}"><span class="sym" aria-hidden="true">'
        f"{CELL_SYMBOLS[cell.state]}</span> {esc(text)}</td>"
    )


def _outcome_legend() -> str:
    items = "".join(
        f'<li><span class="dot {outcome}"></span><span class="sym" aria-hidden="true">'
        f"{symbol}</span> {outcome}</li>"
        for outcome, symbol in OUTCOME_SYMBOLS.items()
    )
    return f'<ul class="legend" aria-label="Task outcomes">{items}</ul>'


def _timeline(bars: Sequence[Bar]) -> str:
    if not bars:
        return "<p>No task ran.</p>"
    width, left, right, row, top = 960, 260, 30, 22, 24
    span = max(b.start_s + b.duration_s for b in bars) or 1.0
    scale = (width - left - right) / span
    groups = [(n, list(g)) for n, g in itertools.groupby(bars, key=lambda b: b.round)]
    height = top + row * (len(bars) + len(groups)) + 6
    parts = []
    for tick in _ticks(span):
        x = left + tick * scale
        parts.append(
            f'<line class="axis" x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" '
            f'y2="{height}"/><text x="{x:.1f}" y="{top - 10}" '
            f'text-anchor="middle">{tick:g} s</text>'
        )
    y = top
    for number, group in groups:
        parts.append('<g class="round-group">')
        if number % 2 == 0:
            parts.append(
                f'<rect class="band" x="0" y="{y}" width="{width}" '
                f'height="{row * (len(group) + 1)}"/>'
            )
        parts.append(f'<text class="round" x="6" y="{y + 15}">Round {number}</text>')
        y += row
        for bar in group:
            parts.append(_bar(bar, left + bar.start_s * scale, y, scale))
            y += row
        parts.append("</g>")
    return (
        f'<svg viewBox="0 0 {width} {height}" '
        f'aria-labelledby="timeline-title">{"".join(parts)}</svg>'
    )


def _bar(bar: Bar, x: float, y: int, scale: float) -> str:
    wide = max(bar.duration_s * scale, 2.0)
    label = f"{bar.agent} · {bar.facet}"
    short = label if len(label) <= 34 else label[:33] + "…"
    title = (
        f"{bar.agent} · {bar.facet} · round {bar.round} · {bar.duration_s:.2f} s · "
        f"{bar.tokens} tokens · {bar.attempts} attempt(s) · {bar.outcome}"
    )
    return (
        f'<text x="16" y="{y + 15}">{esc(short)}</text>'
        f'<rect class="bar {bar.outcome}" data-task-id="{esc(bar.task_id)}" '
        f'tabindex="0" x="{x:.1f}" y="{y + 4}" width="{wide:.1f}" height="14">'
        f"<title>{esc(title)}</title></rect>"
        f'<text x="{x + wide + 4:.1f}" y="{y + 16}" aria-hidden="true">'
        f"{OUTCOME_SYMBOLS[bar.outcome]}</text>"
    )


def _ticks(span: float) -> list[float]:
    """Round-numbered seconds from 0 to `span`, about six of them."""
    magnitude = 10 ** math.floor(math.log10(span / 6))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= span / 6)
    return [n * step for n in range(int(span / step) + 1)]


def _evidence(evidence: Sequence[Evidence]) -> str:
    if not evidence:
        return "<p>No verified finding.</p>"
    return '<ol class="evidence">' + "".join(_finding(e) for e in evidence) + "</ol>"


def _finding(e: Evidence) -> str:
    link = (
        f' · <a href="{esc(e.url)}" rel="noreferrer">{esc(e.url)}</a>' if e.url else ""
    )
    if e.marked:
        passage = (
            f"<blockquote>{esc(e.before)}<mark>{esc(e.marked)}</mark>"
            f"{esc(e.after)}</blockquote>"
        )
    else:
        shown = f"<blockquote>{esc(e.before)}</blockquote>" if e.before else ""
        passage = (
            f'{shown}<p class="note">Quote, not found verbatim in the passage: '
            f"“{esc(e.quote)}”</p>"
        )
    return (
        f'<li><p class="claim">{esc(e.claim)} <span class="cite">[{e.number}]</span>'
        f'</p><p class="source">[{e.number}] <cite>{esc(e.title)}</cite> · '
        f"{esc(e.section)}{link}</p>{passage}</li>"
    )


def _blocks(blocks: Sequence[Block], links: Collection[str]) -> str:
    """The report's Markdown blocks, its headings placed under the page's."""
    out = []
    for block in blocks:
        if block.kind == "heading":
            level = min(block.level + 2, 6)
            out.append(f"<h{level}>{_inline(block.text, links)}</h{level}>")
        elif block.kind == "paragraph":
            out.append(f"<p>{_inline(block.text, links)}</p>")
        elif block.kind == "table":
            out.append(_table(block.rows, links))
        else:
            tag = "ul" if block.kind == "bullets" else "ol"
            start = f' start="{block.start}"' if block.kind == "numbered" else ""
            items = "".join(f"<li>{_inline(i, links)}</li>" for i in block.items)
            out.append(f"<{tag}{start}>{items}</{tag}>")
    return "\n".join(out)


def _table(rows: Sequence[Sequence[str]], links: Collection[str]) -> str:
    if not rows:
        return ""
    head = "".join(f'<th scope="col">{_inline(c, links)}</th>' for c in rows[0])
    body = "".join(
        "<tr>" + "".join(f"<td>{_inline(c, links)}</td>" for c in r) + "</tr>"
        for r in rows[1:]
    )
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _inline(text: str, links: Collection[str]) -> str:
    """Markdown inline text as HTML: bold, escapes, entities and known links.

    Only a `<url>` among the sources' addresses becomes a link.
    """
    out, at = [], 0
    for match in _INLINE.finditer(text):
        out.append(esc(text[at : match.start()]))
        if match["bold"] is not None:
            out.append(f"<strong>{_inline(match['bold'], links)}</strong>")
        elif match["link"] in links:
            url = esc(match["link"])
            out.append(f'<a href="{url}" rel="noreferrer">{url}</a>')
        elif match["char"] is not None:
            out.append(esc(match["char"]))
        elif match["entity"] is not None:
            out.append(esc(html.unescape(match["entity"])))
        else:
            out.append(esc(match[0]))
        at = match.end()
    out.append(esc(text[at:]))
    return "".join(out)


def _eval_case(case: EvalCase) -> str:
    runs = (case.without, case.redelegated)
    rows = [
        _metric_row(m)
        for m in case.metrics
        if (m.without, m.redelegated) != (None, None)
    ]
    if any(r and r.missing_groups for r in runs):
        rows.append(
            _text_row(
                "missing groups",
                [", ".join(r.missing_groups) if r else "-" for r in runs],
            )
        )
    if any(r and r.refused for r in runs):
        rows.append(
            _text_row("refused", [r.refused or "-" if r else "-" for r in runs])
        )
    if any(r and r.error for r in runs):
        rows.append(_text_row("error", [r.error or "-" if r else "-" for r in runs]))
    without = case.without.max_rounds if case.without else 0
    most = case.redelegated.max_rounds if case.redelegated else "-"
    return f"""<section class="case">
<h2>{esc(case.case_id)} <span class="note">({esc(case.kind)})</span></h2>
<div class="scroll"><table class="eval">
<thead><tr><th scope="col">Metric</th>
<th scope="col">Without re-delegation ({without} rounds)</th>
<th scope="col">With re-delegation ({most} rounds)</th>
<th scope="col">Change</th></tr></thead>
<tbody>{"".join(rows)}</tbody>
</table></div>
</section>"""


def _text_row(label: str, texts: Sequence[str]) -> str:
    cells = "".join(f"<td>{esc(t or 'none')}</td>" for t in texts)
    return f'<tr><th scope="row">{label}</th>{cells}<td></td></tr>'


def _metric_row(metric: EvalMetric) -> str:
    def shown(value: float | None) -> str:
        return "-" if value is None else f"{value:.{metric.digits}f}"

    change = "-"
    if metric.without is not None and metric.redelegated is not None:
        change = f"{metric.redelegated - metric.without:+.{metric.digits}f}"
    return (
        f'<tr><th scope="row">{esc(metric.label)}</th>'
        f"<td>{shown(metric.without)}</td><td>{shown(metric.redelegated)}</td>"
        f'<td class="change">{change}</td></tr>'
    )
