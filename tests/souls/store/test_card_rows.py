"""The collision room's rows (souls/store/cards.py, souls/store/postgres/cards.py) on
both backends (the fixtures of tests/backends.py): cards stored and read back with
their lines, members, closed questions and when their events happened; numbers never
reused; the ledger of draws as recorded; verdicts once per card and draw; the week's
counts; card pairs linked by Hebbian edges between their events' memories."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import asyncpg

from souls.results import Card
from souls.store.cards import DrawRow, NewCard
from souls.store.changes import Changes
from souls.store.interface import SoulStore
from souls.store.postgres.store import PgStore
from souls.store.store import NewEvent
from souls.text.tokenize import fts_document

T0 = 1_780_000_000.0

Opener = Callable[[], Awaitable[SoulStore]]


def event(i: int) -> NewEvent:
    text = f"we talked about topic {i}"
    return NewEvent(
        ref=f"r{i}", kind="message", channel="chat", sender="ann", group=None, mentioned=False,
        session="s", ts=T0 - 1000 + i, recorded=T0, salience=0.5, text=text,
        doc=fts_document(text),
    )  # fmt: skip


def card(title: str, *, members: tuple[int, ...] = (), memories: tuple[int, ...] = ()) -> NewCard:
    lines = [("conclusion", f"{title} holds"), ("question", f"why {title}?"), ("tag", title)]
    kind = "protein" if members else "card"
    return NewCard(kind, title, "manual", lines, members, memories, T0)


def draw(cards: str, *, presented: bool, created: float, replay_of: int | None = None) -> DrawRow:
    return DrawRow(
        seed=2**62 + 5, topic="ops", cards=cards, wildcard=int(cards.strip("[]").split(",")[-1]),
        presented=presented, criterion="novel" if presented else None,
        verdicts='[{"criterion":"novel"}]', created=created, judge="builtin", n=2,
        exclude="[]", weights='{"1": 1.0}', replay_of=replay_of,
    )  # fmt: skip


async def test_cards_are_stored_and_read_back(store: SoulStore, opener: Opener) -> None:
    ids = await store.append([event(i) for i in range(3)], now=T0)
    rows = store.cards
    assert await rows.load(None) == []
    memory_of = await store.observation_memories(ids)
    first = await rows.add(card("alpha", memories=(memory_of[ids[0]], memory_of[ids[2]])))
    second = await rows.add(card("beta"))
    protein = await rows.add(card("gamma", members=(first, second)))
    assert [first, second, protein] == [1, 2, 3]
    assert await rows.existing([first, protein, 99]) == {first, protein}
    await rows.note(second, "a later note", T0 + 5)
    await rows.close(first, 1, second, 1, "closed question 1", T0 + 7)
    for reader in (rows, (await opener()).cards):
        alpha, beta, gamma = await reader.load(None)
        assert alpha == Card(
            number=1, kind="card", title="alpha", source="manual", created=T0,
            conclusions=["alpha holds"], questions=["why alpha?"], tags=["alpha"],
            notes=["closed question 1"], members=[], strong_approvals=0, last_touched=T0,
            closed=[1], reached=T0 - 1000 + 2,
        )  # fmt: skip
        assert beta.notes == ["a later note"]
        assert beta.last_touched == T0 + 5
        assert beta.reached == T0  # no source events: when it was made
        assert (gamma.kind, gamma.members) == ("protein", [1, 2])
        assert await reader.load(second) == [beta]
        assert await reader.load(42) == []
        assert await reader.line_texts() == [
            "alpha holds", "why alpha?", "beta holds", "why beta?", "gamma holds", "why gamma?"
        ]  # fmt: skip
        assert await reader.closures_since(T0 + 7) == 1
        assert await reader.closures_since(T0 + 8) == 0


async def test_the_ledger_and_verdicts(store: SoulStore) -> None:
    rows = store.cards
    one, two = await rows.add(card("alpha")), await rows.add(card("beta"))
    shown = await rows.add_draw(draw(f"[{one}, {two}]", presented=True, created=T0))
    silent = await rows.add_draw(draw(f"[{two}, {one}]", presented=False, created=T0 + 10))
    again = await rows.add_draw(
        draw(f"[{one}, {two}]", presented=True, created=T0 + 20, replay_of=shown)
    )
    assert [shown, silent, again] == [1, 2, 3]
    recorded = await rows.draw(shown)
    assert recorded == draw(f"[{one}, {two}]", presented=True, created=T0)
    assert await rows.draw(99) is None
    assert [n for n, _ in await rows.draws(2)] == [again, silent]
    assert [n for n, _ in await rows.draws_since(T0 + 10)] == [silent, again]
    assert await rows.presented_before(None) == [
        (shown, '[{"criterion":"novel"}]'), (again, '[{"criterion":"novel"}]')
    ]  # fmt: skip
    assert [n for n, _ in await rows.presented_before(again)] == [shown]
    # Two draws that are no reproduction, one of them silenced.
    assert await rows.silence() == (2, 1)
    assert await rows.add_verdict(shown, one, "strong", 1, T0 + 30) is None
    assert await rows.add_verdict(shown, two, "oppose", None, T0 + 31) is None
    # Once per card and draw: a second verdict changes nothing.
    assert await rows.add_verdict(shown, one, "approve", None, T0 + 32) == "strong"
    assert await rows.judged() == {(shown, one), (shown, two)}
    assert await rows.verdict_counts() == {"strong": 1, "oppose": 1}
    assert await rows.strong_since(T0 + 30) == 1
    assert await rows.strong_since(T0 + 31) == 0
    alpha, beta = await rows.load(None)
    assert (alpha.strong_approvals, alpha.last_touched) == (1, T0 + 30)
    assert beta.strong_approvals == 0


async def test_cards_linked_by_edges_between_their_events(store: SoulStore) -> None:
    ids = await store.append([event(i) for i in range(4)], now=T0)
    memory_of = await store.observation_memories(ids)
    m = [memory_of[e] for e in ids]
    rows = store.cards
    first = await rows.add(card("alpha", memories=(m[0],)))
    second = await rows.add(card("beta", memories=(m[1], m[2])))
    third = await rows.add(card("gamma", memories=(m[3],)))
    changes = Changes()
    changes.edges[(m[0], m[1])] += 4
    changes.edges[(m[0], m[2])] += 5
    changes.edges[(m[2], m[3])] += 1
    await store.flush(changes, now=T0 + 1)
    assert await rows.links(3.0) == [(first, second, 5.0)]
    assert await rows.links(1.0) == [(first, second, 5.0), (second, third, 1.0)]


async def test_card_numbers_are_each_souls_own_on_postgres(pg_dsn: str) -> None:
    # (On SQLite each soul has a database file of its own.)
    pool = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=2)
    try:
        alpha = await PgStore.open(pool, "alpha")
        beta = await PgStore.open(pool, "beta")
        assert await alpha.cards.add(card("one")) == 1
        assert await alpha.cards.add(card("two")) == 2
        assert await beta.cards.add(card("first")) == 1
        assert [c.title for c in await beta.cards.load(None)] == ["first"]
        assert await beta.cards.existing([2]) == set()
        assert await beta.cards.add_draw(draw("[1, 1]", presented=True, created=T0)) == 1
        assert await alpha.cards.draws(5) == []
        assert await alpha.cards.judged() == set()
    finally:
        await pool.close()
