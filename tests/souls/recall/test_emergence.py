"""Emergence rotates (DESIGN §3.5, seed 002): rarity S counts from when an item last
surfaced in a context, so what one context injected gives way in the next, and after a
session budget pause what was injected before it gives way to what was not. The stable
prefix never moves: rotation happens in the recalled part only."""

from __future__ import annotations

import itertools
from pathlib import Path

from conftest import MAILBOX_HYGIENE
from recall_chat import T0, recalled, soul_running

from souls.actor.clock import FixedClock
from souls.config import SoulConfig
from souls.recall.context import ContextConfig

pytestmark = MAILBOX_HYGIENE

# What an agent does between two turns of the same session: about a minute.
TURN = 60.0


async def test_five_no_query_contexts_of_a_session_rotate(tmp_path: Path) -> None:
    clock = FixedClock(T0)
    async with soul_running(tmp_path, clock) as talk:
        await talk.play()
        clock.advance(3600)
        contexts = []
        for _ in range(5):
            contexts.append(await talk.context(session="sun"))
            clock.advance(TURN)
    shown = [frozenset(recalled(c)) for c in contexts]
    assert all(shown)
    assert len(set(shown)) >= 3, shown
    # Consecutive contexts never show the same set: the item that surfaced last gives way.
    assert all(a != b for a, b in itertools.pairwise(shown))
    # The stable prefix (identity, summary, weekly) is byte-identical throughout.
    assert len({c.prefix_hash for c in contexts}) == 1


async def test_no_query_contexts_bring_memories_back_and_rotate_them(tmp_path: Path) -> None:
    """The week's promises, plans and questions outnumber a context's slots; still every
    context with no query brings memories back (the oldest first, the most salient of
    them), and they rotate: rarity counts from when each last surfaced."""
    clock = FixedClock(T0)
    async with soul_running(tmp_path, clock) as talk:
        await talk.play()
        clock.advance(3600)
        memories, pressed = [], []
        for _ in range(5):
            context = await talk.context(session="sun")
            memories.append(frozenset(i for i in recalled(context) if i.startswith("m")))
            log = await talk.why()
            pressed.append(sum("U=" in item.reason for item in log.items))
            clock.advance(TURN)
        texts = dict(talk.rows("SELECT 'm' || id, text FROM memories"))
    assert all(memories), memories
    assert len(set(memories)) >= 3, memories
    assert all(a.isdisjoint(b) for a, b in itertools.pairwise(memories))
    k = SoulConfig().context.recall_k
    assert max(pressed) <= -(-k // 2)  # open items keep to their share of the slots
    assert all(texts[label] for shown in memories for label in shown)


async def test_what_surfaced_is_remembered_across_a_restart(tmp_path: Path) -> None:
    clock = FixedClock(T0)
    async with soul_running(tmp_path, clock) as talk:
        await talk.play()
        clock.advance(3600)
        before = recalled(await talk.context(session="sun"))
        await talk.settle()
        assert talk.rows("SELECT count(*) FROM surfaced")[0][0] == len(before)
    clock.advance(TURN)
    async with soul_running(tmp_path, clock) as talk:
        after = recalled(await talk.context(session="sun"))
    assert after
    assert set(after) != set(before)


async def test_after_a_session_pause_what_was_injected_gives_way(tmp_path: Path) -> None:
    # A small session budget: a few contexts fill it, then recall pauses for the window.
    config = SoulConfig(context=ContextConfig(session_chars=2500, session_window=600.0))
    clock = FixedClock(T0)
    async with soul_running(tmp_path, clock, config) as talk:
        await talk.play()
        clock.advance(3600)
        before: set[str] = set()
        while True:
            context = await talk.context(session="sun")
            clock.advance(TURN)
            if not recalled(context):
                break  # paused
            before |= set(recalled(context))
        # While paused nothing surfaces: another paused context changes nothing.
        await talk.settle()
        surfaced = talk.rows("SELECT item, at FROM surfaced ORDER BY item")
        paused = await talk.context(session="sun")
        await talk.settle()
        assert "recalled items paused" in paused.text
        assert talk.rows("SELECT item, at FROM surfaced ORDER BY item") == surfaced
        clock.advance(600)
        resumed = recalled(await talk.context(session="sun"))
        log = await talk.why()
    assert resumed
    assert log.mode == "emergence"
    # Open obligations keep their pressure; what competes on rarity alone (facts, likes)
    # is what the session has not seen yet.
    reasons = {item.id: item.reason for item in log.items}
    on_rarity = [label for label in resumed if "U=" not in reasons[label]]
    assert on_rarity
    assert not set(on_rarity) & before, (on_rarity, before)
