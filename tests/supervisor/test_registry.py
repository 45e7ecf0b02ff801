"""Souls hosted as the daemon hosts them: each under its own supervisor, as a temporary
child of a dynamic ``souls`` supervisor; crashes restart, too many crashes fail the soul.
Hibernation has its own module (``test_registry_hibernation``); souls here stay open."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import MAILBOX_HYGIENE

from souls.actor.clock import FixedClock
from souls.actor.mailbox import Future, Mailbox
from souls.config import LifecycleConfig, MailboxConfig, RestartConfig, SoulConfig
from souls.events import EventIn
from souls.messages import Crash, Observe, Recall, Stats
from souls.results import PushResult, RecallResult, SoulStats
from supervisor.errors import SoulUnavailable, UnknownSoul
from supervisor.registry import Registry, SoulHandle
from supervisor.tree import Supervisor

T0 = 1_780_000_000.0
# Never hibernates: opened at start, like a soul of old.
EAGER = LifecycleConfig(hibernate_after=0)
OPEN = SoulConfig(lifecycle=EAGER)
# Generous window: the test controls how many crashes there are, never how fast.
BRITTLE = SoulConfig(
    mailbox=MailboxConfig(batch=1),  # one message per turn: one crash per Crash
    restart=RestartConfig(max_restarts=2, max_seconds=60.0, shutdown=5.0),
    lifecycle=EAGER,
)


pytestmark = MAILBOX_HYGIENE


def handle(root: Path, name: str, config: SoulConfig) -> SoulHandle:
    return SoulHandle(
        name=name,
        config=config,
        db_path=root / name / "soul.db",
        brain_dir=root / name / "brain",
        mailbox=Mailbox(name, config.mailbox.capacity),
    )


@asynccontextmanager
async def souls_tree(registry: Registry) -> AsyncIterator[Supervisor]:
    """The daemon's ``souls`` dynamic supervisor with every handle of ``registry`` started."""
    souls = Supervisor("souls", max_restarts=1_000_000, max_seconds=1.0)
    clock = FixedClock(T0)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            await tg.start(souls.run)
            for h in registry.handles():
                await souls.start_child(h.child_spec(clock))
            yield souls
            tg.cancel_scope.cancel()


async def wait_until(predicate: Callable[[], bool]) -> None:
    # Handles publish no change events, so tests poll what a caller can observe.
    with anyio.fail_after(5):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.001)


async def ask(h: SoulHandle, message: Any) -> Any:
    return await h.mailbox.ask(message, timeout=5)


def registry_of(*handles: SoulHandle) -> Registry:
    registry = Registry()
    for h in handles:
        registry.add(h)
    return registry


async def test_lookup(tmp_path: Path) -> None:
    alpha = handle(tmp_path, "alpha", SoulConfig())
    registry = registry_of(handle(tmp_path, "beta", SoulConfig()), alpha)
    assert registry.lookup("alpha") is alpha
    assert [h.name for h in registry.handles()] == ["alpha", "beta"]
    with pytest.raises(UnknownSoul) as caught:
        registry.lookup("ghost")
    assert caught.value.code == "unknown_soul"
    assert "souls/ghost.toml" in caught.value.message  # how to create it


async def test_handles_report_running_once_started(tmp_path: Path) -> None:
    alpha = handle(tmp_path, "alpha", OPEN)
    assert (alpha.state, alpha.restarts) == ("starting", 0)
    async with souls_tree(registry_of(alpha)):
        assert (alpha.state, alpha.restarts, alpha.last_error) == ("running", 0, None)
        first = await ask(alpha, Observe(EventIn(text="hello")))
        # The soul's first event is all news to its empty summary and makes it reflect.
        assert first == PushResult(1, 0.5, "stored", surprise=1.0, reflected=True, novel=["hello"])


async def test_a_crashed_soul_is_restarted_with_its_data(tmp_path: Path) -> None:
    alpha = handle(tmp_path, "alpha", BRITTLE)
    async with souls_tree(registry_of(alpha)):
        await ask(alpha, Observe(EventIn(text="remember the zebra", ref="z")))
        with pytest.raises(SoulUnavailable):
            await ask(alpha, Crash("first"))
        await wait_until(lambda: alpha.restarts == 1 and alpha.state == "running")
        recalled = await ask(alpha, Recall("zebra"))
        duplicate = await ask(alpha, Observe(EventIn(text="remember the zebra", ref="z")))
        fresh = await ask(alpha, Observe(EventIn(text="and the lion")))
    assert isinstance(recalled, RecallResult)
    assert [item.text for item in recalled.items] == ["remember the zebra"]
    assert duplicate == PushResult(1, 0.5, "duplicate")
    # The restarted soul measures surprise against the summary the first event reflected
    # ("remember the zebra"): "lion", its one content word, is new. Above the threshold:
    # it reflects at once (no count-based cooldown).
    assert fresh == PushResult(2, 0.5, "stored", surprise=1.0, reflected=True, novel=["lion"])
    assert alpha.last_error is None


async def test_mail_queued_behind_a_crash_is_handled_by_the_next_incarnation(
    tmp_path: Path,
) -> None:
    alpha = handle(tmp_path, "alpha", BRITTLE)
    async with souls_tree(registry_of(alpha)):
        crash, behind = Future(), Future()
        alpha.mailbox.tell_nowait(Crash("once"), crash)
        alpha.mailbox.tell_nowait(Observe(EventIn(text="queued behind")), behind)
        with anyio.fail_after(5):
            assert await behind.wait() == PushResult(
                1, 0.5, "stored", surprise=1.0, reflected=True, novel=["queu"]
            )
            with pytest.raises(SoulUnavailable):
                await crash.wait()
        assert alpha.restarts == 1


async def test_too_many_crashes_fail_the_soul_and_spare_its_sibling(tmp_path: Path) -> None:
    alpha = handle(tmp_path, "alpha", BRITTLE)
    beta = handle(tmp_path, "beta", BRITTLE)
    registry = registry_of(alpha, beta)
    async with souls_tree(registry) as souls:
        await ask(alpha, Observe(EventIn(text="kept on disk")))
        await ask(beta, Observe(EventIn(text="beta's own")))
        # max_restarts = 2: the third crash within the window is one too many. The
        # message queued behind them is still waiting when the soul gives up.
        for i in range(3):
            alpha.mailbox.tell_nowait(Crash(f"crash {i}"))
        stranded = Future()
        alpha.mailbox.tell_nowait(Observe(EventIn(text="never handled")), stranded)
        await wait_until(lambda: alpha.state == "failed")

        assert alpha.restarts == 2
        assert alpha.last_error is not None
        assert "crash 2" in alpha.last_error
        with anyio.fail_after(5), pytest.raises(SoulUnavailable) as caught:
            await stranded.wait()
        assert "has failed" in caught.value.message
        with pytest.raises(SoulUnavailable) as lookup:
            registry.lookup("alpha")
        assert lookup.value.code == "soul_unavailable"
        assert "alpha" in lookup.value.message
        with pytest.raises(SoulUnavailable):
            await alpha.mailbox.tell(Observe(EventIn(text="too late")))

        # The sibling under the same dynamic supervisor never noticed.
        assert registry.lookup("beta") is beta
        assert (beta.state, beta.restarts) == ("running", 0)
        still = await ask(beta, Observe(EventIn(text="still here")))
        # No content word: measured on all its tokens, all new; it reflects at once.
        assert still == PushResult(
            2, 0.5, "stored", surprise=1.0, reflected=True, novel=["still", "here"]
        )
        beta_stats = await ask(beta, Stats())
        assert isinstance(beta_stats, SoulStats)
        assert beta_stats.events == 2
        assert [c.id for c in souls.which_children()] == ["soul:beta"]
        assert souls.statistics().running
    # The failed soul's data is still on disk for the next daemon start.
    again = handle(tmp_path, "alpha", SoulConfig())
    async with souls_tree(registry_of(again)):
        stats = await ask(again, Stats())
    assert stats.events == 1


async def test_a_stopped_soul_reports_stopped(tmp_path: Path) -> None:
    alpha = handle(tmp_path, "alpha", OPEN)
    beta = handle(tmp_path, "beta", OPEN)
    registry = registry_of(alpha, beta)
    async with souls_tree(registry) as souls:
        await ask(alpha, Observe(EventIn(text="one")))
        await souls.terminate_child("soul:alpha")
        assert alpha.state == "stopped"
        # Nobody reads its mailbox any more: a caller must be told so, not left waiting.
        with pytest.raises(SoulUnavailable):
            registry.lookup("alpha")
        assert beta.state == "running"


async def test_a_crash_costs_only_the_mail_that_caused_it(tmp_path: Path) -> None:
    # One turn holds an event, the crash and another event: the first is committed and
    # acknowledged before the crash, the crash's reply fails, and the event after it is
    # handed back to the mailbox and stored by the restarted soul - once each.
    alpha = handle(tmp_path, "alpha", SoulConfig(restart=BRITTLE.restart, lifecycle=EAGER))
    before, crash, after = Future(), Future(), Future()
    alpha.mailbox.tell_nowait(Observe(EventIn(text="first of the turn", ref="a")), before)
    alpha.mailbox.tell_nowait(Crash("mid-turn"), crash)
    alpha.mailbox.tell_nowait(Observe(EventIn(text="third of the turn", ref="b")), after)
    alpha.mailbox.tell_nowait(Observe(EventIn(text="fire and forget", ref="c")))
    async with souls_tree(registry_of(alpha)):
        with anyio.fail_after(5):
            assert await before.wait() == PushResult(
                1, 0.5, "stored", surprise=1.0, reflected=True, novel=["turn"]
            )
            with pytest.raises(SoulUnavailable):
                await crash.wait()
            # Against "first of the turn", the summary the first event reflected, nothing
            # is new: "turn" is known, and an ordinal is no content word.
            assert await after.wait() == PushResult(2, 0.5, "stored", surprise=0.0)
        stats = await ask(alpha, Stats())
    assert alpha.restarts == 1
    assert isinstance(stats, SoulStats)
    assert stats.events == 3  # "fire and forget" too, stored exactly once
