"""The scheduler: its triggers, per-soul overrides, catching up on runs missed while
the daemon was down, and the jobs it registers for real souls."""

from __future__ import annotations

import datetime as dt
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import msgspec
import pytest
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from conftest import MAILBOX_HYGIENE

from souls.clock import SystemClock
from souls.config import ScheduleOverrides, SoulConfig
from souls.mailbox import Mailbox
from souls.messages import LastRuns
from supervisor.config import DaemonConfig, ScheduleConfig, Settings
from supervisor.registry import Registry, SoulHandle
from supervisor.scheduler import Scheduler, _missed, _triggers
from supervisor.tree import Supervisor

pytestmark = MAILBOX_HYGIENE
UTC = dt.UTC


def test_schedule_defaults_and_overrides() -> None:
    base = ScheduleConfig()
    assert (base.decay_at(), base.weekly_day, base.weekly_at()) == ((3, 0), "sun", (4, 0))
    mine = base.merged(ScheduleOverrides(decay="02:30", timezone="Europe/Oslo"))
    assert (mine.decay, mine.timezone, mine.weekly) == ("02:30", "Europe/Oslo", "04:00")
    assert base.merged(ScheduleOverrides()) is base


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("decay", "25:00", "time of day"),
        ("weekly", "noon", "time of day"),
        ("weekly_day", "someday", "weekly_day"),
        ("timezone", "Mars/Olympus", "IANA"),
        ("homeostasis_minutes", 0, "> 0"),
    ],
)
def test_bad_schedules_are_config_errors(field: str, value: object, message: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=message):
        msgspec.convert({field: value}, ScheduleConfig)


def test_triggers_follow_the_schedule() -> None:
    triggers = _triggers(ScheduleConfig(decay="03:15", weekly_day="fri", weekly="17:00"))
    start = dt.datetime(2026, 11, 29, 12, 0, tzinfo=UTC)  # a Sunday
    assert triggers["decay"].get_next_fire_time(None, start) == dt.datetime(
        2026, 11, 30, 3, 15, tzinfo=UTC
    )
    assert triggers["weekly"].get_next_fire_time(None, start) == dt.datetime(
        2026, 12, 4, 17, 0, tzinfo=UTC
    )
    assert isinstance(triggers["homeostasis"], IntervalTrigger)
    assert triggers["homeostasis"].interval_length == 15 * 60


def test_a_run_missed_while_down_is_detected() -> None:
    nightly = CronTrigger(hour=3, minute=0, timezone=UTC)
    ran = dt.datetime(2026, 11, 28, 3, 0, 5, tzinfo=UTC).timestamp()
    assert not _missed(nightly, ran, dt.datetime(2026, 11, 28, 23, 0, tzinfo=UTC))
    assert _missed(nightly, ran, dt.datetime(2026, 11, 29, 3, 30, tzinfo=UTC))
    every = IntervalTrigger(minutes=15, timezone=UTC)
    now = dt.datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    assert _missed(every, now.timestamp() - 16 * 60, now)
    assert not _missed(every, now.timestamp() - 5 * 60, now)


@asynccontextmanager
async def scheduled(
    tmp_path: Path, ran: dict[str, float] | None = None
) -> AsyncIterator[tuple[Scheduler, SoulHandle]]:
    """A real soul under a souls supervisor, then the scheduler. ``ran``: job runs to
    pretend happened before the scheduler starts (written to the soul's state)."""
    config = SoulConfig(schedule=ScheduleOverrides(decay="01:45"))
    handle = SoulHandle(
        name="ada",
        config=config,
        db_path=tmp_path / "ada" / "soul.db",
        brain_dir=tmp_path / "ada",
        mailbox=Mailbox("ada", 64),
    )
    registry = Registry()
    registry.add(handle)
    settings = Settings(
        daemon=DaemonConfig(),
        souls={"ada": config},
        config_file=tmp_path / "soupd.toml",
        souls_dir=tmp_path / "souls",
        state_dir=tmp_path,
        socket=tmp_path / "s.sock",
    )
    souls = Supervisor("souls", max_restarts=10, max_seconds=1.0)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            await tg.start(souls.run)
            await souls.start_child(handle.child_spec(SystemClock()))
            with sqlite3.connect(handle.db_path) as db:
                db.executemany(
                    "INSERT INTO soul_state (key, value) VALUES (?, ?)",
                    [(f"ran.{job}", repr(at)) for job, at in (ran or {}).items()],
                )
            scheduler = await tg.start(Scheduler(settings, registry).run)
            yield scheduler, handle
            tg.cancel_scope.cancel()


async def test_jobs_have_explicit_ids_and_follow_overrides(tmp_path: Path) -> None:
    async with scheduled(tmp_path) as (scheduler, _handle):
        aps = scheduler._require()
        assert sorted(job.id for job in aps.get_jobs()) == [
            "decay:ada",
            "homeostasis:ada",
            "weekly:ada",
        ]
        assert str(aps.get_job("decay:ada").trigger) == "cron[hour='1', minute='45']"
        scheduler.remove_soul("ada")
        assert aps.get_jobs() == []


async def test_a_job_missed_while_down_runs_at_start(tmp_path: Path) -> None:
    long_ago = time.time() - 3 * 86_400
    recently = time.time() - 60
    async with scheduled(tmp_path, {"decay": long_ago, "weekly": recently}) as (_, handle):
        while (await handle.mailbox.ask(LastRuns(), timeout=5))["decay"] < recently:  # noqa: ASYNC110 - polls what a caller can observe
            await anyio.sleep(0.01)
        runs = await handle.mailbox.ask(LastRuns(), timeout=5)
    assert runs["decay"] > recently  # caught up
    assert runs["weekly"] == recently  # not due since: left alone
    assert "homeostasis" not in runs  # never ran before: nothing to catch up
