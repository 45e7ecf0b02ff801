"""A collision: draw cards by lightning, judge them against today's topic, record it.

Every draw goes into the ledger — silenced ones too — with its seed (so it can be
reproduced), its cards, the topic, each gate verdict with its reason, and whether it
was presented. Only a collision that passes the gate is presented; a silent one leaves
nothing but its ledger row.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence

import anyio
import msgspec

from souls.collision.cards import Card, CardStore
from souls.collision.judge import Judge
from souls.collision.lightning import LightningConfig, PoolCard, draw
from souls.collision.presentation_gate import GateCard
from souls.store.store import Store

__all__ = ["VERDICTS", "Collider", "Collision", "VerdictRow", "pool_card"]

VERDICTS = ("strong", "approve", "neutral", "oppose")


class VerdictRow(msgspec.Struct, frozen=True):
    criterion: str
    passed: bool
    reason: str
    evidence: list[int]


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


class Collider:
    def __init__(self, name: str, store: Store, cards: CardStore) -> None:
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
    ) -> Collision:
        cards = {card.number: card for card in await self._cards.all()}
        pool = [pool_card(card) for card in cards.values()]
        drawn = draw(pool, now, lightning, seed=seed, exclude=exclude, n=n)
        picked = [cards[number] for number in drawn.cards]
        judgement = await judge(topic, [_gate_card(card) for card in picked])
        result = judgement.result
        verdicts = [
            VerdictRow(v.criterion, v.passed, v.reason, list(v.evidence)) for v in result.verdicts
        ]
        spark = _spark(result.criterion, picked, verdicts) if result.passed else ""
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                cursor = await db.execute(
                    "INSERT INTO draws (seed, topic, cards, wildcard, presented, criterion,"
                    " verdicts, created, judge) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        drawn.seed,
                        topic,
                        json.dumps(drawn.cards),
                        drawn.wildcard,
                        int(result.passed),
                        result.criterion,
                        msgspec.json.encode(verdicts).decode(),
                        now,
                        judgement.judge,
                    ),
                )
        assert cursor.lastrowid is not None
        return Collision(
            draw=cursor.lastrowid,
            seed=drawn.seed,
            topic=topic,
            cards=drawn.cards,
            wildcard=drawn.wildcard,
            presented=result.passed,
            criterion=result.criterion,
            verdicts=verdicts,
            reproduce=_reproduce(self._name, topic, drawn.seed, len(drawn.cards), exclude),
            created=now,
            spark=spark,
            judge=judgement.judge,
        )

    async def verdict(
        self, draw: int, card: int, verdict: str, line: int | None, now: float
    ) -> dict[str, object]:
        """Record the user's verdict on one card of a presented draw. A strong approval
        must point at a line of the card (its conclusions, numbered from 1) and
        multiplies the card's lightning weight by ``hebb``. Raises ValueError naming
        what is wrong."""
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}")
        rows = list(
            await self._store.db.execute_fetchall(
                "SELECT cards, presented FROM draws WHERE id = ?", (draw,)
            )
        )
        if not rows:
            raise ValueError(f"no draw {draw}; see `soupd ledger`")
        cards, presented = json.loads(rows[0][0]), bool(rows[0][1])
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
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                done = list(
                    await db.execute_fetchall(
                        "SELECT verdict FROM verdicts WHERE draw = ? AND card = ?", (draw, card)
                    )
                )
                if done:
                    raise ValueError(
                        f"card {card} already has a verdict ({done[0][0]}) for draw {draw}"
                    )
                await db.execute(
                    "INSERT INTO verdicts (draw, card, verdict, line, created)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (draw, card, verdict, line, now),
                )
                if verdict == "strong":
                    await db.execute(
                        "UPDATE cards SET strong_approvals = strong_approvals + 1,"
                        " last_touched = ? WHERE number = ?",
                        (now, card),
                    )
        return {"draw": draw, "card": card, "verdict": verdict, "line": line}

    async def ledger(self, limit: int) -> list[Collision]:
        rows = await self._store.db.execute_fetchall(
            "SELECT id, seed, topic, cards, wildcard, presented, criterion, verdicts, created,"
            " judge FROM draws ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [
            Collision(
                draw=row[0],
                seed=row[1],
                topic=row[2],
                cards=json.loads(row[3]),
                wildcard=row[4],
                presented=bool(row[5]),
                criterion=row[6],
                verdicts=msgspec.json.decode(row[7], type=list[VerdictRow]),
                reproduce=_reproduce(self._name, row[2], row[1], len(json.loads(row[3])), ()),
                created=row[8],
                judge=row[9],
            )
            for row in rows
        ]

    async def verdict_mix(self) -> dict[str, int]:
        """How many verdicts of each kind the user gave."""
        rows = await self._store.db.execute_fetchall(
            "SELECT verdict, count(*) FROM verdicts GROUP BY verdict"
        )
        counts = {verdict: int(n) for verdict, n in rows}
        return {verdict: counts.get(verdict, 0) for verdict in VERDICTS}

    async def silence_rate(self) -> float | None:
        rows = list(
            await self._store.db.execute_fetchall("SELECT count(*), sum(1 - presented) FROM draws")
        )
        total, silent = rows[0]
        return None if not total else round(silent / total, 4)


def pool_card(card: Card) -> PoolCard:
    """The card as the lightning sampler sees it."""
    month = dt.datetime.fromtimestamp(card.created, dt.UTC).strftime("%Y-%m")
    return PoolCard(
        number=card.number,
        path=f"{card.source}/{month}/{card.number:04d}",
        strong_approvals=card.strong_approvals,
        closed=not card.questions,
        last_touched=card.last_touched,
        members=frozenset(card.members),
    )


def _gate_card(card: Card) -> GateCard:
    return GateCard(
        card.number,
        tuple(card.conclusions),
        tuple(card.questions),
        tuple(card.tags),
        card.created,
    )


def _spark(criterion: str | None, cards: list[Card], verdicts: list[VerdictRow]) -> str:
    reason = next((v.reason for v in verdicts if v.passed), "")
    lines = [f"({criterion}) {reason}"]
    for card in cards:
        lines.append(f"- card {card.number:04d}: " + "; ".join(card.conclusions[:2]))
    return "\n".join(lines)


def _reproduce(soul: str, topic: str, seed: int, n: int, exclude: Sequence[str]) -> str:
    parts = ["soupd", "lightning", soul, json.dumps(topic), "--seed", str(seed), "--n", str(n)]
    parts += [arg for pattern in exclude for arg in ("--exclude", json.dumps(pattern))]
    return " ".join(parts)
