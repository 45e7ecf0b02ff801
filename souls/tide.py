"""The weekly tide: a reconciliation report of the collision memory (proposals only).

* pending verdicts — cards of presented draws the user has not judged yet;
* protein proposals — cards that keep colliding (drawn together at least twice);
* closure proposals — cards whose open questions were answered by later events;
* the effectiveness settlement — closures proposed, strong approvals, silence rate.

Nothing here changes anything: the user acts (``card.synthesize``, ``verdict``...). The
report is Markdown and a self-contained HTML page; it says when its reconciliation is
incomplete (verdicts still pending).
"""

from __future__ import annotations

import datetime as dt
import html
import json
from collections import Counter
from itertools import combinations

import msgspec

from souls.store import Store
from souls.tokenize import query_terms

__all__ = ["TideReport", "tide"]

WEEK = 7 * 86_400.0
_ANSWERED = 0.5


class TideReport(msgspec.Struct, frozen=True):
    since: float
    until: float
    draws: int
    presented: int
    silence_rate: float | None
    pending_verdicts: list[dict[str, int]]  # {"draw", "card"}
    protein_proposals: list[list[int]]  # card numbers that keep colliding
    closure_proposals: list[dict[str, object]]  # {"card", "question", "answered_by"}
    strong_approvals: int
    complete: bool
    markdown: str = ""
    html: str = ""


async def tide(store: Store, now: float) -> TideReport:
    db = store.db
    since = now - WEEK
    draws = list(
        await db.execute_fetchall(
            "SELECT id, cards, presented FROM draws WHERE created >= ? ORDER BY id", (since,)
        )
    )
    judged = {(d, c) for d, c in await db.execute_fetchall("SELECT draw, card FROM verdicts")}
    pending = [
        {"draw": draw, "card": card}
        for draw, cards, presented in draws
        if presented
        for card in json.loads(cards)
        if (draw, card) not in judged
    ]
    together: Counter[tuple[int, int]] = Counter()
    for _, cards, _presented in draws:
        together.update(combinations(sorted(json.loads(cards)), 2))
    proteins = [list(pair) for pair, n in sorted(together.items()) if n >= 2]
    closures = await _closures(store)
    (strong,) = list(
        await db.execute_fetchall(
            "SELECT count(*) FROM verdicts WHERE verdict = 'strong' AND created >= ?", (since,)
        )
    )
    presented = sum(1 for _, _, shown in draws if shown)
    silence = None if not draws else round(1 - presented / len(draws), 4)
    report = TideReport(
        since=since,
        until=now,
        draws=len(draws),
        presented=presented,
        silence_rate=silence,
        pending_verdicts=pending,
        protein_proposals=proteins,
        closure_proposals=closures,
        strong_approvals=strong[0],
        complete=not pending,
    )
    markdown = _markdown(report)
    return msgspec.structs.replace(report, markdown=markdown, html=_html(markdown))


async def _closures(store: Store) -> list[dict[str, object]]:
    """Open questions that an event after the card covers at least half of."""
    db = store.db
    questions = await db.execute_fetchall(
        "SELECT l.card, l.text, c.created FROM card_lines AS l JOIN cards AS c"
        " ON c.number = l.card WHERE l.kind = 'question' ORDER BY l.card, l.position"
    )
    found: list[dict[str, object]] = []
    for card, question, created in questions:
        wanted = set(query_terms(question))
        if len(wanted) < 2:
            continue
        later = await db.execute_fetchall(
            "SELECT id, text FROM events WHERE recorded > ? ORDER BY id", (created,)
        )
        for event_id, text in later:
            if len(wanted & set(query_terms(text))) / len(wanted) >= _ANSWERED:
                found.append({"card": card, "question": question, "answered_by": event_id})
                break
    return found


def _day(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d")


def _markdown(r: TideReport) -> str:
    lines = [f"# Tide {_day(r.since)} to {_day(r.until)}", ""]
    if not r.complete:
        lines += ["**Reconciliation incomplete:** verdicts are still pending.", ""]
    lines += ["## Pending verdicts"]
    lines += [f"- draw {p['draw']}, card {p['card']:04d}" for p in r.pending_verdicts] or ["- none"]
    lines += ["", "## Protein proposals (cards that keep colliding)"]
    lines += ["- " + " + ".join(f"{n:04d}" for n in pair) for pair in r.protein_proposals] or [
        "- none"
    ]
    lines += ["", "## Closure proposals (open questions answered since)"]
    lines += [
        f"- card {c['card']}: {c['question']} (event {c['answered_by']})"
        for c in r.closure_proposals
    ] or ["- none"]
    rate = "n/a" if r.silence_rate is None else f"{r.silence_rate:.0%}"
    lines += [
        "",
        "## Settlement",
        f"- draws: {r.draws}, presented: {r.presented}",
        f"- silence rate: {rate}",
        f"- strong approvals: {r.strong_approvals}",
        f"- closures proposed: {len(r.closure_proposals)}",
        "",
        "Proposals only: nothing changes until you act.",
        "",
    ]
    return "\n".join(lines)


def _html(markdown: str) -> str:
    parts = []
    for line in markdown.splitlines():
        if line.startswith("# "):
            parts.append(f"<h1>{html.escape(line[2:])}</h1>")
        elif line.startswith("## "):
            parts.append(f"<h2>{html.escape(line[3:])}</h2>")
        elif line.startswith("- "):
            parts.append(f"<li>{html.escape(line[2:])}</li>")
        elif line:
            parts.append(f"<p>{html.escape(line)}</p>")
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Tide</title>"
        "<style>body{font-family:sans-serif;max-width:48em;margin:2em auto}</style>"
        f"</head><body>{''.join(parts)}</body></html>"
    )
