"""One soul's long turn gives the shared event loop back: another soul's mail is handled
between its events, not after the whole turn (issue 19.4: a flood of 8,000-character
texts at one soul froze every other soul's pushes)."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from conftest import MAILBOX_HYGIENE

import souls.intake.offload
import souls.knowledge.knowledge
import supervisor.pace
from souls.actor.clock import FixedClock
from souls.actor.mailbox import Future, Mailbox
from souls.actor.soul import Soul
from souls.config import SoulConfig
from souls.events import EventIn
from souls.intake.intake import Intake
from souls.messages import Message, Observe

pytestmark = MAILBOX_HYGIENE

LONG = ("sk-" * 2666)[:8000]  # the gate's worst case, which it lets through


def soul(root: Path, name: str) -> tuple[Soul, Mailbox[Message]]:
    config = SoulConfig()
    made = Soul(
        name,
        config,
        db_path=root / name / "soul.db",
        brain_dir=root / name / "brain",
        clock=FixedClock(1_780_000_000.0),
    )
    return made, Mailbox(name, config.mailbox.capacity)


async def admitted_order(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Queue 8 long events at ``flood`` and then one at ``calm``; the order in which
    the events were admitted (the spy only records, then calls the real admit)."""
    order: list[str] = []
    admit = Intake.admit

    async def spy(self: Intake, event: EventIn, *args: object, **kwargs: object) -> object:
        order.append(event.sender or "?")
        return await admit(self, event, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Intake, "admit", spy)
    flood, flood_box = soul(root, "flood")
    calm, calm_box = soul(root, "calm")
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(flood.run, flood_box)
            await tg.start(calm.run, calm_box)
            replies = [Future() for _ in range(9)]
            for i in range(8):
                flood_box.tell_nowait(Observe(EventIn(text=LONG, sender="flood")), replies[i])
            await anyio.lowlevel.checkpoint()  # the flood soul takes its mail and starts its turn
            calm_box.tell_nowait(Observe(EventIn(text="lunch at noon?", sender="calm")), replies[8])
            for reply in replies:
                await reply.wait()
            tg.cancel_scope.cancel()
    return order


async def test_another_souls_event_is_admitted_between_a_long_turns_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(supervisor.pace, "SLICE", 0.0)  # every step takes its slice
    order = await admitted_order(tmp_path, monkeypatch)
    assert sorted(order) == ["calm"] + ["flood"] * 8
    assert order.index("calm") < 7, order  # not after the flood soul's whole turn


async def test_without_a_spent_slice_a_turn_runs_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(supervisor.pace, "SLICE", 3600.0)  # the slice never runs out
    # and no text is long enough for a worker process (whose hand-over gives way too)
    monkeypatch.setattr(souls.intake.offload, "OFFLOAD_CHARS", 10**9)
    monkeypatch.setattr(souls.knowledge.knowledge, "OFFLOAD_CHARS", 10**9)
    order = await admitted_order(tmp_path, monkeypatch)
    assert order == ["flood"] * 8 + ["calm"]


async def test_a_long_texts_work_in_a_worker_process_gives_way_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(supervisor.pace, "SLICE", 3600.0)  # no slice ever runs out
    order = await admitted_order(tmp_path, monkeypatch)
    assert sorted(order) == ["calm"] + ["flood"] * 8
    assert order.index("calm") < 7, order  # it went in while a worker gated a long text
