"""A soul's collision-memory status page: one static HTML file, no external assets.

The card pool with its lightning weights, the draw history, the silence rate week by
week and the verdict mix as inline SVG charts, and the latest tide rendered from its
Markdown. Pure: data in, HTML out (the ``stamp`` replaces the clock in the footer, so a
page can be reproduced).

Everything users wrote (card titles, draw topics, the tide's quotes) is escaped; the
page runs no script. Weights sit on one absolute, logarithmic scale (the same bar means
the same weight on every page, whatever the other cards weigh), drawn in each card's
row, so a pool of hundreds of cards stays readable; a histogram sums the pool up.
"""

from __future__ import annotations

import datetime as dt
import html
import itertools
import math
from collections.abc import Sequence

from souls.collision.cards import Card
from souls.collision.collider import Collision
from souls.collision.markdown import to_html

__all__ = ["SCALE", "VERDICT_COLOURS", "render_status_page"]

_WEEK = 7 * 86_400.0
# The weight axis: logarithmic from SCALE[0] to SCALE[1] (a fresh card weighs 1, each
# strong approval doubles it by default, the floor is 0.1); heavier cards fill the bar.
SCALE = (0.05, 20.0)
_TICKS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
_BAR = 240  # px of the whole axis
_MIN_BAR = 6  # px: the lightest card's bar is still seen
# Four verdicts, four colours apart in hue and lightness (and for red-green blindness).
VERDICT_COLOURS = {
    "strong": "#1a6e3a",
    "approve": "#6cc27a",
    "neutral": "#9a9a9a",
    "oppose": "#c8412e",
}
_WEIGHT_COLOUR = "#3d6fc4"
_SILENCE_COLOUR = "#8a7bb8"
_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:60em;color:#222;"
    "padding:0 1em}h1{font-size:1.6em}h2{font-size:1.2em;margin-top:2em}"
    "table{border-collapse:collapse}td,th{padding:.2em .6em;border-bottom:1px solid #ddd;"
    "text-align:left;vertical-align:middle}.muted{color:#666}.empty{color:#666;"
    "font-style:italic}svg text{font-size:12px;fill:#333}"
    f".bar{{display:inline-block;height:12px;background:{_WEIGHT_COLOUR};"
    "vertical-align:middle;margin-right:.4em}"
    f".axis{{display:inline-block;width:{_BAR}px;white-space:nowrap}}"
    ".swatch{display:inline-block;width:12px;height:12px;margin-right:.3em;"
    "vertical-align:middle}.legend li{margin:.2em 0}"
    ".tide{border-left:3px solid #ddd;padding-left:1em}.tide h1{font-size:1.25em}"
    ".tide h2{font-size:1.05em}"
)


def render_status_page(
    soul: str,
    cards: Sequence[Card],
    weights: dict[int, float],
    draws: Sequence[Collision],
    verdicts: dict[str, int],
    tide_markdown: str,
    stamp: str,
) -> str:
    parts = [f"<h1>Collision memory of {html.escape(soul)}</h1>"]
    presented = sum(1 for d in draws if d.presented)
    rate = f"{1 - presented / len(draws):.0%}" if draws else "n/a"
    parts.append(
        f"<p>{len(cards)} cards, {len(draws)} draws, {presented} presented,"
        f" silence rate {rate}.</p>"
    )
    parts.append(_legend())
    parts.append("<h2>Card weights</h2>")
    if weights:
        parts.append(_weight_histogram(list(weights.values())))
    else:
        parts.append(
            "<p class=empty>No cards yet: a reflect writes them, or "
            "<code>soupd card add</code>.</p>"
        )
    parts.append("<h2>Silence rate by week</h2>")
    if draws:
        weeks = _silence_by_week(draws)
        parts.append(_bars([(w, v, _SILENCE_COLOUR) for w, v in weeks], 1.0, "{:.0%}"))
    else:
        parts.append(
            "<p class=empty>No draws yet: <code>soupd lightning SOUL --topic ...</code> "
            "draws cards against a topic.</p>"
        )
    parts.append("<h2>Verdict mix</h2>")
    if any(verdicts.values()):
        top = float(max(verdicts.values()))
        bars = [(v, float(n), VERDICT_COLOURS.get(v, "#555")) for v, n in verdicts.items()]
        parts.append(_bars(bars, top, "{:.0f}", css="verdict"))
    else:
        parts.append(
            "<p class=empty>No verdicts yet: the user judges the cards of a presented "
            "draw (<code>soupd verdict</code>).</p>"
        )
    parts.append("<h2>Cards</h2>")
    if cards:
        parts.append(
            "<table class=cards><tr><th>#</th><th>kind</th><th>title</th>"
            f"<th>weight {_axis_labels()}</th><th>open questions</th>"
            "<th>strong approvals</th></tr>"
        )
        for card in cards:
            weight = weights.get(card.number)
            parts.append(
                f"<tr><td>{card.number:04d}</td><td>{html.escape(card.kind)}</td>"
                f"<td>{html.escape(card.title)}</td><td>{_weight_cell(weight)}</td>"
                f"<td>{len(card.open_questions)}</td><td>{card.strong_approvals}</td></tr>"
            )
        parts.append("</table>")
    else:
        parts.append("<p class=empty>No cards yet.</p>")
    parts.append("<h2>Draws</h2>")
    if draws:
        parts.append(
            "<table><tr><th>draw</th><th>topic</th><th>cards</th><th>result</th><th>seed</th></tr>"
        )
        for draw in draws:
            result = draw.criterion if draw.presented else "silent"
            parts.append(
                f"<tr><td>{draw.draw}</td><td>{html.escape(draw.topic)}</td>"
                f"<td>{', '.join(f'{n:04d}' for n in draw.cards)}</td>"
                f"<td>{html.escape(str(result))}</td><td class=muted>{draw.seed}</td></tr>"
            )
        parts.append("</table>")
    else:
        parts.append("<p class=empty>No draws yet.</p>")
    parts.append("<h2>Latest tide</h2>")
    if tide_markdown.strip():
        parts.append(f"<div class=tide>{to_html(tide_markdown)}</div>")
    else:
        parts.append("<p class=empty>No tide yet: <code>soupd tide SOUL</code>.</p>")
    parts.append(f"<p class=muted>{html.escape(stamp)}</p>")
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>soupd: {html.escape(soul)}</title><style>{_STYLE}</style></head>"
        f"<body>{''.join(parts)}</body></html>"
    )


def _legend() -> str:
    swatches = "".join(
        f"<li><span class=swatch style='background:{colour}'></span>{verdict}</li>"
        for verdict, colour in VERDICT_COLOURS.items()
    )
    low, high = SCALE
    return (
        "<h2>How to read this page</h2><ul class=legend>"
        "<li><b>Weight</b>: a card's chance to be drawn, against the others. A fresh card "
        "weighs 1; strong approvals raise it, weeks untouched lower it, a closed card "
        "counts less; it never falls below the floor. The bars use one logarithmic "
        f"scale from {low:g} to {high:g} on every page (each step of the axis doubles), "
        "so the same bar is the same weight whatever the other cards weigh.</li>"
        "<li><b>Silence rate</b>: the share of draws the presentation gate kept back "
        "because they brought nothing new (most should stay silent).</li>"
        f"<li><b>Verdicts</b> (the user's, on presented cards):<ul>{swatches}</ul></li>"
        "</ul>"
    )


def _position(weight: float) -> float:
    """Where ``weight`` sits on the absolute axis, in [0, 1]."""
    low, high = SCALE
    if weight <= low:
        return 0.0
    return min(1.0, math.log(weight / low) / math.log(high / low))


def _weight_cell(weight: float | None) -> str:
    if weight is None:
        return "<span class=muted>n/a</span>"
    width = max(_MIN_BAR, round(_BAR * _position(weight)))
    beyond = "+" if weight > SCALE[1] else ""
    return (
        f"<span class=axis><span class=bar style='width:{width}px'"
        f" title='weight {weight:.3g}'></span>{weight:.2f}{beyond}</span>"
    )


def _axis_labels() -> str:
    return (
        "<span class=muted>(log scale: "
        + ", ".join(f"{t:g}" for t in (_TICKS[0], 1.0, _TICKS[-1]))
        + ")</span>"
    )


def _weight_histogram(values: Sequence[float]) -> str:
    """How many cards weigh around each tick of the absolute axis (an SVG bar each)."""
    edges = [math.sqrt(a * b) for a, b in itertools.pairwise(_TICKS)]
    counts = [0] * len(_TICKS)
    for value in values:
        counts[sum(1 for edge in edges if value >= edge)] += 1
    top = float(max(counts)) or 1.0
    ticks = zip(_TICKS, counts, strict=True)
    rows = [(f"≈ {tick:g}", float(n), _WEIGHT_COLOUR) for tick, n in ticks]
    return _bars(rows, top, "{:.0f} cards", css="histogram")


def _silence_by_week(draws: Sequence[Collision]) -> list[tuple[str, float]]:
    weeks: dict[str, list[bool]] = {}
    for draw in sorted(draws, key=lambda d: d.created):
        label = dt.datetime.fromtimestamp(draw.created, dt.UTC).strftime("%G-W%V")
        weeks.setdefault(label, []).append(draw.presented)
    return [(week, 1 - sum(shown) / len(shown)) for week, shown in weeks.items()]


def _bars(
    values: Sequence[tuple[str, float, str]], top: float, shown: str, *, css: str = ""
) -> str:
    """A horizontal bar chart as inline SVG: (label, value, colour) against ``top``."""
    row, width, label = 20, 360, 130
    height = row * len(values) + 4
    bars = []
    for i, (name, value, colour) in enumerate(values):
        y = i * row + 2
        length = width * value / top if top else 0.0
        bars.append(
            f"<text x='0' y='{y + 13}'>{html.escape(name)}</text>"
            f"<rect class='{css}' data-label='{html.escape(name)}' x='{label}' y='{y}'"
            f" width='{max(length, 1.0):.1f}' height='{row - 4}' fill='{colour}'/>"
            f"<text x='{label + max(length, 1.0) + 4:.1f}' y='{y + 13}'>"
            f"{html.escape(shown.format(value))}</text>"
        )
    total = label + width + 80
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{total}' height='{height}'"
        f" role='img'>{''.join(bars)}</svg>"
    )
