"""The scheduler: its triggers, per-soul overrides, catching up on runs missed while
the daemon was down, the jobs it registers for real souls, and how it treats souls that
hibernate (errands, catching up in the background, the TASKS.md sweep)."""

from __future__ import annotations

import datetime as dt
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import msgspec
import pytest
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from conftest import MAILBOX_HYGIENE
from structlog.testing import capture_logs

from souls.actor.clock import SystemClock
from souls.actor.mailbox import Mailbox
from souls.config import LifecycleConfig, ScheduleOverrides, SoulConfig
from souls.messages import LastRuns
from souls.store.store import Store
from supervisor.config import DaemonConfig, ScheduleConfig, Settings
from supervisor.registry import Registry, SoulHandle
from supervisor.scheduler import Scheduler, SchedulerStatistics, _missed, _triggers
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


# Hibernates only when nothing but housekeeping came (never within a test otherwise).
SLEEPY = LifecycleConfig(hibernate_after=3600)


@asynccontextmanager
async def scheduled(
    tmp_path: Path,
    ran: dict[str, float] | None = None,
    lifecycle: LifecycleConfig | None = None,
    schedule: ScheduleConfig | None = None,
) -> AsyncIterator[tuple[Scheduler, SoulHandle]]:
    """A real soul under a souls supervisor, then the scheduler. ``ran``: job runs to
    pretend happened before the scheduler starts (written to the soul's state, which
    the soul creates first). By default the soul never hibernates."""
    config = SoulConfig(
        schedule=ScheduleOverrides(decay="01:45"),
        lifecycle=lifecycle or LifecycleConfig(hibernate_after=0),
    )
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
        daemon=DaemonConfig(schedule=schedule or ScheduleConfig()),
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
            if ran is not None:
                await (await Store.open(handle.db_path)).close()  # creates the tables
                with sqlite3.connect(handle.db_path) as db:
                    db.executemany(
                        "INSERT INTO soul_state (key, value) VALUES (?, ?)",
                        [(f"ran.{job}", repr(at)) for job, at in ran.items()],
                    )
            await souls.start_child(handle.child_spec(SystemClock()))
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


async def test_a_job_fired_twice_in_its_period_runs_once(tmp_path: Path) -> None:
    # What two daemons of a shared store do: both fire the soul's jobs. The soul runs
    # each once a period (the job's, or its homeostasis interval) and says so.
    schedule = ScheduleConfig(homeostasis_minutes=10)
    async with scheduled(tmp_path, schedule=schedule) as (scheduler, handle):
        aps = scheduler._require()
        for name in ("decay", "homeostasis"):
            job = aps.get_job(f"{name}:ada")
            with capture_logs() as logs:
                await job.func(*job.args)
                first = await _eventually(handle, name)
                await job.func(*job.args)  # a second daemon's, a moment later
                with anyio.fail_after(10):
                    while not any(  # noqa: ASYNC110 - waits for what the soul logs
                        e["event"] == "soul.job_ran_already" and e.get("job") == name for e in logs
                    ):
                        await anyio.sleep(0.01)
            assert (await handle.mailbox.ask(LastRuns(), timeout=5))[name] == first


async def _eventually(handle: SoulHandle, job: str) -> float:
    """When ``job`` ran, once the soul has run it (within 10 s)."""
    with anyio.fail_after(10):
        while True:
            runs = await handle.mailbox.ask(LastRuns(), timeout=5)
            if job in runs:
                return float(runs[job])
            await anyio.sleep(0.01)


def test_homeostasis_checks_are_spread_over_their_interval() -> None:
    before = dt.datetime.now(UTC)
    half = _triggers(ScheduleConfig(homeostasis_minutes=10), 0.5)["homeostasis"]
    after = dt.datetime.now(UTC)
    first = half.get_next_fire_time(None, before)
    assert before + dt.timedelta(minutes=5) <= first <= after + dt.timedelta(minutes=5)
    assert half.get_next_fire_time(first, first) == first + dt.timedelta(minutes=10)
    assert half.interval_length == 600


async def wait_until(predicate: Callable[[], bool]) -> None:
    # Polls what a caller can observe; bounded, never a measurement.
    with anyio.fail_after(10):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.005)


async def last_runs(handle: SoulHandle) -> dict[str, float]:
    runs: dict[str, float] = await handle.mailbox.ask(LastRuns(), timeout=5)
    return runs


async def test_a_soul_that_never_ran_is_not_woken_to_catch_up(tmp_path: Path) -> None:
    async with scheduled(tmp_path, lifecycle=SLEEPY) as (scheduler, handle):
        caught_up = SchedulerStatistics(souls=1, behind=0, watched=1, jobs=3)
        await wait_until(lambda: scheduler.statistics() == caught_up)
        assert (handle.state, handle.wakes) == ("hibernating", 0)
        assert not handle.db_path.exists()


async def test_a_hibernating_soul_catches_up_and_goes_back_to_sleep(tmp_path: Path) -> None:
    long_ago = time.time() - 3 * 86_400
    async with scheduled(tmp_path, {"decay": long_ago}, lifecycle=SLEEPY) as (scheduler, handle):
        assert handle.state == "hibernating"  # adding a soul wakes nothing
        await wait_until(lambda: scheduler.statistics().behind == 0)
        while (await last_runs(handle))["decay"] == long_ago:  # noqa: ASYNC110 - polls what a caller can observe
            await anyio.sleep(0.01)
        # Catching up, the decay and LastRuns itself are housekeeping: however long
        # hibernate_after is, the soul went back to sleep after each of them.
        await wait_until(lambda: handle.state == "hibernating")
        assert handle.wakes >= 2
        assert handle.restarts == 0


async def test_a_job_for_a_hibernating_soul_wakes_it_only_for_the_job(tmp_path: Path) -> None:
    async with scheduled(tmp_path, lifecycle=SLEEPY) as (scheduler, handle):
        await wait_until(lambda: scheduler.statistics().behind == 0)
        job = scheduler._require().get_job("homeostasis:ada")
        job.modify(next_run_time=dt.datetime.now(UTC))  # as if its time had come
        await wait_until(lambda: handle.wakes == 1 and handle.state == "hibernating")
        assert "homeostasis" in await last_runs(handle)
        await wait_until(lambda: handle.state == "hibernating")


async def test_tasks_of_a_hibernating_soul_are_noticed_by_the_sweep(tmp_path: Path) -> None:
    fast = ScheduleConfig(tasks_poll_seconds=0.01, tasks_sweep_per_second=100)
    async with scheduled(tmp_path, lifecycle=SLEEPY, schedule=fast) as (scheduler, handle):
        await wait_until(lambda: scheduler.statistics().watched == 1)
        assert handle.wakes == 0
        tasks = handle.brain_dir / "TASKS.md"
        tasks.write_text("- [ ] renew the domain @due(2099-01-01)\n", encoding="utf-8")
        aps = scheduler._require()
        await wait_until(lambda: any(j.id.startswith("due:ada:") for j in aps.get_jobs()))
        await wait_until(lambda: handle.state == "hibernating")
        assert handle.wakes == 1  # woken once, to read the file
        tasks.write_text("- [x] renew the domain @due(2099-01-01)\n", encoding="utf-8")
        await wait_until(lambda: not any(j.id.startswith("due:ada:") for j in aps.get_jobs()))


def test_the_sweep_visits_hibernating_souls_in_turn(tmp_path: Path) -> None:
    names = ["a", "b", "c", "d", "e"]
    handles = [
        SoulHandle(n, SoulConfig(), tmp_path / n / "soul.db", tmp_path / n, Mailbox(n, 1))
        for n in names
    ]
    settings = Settings(
        daemon=DaemonConfig(),
        souls={},
        config_file=tmp_path / "soupd.toml",
        souls_dir=tmp_path / "souls",
        state_dir=tmp_path,
        socket=tmp_path / "s.sock",
    )
    scheduler = Scheduler(settings, Registry())
    sweeps = [[h.name for h in scheduler._next_sweep(handles, 2)] for _ in range(3)]
    assert sweeps == [["a", "b"], ["c", "d"], ["e", "a"]]
    assert [h.name for h in scheduler._next_sweep(handles, 5)] == names
