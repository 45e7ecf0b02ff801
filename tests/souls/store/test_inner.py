"""The inner state as the cognitive loop reads it back (souls/store/inner.py,
souls/store/postgres/inner.py), on both backends (the fixtures of tests/backends.py):
what a turn's Changes wrote — summaries, soul_state, edges, markers and their labels,
gaps, surfaced items — comes back the same, in the same orders, after a reopen too;
the observations a reflect folds in are chosen alike; one soul's rows are not
another's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import asyncpg
import pytest

from souls.store.changes import Changes, SummaryVersion
from souls.store.fading import Fading
from souls.store.inner import MindCounts, Observation, Summary
from souls.store.interface import SoulStore
from souls.store.postgres.store import PgStore
from souls.store.store import NewEvent
from souls.text.tokenize import fts_document

T0 = 1_780_000_000.0
DAY = 86_400.0

Opener = Callable[[], Awaitable[SoulStore]]


def event(text: str, *, ts: float, salience: float = 0.5, sender: str = "ann") -> NewEvent:
    return NewEvent(
        ref=None, kind="message", channel="chat", sender=sender, group=None, mentioned=False,
        session="s1", ts=ts, recorded=ts, salience=salience, text=text, doc=fts_document(text),
    )  # fmt: skip


def turn_changes(now: float) -> Changes:
    changes = Changes(
        state={"reflect.last_memory": "2", "ran.decay": str(now)},
        markers={
            ("deploy", "negative"): 0.75, ("deploy", "positive"): 0.25, ("tea", "positive"): 0.5
        },
        marker_labels={"deploy": "deploys"},
        gaps=[("billing", "nothing known about billing"), ("gpu", "which GPUs we have")],
        summaries=[
            SummaryVersion("consolidated", "first summary", 2, "extractive", "surprise"),
            SummaryVersion("weekly", "the week", 3, "extractive", "weekly"),
        ],
        surfaced={"m2": now - 5, "c1": now - 3, "m1": now - 1},
    )  # fmt: skip
    changes.edges[(1, 2)] += 3
    changes.edges[(1, 3)] += 1
    changes.edges[(2, 3)] += 2
    return changes


async def test_what_a_turn_wrote_reads_back_alike(store: SoulStore, opener: Opener) -> None:
    assert await store.summary("consolidated") is None
    assert await store.soul_state() == {}
    assert await store.mind_counts() == MindCounts(0, 0, 0, 0, 0)
    texts = ["deploy failed at noon", "tea with ann", "deploy ok again", "lunch"]
    ids = await store.append([event(t, ts=T0 + i) for i, t in enumerate(texts)], now=T0 + 10)
    assert await store.last_memory() == len(ids)
    await store.flush(turn_changes(T0 + 20), now=T0 + 20)
    await store.flush(
        Changes(summaries=[SummaryVersion("consolidated", "second", 4, "llm", "manual")]),
        now=T0 + 30,
    )
    for reader in (store, await opener()):
        latest = await reader.summary("consolidated")
        assert latest is not None
        assert (latest.text, latest.created) == ("second", T0 + 30)
        before = await reader.summary("consolidated", back=1)
        assert before is not None
        assert before.text == "first summary"
        assert await reader.summary("consolidated", back=2) is None
        weekly = await reader.summary("weekly")
        assert isinstance(weekly, Summary)
        assert weekly.text == "the week"
        assert await reader.soul_state() == {
            "reflect.last_memory": "2", "ran.decay": str(T0 + 20)
        }  # fmt: skip
        assert await reader.strong_edges(2.0) == [(1, 2, 3.0), (2, 3, 2.0)]
        assert await reader.edge_weights([(2, 3), (1, 2), (3, 4)]) == {(2, 3): 2.0, (1, 2): 3.0}
        assert await reader.edge_weights([]) == {}
        assert await reader.markers() == [
            ("deploy", "negative", 0.75), ("deploy", "positive", 0.25), ("tea", "positive", 0.5)
        ]  # fmt: skip
        assert await reader.marker_labels() == {"deploy": "deploys"}
        assert await reader.gaps(1) == [("gpu", "which GPUs we have")]
        assert await reader.gaps(5) == [
            ("billing", "nothing known about billing"), ("gpu", "which GPUs we have")
        ]  # fmt: skip
        assert await reader.surfaced() == [("c1", T0 + 17), ("m1", T0 + 19), ("m2", T0 + 15)]
        # Memories 1 and 2 surfaced: 3 and 4 are the observations never shown.
        assert await reader.unsurfaced(10) == [(3, 0.5), (4, 0.5)]
        assert await reader.unsurfaced(1) == [(3, 0.5)]
        assert await reader.mind_counts() == MindCounts(3, 3, 2, 2, 1)
        events, surprise = await reader.activity(T0 + 2, 3)
        assert events == 2
        assert surprise == [0.0, 0.0, 0.0]


# A decay that halves the edges and markers, and hides nothing within a few days.
HALVING = Fading(
    permanent_at=0.9, medium_at=0.7, medium_days=30, low_days=7, purge_days=30,
    edge_factor=0.5, edge_floor=0.1, marker_factor=0.5, marker_floor=0.1,
)  # fmt: skip


async def test_a_decay_pass_and_its_record_are_stored_together(
    store: SoulStore, opener: Opener
) -> None:
    # The scheduler's record of a run is written in the pass's own transaction: a
    # crash leaves both or neither. A dry run records nothing.
    changes = Changes()
    changes.edges[(1, 2)] += 1
    await store.append([event(t, ts=T0 + i) for i, t in enumerate("ab")], changes, now=T0)
    await store.decay(T0 + 1, HALVING, dry_run=True, state={"ran.decay": "1.0"})
    assert await store.soul_state() == {}
    assert await store.edge_weights([(1, 2)]) == {(1, 2): 1.0}
    # A record that cannot be written (no value) fails the pass: nothing of it stays.
    with pytest.raises(Exception, match=r"(?i)null"):
        await store.decay(T0 + 2, HALVING, state={"ran.decay": None})  # type: ignore[dict-item]
    assert await store.soul_state() == {}
    assert await store.edge_weights([(1, 2)]) == {(1, 2): 1.0}
    await store.decay(T0 + 2, HALVING, state={"ran.decay": "2.0"})
    for reader in (store, await opener()):
        assert await reader.soul_state() == {"ran.decay": "2.0"}
        assert await reader.edge_weights([(1, 2)]) == {(1, 2): 0.5}


async def test_the_weights_of_the_edges_just_written(store: SoulStore, opener: Opener) -> None:
    # The mind asks the weights of the edges a turn wrote right after its commit (for its
    # index of strong edges): what every reader reads, also after the edges changed by
    # another write (a decay) and for pairs the last write did not touch.
    await store.append([event(t, ts=T0 + i) for i, t in enumerate("abcd")], now=T0)
    first = Changes()
    first.edges[(1, 2)] += 2
    first.edges[(2, 3)] += 1
    await store.flush(first, now=T0 + 1)
    assert await store.edge_weights([(1, 2), (2, 3)]) == {(1, 2): 2.0, (2, 3): 1.0}
    again = Changes()
    again.edges[(1, 2)] += 1
    await store.flush(again, now=T0 + 2)
    assert await store.edge_weights([(1, 2)]) == {(1, 2): 3.0}
    assert await store.edge_weights([(1, 2), (2, 3), (3, 4)]) == {(1, 2): 3.0, (2, 3): 1.0}
    await store.flush(again, now=T0 + 3)
    await store.decay(T0 + 4, HALVING)
    halved = {(1, 2): 2.0, (2, 3): 0.5}
    assert await store.edge_weights([(1, 2)]) == {(1, 2): 2.0}  # not the 4.0 written before
    assert await store.edge_weights([(1, 2), (2, 3)]) == halved
    assert await (await opener()).edge_weights([(1, 2), (2, 3)]) == halved


async def test_the_observations_a_reflect_folds_in(store: SoulStore) -> None:
    # Six observations, one a day; two stand out by salience.
    saliences = [0.3, 0.9, 0.3, 0.3, 0.8, 0.3]
    events = [
        event(f"note {i}", ts=T0 + i * DAY, salience=s, sender=f"p{i}")
        for i, s in enumerate(saliences)
    ]
    ids = await store.append(events, now=T0 + 6 * DAY)
    every = await store.observations(after_memory=0, limit=10)
    assert [o.id for o in every] == ids
    assert every[1] == Observation(ids[1], "note 1", 0.9, 0.0, "message", "p1", T0 + DAY)
    # After memory 2: oldest first.
    assert [o.id for o in await store.observations(after_memory=ids[1], limit=10)] == ids[2:]
    # A flood: of more than the limit, the most salient, then the newest, in id order.
    assert [o.id for o in await store.observations(after_memory=0, limit=3)] == [
        ids[1], ids[4], ids[5]
    ]  # fmt: skip
    # By when they were said.
    since = await store.observations(since=T0 + 3 * DAY, limit=10)
    assert [o.text for o in since] == ["note 3", "note 4", "note 5"]
    # A hidden memory is no observation.
    assert await store.hide([ids[4]], now=T0 + 7 * DAY) == 1
    assert ids[4] not in [o.id for o in await store.observations(after_memory=0, limit=10)]
    assert ids[4] not in [m for m, _ in await store.unsurfaced(10)]


async def test_one_souls_inner_state_is_not_anothers_on_postgres(pg_dsn: str) -> None:
    # (On SQLite each soul has a database file of its own.)
    pool = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=2)
    try:
        alpha = await PgStore.open(pool, "alpha")
        beta = await PgStore.open(pool, "beta")
        await alpha.append([event("deploy failed", ts=T0)], now=T0)
        await alpha.flush(turn_changes(T0 + 20), now=T0 + 20)
        assert await beta.summary("consolidated") is None
        assert await beta.soul_state() == {}
        assert await beta.strong_edges(0.0) == []
        assert await beta.edge_weights([(1, 2)]) == {}
        assert await beta.markers() == []
        assert await beta.marker_labels() == {}
        assert await beta.gaps(5) == []
        assert await beta.surfaced() == []
        assert await beta.unsurfaced(5) == []
        assert await beta.last_memory() == 0
        assert await beta.observations(after_memory=0, limit=5) == []
        assert await beta.activity(0.0, 5) == (0, [])
        assert await beta.mind_counts() == MindCounts(0, 0, 0, 0, 0)
        assert await alpha.mind_counts() == MindCounts(3, 3, 2, 1, 1)
    finally:
        await pool.close()
