"""Time: one APScheduler ``AsyncIOScheduler``, owned by the supervision tree.

Jobs never touch a soul's state; they only hand a message to a soul. A job itself only
puts ``(soul, message)`` into a bounded queue (it runs on the event loop, as a
coroutine job, and never waits); a task of ours forwards the queue into the souls'
mailboxes with backpressure. So no job blocks, no unowned task touches a soul, and
nothing is dropped silently (a full queue is logged).

Jobs (explicit ids, ``replace_existing``):

* ``decay:<soul>`` nightly, ``weekly:<soul>`` weekly, ``homeostasis:<soul>`` every few
  minutes — times from ``[schedule]`` in soupd.toml, overridable per soul;
* ``due:<soul>:<key>`` one date job per pending task of the soul's TASKS.md.

A thousand souls, most of them hibernating, cost little here:

* Adding a soul only registers its recurring jobs; it wakes no soul. *Catching up*
  (running a recurring job whose time passed while the daemon was down — souls
  remember when each job last ran — and scheduling the due tasks of TASKS.md, which
  fire at once if their time passed) happens in the background after start, one
  short wake per soul, a few souls at a time; a soul that never ran and has no
  TASKS.md is not woken at all. Firing is idempotent in the soul.
* Mail for a hibernating soul is an *errand*: the soul wakes for it and hibernates
  again right after (see ``souls.actor.soul``). At most ``_ERRANDS`` errands are in flight,
  so souls due at the same minute (everyone's nightly decay) wake a few at a time.
  The homeostasis checks are spread over their interval by the soul's name.
* TASKS.md edits are noticed by one polling task for all souls (see
  :meth:`Scheduler._watch_tasks`): awake souls every poll, hibernating ones in a
  rate-bounded sweep.
"""

from __future__ import annotations

import datetime as dt
import os
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import structlog
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from souls.actor.mailbox import Future
from souls.messages import Decay, Homeostasis, LastRuns, Message, SyncTasks, Wakeup, Weekly
from souls.results import TasksResult
from supervisor.config import ScheduleConfig, Settings
from supervisor.errors import AskTimeout, SoupdError
from supervisor.registry import Registry, SoulHandle

__all__ = ["Scheduler", "SchedulerStatistics"]

_log = structlog.get_logger("soupd.scheduler")
_QUEUE = 4096
# Hibernating souls woken at once for housekeeping (jobs, catching up).
_ERRANDS = 4
# How long housekeeping waits for a soul's answer before giving up on it (the mail
# stays queued and is still handled).
_ASK_TIMEOUT = 30.0
# The recurring jobs' periods (seconds), homeostasis' being its soul's interval.
_PERIODS = {"decay": 86_400.0, "weekly": 7 * 86_400.0}
_RECURRING: dict[str, Callable[..., Message]] = {
    "decay": Decay,
    "weekly": Weekly,
    "homeostasis": Homeostasis,
}
Stat = tuple[int, int, int] | None


@dataclass(frozen=True, slots=True)
class SchedulerStatistics:
    souls: int  # souls scheduled
    behind: int  # of those, still to catch up (or catching up now)
    watched: int  # souls whose TASKS.md is watched (caught up)
    jobs: int  # APScheduler jobs, recurring and due


class Scheduler:
    def __init__(self, settings: Settings, registry: Registry) -> None:
        self._settings = settings
        self._registry = registry
        self._aps: AsyncIOScheduler | None = None
        send: MemoryObjectSendStream[tuple[str, Message]]
        receive: MemoryObjectReceiveStream[tuple[str, Message]]
        send, receive = anyio.create_memory_object_stream(_QUEUE)
        self._send, self._receive = send, receive
        self._errands = anyio.Semaphore(_ERRANDS)
        # The souls scheduled, and those still to catch up (in order; at most one
        # entry per soul, so bounded by the number of souls).
        self._souls: dict[str, SoulHandle] = {}
        self._behind: dict[str, SoulHandle] = {}
        self._behind_added = anyio.Event()
        self._catching_up = 0
        # Per soul caught up: the due keys scheduled, and what TASKS.md looked like.
        self._due: dict[str, set[str]] = {}
        self._seen: dict[str, Stat] = {}
        self._sweep = 0

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[Scheduler] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        aps = AsyncIOScheduler(timezone=dt.UTC)
        aps.start()
        self._aps = aps
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._forward)
                for handle in self._registry.handles():
                    await self.add_soul(handle)
                tg.start_soon(self._catch_up_souls)
                tg.start_soon(self._watch_tasks)
                task_status.started(self)
        finally:
            aps.shutdown(wait=False)
            self._aps = None

    # -- souls ------------------------------------------------------------------------

    async def add_soul(self, handle: SoulHandle) -> None:
        """Schedule a soul's recurring jobs now; catch up on what it missed (and
        schedule its due tasks) in the background. Wakes no soul by itself."""
        aps = self._require()
        schedule = self.schedule_of(handle)
        spread = (zlib.crc32(handle.name.encode()) % 997 + 1) / 997
        for job, trigger in _triggers(schedule, spread).items():
            aps.add_job(
                self._fire,
                trigger,
                args=(handle.name, job),
                id=f"{job}:{handle.name}",
                replace_existing=True,
                coalesce=True,
                misfire_grace_time=None,
            )
        self._souls[handle.name] = handle
        self._behind[handle.name] = handle
        self._behind_added.set()

    def remove_soul(self, name: str) -> None:
        aps = self._require()
        for job in aps.get_jobs():
            if job.id.endswith(f":{name}") or job.id.startswith(f"due:{name}:"):
                job.remove()
        for table in (self._souls, self._behind, self._due, self._seen):
            table.pop(name, None)

    def statistics(self) -> SchedulerStatistics:
        return SchedulerStatistics(
            souls=len(self._souls),
            behind=len(self._behind) + self._catching_up,
            watched=len(self._seen),
            jobs=len(self._aps.get_jobs()) if self._aps is not None else 0,
        )

    def update_settings(self, settings: Settings) -> None:
        """Settings after a reload; souls re-added afterwards get the new schedule."""
        self._settings = settings

    def schedule_of(self, handle: SoulHandle) -> ScheduleConfig:
        """The daemon's schedule with the soul's overrides applied."""
        return self._settings.daemon.schedule.merged(handle.config.schedule)

    async def sync_tasks(self, handle: SoulHandle) -> TasksResult | None:
        """Re-read a soul's TASKS.md and (re)schedule one date job per pending task."""
        (result,) = await self._ask(handle, SyncTasks())
        return self._schedule_tasks(handle, result)

    def _schedule_tasks(self, handle: SoulHandle, result: object) -> TasksResult | None:
        if not isinstance(result, TasksResult) or self._souls.get(handle.name) is not handle:
            return None
        for problem in result.errors:
            _log.warning(
                "tasks.unreadable_line",
                soul=handle.name,
                line=problem.line,
                source=problem.source,
                problem=problem.problem,
            )
        aps = self._require()
        keys = {task.key for task in result.pending}
        for key in self._due.get(handle.name, set()) - keys:
            job = aps.get_job(f"due:{handle.name}:{key}")
            if job is not None:
                job.remove()
        for task in result.pending:
            # A date in the past fires at once (misfire_grace_time=None): a task that
            # came due while the daemon was down is not lost.
            aps.add_job(
                self._wake,
                DateTrigger(dt.datetime.fromtimestamp(task.due, dt.UTC)),
                args=(handle.name, task.key),
                id=f"due:{handle.name}:{task.key}",
                replace_existing=True,
                misfire_grace_time=None,
            )
        self._due[handle.name] = keys
        return result

    # -- catching up ----------------------------------------------------------------------

    async def _catch_up_souls(self) -> None:
        """Catch up every soul added, in order, at most ``_ERRANDS`` at a time."""
        async with anyio.create_task_group() as tg:
            while True:
                await self._behind_added.wait()
                self._behind_added = anyio.Event()
                while self._behind:
                    name = next(iter(self._behind))
                    handle = self._behind.pop(name)
                    self._catching_up += 1
                    await self._errands.acquire()
                    tg.start_soon(self._catch_up, handle)

    async def _catch_up(self, handle: SoulHandle) -> None:
        try:
            tasks_file = await _stat(handle.brain_dir / "TASKS.md")
            if tasks_file is None and not await anyio.Path(handle.db_path).exists():
                # Never ran, no tasks: nothing missed, nothing to schedule; left asleep.
                self._caught_up(handle, tasks_file)
                return
            last, tasks = await self._ask(handle, LastRuns(), SyncTasks())
            if self._souls.get(handle.name) is not handle:
                return  # removed (or replaced by a reload) meanwhile
            now = dt.datetime.now(dt.UTC)
            triggers = _triggers(self.schedule_of(handle))
            for job, ran in (last if isinstance(last, dict) else {}).items():
                if job in triggers and _missed(triggers[job], ran, now):
                    _log.info("scheduler.catching_up", soul=handle.name, job=job)
                    self._queue(handle.name, self._recurring(handle.name, job))
            if tasks is not None:
                self._caught_up(handle, tasks_file)
                self._schedule_tasks(handle, tasks)
        finally:
            self._catching_up -= 1
            self._errands.release()

    def _caught_up(self, handle: SoulHandle, tasks_file: Stat) -> None:
        """From now on the soul's TASKS.md is watched (compared with ``tasks_file``)."""
        if self._souls.get(handle.name) is handle:
            self._seen[handle.name] = tasks_file

    # -- jobs -------------------------------------------------------------------------

    # One line per job run, naming the soul and the job (apscheduler's own are quieted,
    # see supervisor.logs): recurring jobs at debug (every soul has three), a due task
    # at info (one a reminder).
    async def _fire(self, soul: str, job: str) -> None:
        _log.debug("scheduler.job", soul=soul, job=f"{job}:{soul}")
        self._queue(soul, self._recurring(soul, job))

    def _recurring(self, soul: str, job: str) -> Message:
        """The message of a recurring job, with its period: a soul runs it once a period,
        however many daemons (of a shared store) fire it."""
        handle = self._souls.get(soul)
        schedule = (
            self.schedule_of(handle) if handle is not None else self._settings.daemon.schedule
        )
        period = _PERIODS.get(job) or schedule.homeostasis_minutes * 60
        return _RECURRING[job](period=period)

    async def _wake(self, soul: str, key: str) -> None:
        _log.info("scheduler.task_due", soul=soul, job=f"due:{soul}:{key}")
        self._queue(soul, Wakeup(key))
        self._due.get(soul, set()).discard(key)

    def _queue(self, soul: str, message: Message) -> None:
        try:
            self._send.send_nowait((soul, message))
        except anyio.WouldBlock:
            _log.error("scheduler.queue_full", soul=soul, message=type(message).__name__)

    async def _forward(self) -> None:
        async with anyio.create_task_group() as errands:
            async for soul, message in self._receive:
                try:
                    handle = self._registry.lookup(soul)
                    if handle.awake:
                        await handle.mailbox.tell(message)
                        continue
                except SoupdError as error:
                    _log.warning("scheduler.undelivered", soul=soul, error=error.message)
                    continue
                await self._errands.acquire()
                errands.start_soon(self._errand, handle, message)

    async def _errand(self, handle: SoulHandle, message: Message) -> None:
        """Hand a job to a hibernating soul and wait until it is done (so that only a
        few souls are woken for housekeeping at a time)."""
        try:
            await self._ask(handle, message)
        finally:
            self._errands.release()

    async def _watch_tasks(self) -> None:
        """Notice edits of TASKS.md by polling file stats (portable, no inotify).

        One task for every soul. Each ``tasks_poll_seconds`` it stats the TASKS.md of
        every awake soul, and of the next hibernating souls in turn — at most
        ``tasks_sweep_per_second`` of those a second — in one worker-thread call. An
        awake soul's edit is noticed within a poll; a hibernating soul's within
        (hibernating souls / tasks_sweep_per_second) seconds, and wakes it only to
        re-read the file. So a thousand idle souls cost a bounded trickle of stats.
        """
        while True:
            schedule = self._settings.daemon.schedule
            await anyio.sleep(schedule.tasks_poll_seconds)
            watched = [h for h in self._souls.values() if h.name in self._seen]
            awake = [h for h in watched if h.awake]
            asleep = [h for h in watched if h.state == "hibernating"]
            budget = max(1, round(schedule.tasks_sweep_per_second * schedule.tasks_poll_seconds))
            chosen = awake + self._next_sweep(asleep, budget)
            paths = [h.brain_dir / "TASKS.md" for h in chosen]
            stats = await anyio.to_thread.run_sync(_stat_all, paths)
            for handle, seen in zip(chosen, stats, strict=True):
                if handle.name in self._seen and seen != self._seen[handle.name]:
                    self._seen[handle.name] = seen
                    await self.sync_tasks(handle)

    def _next_sweep(self, asleep: Sequence[SoulHandle], budget: int) -> list[SoulHandle]:
        """The next ``budget`` hibernating souls, round robin."""
        if len(asleep) <= budget:
            return list(asleep)
        start = self._sweep % len(asleep)
        self._sweep = start + budget
        return [*asleep[start : start + budget], *asleep[: max(0, start + budget - len(asleep))]]

    async def _ask(self, handle: SoulHandle, *messages: Message) -> list[Any]:
        """Send ``messages`` to the soul together (one wake, if it hibernates) and wait
        for each answer; None for one that failed or timed out (logged)."""
        futures = [Future() for _ in messages]
        answers: list[Any] = [None] * len(messages)
        try:
            with anyio.fail_after(_ASK_TIMEOUT):
                for message, future in zip(messages, futures, strict=True):
                    await handle.mailbox.tell(message, future)
                for index, future in enumerate(futures):
                    try:
                        answers[index] = await future.wait()
                    except SoupdError as error:
                        _log.warning("scheduler.ask_failed", soul=handle.name, error=error.message)
        except SoupdError as error:
            _log.warning("scheduler.ask_failed", soul=handle.name, error=error.message)
        except TimeoutError:
            timeout = AskTimeout(f"soul {handle.name!r} did not answer within {_ASK_TIMEOUT:g} s")
            _log.warning("scheduler.ask_failed", soul=handle.name, error=timeout.message)
        return answers

    def _require(self) -> AsyncIOScheduler:
        if self._aps is None:
            raise RuntimeError("the scheduler is not running")
        return self._aps


def _triggers(schedule: ScheduleConfig, spread: float = 1.0) -> dict[str, BaseTrigger]:
    """The recurring jobs' triggers. ``spread`` in (0, 1]: the first homeostasis check
    comes after that share of its interval (then every interval), so that souls
    spread their checks instead of all waking at once."""
    zone = schedule.zone()
    decay_hour, decay_minute = schedule.decay_at()
    weekly_hour, weekly_minute = schedule.weekly_at()
    every = dt.timedelta(minutes=schedule.homeostasis_minutes)
    return {
        "decay": CronTrigger(hour=decay_hour, minute=decay_minute, timezone=zone),
        "weekly": CronTrigger(
            day_of_week=schedule.weekly_day, hour=weekly_hour, minute=weekly_minute, timezone=zone
        ),
        "homeostasis": IntervalTrigger(
            seconds=every.total_seconds(),
            start_date=dt.datetime.now(zone) + every * spread,
            timezone=zone,
        ),
    }


def _missed(trigger: BaseTrigger, ran: float, now: dt.datetime) -> bool:
    """Whether ``trigger`` had a fire time after ``ran`` and before ``now``."""
    if isinstance(trigger, IntervalTrigger):
        interval: float = trigger.interval_length
        return now.timestamp() - ran >= interval
    after = dt.datetime.fromtimestamp(ran, dt.UTC) + dt.timedelta(seconds=1)
    due: dt.datetime | None = trigger.get_next_fire_time(None, after)
    return due is not None and due <= now


async def _stat(path: Path) -> Stat:
    (seen,) = await anyio.to_thread.run_sync(_stat_all, [path])
    return seen


def _stat_all(paths: Sequence[Path]) -> list[Stat]:
    """(mtime, size, inode) of each file, None where there is none (in a worker thread)."""
    seen: list[Stat] = []
    for path in paths:
        try:
            info = os.stat(path)
        except FileNotFoundError:
            seen.append(None)
        else:
            seen.append((info.st_mtime_ns, info.st_size, info.st_ino))
    return seen
