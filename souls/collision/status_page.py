"""A soul's collision-memory status page: one static HTML file, no external assets.

The card pool with its lightning weights, the draw history, the silence rate week by
week and the verdict mix as inline SVG charts, and the latest tide. Pure: data in, HTML
out (the ``stamp`` replaces the clock in the footer, so a page can be reproduced).
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Sequence

from souls.collision.cards import Card
from souls.collision.collider import Collision

__all__ = ["render_status_page"]

_WEEK = 7 * 86_400.0
_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:60em;color:#222}"
    "h1{font-size:1.6em}h2{font-size:1.2em;margin-top:2em}table{border-collapse:collapse}"
    "td,th{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:left}"
    ".muted{color:#777}svg text{font-size:11px;fill:#333}"
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
    parts.append("<h2>Card weights</h2>")
    parts.append(_bars([(f"{n:04d}", w) for n, w in sorted(weights.items())], "#4a7bd0"))
    parts.append("<h2>Silence rate by week</h2>")
    parts.append(_bars(_silence_by_week(draws), "#999", percent=True))
    parts.append("<h2>Verdict mix</h2>")
    parts.append(_bars(list(verdicts.items()), "#3a9a5a", counts=True))
    parts.append(
        "<h2>Cards</h2><table><tr><th>#</th><th>kind</th><th>title</th>"
        "<th>open questions</th><th>strong approvals</th></tr>"
    )
    for card in cards:
        parts.append(
            f"<tr><td>{card.number:04d}</td><td>{card.kind}</td>"
            f"<td>{html.escape(card.title)}</td><td>{len(card.open_questions)}</td>"
            f"<td>{card.strong_approvals}</td></tr>"
        )
    parts.append(
        "</table><h2>Draws</h2><table><tr><th>draw</th><th>topic</th>"
        "<th>cards</th><th>result</th><th>seed</th></tr>"
    )
    for draw in draws:
        result = draw.criterion if draw.presented else "silent"
        parts.append(
            f"<tr><td>{draw.draw}</td><td>{html.escape(draw.topic)}</td>"
            f"<td>{', '.join(f'{n:04d}' for n in draw.cards)}</td>"
            f"<td>{html.escape(str(result))}</td><td class=muted>{draw.seed}</td></tr>"
        )
    parts.append("</table><h2>Latest tide</h2>")
    parts.append(f"<pre>{html.escape(tide_markdown) or 'no tide yet'}</pre>")
    parts.append(f"<p class=muted>{html.escape(stamp)}</p>")
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>soupd: {html.escape(soul)}</title><style>{_STYLE}</style></head>"
        f"<body>{''.join(parts)}</body></html>"
    )


def _silence_by_week(draws: Sequence[Collision]) -> list[tuple[str, float]]:
    weeks: dict[str, list[bool]] = {}
    for draw in sorted(draws, key=lambda d: d.created):
        label = dt.datetime.fromtimestamp(draw.created, dt.UTC).strftime("%G-W%V")
        weeks.setdefault(label, []).append(draw.presented)
    return [(week, 1 - sum(shown) / len(shown)) for week, shown in weeks.items()]


def _bars(
    values: Sequence[tuple[str, float]],
    colour: str,
    *,
    percent: bool = False,
    counts: bool = False,
) -> str:
    """A horizontal bar chart as inline SVG."""
    if not values:
        return "<p class=muted>nothing yet</p>"
    top = max(v for _, v in values) or 1.0
    row, width, label = 18, 360, 130
    height = row * len(values) + 4
    bars = []
    for i, (name, value) in enumerate(values):
        y = i * row + 2
        length = max(1.0, width * value / top)
        shown = f"{value:.0%}" if percent else f"{value:.0f}" if counts else f"{value:.2f}"
        bars.append(
            f"<text x='0' y='{y + 12}'>{html.escape(name)}</text>"
            f"<rect x='{label}' y='{y}' width='{length:.1f}' height='{row - 4}'"
            f" fill='{colour}'/><text x='{label + length + 4:.1f}' y='{y + 12}'>{shown}</text>"
        )
    total = label + width + 60
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{total}' height='{height}'"
        f" role='img'>{''.join(bars)}</svg>"
    )
