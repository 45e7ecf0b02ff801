"""A collision: draw cards by lightning, judge them against today's topic, record it.

Every draw goes into the ledger — silenced ones too — with its cards, the topic, each
gate verdict with its reason and the card lines it rests on, and whether it was
presented. Only a collision that passes the gate is presented; a silent one leaves
nothing but its ledger row. An increment is shown once: a verdict resting on the same
criterion and card lines as an earlier presentation is no increment any more.

A ledger row alone reproduces its draw: it holds the seed, the number of cards asked
for, the exclusions and every candidate's weight, so ``as_of`` (``soupd lightning SOUL
--as-of N``) draws the same cards again whatever verdicts, closures or weeks changed
the weights since. A reproduction is recorded too (``replay_of``), but the silence
rate counts each collision once.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Sequence

import msgspec

from souls.collision.cards import Card, CardStore
from souls.collision.judge import Judge
from souls.collision.lightning import Draw, LightningConfig, PoolCard, draw, redraw
from souls.collision.lines import read
from souls.collision.presentation_gate import GateCard, Verdict
from souls.store.cards import DrawRow
from souls.store.interface import SoulStore
from supervisor.errors import MissingItem

__all__ = ["VERDICTS", "Collider", "Collision", "LineRow", "VerdictRow", "pool_card"]

VERDICTS = ("strong", "approve", "neutral", "oppose")


class LineRow(msgspec.Struct, frozen=True):
    """A card line a gate verdict rests on."""

    card: int
    kind: str  # line (a conclusion) | question (an open question)
    number: int  # from 1
    text: str


class VerdictRow(msgspec.Struct, frozen=True):
    criterion: str
    passed: bool
    reason: str
    evidence: list[int]
    lines: list[LineRow] = msgspec.field(default_factory=list)  # what meets it, if passed


class Collision(msgspec.Struct, frozen=True):
    draw: int  # ledger id
    seed: int
    topic: str
    cards: list[int]
    wildcard: int
    presented: bool
    criterion: str | None
    verdicts: list[VerdictRow]
    reproduce: str  # the command that draws the same cards again
    created: float
    spark: str = ""  # what the context shows when presented
    judge: str = "builtin"  # who judged it: builtin | llm
    n: int | None = None  # cards asked for (None: recorded before 0012)
    exclude: list[str] = msgspec.field(default_factory=list)
    replay_of: int | None = None  # the draw this one reproduces
    # The drawn cards' weights as drawn (every candidate's is in the ledger's row).
    weights: dict[int, float] = msgspec.field(default_factory=dict)


class Collider:
    def __init__(self, name: str, store: SoulStore, cards: CardStore) -> None:
        self._name = name
        self._store = store
        self._cards = cards

    async def collide(
        self,
        topic: str,
        now: float,
        lightning: LightningConfig,
        judge: Judge,
        *,
        seed: int | None = None,
        n: int | None = None,
        exclude: Sequence[str] = (),
        as_of: int | None = None,
    ) -> Collision:
        """Draw, judge and record. ``as_of``: reproduce that ledger row's draw (its
        topic, seed, size, exclusions and weights); ``seed``, ``n`` and ``exclude``
        may not be given with it (ValueError)."""
        cards = {card.number: card for card in await self._cards.all()}
        pool = [pool_card(card) for card in cards.values()]
        size = lightning.n if n is None else n
        if as_of is None:
            drawn = draw(pool, now, lightning, seed=seed, exclude=exclude, n=size)
        else:
            if seed is not None or n is not None or exclude:
                raise ValueError("as_of reproduces a draw as recorded: give no seed, n or exclude")
            topic, size, exclude, drawn = await self._redraw(as_of, topic, pool)
        picked = [cards[number] for number in drawn.cards]
        points = _points(cards.values())
        gated = [_gate_card(card, points) for card in picked]
        judgement = await judge(topic, gated, await self.people())
        shown = await self._shown(before=as_of)
        verdicts = [_fresh(v, shown) for v in judgement.result.verdicts]
        criterion = next((v.criterion for v in verdicts if v.passed), None)
        passed = criterion is not None
        spark = _spark(criterion, verdicts) if passed else ""
        weights = {str(number): w for number, w in drawn.weights.items()}
        number = await self._store.cards.add_draw(
            DrawRow(
                seed=drawn.seed,
                topic=topic,
                cards=json.dumps(drawn.cards),
                wildcard=drawn.wildcard,
                presented=passed,
                criterion=criterion,
                verdicts=msgspec.json.encode(verdicts).decode(),
                created=now,
                judge=judgement.judge,
                n=size,
                exclude=json.dumps(list(exclude)),
                weights=json.dumps(weights),
                replay_of=as_of,
            )
        )
        return Collision(
            draw=number,
            seed=drawn.seed,
            topic=topic,
            cards=drawn.cards,
            wildcard=drawn.wildcard,
            presented=passed,
            criterion=criterion,
            verdicts=verdicts,
            reproduce=_reproduce(self._name, number),
            created=now,
            spark=spark,
            judge=judgement.judge,
            n=size,
            exclude=list(exclude),
            replay_of=as_of,
            weights={number: drawn.weights[number] for number in drawn.cards},
        )

    async def _shown(self, before: int | None) -> dict[tuple[object, ...], int]:
        """What earlier presentations showed, each with the draw that first did: the
        criterion and the card lines it rested on (of the draws before ``before``, when a
        draw is reproduced as it was)."""
        shown: dict[tuple[object, ...], int] = {}
        for number, recorded in await self._store.cards.presented_before(before):
            for v in msgspec.json.decode(recorded, type=list[VerdictRow]):
                if v.passed and v.lines:
                    shown.setdefault(_shows(v), number)
        return shown

    async def _redraw(
        self, number: int, topic: str, pool: list[PoolCard]
    ) -> tuple[str, int, list[str], Draw]:
        """Draw ``number`` again from its ledger row: (topic, n, exclude, draw)."""
        row = await self._store.cards.draw(number)
        if row is None:
            raise MissingItem(f"no draw {number}; see `soupd ledger`")
        recorded, seed, size, exclude, weights, cards = (
            row.topic, row.seed, row.n, row.exclude, row.weights, row.cards
        )  # fmt: skip
        if weights is None or size is None:
            raise ValueError(
                f"draw {number} was recorded before draws kept their weights; "
                f"--seed {seed} --n {len(json.loads(cards))} draws the same cards only while "
                "no weight has changed since"
            )
        if topic and topic != recorded:
            raise ValueError(f"draw {number} was drawn against {recorded!r}; give no topic")
        drawn = redraw(pool, {int(k): float(w) for k, w in json.loads(weights).items()}, seed, size)
        if drawn.cards != json.loads(cards):  # cannot happen: proteins never change members
            raise ValueError(f"draw {number} cannot be reproduced: its pool changed shape")
        return recorded, size, list(json.loads(exclude)), drawn

    async def people(self) -> frozenset[str]:
        """The terms of the names of everyone the soul heard from ("Maria": maria):
        what a collision, a card's tags and a closure never count as a subject."""
        return frozenset(t for name in await self._store.speakers() for t in read(name).terms)

    async def verdict(
        self, draw: int, card: int, verdict: str, line: int | None, now: float
    ) -> dict[str, object]:
        """Record the user's verdict on one card of a presented draw. A strong approval
        must point at a line of the card (its conclusions, numbered from 1) and
        multiplies the card's lightning weight by ``hebb``. Raises ValueError naming
        what is wrong."""
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}")
        row = await self._store.cards.draw(draw)
        if row is None:
            raise MissingItem(f"no draw {draw}; see `soupd ledger`")
        cards, presented = json.loads(row.cards), row.presented
        if not presented:
            raise ValueError(f"draw {draw} was silent: nothing was presented to judge")
        if card not in cards:
            raise ValueError(f"card {card} is not in draw {draw} (it drew {cards})")
        judged = await self._cards.get(card)
        if judged is None:
            raise ValueError(f"card {card} no longer exists")
        if verdict == "strong":
            if line is None:
                raise ValueError("a strong approval must point at a line of the card: add --line N")
            if not 1 <= line <= len(judged.conclusions):
                raise ValueError(
                    f"card {card} has {len(judged.conclusions)} conclusion lines; "
                    f"--line must be between 1 and {len(judged.conclusions)}"
                )
        done = await self._store.cards.add_verdict(draw, card, verdict, line, now)
        if done is not None:
            raise ValueError(f"card {card} already has a verdict ({done}) for draw {draw}")
        return {"draw": draw, "card": card, "verdict": verdict, "line": line}

    async def ledger(self, limit: int) -> list[Collision]:
        return [
            Collision(
                draw=number,
                seed=row.seed,
                topic=row.topic,
                cards=json.loads(row.cards),
                wildcard=row.wildcard,
                presented=row.presented,
                criterion=row.criterion,
                verdicts=msgspec.json.decode(row.verdicts, type=list[VerdictRow]),
                reproduce=_reproduce(self._name, number),
                created=row.created,
                judge=row.judge,
                n=row.n,
                exclude=json.loads(row.exclude),
                replay_of=row.replay_of,
                weights=_drawn_weights(json.loads(row.cards), row.weights),
            )
            for number, row in await self._store.cards.draws(limit)
        ]

    async def verdict_mix(self) -> dict[str, int]:
        """How many verdicts of each kind the user gave."""
        counts = await self._store.cards.verdict_counts()
        return {verdict: counts.get(verdict, 0) for verdict in VERDICTS}

    async def silence_rate(self) -> float | None:
        """Share of collisions silenced (a reproduction is no new collision)."""
        total, silent = await self._store.cards.silence()
        return None if not total else round(silent / total, 4)


def pool_card(card: Card) -> PoolCard:
    """The card as the lightning sampler sees it."""
    month = dt.datetime.fromtimestamp(card.created, dt.UTC).strftime("%Y-%m")
    return PoolCard(
        number=card.number,
        path=f"{card.source}/{month}/{card.number:04d}",
        strong_approvals=card.strong_approvals,
        closed=not card.open_questions,
        last_touched=card.last_touched,
        members=frozenset(card.members),
    )


def _points(cards: Iterable[Card]) -> dict[frozenset[str], str]:
    """The deck's connection points: every card's tags, as terms, with their label."""
    points: dict[frozenset[str], str] = {}
    for card in cards:
        for tag in card.tags:
            terms = read(tag).terms
            if terms:
                points.setdefault(terms, tag)
    return points


def _gate_card(card: Card, points: dict[frozenset[str], str]) -> GateCard:
    """The card as the gate judges it: its open questions only, and as connection points
    its tags and every other tag of the deck that one of its conclusions names."""
    said = frozenset().union(*(read(line).terms for line in card.conclusions))
    own = {read(tag).terms for tag in card.tags}
    named = [label for terms, label in points.items() if terms <= said and terms not in own]
    return GateCard(
        card.number,
        tuple(card.conclusions),
        tuple(question for _, question in card.open_questions),
        (*card.tags, *named),
        card.reached,
        tuple(number for number, _ in card.open_questions),
    )


def _shows(verdict: VerdictRow) -> tuple[object, ...]:
    """What a passed verdict shows: its criterion and the card lines it rests on."""
    lines = sorted((line.card, line.kind, line.number) for line in verdict.lines)
    return (verdict.criterion, *lines)


def _fresh(verdict: Verdict, shown: dict[tuple[object, ...], int]) -> VerdictRow:
    """The verdict as the ledger records it; an increment shown before is none now."""
    row = VerdictRow(
        verdict.criterion,
        verdict.passed,
        verdict.reason,
        list(verdict.evidence),
        [LineRow(c.card, c.kind, c.number, c.text) for c in verdict.lines],
    )
    earlier = shown.get(_shows(row)) if row.passed and row.lines else None
    if earlier is None:
        return row
    body = row.reason.split(": ", 1)[-1]
    reason = f"fails (already presented in draw {earlier}): {body}"
    return msgspec.structs.replace(row, passed=False, reason=reason, lines=[])


def _spark(criterion: str | None, verdicts: list[VerdictRow]) -> str:
    """What the context shows: the criterion, why it passed, and the lines that meet it."""
    passed = next((v for v in verdicts if v.passed), None)
    if passed is None:
        return ""
    lines = [f"({criterion}) {passed.reason}"]
    for cited in passed.lines:
        what = "open question" if cited.kind == "question" else "line"
        lines.append(f"- card {cited.card:04d} {what} {cited.number}: {cited.text}")
    return "\n".join(lines)


def _drawn_weights(cards: list[int], recorded: str | None) -> dict[int, float]:
    weights: dict[str, float] = json.loads(recorded) if recorded else {}
    return {card: weights[str(card)] for card in cards if str(card) in weights}


def _reproduce(soul: str, draw: int) -> str:
    return f"soupd lightning {soul} --as-of {draw}"
