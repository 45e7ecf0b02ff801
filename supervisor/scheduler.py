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

A recurring job whose time passed while the daemon was down runs at start (souls
remember when each job last ran). A due task whose time passed runs at start too;
firing is idempotent in the soul.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
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

from souls.messages import Decay, Homeostasis, LastRuns, Message, SyncTasks, Wakeup, Weekly
from souls.results import TasksResult
from supervisor.config import ScheduleConfig, Settings
from supervisor.errors import SoupdError
from supervisor.registry import Registry, SoulHandle

__all__ = ["Scheduler"]

_log = structlog.get_logger("soupd.scheduler")
_QUEUE = 4096
_RECURRING: dict[str, Callable[[], Message]] = {
    "decay": Decay,
    "weekly": Weekly,
    "homeostasis": Homeostasis,
}


class Scheduler:
    def __init__(self, settings: Settings, registry: Registry) -> None:
        self._settings = settings
        self._registry = registry
        self._aps: AsyncIOScheduler | None = None
        send: MemoryObjectSendStream[tuple[str, Message]]
        receive: MemoryObjectReceiveStream[tuple[str, Message]]
        send, receive = anyio.create_memory_object_stream(_QUEUE)
        self._send, self._receive = send, receive
        # Per soul: the due keys scheduled, and what TASKS.md looked like last time.
        self._due: dict[str, set[str]] = {}
        self._seen: dict[str, tuple[int, int, int] | None] = {}

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
                tg.start_soon(self._watch_tasks)
                task_status.started(self)
        finally:
            aps.shutdown(wait=False)
            self._aps = None

    # -- souls ------------------------------------------------------------------------

    async def add_soul(self, handle: SoulHandle) -> None:
        """Schedule a soul's recurring jobs and its due tasks; run what it missed."""
        aps = self._require()
        schedule = self.schedule_of(handle)
        last = await self._ask(handle, LastRuns()) or {}
        now = dt.datetime.now(dt.UTC)
        for job, trigger in _triggers(schedule).items():
            aps.add_job(
                self._fire,
                trigger,
                args=(handle.name, job),
                id=f"{job}:{handle.name}",
                replace_existing=True,
                coalesce=True,
                misfire_grace_time=None,
            )
            ran = last.get(job)
            if ran is not None and _missed(trigger, ran, now):
                _log.info("scheduler.catching_up", soul=handle.name, job=job)
                self._queue(handle.name, _RECURRING[job]())
        self._seen[handle.name] = None
        await self.sync_tasks(handle)

    def remove_soul(self, name: str) -> None:
        aps = self._require()
        for job in aps.get_jobs():
            if job.id.endswith(f":{name}") or job.id.startswith(f"due:{name}:"):
                job.remove()
        self._due.pop(name, None)
        self._seen.pop(name, None)

    def update_settings(self, settings: Settings) -> None:
        """Settings after a reload; souls re-added afterwards get the new schedule."""
        self._settings = settings

    def schedule_of(self, handle: SoulHandle) -> ScheduleConfig:
        """The daemon's schedule with the soul's overrides applied."""
        return self._settings.daemon.schedule.merged(handle.config.schedule)

    async def sync_tasks(self, handle: SoulHandle) -> TasksResult | None:
        """Re-read a soul's TASKS.md and (re)schedule one date job per pending task."""
        result = await self._ask(handle, SyncTasks())
        if not isinstance(result, TasksResult):
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

    # -- jobs -------------------------------------------------------------------------

    async def _fire(self, soul: str, job: str) -> None:
        self._queue(soul, _RECURRING[job]())

    async def _wake(self, soul: str, key: str) -> None:
        self._queue(soul, Wakeup(key))
        self._due.get(soul, set()).discard(key)

    def _queue(self, soul: str, message: Message) -> None:
        try:
            self._send.send_nowait((soul, message))
        except anyio.WouldBlock:
            _log.error("scheduler.queue_full", soul=soul, message=type(message).__name__)

    async def _forward(self) -> None:
        async for soul, message in self._receive:
            try:
                await self._registry.lookup(soul).mailbox.tell(message)
            except SoupdError as error:
                _log.warning("scheduler.undelivered", soul=soul, error=error.message)

    async def _watch_tasks(self) -> None:
        """Notice edits of TASKS.md (polling its stat: portable, cheap, no inotify)."""
        poll = self._settings.daemon.schedule.tasks_poll_seconds
        while True:
            await anyio.sleep(poll)
            for handle in self._registry.handles():
                if handle.state != "running" or handle.name not in self._seen:
                    continue
                seen = await _stat(handle.brain_dir / "TASKS.md")
                if seen != self._seen[handle.name]:
                    self._seen[handle.name] = seen
                    await self.sync_tasks(handle)

    async def _ask(self, handle: SoulHandle, message: Message) -> Any:
        try:
            return await handle.mailbox.ask(message, timeout=30)
        except SoupdError as error:
            _log.warning("scheduler.ask_failed", soul=handle.name, error=error.message)
            return None

    def _require(self) -> AsyncIOScheduler:
        if self._aps is None:
            raise RuntimeError("the scheduler is not running")
        return self._aps


def _triggers(schedule: ScheduleConfig) -> dict[str, BaseTrigger]:
    zone = schedule.zone()
    decay_hour, decay_minute = schedule.decay_at()
    weekly_hour, weekly_minute = schedule.weekly_at()
    return {
        "decay": CronTrigger(hour=decay_hour, minute=decay_minute, timezone=zone),
        "weekly": CronTrigger(
            day_of_week=schedule.weekly_day, hour=weekly_hour, minute=weekly_minute, timezone=zone
        ),
        "homeostasis": IntervalTrigger(minutes=schedule.homeostasis_minutes, timezone=zone),
    }


def _missed(trigger: BaseTrigger, ran: float, now: dt.datetime) -> bool:
    """Whether ``trigger`` had a fire time after ``ran`` and before ``now``."""
    if isinstance(trigger, IntervalTrigger):
        interval: float = trigger.interval_length
        return now.timestamp() - ran >= interval
    after = dt.datetime.fromtimestamp(ran, dt.UTC) + dt.timedelta(seconds=1)
    due: dt.datetime | None = trigger.get_next_fire_time(None, after)
    return due is not None and due <= now


async def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        info = await anyio.Path(path).stat()
    except FileNotFoundError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)
