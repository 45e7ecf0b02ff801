"""The weekly tide: a reconciliation report of the collision memory (proposals only).

* pending verdicts — cards of presented draws the user has not judged yet;
* protein proposals — small groups of cards that keep colliding (presented together at
  least ``together`` times this week) or whose memories keep being recalled together
  (strong Hebbian edges). Every two cards of a group are linked, a group holds at most
  ``max_members`` cards, a card is in one group at most, and cards already joined in a
  protein are not proposed again: a chain of links is no protein;
* closure proposals — open questions of a card that a later card's conclusion answers
  (:func:`souls.collision.lines.covers`), with that line;
* the effectiveness settlement — closures made this week and still proposed, strong
  approvals, silence rate (a reproduced draw is no new collision).

Nothing here changes anything: the user acts (``tide --close CARD`` applies a card's
closure proposals, ``card.synthesize`` makes a protein, ``verdict`` judges). The report
is Markdown and a self-contained HTML page; it says when its reconciliation is
incomplete (verdicts still pending).
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Sequence
from itertools import combinations

import anyio
import msgspec

from souls.collision.cards import Card
from souls.collision.lines import Line, covers, read
from souls.collision.markdown import to_html
from souls.store.interface import SoulStore

__all__ = ["ClosureProposal", "ProteinProposal", "TideConfig", "TideReport", "tide"]

WEEK = 7 * 86_400.0


class TideConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Presented draws two cards must have shared this week to be proposed together.
    together: int = 2
    # Most cards one protein proposal holds.
    max_members: int = 4
    # Share of an open question's content terms a later card's conclusion must hold (two
    # at least) for the question to be proposed for closing.
    answer_overlap: float = 0.5

    def __post_init__(self) -> None:
        if self.together < 1 or self.max_members < 2:
            raise ValueError("together must be >= 1 and max_members >= 2")
        if not 0 < self.answer_overlap <= 1:
            raise ValueError("answer_overlap must be in (0, 1]")


class ProteinProposal(msgspec.Struct, frozen=True):
    cards: list[int]  # a group of linked cards, ascending
    drawn_together: int  # the most times two of them were presented together this week
    hebbian: float  # the strongest Hebbian edge between their memories (0: none)


class ClosureProposal(msgspec.Struct, frozen=True):
    card: int
    question: int  # its number on the card, from 1
    text: str
    answered_by: int  # the later card
    line: int  # its conclusion that answers, from 1
    answer: str


class TideReport(msgspec.Struct, frozen=True):
    since: float
    until: float
    draws: int
    presented: int
    silence_rate: float | None
    pending_verdicts: list[dict[str, int]]  # {"draw", "card"}
    protein_proposals: list[ProteinProposal]
    closure_proposals: list[ClosureProposal]
    strong_approvals: int
    complete: bool
    closures_made: int = 0  # questions the user closed this week
    markdown: str = ""
    html: str = ""


async def tide(
    store: SoulStore,
    cards: Sequence[Card],
    now: float,
    config: TideConfig,
    hebbian_threshold: float = 3.0,
    people: frozenset[str] = frozenset(),
) -> TideReport:
    """The report of the week up to ``now`` on the soul's ``cards``;
    ``hebbian_threshold`` is the edge weight that links two cards (recall's association
    threshold); ``people``: the terms of the names of the people talking, which answer
    nothing."""
    rows = store.cards
    since = now - WEEK
    draws = [
        (number, row.cards, row.presented, row.replay_of)
        for number, row in await rows.draws_since(since)
    ]
    judged = await rows.judged()
    pending = [
        {"draw": draw, "card": card}
        for draw, drawn, presented, _ in draws
        if presented
        for card in json.loads(drawn)
        if (draw, card) not in judged
    ]
    together: Counter[tuple[int, int]] = Counter()
    for _, drawn, presented, replay in draws:
        if presented and replay is None:  # a reproduction is no new collision
            together.update(combinations(sorted(set(json.loads(drawn))), 2))
    proteins = _groups(
        {pair: n for pair, n in together.items() if n >= config.together},
        await _hebbian_links(store, hebbian_threshold),
        _joined(cards),
        config.max_members,
    )
    strong = await rows.strong_since(since)
    made = await rows.closures_since(since)
    collisions = [int(shown) for _, _, shown, replay in draws if replay is None]
    presented_count = sum(1 for _, _, shown, _ in draws if shown)
    silence = None if not collisions else round(1 - sum(collisions) / len(collisions), 4)
    report = TideReport(
        since=since,
        until=now,
        draws=len(draws),
        presented=presented_count,
        silence_rate=silence,
        pending_verdicts=pending,
        protein_proposals=proteins,
        # Every card line is read: off the event loop, which serves every soul.
        closure_proposals=await anyio.to_thread.run_sync(closures, cards, config, people),
        strong_approvals=strong,
        complete=not pending,
        closures_made=made,
    )
    markdown = _markdown(report)
    return msgspec.structs.replace(report, markdown=markdown, html=_html(markdown))


def closures(
    cards: Sequence[Card], config: TideConfig, people: frozenset[str] = frozenset()
) -> list[ClosureProposal]:
    """Each open question that a later card's conclusion answers, with the first such
    line (``people``: name terms left out). Lines are found through their terms, so the
    cost follows the lines that share two terms with a question, not every pair of
    cards."""
    postings: dict[str, list[tuple[int, int]]] = {}
    lines: dict[tuple[int, int], Line] = {}
    for card in cards:
        for i, text in enumerate(card.conclusions, 1):
            line = lines[(card.number, i)] = read(text).without(people)
            for term in line.terms:
                postings.setdefault(term, []).append((card.number, i))
    found: list[ClosureProposal] = []
    for card in sorted(cards, key=lambda c: c.number):
        for number, text in card.open_questions:
            question = read(text).without(people)
            hits = Counter(
                at for t in question.terms for at in postings.get(t, ()) if at[0] > card.number
            )
            for at in sorted(at for at, n in hits.items() if n >= 2):
                if covers(question, lines[at], config.answer_overlap):
                    answer = next(c for c in cards if c.number == at[0]).conclusions[at[1] - 1]
                    found.append(ClosureProposal(card.number, number, text, at[0], at[1], answer))
                    break
    return found


async def _hebbian_links(store: SoulStore, threshold: float) -> dict[tuple[int, int], float]:
    """Card pairs whose source events' memories share an edge of at least ``threshold``,
    with the strongest such edge."""
    links: dict[tuple[int, int], float] = {}
    for a, b, weight in await store.cards.links(threshold):
        pair = (min(a, b), max(a, b))
        links[pair] = max(links.get(pair, 0.0), float(weight))
    return links


def _joined(cards: Sequence[Card]) -> set[tuple[int, int]]:
    """Card pairs already joined by a protein: two of its members, or it and a member."""
    pairs: set[tuple[int, int]] = set()
    for card in cards:
        group = sorted({*card.members, card.number}) if card.members else []
        pairs.update(combinations(group, 2))
    return pairs


def _groups(
    drawn: dict[tuple[int, int], int],
    linked: dict[tuple[int, int], float],
    joined: set[tuple[int, int]],
    most: int,
) -> list[ProteinProposal]:
    """Groups in which every two cards are linked, strongest links first: a group takes
    a card only when the card is linked to each of its members and there is room."""
    links = (set(drawn) | set(linked)) - joined
    ordered = sorted(links, key=lambda p: (-drawn.get(p, 0), -linked.get(p, 0.0), p))
    groups: list[list[int]] = []
    member: dict[int, list[int]] = {}
    for a, b in ordered:
        ga, gb = member.get(a), member.get(b)
        if ga is None and gb is None:
            group = [a, b]
            groups.append(group)
            member[a] = member[b] = group
        elif ga is None or gb is None:
            joining, card = (gb, a) if ga is None else (ga, b)
            assert joining is not None
            group = joining
            if len(group) < most and all((min(card, m), max(card, m)) in links for m in group):
                group.append(card)
                member[card] = group
    proposals = []
    for group in groups:
        inside = list(combinations(sorted(group), 2))
        proposals.append(
            ProteinProposal(
                cards=sorted(group),
                drawn_together=max((drawn.get(p, 0) for p in inside), default=0),
                hebbian=max((linked.get(p, 0.0) for p in inside), default=0.0),
            )
        )
    return sorted(proposals, key=lambda p: p.cards)


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
    lines += ["", "## Closure proposals (open questions a later card answers)"]
    lines += [
        f"- card {c.card:04d} question {c.question}: {c.text} — answered by card "
        f"{c.answered_by:04d} line {c.line}: {c.answer}"
        for c in r.closure_proposals
    ] or ["- none"]
    if r.closure_proposals:
        cards = sorted({c.card for c in r.closure_proposals})
        lines += ["", "Apply: " + " ".join(f"--close {n}" for n in cards) + " (soupd tide)"]
    rate = "n/a" if r.silence_rate is None else f"{r.silence_rate:.0%}"
    lines += [
        "",
        "## Settlement",
        f"- draws: {r.draws}, presented: {r.presented}",
        f"- silence rate: {rate}",
        f"- strong approvals: {r.strong_approvals}",
        f"- closures made: {r.closures_made}",
        f"- closures proposed: {len(r.closure_proposals)}",
        "",
        "Proposals only: nothing changes until you act.",
        "",
    ]
    return "\n".join(lines)


def _proposal(p: ProteinProposal) -> str:
    why = []
    if p.drawn_together:
        why.append(f"presented together {p.drawn_together}\u00d7")
    if p.hebbian:
        why.append(f"Hebbian edge {p.hebbian:g}")
    return "- " + " + ".join(f"{n:04d}" for n in p.cards) + f" ({', '.join(why)})"


def _html(markdown: str) -> str:
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Tide</title>"
        "<style>body{font-family:sans-serif;max-width:48em;margin:2em auto}</style>"
        f"</head><body>{to_html(markdown)}</body></html>"
    )
