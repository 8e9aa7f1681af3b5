"""The report as ONE self-contained HTML file: inline CSS and SVG, no script, no network.

A Content-Security-Policy forbids every fetch, so the file shows the same thing offline,
from a mail attachment, anywhere. All text is escaped; the memo goes through
markdown-it-py with raw HTML disabled.
"""

from __future__ import annotations

from html import escape

from evolve.metrics.rates import RunRecord, iso_week
from evolve.metrics.report import headline_text, lesson_line, older_text
from evolve.workspace import undo

WIDTH, HEIGHT, PAD = 720, 200, 36
COLORS = {
    "corrections": "#c0392b",
    "errors": "#2c3e50",
    "use": "#2471a3",
    "ineffective": "#d35400",
    "edited": "#7d3c98",
}
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:.25em .6em;border-bottom:1px solid #eee;
text-align:left;vertical-align:top}th{background:#f6f6f6}.thin{color:#888;font-style:italic}
.num{text-align:right;font-variant-numeric:tabular-nums}.memo{background:#fafafa;padding:.5em 1em;
border-left:3px solid #ccc}.legend span{margin-right:1.2em}svg{display:block;margin:.5em 0}
.bad{color:#b03a2e}
"""


def _md(text: str) -> str:
    from markdown_it import MarkdownIt  # lazy: only the HTML report needs it

    return MarkdownIt("commonmark", {"html": False}).render(text)


def _md_inline(text: str) -> str:
    """One line of Markdown as inline HTML (`code`, **bold**; raw HTML shown, not run)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).renderInline(text)


def line_chart(
    x_labels: list[str],
    series: list[tuple[str, str, list[float | None]]],
    y_max: float,
    markers: tuple[tuple[int, str], ...] = (),
    width: int = WIDTH,
    height: int = HEIGHT,
    unit: str = "",
) -> str:
    """Lines over x positions; None values leave a gap (thin data is not drawn)."""
    n = max(len(x_labels), 1)
    inner_w, inner_h = width - 2 * PAD, height - 2 * PAD
    y_max = y_max or 1.0

    def x(i: float) -> float:
        return PAD + (inner_w * i / (n - 1) if n > 1 else inner_w / 2)

    def y(v: float) -> float:
        return PAD + inner_h - inner_h * min(v, y_max) / y_max

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img">',
        f'<rect x="{PAD}" y="{PAD}" width="{inner_w}" height="{inner_h}" fill="#fcfcfc" stroke="#ddd"/>',
    ]
    for frac in (0, 0.5, 1):
        value = y_max * frac
        parts.append(
            f'<text x="{PAD - 4}" y="{y(value) + 4:.1f}" font-size="10" text-anchor="end">'
            f"{value:g}{escape(unit)}</text>"
        )
    step = max(1, n // 8)
    for i in range(0, len(x_labels), step):
        parts.append(
            f'<text x="{x(i):.1f}" y="{height - PAD + 14}" font-size="10" '
            f'text-anchor="middle">{escape(x_labels[i])}</text>'
        )
    for position, label in markers:
        parts.append(
            f'<line x1="{x(position):.1f}" y1="{PAD}" x2="{x(position):.1f}" '
            f'y2="{PAD + inner_h}" stroke="#27ae60" stroke-dasharray="3,3">'
            f"<title>{escape(label)}</title></line>"
        )
    for name, color, values in series:
        run: list[str] = []
        segments = []
        for i, point in enumerate(values):
            if point is None:
                if run:
                    segments.append(run)
                run = []
                continue
            run.append(f"{x(i):.1f},{y(point):.1f}")
            parts.append(
                f'<circle cx="{x(i):.1f}" cy="{y(point):.1f}" r="2.5" fill="{color}">'
                f"<title>{escape(name)} {escape(x_labels[i] if i < len(x_labels) else '')}: "
                f"{point:g}</title></circle>"
            )
        if run:
            segments.append(run)
        for segment in segments:
            if len(segment) > 1:
                parts.append(
                    f'<polyline fill="none" stroke="{color}" stroke-width="1.8" '
                    f'points="{" ".join(segment)}"/>'
                )
    parts.append("</svg>")
    return "".join(parts)


def _legend(items: list[tuple[str, str]]) -> str:
    spans = "".join(f'<span><b style="color:{c}">━</b> {escape(t)}</span>' for t, c in items)
    return f'<div class="legend">{spans}</div>'


def _num(value: float | None, suffix: str = "") -> str:
    return '<span class="thin">–</span>' if value is None else f"{value:g}{suffix}"


def _pct(value: float | None) -> str:
    if value is None:
        return _num(None)
    percent = value * 100
    return _num(round(percent, 1) if 0 < percent < 10 else round(percent), "%")


def _side(side: dict) -> str:
    if side["thin"]:
        return f'<span class="thin">too few runs to say ({side["runs"]})</span>'
    return (
        f"{side['corrections_per_100']:g} corrections, {side['errors_per_100']:g} errors "
        f'<span class="thin">({side["runs"]} runs)</span>'
    )


def _reflections(data: dict) -> str:
    rows = []
    for item in data["reflections"]:
        mark = " <em>(reverted)</em>" if item["reverted"] else ""
        rows.append(
            f"<tr><td>{escape(item['at'][:16].replace('T', ' '))}</td>"
            f"<td><code>{escape(item['sha'][:10])}</code> {escape(item['summary'])}{mark}</td>"
            f"<td>{_side(item['before'])}</td><td>{_side(item['after'])}</td></tr>"
        )
    if not rows:
        return '<p class="thin">No reflection has been committed yet.</p>'
    return (
        "<table><tr><th>when</th><th>reflection</th><th>before (per 100 runs)</th>"
        f"<th>after (per 100 runs)</th></tr>{''.join(rows)}</table>"
    )


def _timeline(data: dict) -> str:
    weeks = data["weeks"]
    if not weeks:
        return '<p class="thin">No runs in the window yet.</p>'
    labels = [w["week"] for w in weeks]
    index = {w: i for i, w in enumerate(labels)}
    markers = []
    for item in data["reflections"]:
        week = iso_week(RunRecord("", "", 0, item["at"]))
        if week in index:
            markers.append((index[week], f"reflection {item['sha'][:10]}: {item['summary']}"))
    corrections = [w["corrections_per_100"] for w in weeks]
    errors = [w["errors_per_100"] for w in weeks]
    top = max([v for v in corrections + errors if v is not None] or [10.0])
    chart = line_chart(
        labels,
        [
            ("corrections per 100 runs", COLORS["corrections"], corrections),
            ("runs with a real error per 100 runs", COLORS["errors"], errors),
        ],
        top,
        tuple(markers),
    )
    thin = sum(w["thin"] for w in weeks)
    note = (
        (
            f'<p class="thin">{thin} of {len(weeks)} weeks had fewer than {data["thin_runs"]} runs '
            "and are not drawn.</p>"
        )
        if thin
        else ""
    )
    legend = _legend(
        [
            ("corrections per 100 runs", COLORS["corrections"]),
            ("runs with a real error per 100 runs", COLORS["errors"]),
            ("a reflection (dashed)", "#27ae60"),
        ]
    )
    return legend + chart + note


def _skill_rows(data: dict) -> str:
    rows = []
    for s in sorted(data["skills"], key=lambda s: (-s["runs_shown"], s["name"])):
        state = ("" if s["valid"] else ' <span class="bad">broken</span>') + (" 📌" if s["pinned"] else "")
        rows.append(
            f"<tr><td>{escape(s['name'])}{state}</td><td class=num>{s['impressions']}</td>"
            f"<td class=num>{s['runs_shown']}</td><td class=num>{s['runs_invoked']}</td>"
            f"<td class=num>{_pct(s['invocation_rate'])}</td>"
            f"<td class=num>{_pct(s['post_use_edit_rate'])}</td>"
            f"<td class=num>{_pct(s['ineffective_rate'])}</td></tr>"
        )
    if not rows:
        return '<p class="thin">No skills yet.</p>'
    return (
        "<table><tr><th>skill</th><th>sessions shown</th><th>runs shown</th><th>runs used</th>"
        "<th>invocation rate</th><th>corrected after use</th><th>ineffective</th></tr>"
        f"{''.join(rows)}</table>"
    )


def _skill_charts(data: dict, limit: int = 40) -> str:
    charted = [s for s in data["skills"] if any(not w["thin"] for w in s["weeks"])]
    charted.sort(key=lambda s: (-s["runs_shown"], s["name"]))
    parts = [
        _legend(
            [
                ("invocation rate", COLORS["use"]),
                ("ineffective", COLORS["ineffective"]),
                ("corrected after use", COLORS["edited"]),
            ]
        )
    ]
    for s in charted[:limit]:
        labels = [w["week"] for w in s["weeks"]]
        series = [
            (name, COLORS[color], [None if w[key] is None else round(100 * w[key], 1) for w in s["weeks"]])
            for name, color, key in (
                ("invocation rate", "use", "invocation_rate"),
                ("ineffective", "ineffective", "ineffective_rate"),
                ("corrected after use", "edited", "post_use_edit_rate"),
            )
        ]
        peak = max([v for _, _, values in series for v in values if v is not None] or [10.0])
        top = 100.0 if peak > 50 else 50.0 if peak > 20 else 20.0 if peak > 10 else 10.0
        parts.append(f"<h3>{escape(s['name'])}</h3>" + line_chart(labels, series, top, height=140, unit="%"))
    if not charted:
        return (
            '<p class="thin">No skill has a week with enough runs to chart yet (each week needs '
            "5 runs it was shown or used in).</p>"
        )
    rest = len(charted) - limit
    if rest > 0:
        parts.append(f'<p class="thin">{rest} more skills with data are in the table above.</p>')
    return "".join(parts)


def render(data: dict, memo_text: str) -> str:
    """The whole report page."""
    useless = (
        "".join(
            f"<li>{escape(u['name'])}: shown in {u['runs_shown']} runs, never used</li>"
            for u in data["useless"]
        )
        or '<li class="thin">none</li>'
    )
    harmful = (
        "".join(
            f"<li>{escape(h['name'])}: {escape(h['reason'])} ({round(h['rate'] * 100)}% "
            f"of {h['runs']} runs)</li>"
            for h in data["harmful"]
        )
        or '<li class="thin">none</li>'
    )
    blocks = (
        "".join(
            f"<li><code>{escape(b['id'])}</code> {_md_inline(undo.without_marker(b['line']))} "
            f"(undone by {escape(b['undone_by'])}, {escape(b['commit'][:10])})</li>"
            for b in data.get("blocks", [])
        )
        or '<li class="thin">none</li>'
    )
    lessons = data["lessons"]
    ignored, not_dropped = (
        "".join(f"<li>{escape(lesson_line(r))}</li>" for r in lessons[key]) or '<li class="thin">none</li>'
        for key in ("most_ignored", "not_dropped")
    )
    memo = _md(memo_text) if memo_text.strip() else '<p class="thin">(empty)</p>'
    older = f'<p class="thin">{escape(older_text(data) or "")}</p>' if older_text(data) else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>evolve report: {escape(data["agent"])}</title><style>{CSS}</style></head><body>
<h1>Did learning help? <small>{escape(data["agent"])}</small></h1>
<p class="verdict"><strong>{escape(headline_text(data))}</strong></p>
<p class="verdict"><strong>{escape(lessons["headline"])}</strong></p>
<p class="verdict"><strong>{escape(lessons["proven_headline"])}</strong></p>{older}
<p>{data["runs"]} runs since {escape(data["since"][:10])} (the last {data["window_days"]:g} days);
generated {escape(data["generated_at"])}. Rates per 100 runs compare the {data["window_runs"]} runs
before each reflection with the {data["window_runs"]} after it; with fewer than
{data["thin_runs"]} runs on a side the report says so instead of showing noise.</p>
<h2 id="reflections">Reflections</h2>{_reflections(data)}
<h2 id="timeline">Corrections and real errors per week</h2>{_timeline(data)}
<h2 id="lessons">Lessons that did not stick</h2>
<h3>Ignored most (the agent had them; the person corrected the same point again)</h3><ul>{ignored}</ul>
<h3 class="bad">Recurrence did not drop after they landed</h3><ul>{not_dropped}</ul>
<h2 id="flags">Skills to look at</h2>
<h3>Look useless (shown often, never used)</h3><ul>{useless}</ul>
<h3>Look harmful</h3><ul>{harmful}</ul>
<h2 id="undone">Lessons a person undid</h2>
<p class="thin">Not learned again; <code>evolve unblock AGENT ID</code> lifts one.</p><ul>{blocks}</ul>
<h2 id="skills">Skills</h2>{_skill_rows(data)}
<h2 id="skill-trends">Skill rates per week</h2>{_skill_charts(data)}
<h2 id="memo">The memo today</h2><div class="memo">{memo}</div>
<p class="thin">Definitions: docs/metrics.md in evolve's source. Made by evolve; no script, no
network.</p>
</body></html>
"""
