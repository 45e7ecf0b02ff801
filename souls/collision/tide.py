"""The weekly tide: a reconciliation report of the collision memory (proposals only).

* pending verdicts — cards of presented draws the user has not judged yet;
* protein proposals — clusters of cards that keep colliding (drawn together at least
  twice) or that are linked by strong Hebbian edges (memories they came from keep being
  recalled together); cards already joined in a protein are not proposed again;
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

from souls.store.store import Store
from souls.text.tokenize import query_terms

__all__ = ["ProteinProposal", "TideReport", "tide"]

WEEK = 7 * 86_400.0
_ANSWERED = 0.5


class ProteinProposal(msgspec.Struct, frozen=True):
    cards: list[int]  # a cluster of linked cards, ascending
    drawn_together: int  # the most times two of them were drawn together this week
    hebbian: float  # the strongest Hebbian edge between their memories (0: none)


class TideReport(msgspec.Struct, frozen=True):
    since: float
    until: float
    draws: int
    presented: int
    silence_rate: float | None
    pending_verdicts: list[dict[str, int]]  # {"draw", "card"}
    protein_proposals: list[ProteinProposal]
    closure_proposals: list[dict[str, object]]  # {"card", "question", "answered_by"}
    strong_approvals: int
    complete: bool
    markdown: str = ""
    html: str = ""


async def tide(store: Store, now: float, hebbian_threshold: float = 3.0) -> TideReport:
    """The report of the week up to ``now``; ``hebbian_threshold`` is the edge weight that
    links two cards (recall's association threshold)."""
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
    proteins = _clusters(
        {pair: n for pair, n in together.items() if n >= 2},
        await _hebbian_links(store, hebbian_threshold),
        await _joined(store),
    )
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


async def _hebbian_links(store: Store, threshold: float) -> dict[tuple[int, int], float]:
    """Card pairs whose source events' memories share an edge of at least ``threshold``,
    with the strongest such edge."""
    rows = await store.db.execute_fetchall(
        "SELECT ca.card, cb.card, max(e.weight) FROM edges AS e"
        " JOIN memories AS ma ON ma.id = e.a JOIN card_sources AS ca ON ca.event_id = ma.event_id"
        " JOIN memories AS mb ON mb.id = e.b JOIN card_sources AS cb ON cb.event_id = mb.event_id"
        " WHERE e.weight >= ? AND ca.card <> cb.card GROUP BY ca.card, cb.card",
        (threshold,),
    )
    links: dict[tuple[int, int], float] = {}
    for a, b, weight in rows:
        pair = (min(a, b), max(a, b))
        links[pair] = max(links.get(pair, 0.0), float(weight))
    return links


async def _joined(store: Store) -> set[tuple[int, int]]:
    """Card pairs that are already members of one protein."""
    members: dict[int, list[int]] = {}
    for protein, member in await store.db.execute_fetchall(
        "SELECT protein, member FROM card_members ORDER BY protein, member"
    ):
        members.setdefault(protein, []).append(member)
    return {pair for group in members.values() for pair in combinations(sorted(group), 2)}


def _clusters(
    drawn: dict[tuple[int, int], int],
    linked: dict[tuple[int, int], float],
    joined: set[tuple[int, int]],
) -> list[ProteinProposal]:
    """Connected groups of cards over both kinds of link (pairs already in a protein do
    not link), in order of their smallest card number."""
    pairs = sorted((set(drawn) | set(linked)) - joined)
    parent: dict[int, int] = {}

    def root(card: int) -> int:
        parent.setdefault(card, card)
        while parent[card] != card:
            parent[card] = parent[parent[card]]
            card = parent[card]
        return card

    for a, b in pairs:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for card in sorted(parent):
        groups.setdefault(root(card), []).append(card)
    proposals = []
    for cards in groups.values():
        inside = [p for p in pairs if p[0] in cards]
        proposals.append(
            ProteinProposal(
                cards=cards,
                drawn_together=max((drawn.get(p, 0) for p in inside), default=0),
                hebbian=max((linked.get(p, 0.0) for p in inside), default=0.0),
            )
        )
    return sorted(proposals, key=lambda p: p.cards)


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
    lines += ["", "## Protein proposals (cards that keep colliding or linking)"]
    lines += [_proposal(p) for p in r.protein_proposals] or ["- none"]
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


def _proposal(p: ProteinProposal) -> str:
    why = []
    if p.drawn_together:
        why.append(f"drawn together {p.drawn_together}\u00d7")
    if p.hebbian:
        why.append(f"Hebbian edge {p.hebbian:g}")
    return "- " + " + ".join(f"{n:04d}" for n in p.cards) + f" ({', '.join(why)})"


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
