"""The soul actor, run for real: a Soul task draining a Mailbox into a SQLite file.

Only the clock is fake. A soul is stopped the way its supervisor stops it: by
cancellation, after which it must still finish the mail that was queued.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import MAILBOX_HYGIENE
from structlog.testing import capture_logs

from souls.actor.clock import FixedClock
from souls.actor.mailbox import Future, Mailbox
from souls.actor.soul import Soul
from souls.config import MailboxConfig, SoulConfig
from souls.events import EventIn
from souls.messages import Context, Crash, Import, Message, Observe, Recall, Stats
from souls.results import (
    ContextResult,
    ImportResult,
    PushResult,
    RecallResult,
    Rejection,
    SoulStats,
)
from supervisor.errors import (
    InjectedFault,
    InvalidParams,
    RejectedInput,
    SoulUnavailable,
    SoupdError,
)

T0 = 1_780_000_000.0
FAKE_AWS_KEY = "AKIA" + "ABCDEFGHIJ234567"  # assembled so no scanner takes it for a leak


class TickingClock(FixedClock):
    """Moves a second each time it is read: events stored by one ingest share a time."""

    def now(self) -> float:
        value = super().now()
        self.advance(1)
        return value


pytestmark = MAILBOX_HYGIENE


class Lab:
    """One soul's files, config and clock; makes Soul incarnations on the same database."""

    def __init__(self, root: Path, config: SoulConfig | None = None) -> None:
        self.db_path = root / "alpha" / "soul.db"
        self.brain_dir = root / "alpha" / "brain"
        self.config = config or SoulConfig()
        self.clock = FixedClock(T0)
        self.mailbox: Mailbox[Message] = Mailbox("alpha", self.config.mailbox.capacity)

    def soul(self) -> Soul:
        return Soul(
            "alpha",
            self.config,
            db_path=self.db_path,
            brain_dir=self.brain_dir,
            clock=self.clock,
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Mailbox[Message]]:
        """Run a fresh incarnation for the body, then stop it by cancellation."""
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                await tg.start(self.soul().run, self.mailbox)
                yield self.mailbox
                tg.cancel_scope.cancel()

    def queue(self, message: Message) -> Future:
        """Put ``message`` in the mailbox without yielding; its reply is the returned Future."""
        future = Future()
        self.mailbox.tell_nowait(message, future)
        return future

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(self.db_path)) as db:
            return db.execute(sql).fetchall()


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return Lab(tmp_path)


def observe(text: str, **fields: Any) -> Observe:
    return Observe(EventIn(text=text, **fields))


async def ask(mailbox: Mailbox[Message], message: Message) -> Any:
    return await mailbox.ask(message, timeout=5)


async def outcomes(futures: Sequence[Future]) -> list[Any]:
    """What each reply settled to: the value, or the SoupdError it failed with."""
    settled: list[Any] = []
    with anyio.fail_after(5):
        for future in futures:
            try:
                settled.append(await future.wait())
            except SoupdError as error:
                settled.append(error)
    return settled


async def stats(mailbox: Mailbox[Message]) -> SoulStats:
    result = await ask(mailbox, Stats())
    assert isinstance(result, SoulStats)
    return result


async def test_push_stores_and_acks_with_the_event_id(lab: Lab) -> None:
    async with lab.running() as mailbox:
        first = await ask(mailbox, observe("The deploy failed at noon", ref="m-1", sender="ada"))
        second = await ask(mailbox, observe("Lunch with Ada"))
    # base 0.5 + alarm keyword 0.3; the first event is all news to an empty summary and
    # makes the soul reflect.
    # The reply names the content words that were new (the tokenizer's stems).
    assert first == PushResult(
        1, 0.8, "stored", surprise=1.0, reflected=True, novel=["deploy", "fail", "noon"]
    )
    # None of its words is in that summary: a surprise too, and it reflects at once
    # (no count-based cooldown).
    assert second == PushResult(
        2, 0.5, "stored", surprise=1.0, reflected=True, novel=["lunch", "ada"]
    )
    assert lab.rows("SELECT id, ref, sender, ts, recorded, salience, text FROM events") == [
        (1, "m-1", "ada", T0, T0, 0.8, "The deploy failed at noon"),
        (2, None, None, T0, T0, 0.5, "Lunch with Ada"),
    ]


async def test_queued_observations_are_committed_in_one_turn(lab: Lab) -> None:
    lab.clock = TickingClock(T0)
    futures = [lab.queue(observe(f"event number {i}", ref=f"r-{i}")) for i in range(50)]
    with capture_logs() as logs:
        async with lab.running():
            results = await outcomes(futures)
            # Answered once the reflect is committed, before its card: the turn ends
            # after the card, which the next message waits for.
            await ask(lab.mailbox, Stats())
    # Measured against the (empty) summary in force when the batch arrived (the number
    # is no content word): all news. The soul reflects once after the batch, folding the
    # whole batch in, so every one of them reflected.
    new = ["event", "number"]
    assert results == [
        PushResult(i, 0.5, "stored", surprise=1.0, reflected=True, novel=new) for i in range(1, 51)
    ]
    turns = [entry for entry in logs if entry["event"] == "soul.turn"]
    assert [turn["messages"] for turn in turns][:1] == [50]
    assert lab.rows("SELECT min(id), max(id), count(*) FROM events") == [(1, 50, 50)]
    # Gated together at one instant, appended together (one append, one transaction).
    assert lab.rows("SELECT count(DISTINCT recorded) FROM events") == [(1,)]
    assert lab.rows("SELECT ref FROM events ORDER BY id") == [(f"r-{i}",) for i in range(50)]


async def test_turns_are_bounded_by_the_batch_size(tmp_path: Path) -> None:
    lab = Lab(tmp_path, SoulConfig(mailbox=MailboxConfig(batch=8)))
    lab.clock = TickingClock(T0)
    futures = [lab.queue(observe(f"event number {i}")) for i in range(20)]
    with capture_logs() as logs:
        async with lab.running():
            results = await outcomes(futures)
    assert [r.event_id for r in results] == list(range(1, 21))
    assert [e["messages"] for e in logs if e["event"] == "soul.turn"] == [8, 8, 4]
    assert lab.rows("SELECT count(*) FROM events GROUP BY recorded") == [(8,), (8,), (4,)]


async def test_other_mail_keeps_its_place_between_observations(lab: Lab) -> None:
    futures = [
        lab.queue(observe("alpha one")),
        lab.queue(observe("alpha two")),
        lab.queue(Stats()),
        lab.queue(observe("zebra three")),
        lab.queue(Recall("zebra")),
        lab.queue(Stats()),
    ]
    async with lab.running():
        results = await outcomes(futures)
    assert [r.event_id for r in (results[0], results[1], results[3])] == [1, 2, 3]
    assert results[2].events == 2  # the Stats between saw exactly the events before it
    assert [item.id for item in results[4].items] == [3]
    assert results[5].events == 3


async def test_duplicate_ref_across_turns_answers_with_the_first_id(lab: Lab) -> None:
    async with lab.running() as mailbox:
        first = await ask(mailbox, observe("The build failed", ref="m-1"))
        again = await ask(mailbox, observe("The build failed (resent)", ref="m-1", kind="dm"))
        other = await ask(mailbox, observe("Another one", ref="m-2"))
        counts = await stats(mailbox)
    assert first == PushResult(
        1, 0.8, "stored", surprise=1.0, reflected=True, novel=["build", "fail"]
    )
    # The stored event's id and salience; a duplicate measures no surprise.
    assert again == PushResult(1, 0.8, "duplicate")
    # No content word at all: measured on all its tokens, all new.
    assert other == PushResult(
        2, 0.5, "stored", surprise=1.0, reflected=True, novel=["anoth", "one"]
    )
    assert counts.events == 2
    assert lab.rows("SELECT text FROM events WHERE ref = 'm-1'") == [("The build failed",)]


async def test_duplicate_ref_within_one_batch(lab: Lab) -> None:
    futures = [
        lab.queue(observe("first telling", ref="m-1")),
        lab.queue(observe("second telling", ref="m-1", kind="dm")),
        lab.queue(observe("something else", ref="m-2")),
        lab.queue(observe("third telling", ref="m-1")),
    ]
    async with lab.running() as mailbox:
        results = await outcomes(futures)
        counts = await stats(mailbox)
    assert results == [
        PushResult(1, 0.5, "stored", surprise=1.0, reflected=True, novel=["first", "tell"]),
        PushResult(1, 0.5, "duplicate"),
        PushResult(2, 0.5, "stored", surprise=1.0, reflected=True, novel=["someth", "els"]),
        PushResult(1, 0.5, "duplicate"),
    ]
    assert counts.events == 2
    assert lab.rows("SELECT id, text FROM events ORDER BY id") == [
        (1, "first telling"),
        (2, "something else"),
    ]


async def test_events_below_the_threshold_are_dropped_and_counted(lab: Lab) -> None:
    futures = [
        lab.queue(observe("tick", kind="heartbeat")),
        lab.queue(observe("kept")),
        lab.queue(observe("chatter", group="team")),  # 0.35: kept
        lab.queue(observe("cron ran", kind="cron", group="ops")),  # 0.05: dropped
    ]
    async with lab.running() as mailbox:
        results = await outcomes(futures)
        counts = await stats(mailbox)
    assert results == [
        PushResult(None, 0.2, "dropped"),
        PushResult(1, 0.5, "stored", surprise=1.0, reflected=True, novel=["kept"]),
        PushResult(2, 0.35, "stored", surprise=1.0, reflected=True, novel=["chatter"]),
        PushResult(None, 0.05, "dropped"),
    ]
    assert counts.events == 2
    assert counts.counters == {"dropped.attention": 2}
    assert lab.rows("SELECT text FROM events ORDER BY id") == [("kept",), ("chatter",)]


async def test_drop_counter_persists_even_when_nothing_is_stored(lab: Lab) -> None:
    async with lab.running() as mailbox:
        dropped = await ask(mailbox, observe("tick", kind="heartbeat"))
    assert dropped.status == "dropped"
    async with lab.running() as mailbox:
        counts = await stats(mailbox)
    assert (counts.events, counts.counters) == (0, {"dropped.attention": 1})


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (f"my key is {FAKE_AWS_KEY}", "hygiene.credential"),
        ("", "hygiene.empty"),
        ("x" * 8001, "hygiene.too_long"),
        ("bad \x00 byte", "hygiene.invalid_chars"),
        ("same\nsame\nsame", "hygiene.repeated_lines"),
    ],
)
async def test_hygiene_rejections_store_nothing(lab: Lab, text: str, code: str) -> None:
    async with lab.running() as mailbox:
        with pytest.raises(RejectedInput) as caught:
            await ask(mailbox, observe(text, ref="m-1"))
        counts = await stats(mailbox)
        # The ref was not taken: a clean resend is stored.
        resent = await ask(mailbox, observe("clean text", ref="m-1"))
    assert caught.value.code == code
    assert FAKE_AWS_KEY not in caught.value.message
    assert (counts.events, counts.memories, counts.counters) == (0, 0, {})
    assert counts.rejected == {code: 1}
    assert resent == PushResult(
        1, 0.5, "stored", surprise=1.0, reflected=True, novel=["clean", "text"]
    )


async def test_a_rejection_does_not_spoil_its_batch(lab: Lab) -> None:
    futures = [
        lab.queue(observe("good one")),
        lab.queue(observe(f"leak {FAKE_AWS_KEY}")),
        lab.queue(observe("good two")),
    ]
    async with lab.running():
        results = await outcomes(futures)
    assert results[0] == PushResult(
        1, 0.5, "stored", surprise=1.0, reflected=True, novel=["good", "one"]
    )
    assert isinstance(results[1], RejectedInput)
    assert results[1].code == "hygiene.credential"
    assert results[2] == PushResult(
        2, 0.5, "stored", surprise=1.0, reflected=True, novel=["good", "two"]
    )


@pytest.mark.parametrize("ts", ["yesterday", -5.0, 1e13])
async def test_bad_time_is_invalid_params(lab: Lab, ts: str | float) -> None:
    async with lab.running() as mailbox:
        with pytest.raises(InvalidParams) as caught:
            await ask(mailbox, observe("hello", ts=ts))
        counts = await stats(mailbox)
    assert caught.value.code == "invalid_params"
    assert "ts" in caught.value.message
    assert counts.events == 0


async def test_event_time_is_kept_apart_from_the_recording_time(lab: Lab) -> None:
    async with lab.running() as mailbox:
        await ask(mailbox, observe("then", ts="2026-01-01T00:00:00Z"))
        lab.clock.advance(30)
        await ask(mailbox, observe("now"))
    assert lab.rows("SELECT ts, recorded FROM events ORDER BY id") == [
        (1_767_225_600.0, T0),
        (T0 + 30, T0 + 30),
    ]


async def test_recall_ranks_english_and_chinese(lab: Lab) -> None:
    texts = [
        "The database migration failed at midnight",
        "Ada migrated the database again; migrations are slow",
        "Lunch with Ada at noon",
        "数据库迁移失败了",
        "明天和Ada吃午饭",
    ]
    async with lab.running() as mailbox:
        for i, text in enumerate(texts):
            await ask(mailbox, observe(text, ref=f"r-{i}"))
        english = await ask(mailbox, Recall("database migrations"))
        chinese = await ask(mailbox, Recall("数据库迁移"))
        lunch = await ask(mailbox, Recall("lunch"))
        nothing = await ask(mailbox, Recall("giraffe"))
    assert isinstance(english, RecallResult)
    # Every event was news and reflected at once, and the summary lines that cite the
    # first two cover the query terms: the summary brings m1 first (full coverage),
    # then m2.
    assert [(item.id, item.via) for item in english.items] == [(1, "summary"), (2, "summary")]
    assert english.items[0].score == 1.0
    assert english.items[1].score > 0
    assert [item.refs for item in english.items] == [["r-0"], ["r-1"]]
    assert [item.id for item in chinese.items] == [4]
    assert [item.text for item in lunch.items] == ["Lunch with Ada at noon"]
    assert nothing.items == []


async def test_recall_sees_events_stored_after_the_first_recall(lab: Lab) -> None:
    async with lab.running() as mailbox:
        await ask(mailbox, observe("zebra crossing near the school"))
        assert [i.id for i in (await ask(mailbox, Recall("zebra"))).items] == [1]
        await ask(mailbox, observe("a zebra zebra at the zoo"))
        await ask(mailbox, observe("nothing related"))
        warm = await ask(mailbox, Recall("zebra"))
    # A fresh incarnation reads the statistics from the index instead: same answer.
    async with lab.running() as mailbox:
        cold = await ask(mailbox, Recall("zebra"))
    # m1 and m2 are cited by the summaries their arrivals reflected (each was news), by
    # lines covering the whole query: both of relevance 1.0, as salient, said at the same
    # moment — a tie, which the memory stored later wins (recall's near-tie rule).
    assert [(i.id, i.via, i.relevance) for i in warm.items] == [
        (2, "summary", 1.0),
        (1, "summary", 1.0),
    ]
    assert warm == cold


@pytest.mark.parametrize("k", [0, -1, 201])
async def test_recall_k_out_of_bounds_is_invalid_params(lab: Lab, k: int) -> None:
    async with lab.running() as mailbox:
        with pytest.raises(InvalidParams, match="max_k") as caught:
            await ask(mailbox, Recall("anything", k))
    assert "200" in caught.value.message


async def test_recall_k_default_and_maximum(lab: Lab) -> None:
    async with lab.running() as mailbox:
        for i in range(15):
            await ask(mailbox, observe(f"kiwi note {i}"))
        default = await ask(mailbox, Recall("kiwi"))
        most = await ask(mailbox, Recall("kiwi", 200))
        three = await ask(mailbox, Recall("kiwi", 3))
        counts = await stats(mailbox)
    assert len(default.items) == 10
    assert len(most.items) == 15
    assert len(three.items) == 3
    assert counts.recalls == 3
    assert counts.recall_p50_ms is not None
    assert counts.recall_p95_ms is not None


async def test_import_counts_and_reason_indexes(tmp_path: Path) -> None:
    lab = Lab(tmp_path, SoulConfig(mailbox=MailboxConfig(import_batch=3)))
    events = [
        EventIn(text="first good", ref="r-0"),  # chunk 1
        EventIn(text="second good"),
        EventIn(text=f"leak {FAKE_AWS_KEY}"),
        EventIn(text="tick", kind="heartbeat"),  # chunk 2
        EventIn(text="first good again", ref="r-0"),
        EventIn(text="when?", ts="not a time"),
        EventIn(text="third good", ref="r-6"),  # chunk 3
        EventIn(text="third good again", ref="r-6"),
    ]
    async with lab.running() as mailbox:
        result = await ask(mailbox, Import(events))
        counts = await stats(mailbox)
    assert isinstance(result, ImportResult)
    assert (result.stored, result.dropped, result.duplicate, result.rejected) == (3, 1, 2, 2)
    assert [(r.index, r.code) for r in result.reasons] == [
        (2, "hygiene.credential"),
        (5, "invalid_params"),
    ]
    assert all(isinstance(r, Rejection) and r.message for r in result.reasons)
    assert not result.reasons_truncated
    assert counts.events == 3
    assert counts.counters == {"dropped.attention": 1}
    assert lab.rows("SELECT id, text FROM events ORDER BY id") == [
        (1, "first good"),
        (2, "second good"),
        (3, "third good"),
    ]


async def test_import_reasons_are_capped(lab: Lab) -> None:
    events = [EventIn(text="") for _ in range(105)] + [EventIn(text="fine")]
    async with lab.running() as mailbox:
        result = await ask(mailbox, Import(events))
    assert (result.stored, result.rejected) == (1, 105)
    assert len(result.reasons) == 100
    assert result.reasons[-1].index == 99
    assert result.reasons_truncated


async def test_context_orders_sections_and_lists_recalled_ids(lab: Lab) -> None:
    lab.brain_dir.mkdir(parents=True)
    (lab.brain_dir / "SOUL.md").write_text("I am Ada's helper.\n", encoding="utf-8")
    # A hand-written MEMORY.md is not the summary: the soul's own, in its database, is.
    (lab.brain_dir / "MEMORY.md").write_text("Ada deploys on Fridays.\n", encoding="utf-8")
    async with lab.running() as mailbox:
        before = await ask(mailbox, Context())
        await ask(mailbox, observe("The Friday deploy failed"))
        await ask(mailbox, observe("Lunch at noon"))
        with_query = await ask(mailbox, Context("deploy"))
        without = await ask(mailbox, Context())
        again = await ask(mailbox, Context())
    assert [s.name for s in before.sections] == ["identity"]
    assert isinstance(with_query, ContextResult)
    assert [s.name for s in with_query.sections] == [
        "identity",
        "summary",
        "gut_feelings",
        "recalled",
    ]
    # Both events were news and reflected into the summary at once.
    assert with_query.sections[1].text == (
        "## MEMORY\n## Failures and alarms\n- The Friday deploy failed [m1]\n"
        "## Notable\n- Lunch at noon [m2]\n\n"
    )
    # "failed" left a negative marker on "deploy", weighted by the event's salience.
    assert "- deploy: uneasy (negative, 0.8)\n" in with_query.sections[2].text
    assert with_query.sections[3].memory_ids == [1]
    assert "- [m1] The Friday deploy failed" in with_query.text
    assert "Ada deploys on Fridays." not in with_query.text
    # Without a query, the gut feeling still shows: the latest events touch "deploy".
    assert [s.name for s in without.sections] == ["identity", "summary", "gut_feelings"]
    stable = "".join(s.text for s in without.sections[:2])
    assert with_query.text.startswith(stable)  # the stable prefix
    assert with_query.prefix_hash == without.prefix_hash == again.prefix_hash
    assert without.hash == again.hash


async def test_crash_fails_its_reply_and_propagates(tmp_path: Path) -> None:
    lab = Lab(tmp_path, SoulConfig(mailbox=MailboxConfig(batch=3)))
    before = lab.queue(observe("before the fault", ref="a"))
    crash = lab.queue(Crash("test"))
    same_turn = lab.queue(observe("same turn as the fault", ref="b"))
    next_turn = lab.queue(observe("queued behind the fault", ref="c"))
    with anyio.fail_after(10), pytest.raises(InjectedFault, match="test"):
        await lab.soul().run(lab.mailbox)
    done = await outcomes([before, crash])
    assert done[0] == PushResult(1, 0.5, "stored", surprise=1.0, reflected=True, novel=["fault"])
    assert isinstance(done[1], SoulUnavailable)
    assert "'alpha'" in done[1].message
    assert not next_turn.settled
    assert lab.rows("SELECT ref FROM events") == [("a",)]
    # The next incarnation finds the data and the mail that was not handled; every
    # reply ends settled, and nothing is stored twice. It also finds the summary the
    # first event reflected ("before the fault"), and measures surprise against it.
    async with lab.running() as mailbox:
        later = await outcomes([same_turn, next_turn])
        duplicate = await ask(mailbox, observe("before the fault", ref="a"))
    assert duplicate == PushResult(1, 0.5, "duplicate")
    if isinstance(later[0], SoulUnavailable):  # failed with the crash: never stored
        assert "send it again" in later[0].message
        assert later[1] == PushResult(2, 0.5, "stored", surprise=0.5, novel=["queu"])
        assert lab.rows("SELECT ref FROM events ORDER BY id") == [("a",), ("c",)]
    else:  # handed back to the mailbox: stored by the next incarnation
        assert later == [
            PushResult(2, 0.5, "stored", surprise=0.5, novel=["turn"]),  # turn, fault
            PushResult(3, 0.5, "stored", surprise=0.5, novel=["queu"]),  # queu, fault
        ]
        assert lab.rows("SELECT ref FROM events ORDER BY id") == [("a",), ("b",), ("c",)]


async def test_a_new_soul_on_the_same_database_sees_everything(lab: Lab) -> None:
    async with lab.running() as mailbox:
        await ask(mailbox, observe("The zebra escaped", ref="z-1"))
        await ask(mailbox, observe("tick", kind="heartbeat"))
        before = await ask(mailbox, Recall("zebra"))
    async with lab.running() as mailbox:
        after = await ask(mailbox, Recall("zebra"))
        duplicate = await ask(mailbox, observe("The zebra escaped", ref="z-1"))
        fresh = await ask(mailbox, observe("The zebra came back"))
        counts = await stats(mailbox)
    assert after == before
    assert duplicate == PushResult(1, 0.5, "duplicate")
    # Measured against the summary the first incarnation reflected ("The zebra escaped"):
    # its one content word, "zebra", is known ("came" and "back" say nothing new).
    assert fresh == PushResult(2, 0.5, "stored", surprise=0.0)
    assert (counts.events, counts.counters) == (2, {"dropped.attention": 1})


async def test_cancellation_drains_queued_mail(tmp_path: Path) -> None:
    # Small turns, so most of the mail is still in the mailbox when the stop comes.
    lab = Lab(tmp_path, SoulConfig(mailbox=MailboxConfig(batch=4)))
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(lab.soul().run, lab.mailbox)
            # Queued without yielding, then the stop: the soul has not seen any of it.
            futures = [lab.queue(observe(f"late event {i}", ref=f"r-{i}")) for i in range(20)]
            futures.append(lab.queue(Import([EventIn(text="late import")])))
            futures.append(lab.queue(Stats()))
            tg.cancel_scope.cancel()
    results = await outcomes(futures)
    # The first turn (four events) is measured against the empty summary: all four
    # reflect, into one line: "late event 3", counted 4 times, citing m1 and
    # m4. Against its words (the citation and the count are not words of the world)
    # no later event is news: "event" is known, "late" and the number are no content.
    assert results[:20] == [
        PushResult(1, 0.5, "stored", surprise=1.0, reflected=True, novel=["event"]),
        *(
            PushResult(i, 0.5, "stored", surprise=1.0, reflected=True, novel=["event"])
            for i in range(2, 5)
        ),
        *(PushResult(i, 0.5, "stored", surprise=0.0) for i in range(5, 21)),
    ]
    assert results[20].stored == 1
    assert results[21].events == 21
    assert lab.mailbox.statistics().queued == 0
    assert lab.rows("SELECT count(*) FROM events") == [(21,)]


async def test_closing_the_mailbox_ends_the_soul_after_its_mail(lab: Lab) -> None:
    futures = [lab.queue(observe(f"event {i}")) for i in range(3)]
    lab.mailbox.close()
    with anyio.fail_after(10):
        await lab.soul().run(lab.mailbox)  # returns: closed and empty
    assert [r.event_id for r in await outcomes(futures)] == [1, 2, 3]


async def test_stats_describe_the_soul(lab: Lab) -> None:
    async with lab.running() as mailbox:
        await ask(mailbox, observe("one"))
        await ask(mailbox, observe("two", ref="x"))
        counts = await stats(mailbox)
    assert counts.soul == "alpha"
    assert (counts.events, counts.memories, counts.hidden) == (2, 2, 0)
    assert counts.mailbox_capacity == 1024
    assert (counts.recalls, counts.recall_p50_ms, counts.recall_p95_ms) == (0, None, None)
    assert counts.rejected == {}
