"""Hibernation, as the registry hosts it: a soul idle for ``hibernate_after`` closes its
database and its task ends; its handle and mailbox stay, and the next message wakes it
with everything it had. Nothing queued is lost, no caller sees an error."""

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
from souls.config import LifecycleConfig, RestartConfig, SoulConfig
from souls.events import EventIn
from souls.messages import Crash, LastRuns, Observe, Ping, Recall, Stats
from souls.results import PushResult, RecallResult, SoulStats
from souls.store.store import Store
from supervisor.errors import SoulUnavailable
from supervisor.registry import Registry, RegistryStatistics, SoulHandle
from supervisor.tree import Supervisor

pytestmark = MAILBOX_HYGIENE
T0 = 1_780_000_000.0
# Hibernates as soon as it has nothing to do.
DOZY = SoulConfig(lifecycle=LifecycleConfig(hibernate_after=1e-6))
# Hibernates only after housekeeping (never within a test otherwise).
SLEEPY = SoulConfig(lifecycle=LifecycleConfig(hibernate_after=3600))
NEVER = SoulConfig(lifecycle=LifecycleConfig(hibernate_after=0))


def handle(root: Path, name: str, config: SoulConfig) -> SoulHandle:
    return SoulHandle(
        name=name,
        config=config,
        db_path=root / name / "soul.db",
        brain_dir=root / name / "brain",
        mailbox=Mailbox(name, config.mailbox.capacity),
    )


@asynccontextmanager
async def hosted(*handles: SoulHandle) -> AsyncIterator[tuple[Registry, Supervisor]]:
    """The daemon's ``souls`` dynamic supervisor with ``handles`` started in it."""
    registry = Registry()
    souls = Supervisor("souls", max_restarts=1_000_000, max_seconds=1.0)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            await tg.start(souls.run)
            for h in handles:
                registry.add(h)
                await souls.start_child(h.child_spec(FixedClock(T0)))
            yield registry, souls
            tg.cancel_scope.cancel()


async def wait_until(predicate: Callable[[], bool]) -> None:
    # Handles publish no change events, so tests poll what a caller can observe.
    with anyio.fail_after(5):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.001)


async def ask(h: SoulHandle, message: Any) -> Any:
    return await h.mailbox.ask(message, timeout=5)


def observe(text: str, ref: str | None = None) -> Observe:
    return Observe(EventIn(text=text, ref=ref))


async def test_a_soul_that_may_hibernate_starts_hibernated_and_opens_nothing(
    tmp_path: Path,
) -> None:
    alpha, beta = handle(tmp_path, "alpha", SLEEPY), handle(tmp_path, "beta", NEVER)
    async with hosted(alpha, beta) as (registry, _):
        assert (alpha.state, alpha.awake, alpha.wakes) == ("hibernating", False, 0)
        assert not alpha.db_path.exists()
        # Its folders exist from the start, for the files a user puts there.
        assert alpha.brain_dir.is_dir()
        assert (beta.state, beta.awake) == ("running", True)  # 0: never hibernates
        assert beta.db_path.exists()
        assert registry.statistics() == RegistryStatistics(
            souls=2, awake=1, hibernating=1, failed=0
        )
        assert registry.lookup("alpha") is alpha  # a hibernating soul takes mail


async def test_the_next_message_wakes_a_hibernated_soul_with_all_its_data(
    tmp_path: Path,
) -> None:
    alpha = handle(tmp_path, "alpha", DOZY)
    async with hosted(alpha):
        first = await ask(alpha, observe("remember the zebra", ref="z"))
        assert first == PushResult(
            1, 0.5, "stored", surprise=1.0, reflected=True, novel=["rememb", "zebra"]
        )
        await wait_until(lambda: alpha.state == "hibernating")
        assert alpha.wakes == 1

        recalled = await ask(alpha, Recall("zebra"))
        duplicate = await ask(alpha, observe("remember the zebra", ref="z"))
        await wait_until(lambda: alpha.state == "hibernating")
        stats = await ask(alpha, Stats())
    assert isinstance(recalled, RecallResult)
    assert [item.text for item in recalled.items] == ["remember the zebra"]
    assert duplicate == PushResult(1, 0.5, "duplicate")
    assert isinstance(stats, SoulStats)
    assert (stats.events, stats.memories) == (1, 1)
    assert alpha.wakes >= 3
    assert alpha.restarts == 0


async def test_mail_sent_while_a_soul_closes_wakes_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The soul has decided to hibernate and is closing its database when mail comes:
    # the mail stays queued and the soul wakes again for it at once.
    alpha = handle(tmp_path, "alpha", DOZY)
    late: list[Future] = []
    close = Store.close

    async def close_while_mail_arrives(store: Store) -> None:
        if len(late) < 3:
            future = Future()
            alpha.mailbox.tell_nowait(observe(f"late {len(late)}", ref=f"late-{len(late)}"), future)
            late.append(future)
        await close(store)

    monkeypatch.setattr(Store, "close", close_while_mail_arrives)
    async with hosted(alpha):
        await ask(alpha, observe("the first", ref="first"))
        await wait_until(lambda: len(late) == 3)  # it closed three times
        with anyio.fail_after(5):
            answers = [await future.wait() for future in late]
        await wait_until(lambda: alpha.state == "hibernating")
        stats = await ask(alpha, Stats())
    assert [answer.status for answer in answers] == ["stored"] * 3
    assert stats.events == 4
    assert alpha.wakes >= 4


async def test_nothing_is_lost_while_a_soul_keeps_hibernating_and_waking(
    tmp_path: Path,
) -> None:
    alpha = handle(tmp_path, "alpha", DOZY)
    async with hosted(alpha):
        futures = []
        for n in range(200):
            future = Future()
            await alpha.mailbox.tell(observe(f"note {n}", ref=f"n-{n}"), future)
            futures.append(future)
            if n % 7 == 0:  # now and then, let it finish and fall asleep
                with anyio.fail_after(5):
                    await future.wait()
                await wait_until(lambda: alpha.state == "hibernating")
        with anyio.fail_after(10):
            answers = [await future.wait() for future in futures]
        stats = await ask(alpha, Stats())
    assert sorted(answer.event_id for answer in answers) == list(range(1, 201))
    assert stats.events == 200
    assert alpha.wakes > 1


async def test_housekeeping_does_not_keep_a_soul_awake(tmp_path: Path) -> None:
    alpha = handle(tmp_path, "alpha", SLEEPY)
    async with hosted(alpha):
        assert await ask(alpha, Ping()) == "pong"
        await ask(alpha, LastRuns())
        await wait_until(lambda: alpha.state == "hibernating")  # woken just for it
        assert alpha.wakes >= 1
        await ask(alpha, Stats())  # a request: it stays awake for hibernate_after
        await anyio.sleep(0.05)
        assert alpha.state == "running"


async def test_a_crash_while_awake_restarts_and_the_soul_still_hibernates(
    tmp_path: Path,
) -> None:
    config = SoulConfig(
        lifecycle=DOZY.lifecycle, restart=RestartConfig(max_restarts=2, max_seconds=60.0)
    )
    alpha = handle(tmp_path, "alpha", config)
    async with hosted(alpha):
        await ask(alpha, observe("kept", ref="k"))
        crash, behind = Future(), Future()
        alpha.mailbox.tell_nowait(Crash("once"), crash)
        alpha.mailbox.tell_nowait(observe("queued behind the crash"), behind)
        with anyio.fail_after(5), pytest.raises(SoulUnavailable):
            await crash.wait()
        with anyio.fail_after(5):
            assert (await behind.wait()).status == "stored"
        await wait_until(lambda: alpha.state == "hibernating")
        stats = await ask(alpha, Stats())
    assert alpha.restarts == 1
    assert stats.events == 2


async def test_a_database_that_cannot_be_opened_on_waking_fails_the_soul_alone(
    tmp_path: Path,
) -> None:
    alpha, beta = handle(tmp_path, "alpha", SLEEPY), handle(tmp_path, "beta", SLEEPY)
    async with hosted(alpha, beta) as (registry, _):
        alpha.db_path.write_bytes(b"this is not a database" * 100)
        with pytest.raises(SoulUnavailable) as caught:
            await ask(alpha, Stats())
        assert "alpha" in caught.value.message
        assert alpha.state == "failed"
        # What to tell the operator, as the store says it: the file and what to do.
        assert alpha.last_error == (
            f"cannot use the soul database {alpha.db_path}: file is not a database; "
            "restore it from a backup, or move it away and the soul starts afresh"
        )
        with pytest.raises(SoulUnavailable):
            registry.lookup("alpha")
        assert (await ask(beta, observe("beta goes on"))).status == "stored"
        assert registry.statistics().failed == 1


async def test_a_hibernating_soul_stops_without_waking(tmp_path: Path) -> None:
    alpha = handle(tmp_path, "alpha", SLEEPY)
    async with hosted(alpha) as (registry, souls):
        await souls.terminate_child("soul:alpha")
        assert alpha.state == "stopped"
        assert alpha.wakes == 0
        with pytest.raises(SoulUnavailable):
            registry.lookup("alpha")
        with pytest.raises(SoulUnavailable):
            await alpha.mailbox.tell(Stats())
    assert not alpha.db_path.exists()


async def test_mail_queued_before_start_wakes_the_soul(tmp_path: Path) -> None:
    alpha = handle(tmp_path, "alpha", SLEEPY)
    early = Future()
    alpha.mailbox.tell_nowait(observe("before the soul was hosted"), early)
    async with hosted(alpha):
        with anyio.fail_after(5):
            assert (await early.wait()).status == "stored"
        assert alpha.state == "running"
