"""The knowledge room's rows (souls/store/knowledge.py, souls/store/postgres/knowledge.py)
on both backends (the fixtures of tests/backends.py): goals stored, replaced, deleted
and read back byte for byte; the questions and goals of a turn written with its events
(their source events resolved); the claims the room reads and the entries the user
states; the contexts assembled; what the memory map reads; and on PostgreSQL, one
soul's rows kept from another's."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import asyncpg
import pytest

from souls.store.changes import (
    AssemblyRow,
    Changes,
    ClaimClosing,
    GoalRow,
    NewClaim,
    NewQuestion,
    Settlement,
    SummaryVersion,
)
from souls.store.interface import SoulStore
from souls.store.knowledge import LoggedAssembly, Question
from souls.store.postgres.store import PgStore
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document

T0 = 1_780_000_000.0  # 2026-05-28 (UTC)
DAY = 86_400.0

Opener = Callable[[], Awaitable[SoulStore]]


@pytest.fixture
async def other(backend: str | None, tmp_path: Path) -> AsyncIterator[SoulStore]:
    """A second soul beside the ``store`` fixture's: on PostgreSQL ``beta`` in the same
    database, on SQLite a file of its own."""
    if backend is None:
        beta: SoulStore = await Store.open(tmp_path / "beta.db")
        yield beta
        await beta.close()
        return
    pool = await asyncpg.create_pool(backend, min_size=1, max_size=2)
    try:
        beta = await PgStore.open(pool, "beta")
        yield beta
        await beta.close()
    finally:
        await pool.close()


def event(i: int, *, ts: float | None = None, session: str | None = "s1") -> NewEvent:
    text = f"message {i} about the garden"
    when = T0 + i if ts is None else ts
    return NewEvent(
        ref=f"r{i}", kind="message", channel="web", sender="ann", group=None,
        mentioned=i % 2 == 1, session=session, ts=when, recorded=when, salience=0.5,
        text=text, doc=fts_document(text),
    )  # fmt: skip


def goal(
    goal_id: int, statement: str, *, state: str = "active", event_id: int | None = None
) -> GoalRow:
    return GoalRow(
        goal_id, "ann", statement, "health", 3, '["a run", "the park"]', state,
        '[{"at":1780000000.0,"text":"started"}]', T0, T0 + goal_id, event_id,
    )  # fmt: skip


def claim(
    claim_id: int, subject: str, slot: str | None, value: str, *, state: str = "active",
    event_id: int | None = None,
) -> NewClaim:  # fmt: skip
    return NewClaim(
        claim_id, "fact", subject, slot, value, "", event_id, "user", "high", state,
        T0, None, T0, None, None, None,
    )  # fmt: skip


def assembly(hash_: str, session: str | None, recalled: int) -> AssemblyRow:
    return AssemblyRow(hash_, session, "what now?", "retrieval", 120, recalled, False, "[]", "[]")


async def test_goals_are_replaced_deleted_and_read_back(store: SoulStore, opener: Opener) -> None:
    rows = store.knowledge
    assert await rows.goals() == []
    await rows.write_goals([goal(2, "run a marathon"), goal(1, "sleep more")])
    await rows.write_goals([goal(2, "run a half marathon", state="paused"), goal(3, "read")])
    await rows.write_goals([], gone=[1])
    for reader in (store, await opener()):
        assert await reader.knowledge.goals() == [
            goal(2, "run a half marathon", state="paused"), goal(3, "read")
        ]  # fmt: skip
    await rows.write_goals([goal(4, "swim")], gone=[2, 3])
    assert await rows.goals() == [goal(4, "swim")]


async def test_a_turns_questions_and_goals_go_with_its_events(
    store: SoulStore, opener: Opener, other: SoulStore
) -> None:
    rows = store.knowledge
    assert await rows.next_id("questions") == 1
    changes = Changes(
        questions=[
            NewQuestion(1, -1, "ann", "s1", "where is the key?", T0),
            NewQuestion(2, -2, "ann", "s1", "who called?", T0 + 1),
            NewQuestion(3, -2, None, None, "why?", T0 + 1),
        ],
        # Asked and settled by the same append: the insert comes first.
        settlements=[Settlement(2, "answered", -3)],
        goals=[
            goal(1, "learn the cello", event_id=-2),
            goal(2, "stated", event_id=None),
            goal(3, "paint", event_id=-3),
        ],
    )
    ids = await store.append([event(0), event(1), event(2)], changes, now=T0 + 5)
    await store.flush(Changes(settlements=[Settlement(1, "unanswered", ids[2])]), T0 + 9)
    for reader in (store, await opener()):
        found = reader.knowledge
        assert await found.next_id("questions") == 4
        assert await found.questions(state="answered") == [
            Question(2, ids[1], "ann", "s1", "who called?", T0 + 1, "answered", T0 + 5, ids[2])
        ]
        assert await found.questions(ids=[3, 1]) == [
            Question(1, ids[0], "ann", "s1", "where is the key?", T0, "unanswered", T0 + 9, ids[2]),
            Question(3, ids[1], None, None, "why?", T0 + 1, "pending", None, None),
        ]
        assert [q.id for q in await found.questions()] == [1]  # unanswered by default
        assert await found.pending(10) == [
            Question(3, ids[1], None, None, "why?", T0 + 1, "pending", None, None)
        ]
        assert await found.goals() == [
            goal(1, "learn the cello", event_id=ids[1]), goal(2, "stated"),
            goal(3, "paint", event_id=ids[2]),
        ]  # fmt: skip
    # Another soul's goal read from its event of the same id as ids[1].
    theirs = await other.append([event(0), event(1)], Changes(), now=T0)
    assert theirs[1] == ids[1]
    await other.knowledge.write_goals([goal(1, "theirs", event_id=theirs[1])])
    # A goal read from an event that is forgotten keeps no dangling id; the others
    # keep theirs.
    await store.forget([ids[1]])
    for reader in (store, await opener()):
        assert [g.event_id for g in await reader.knowledge.goals()] == [None, None, ids[2]]
    assert await other.knowledge.goals() == [goal(1, "theirs", event_id=theirs[1])]


async def test_the_latest_pending_questions_oldest_first(store: SoulStore) -> None:
    asked = [NewQuestion(i, -1, "ann", None, f"question {i}?", T0 + i) for i in range(1, 6)]
    await store.append([event(0)], Changes(questions=asked), now=T0)
    assert [q.id for q in await store.knowledge.pending(3)] == [3, 4, 5]
    assert [q.id for q in await store.knowledge.pending(10)] == [1, 2, 3, 4, 5]


async def test_claims_read_by_state_slot_and_id(store: SoulStore, opener: Opener) -> None:
    rows = store.knowledge
    assert await rows.next_id("claims") == 1
    ids = await store.append(
        [event(0)],
        Changes(
            claims=[
                claim(1, "ann", "city", "Lyon", event_id=-1),
                claim(2, "ann", "city", "Paris", state="deferred"),
                claim(3, "ann", "pet_name", "Mochi", state="superseded"),
                claim(4, "bob", "city", "Oslo"),
                claim(5, "ann", None, "likes tea"),
            ]
        ),
        now=T0,
    )
    for reader in (store, await opener()):
        found = reader.knowledge
        assert [c.id for c in await found.claims()] == [1, 2, 4, 5]
        assert [c.id for c in await found.claims(every=True)] == [1, 2, 3, 4, 5]
        assert await found.claims(ids=[3, 1]) == [
            claim(1, "ann", "city", "Lyon", event_id=ids[0]),
            claim(3, "ann", "pet_name", "Mochi", state="superseded"),
        ]
        assert [c.id for c in await found.slot_claims("ann", ["city", "pet_name"])] == [1, 2, 3]
        assert [c.id for c in await found.slot_claims("ann", ["city"])] == [1, 2]
        assert await found.slot_claims("eve", ["city"]) == []
        assert await found.next_id("claims") == 6


async def test_a_stated_entry_its_closings_and_state(store: SoulStore, opener: Opener) -> None:
    rows = store.knowledge
    await store.append([], Changes(claims=[claim(7, "ann", "city", "Lyon")]), now=T0)
    stated = await rows.state_entry(
        claim(0, "ann", "city", "Paris"),
        [ClaimClosing(7, "superseded", T0 + 1, T0 + 2)],
        {"fidelity_ai": "0.9"},
    )
    assert stated == 8  # the next id, whatever the claim's own
    assert await rows.state_entry(None, [ClaimClosing(8, "retracted", None, T0 + 3)], {}) is None
    for reader in (store, await opener()):
        old, new = await reader.knowledge.claims(every=True)
        assert (old.state, old.valid_to, old.recorded_to) == ("superseded", T0 + 1, T0 + 2)
        assert (new.id, new.value, new.state) == (8, "Paris", "retracted")
        assert (new.valid_to, new.recorded_to) == (None, T0 + 3)  # None keeps valid_to
        assert (await reader.soul_state())["fidelity_ai"] == "0.9"


async def test_the_contexts_assembled(store: SoulStore, opener: Opener) -> None:
    await store.flush(Changes(assemblies=[assembly("abc123", "s1", 40)]), T0)
    await store.flush(
        Changes(assemblies=[assembly("abd456", "s1", 2), assembly("ff00", None, 7)]), T0 + 10
    )
    for reader in (store, await opener()):
        rows = reader.knowledge
        assert await rows.spent("s1", T0) == 42
        assert await rows.spent("s1", T0 + 1) == 2
        assert await rows.spent(None, T0) == 7
        assert await rows.spent("s2", T0) == 0
        assert await rows.assembly("ab") == LoggedAssembly(T0 + 10, assembly("abd456", "s1", 2))
        assert await rows.assembly("ABC") == LoggedAssembly(T0, assembly("abc123", "s1", 40))
        assert await rows.assembly(None) == LoggedAssembly(T0 + 10, assembly("ff00", None, 7))
        assert await rows.assembly("9") is None


async def test_an_assembly_is_found_by_its_hash_prefix_alone(
    store: SoulStore, opener: Opener
) -> None:
    """A prefix means its characters and nothing else (no LIKE, no escape), ASCII case
    ignored, the same on both backends."""
    await store.flush(Changes(assemblies=[assembly("abc123", "s1", 1)]), T0)
    await store.flush(Changes(assemblies=[assembly("a%_\\9", "s1", 2)]), T0 + 1)
    await store.flush(Changes(assemblies=[assembly("é0", "s1", 3)]), T0 + 2)
    for reader in (store, await opener()):
        rows = reader.knowledge
        for wildcard in ("%", "_", "a_c", "%c", "ab\\c", "ab\\", "\\a", "ab_", "abc1234"):
            assert await rows.assembly(wildcard) is None, wildcard
        for prefix in ("AbC", "ABC123", "aBc1"):
            assert await rows.assembly(prefix) == LoggedAssembly(T0, assembly("abc123", "s1", 1))
        for literal in ("a%", "A%_", "a%_\\", "a%_\\9"):
            found = await rows.assembly(literal)
            assert found == LoggedAssembly(T0 + 1, assembly("a%_\\9", "s1", 2)), literal
        # Only ASCII letters fold.
        assert await rows.assembly("É") is None
        assert await rows.assembly("é") == LoggedAssembly(T0 + 2, assembly("é0", "s1", 3))


async def test_what_the_memory_map_reads(store: SoulStore, opener: Opener) -> None:
    rows = store.knowledge
    assert await rows.recent(5) == []
    assert await rows.days(5) == []
    ids = await store.append(
        [event(0), event(1, ts=T0 + DAY), event(2, ts=T0 + DAY + 1), event(3, ts=T0 + 3 * DAY)],
        Changes(
            summaries=[
                SummaryVersion("consolidated", "# first", 3, "extractive", "surprise"),
                SummaryVersion("weekly", "# week", 9, "llm", "weekly"),
            ]
        ),
        now=T0,
    )
    await store.flush(
        Changes(summaries=[SummaryVersion("consolidated", "# second", 4, "llm", "manual")]), T0 + 1
    )
    memories = [item.id for item in await store.memory_page(None, None, 10)][::-1]
    assert await store.hide([memories[2]], T0 + 5) == 1
    for reader in (store, await opener()):
        found = reader.knowledge
        assert await found.recent(2) == [
            (memories[3], "message 3 about the garden"), (memories[1], "message 1 about the garden")
        ]  # fmt: skip
        assert await found.latest_summaries() == [
            (2, "weekly", "# week"),
            (3, "consolidated", "# second"),
        ]
        assert await found.days(2) == [
            ("2026-05-31", 1, ids[3], ids[3]), ("2026-05-29", 2, ids[1], ids[2])
        ]  # fmt: skip
        assert len(await found.days(5)) == 3
        assert await found.event(ids[1]) == {
            "id": ids[1], "ref": "r1", "kind": "message", "channel": "web", "sender": "ann",
            "group": None, "mentioned": 1, "session": "s1", "ts": T0 + DAY,
            "recorded": T0 + DAY, "salience": 0.5, "text": "message 1 about the garden",
        }  # fmt: skip
        assert await found.event(99) is None
        assert await found.summary_version(2) == {
            "id": 2, "layer": "weekly", "text": "# week", "created": T0, "observations": 9,
            "reflector": "llm", "reason": "weekly",
        }  # fmt: skip
        assert await found.summary_version(9) is None


async def _everything(store: SoulStore) -> list[object]:
    """Every read of ``store``'s knowledge rows (what another soul must leave as is)."""
    rows = store.knowledge
    return [
        await rows.goals(), await rows.pending(10), await rows.questions(ids=[1, 2]),
        await rows.questions(state="answered"), await rows.claims(every=True),
        await rows.claims(ids=[1, 2]), await rows.slot_claims("ann", ["city"]),
        await rows.next_id("claims"), await rows.next_id("questions"),
        await rows.spent(None, 0.0), await rows.assembly(None), await rows.assembly("a"),
        await rows.recent(10), await rows.latest_summaries(), await rows.days(10),
        await rows.event(1), await rows.event(2), await rows.summary_version(1),
        await rows.summary_version(2), (await store.soul_state()).get("beta"),
    ]  # fmt: skip


async def test_each_souls_knowledge_is_its_own_on_postgres(pg_dsn: str) -> None:
    """Two souls in one database, each numbering its own rows (the same ids): neither
    reads the other's goals, questions, claims, assemblies, observations, summaries,
    days or events, and nothing one writes (goals stored and deleted, a question
    settled, an entry stated and a claim closed, an event forgotten, a model's reading
    of it refused) touches the other's rows of the same ids."""
    pool = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=2)
    try:
        alpha = await PgStore.open(pool, "alpha")
        beta = await PgStore.open(pool, "beta")
        await alpha.knowledge.write_goals([goal(1, "alpha's goal"), goal(2, "another")])
        ids = await alpha.append(
            [event(0), event(1)],
            Changes(
                questions=[NewQuestion(1, -1, "ann", None, "alpha asks?", T0)],
                claims=[claim(1, "ann", "city", "Lyon")],
                assemblies=[assembly("aa", None, 5)],
                summaries=[SummaryVersion("consolidated", "# alpha 1", 2, "llm", "manual")],
            ),
            now=T0,
        )
        await alpha.flush(
            Changes(summaries=[SummaryVersion("consolidated", "# alpha 2", 2, "llm", "manual")]),
            T0,
        )
        assert await beta.knowledge.goals() == []
        assert await beta.knowledge.pending(10) == []
        assert await beta.knowledge.questions(ids=[1]) == []
        assert await beta.knowledge.claims(every=True) == []
        assert await beta.knowledge.claims(ids=[1]) == []
        assert await beta.knowledge.slot_claims("ann", ["city"]) == []
        assert await beta.knowledge.spent(None, 0.0) == 0
        assert await beta.knowledge.assembly(None) is None
        assert await beta.knowledge.assembly("a") is None
        assert await beta.knowledge.recent(10) == []
        assert await beta.knowledge.latest_summaries() == []
        assert await beta.knowledge.days(10) == []
        assert await beta.knowledge.event(ids[0]) is None
        assert await beta.knowledge.summary_version(1) is None
        assert await beta.knowledge.next_id("questions") == 1
        assert await beta.knowledge.next_id("claims") == 1
        before = await _everything(alpha)

        # Beta's own rows, under the same ids as alpha's.
        mine = await beta.append(
            [event(5, ts=T0 + 3 * DAY), event(6, ts=T0 + 3 * DAY + 1)],
            Changes(
                questions=[NewQuestion(1, -1, "bob", None, "beta asks?", T0)],
                summaries=[SummaryVersion("consolidated", "# beta 1", 1, "llm", "manual")],
            ),
            now=T0,
        )
        assert mine == ids
        assert await beta.knowledge.state_entry(claim(0, "ann", "city", "Oslo"), [], {}) == 1
        await beta.flush(Changes(settlements=[Settlement(1, "answered", mine[1])]), T0 + 1)
        assert (
            await beta.knowledge.state_entry(
                None, [ClaimClosing(1, "retracted", None, T0 + 2)], {"beta": "yes"}
            )
            is None
        )
        await beta.knowledge.write_goals([goal(1, "beta's goal")], gone=[2])
        assert await beta.forget([mine[0]]) == 1
        # A model's reading of the event beta forgot: alpha's of that id is no stand-in.
        late = claim(2, "ann", "pet_name", "Rex", event_id=mine[0])
        assert await beta.knowledge.write_extracted(mine[0], [late], [], []) is None

        assert await _everything(alpha) == before
        found = beta.knowledge
        assert [g.statement for g in await found.goals()] == ["beta's goal"]
        assert await found.questions(ids=[1]) == [
            Question(1, mine[0], "bob", None, "beta asks?", T0, "answered", T0 + 1, mine[1])
        ]
        assert await found.pending(10) == []
        (stated,) = await found.claims(every=True)
        assert (stated.id, stated.value, stated.state) == (1, "Oslo", "retracted")
        assert await found.claims(ids=[1]) == [stated]
        assert await found.slot_claims("ann", ["city"]) == [stated]
        assert await found.claims() == []
        assert await found.spent(None, 0.0) == 0
        assert await found.assembly("a") is None
        assert [text for _, text in await found.recent(10)] == ["message 6 about the garden"]
        assert await found.latest_summaries() == [(1, "consolidated", "# beta 1")]
        assert await found.days(10) == [("2026-05-31", 1, mine[1], mine[1])]
        assert await found.event(mine[0]) is None  # forgotten; alpha's of that id stays
        assert (await found.event(mine[1]) or {})["text"] == "message 6 about the garden"
        assert (await found.summary_version(1) or {})["text"] == "# beta 1"
        assert await found.summary_version(2) is None
        assert await found.next_id("claims") == 2
        assert await found.next_id("questions") == 2
        assert [g.statement for g in await alpha.knowledge.goals()] == ["alpha's goal", "another"]
    finally:
        await pool.close()
