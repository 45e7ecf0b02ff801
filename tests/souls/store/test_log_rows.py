"""The logs a forget scrubs (souls/store/logs.py, souls/store/postgres/logs.py) on both
backends (the fixtures of tests/backends.py), with souls/actor/scrub.py deciding what
quotes a forgotten text: the draws, assemblies' queries, gaps, ``soul_state`` values
and goals read, rewritten as the scrub says and read back by a store opened again;
nothing of a scrub that fails; and on PostgreSQL, one soul's logs kept from another's."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import asyncpg
import pytest

from souls.actor.scrub import needles, scrub
from souls.store.cards import DrawRow
from souls.store.changes import AssemblyRow, Changes, GoalRow
from souls.store.interface import SoulStore
from souls.store.logs import FORGOTTEN, Logs, Scrub
from souls.store.postgres.store import PgStore

T0 = 1_780_000_000.0
SECRET = "my locker code is behind the blue poster"
Opener = Callable[[], Awaitable[SoulStore]]


def draw(topic: str, cards: str, reason: str) -> DrawRow:
    verdicts = json.dumps([{"criterion": "novel", "reason": reason, "lines": [{"text": reason}]}])
    return DrawRow(
        seed=7, topic=topic, cards=cards, wildcard=int(cards.strip("[]").split(",")[-1]),
        presented=True, criterion="novel", verdicts=verdicts, created=T0, judge="builtin", n=2,
        exclude="[]", weights=None, replay_of=None,
    )  # fmt: skip


def goal(goal_id: int, statement: str, notes: list[str]) -> GoalRow:
    progress = json.dumps([{"at": T0, "text": note} for note in notes])
    return GoalRow(
        goal_id, "ann", statement, "health", 3, '["a run"]', "active", progress, T0, T0, None
    )


def asked(query: str | None) -> AssemblyRow:
    return AssemblyRow("h", None, query, "retrieval", 10, 0, False, "[]", "[]")


async def seed(store: SoulStore) -> None:
    for row in (
        draw("ops", "[1, 2]", "fine"),
        draw(SECRET, "[1, 2]", "fine"),
        draw("ops", "[3, 4]", "a redacted card's line"),
        draw("ops", "[1, 2]", f"as said: {SECRET}"),
    ):
        await store.cards.add_draw(row)
    changes = Changes(
        assemblies=[asked("what now?"), asked(None), asked(f"where is {SECRET}?")],
        gaps=[("lockers", "nothing known"), ("codes", SECRET)],
        state={"spark": f"a spark: {SECRET}", "mood": "calm"},
    )
    await store.flush(changes, T0)
    await store.knowledge.write_goals(
        [
            goal(1, "run a half marathon", ["started", f"told: {SECRET}"]),
            goal(2, SECRET + " (this year)", []),
            goal(3, "sleep more", ["went to bed early"]),
        ]
    )


async def test_the_logs_quoting_a_forgotten_text_are_rewritten(
    store: SoulStore, opener: Opener
) -> None:
    await seed(store)
    logs = await store.logs()
    assert [d[0] for d in logs.draws] == [1, 2, 3, 4]
    assert [q for _, q in logs.queries] == ["what now?", f"where is {SECRET}?"]
    assert [(t, d) for _, t, d in logs.gaps] == [("lockers", "nothing known"), ("codes", SECRET)]
    assert logs.state == {"mood": "calm", "spark": f"a spark: {SECRET}"}
    assert [g[0] for g in logs.goals] == [1, 2, 3]
    cut = scrub(logs, needles([SECRET.upper()]), redacted_cards=[4])
    assert (cut.logs, cut.goals) == (6, 2)
    await store.scrub(cut)
    for reader in (store, await opener()):
        after = await reader.logs()
        topics = [topic for _, topic, _, _ in after.draws]
        assert topics == ["ops", FORGOTTEN, "ops", "ops"]
        reasons = [json.loads(verdicts)[0]["reason"] for _, _, _, verdicts in after.draws]
        assert reasons == ["fine", "fine", FORGOTTEN, FORGOTTEN]
        (one,) = json.loads(after.draws[2][3])[0]["lines"]
        assert one == {"text": FORGOTTEN}
        assert [q for _, q in after.queries] == ["what now?", FORGOTTEN]
        assert await reader.gaps(10) == [("lockers", "nothing known")]
        assert await reader.soul_state() == {"mood": "calm"}
        goals = await reader.knowledge.goals()
        assert [(g.id, [n["text"] for n in json.loads(g.progress)]) for g in goals] == [
            (1, ["started"]),
            (3, ["went to bed early"]),
        ]
        assert (await reader.cards.draw(2)) is not None
    # Nothing left to scrub: the same needles find nothing.
    again = scrub(await store.logs(), needles([SECRET]), redacted_cards=[])
    assert again == Scrub()


async def test_a_scrub_that_fails_changes_nothing(store: SoulStore) -> None:
    await seed(store)
    before = await store.logs()
    cut = scrub(before, needles([SECRET]), redacted_cards=[])
    assert cut.gaps
    assert cut.state
    # Its last draw's verdicts cannot be stored (NOT NULL): the gaps, values and goals
    # it deletes stay.
    broken = Scrub(
        draws=[*cut.draws, (1, "ops", None)],  # type: ignore[list-item]
        queries=cut.queries,
        gaps=cut.gaps,
        state=cut.state,
        goals_gone=cut.goals_gone,
        notes=cut.notes,
    )
    with pytest.raises(Exception, match=r"(?i)not[ -]null"):
        await store.scrub(broken)
    assert await store.logs() == before


async def test_each_souls_logs_are_its_own_on_postgres(pg_dsn: str) -> None:
    pool = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=2)
    try:
        alpha = await PgStore.open(pool, "alpha")
        beta = await PgStore.open(pool, "beta")
        for soul in (alpha, beta):
            await seed(soul)
        kept = await beta.logs()
        await alpha.scrub(scrub(await alpha.logs(), needles([SECRET]), redacted_cards=[4]))
        assert await beta.logs() == kept
        assert len((await alpha.logs()).gaps) == 1
        assert await beta.logs() != await alpha.logs()
        empty = Logs(draws=[], queries=[], gaps=[], state={}, goals=[])
        assert await (await PgStore.open(pool, "gamma")).logs() == empty
    finally:
        await pool.close()
