# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese texts under test)
"""Neighbouring turns lift a memory that matches the query; they never carry one that
does not (DESIGN §3.5, §3.12). A turn about packing boxes is not about the cat's
kidneys because the turn before it was — and what was never recalled for the query
never wires into it (seed 003)."""

from __future__ import annotations

from pathlib import Path

from conftest import MAILBOX_HYGIENE
from recall_chat import T0, soul_running

from souls.actor.clock import FixedClock
from souls.messages import Recall
from souls.results import RecallResult

pytestmark = MAILBOX_HYGIENE

# Said right after the vet turns of Monday, about something else entirely.
BOXES = "我下周要搬家了，好烦，箱子还没打包完"
RECEIPT = "Hmm, I'm not sure which one, maybe check the clinic receipt."


async def test_the_turn_after_the_vet_is_not_recalled_for_the_vet(tmp_path: Path) -> None:
    clock = FixedClock(T0)
    async with soul_running(tmp_path, clock) as talk:
        await talk.play()
        clock.advance(3600)
        found = await talk.ask(Recall(query="Tuanzi vet kidney", k=20, explain=True))
    assert isinstance(found, RecallResult)
    texts = [item.text for item in found.items]
    assert "Tuanzi's bloodwork came back fine-ish, the vet wants a recheck in 3 months" in texts
    assert BOXES not in texts
    assert RECEIPT not in texts
    for item in found.items:
        why = item.explain
        assert why is not None
        if item.via == "bm25":
            # Its own text holds a query term; the neighbours only add to it.
            assert any(term.text for term in why.terms), item.text


async def test_a_reply_that_matches_is_still_lifted_by_the_question_before_it(
    tmp_path: Path,
) -> None:
    clock = FixedClock(T0)
    async with soul_running(tmp_path, clock) as talk:
        await talk.play()
        clock.advance(3600)
        found = await talk.ask(Recall(query="was Tuanzi drinking a lot?", explain=True))
    assert isinstance(found, RecallResult)
    # Ada's question ("...eating and drinking normally?") holds "drinking" and "Tuanzi";
    # Lin's answer holds "drinking" too, and the question before it lifts it.
    (answer,) = [i for i in found.items if i.text.startswith("drinking a LOT actually")]
    assert answer.explain is not None
    assert answer.explain.context > 0


async def test_rows_carried_by_their_neighbours_never_wire_in(tmp_path: Path) -> None:
    clock = FixedClock(T0)
    async with soul_running(tmp_path, clock) as talk:
        await talk.play()
        clock.advance(3600)
        for _ in range(5):
            await talk.recall("Tuanzi vet kidney")
            clock.advance(60)
        after = await talk.recall("the vet and Tuanzi's kidney, again")
        await talk.settle()
        (boxes,) = talk.rows("SELECT id FROM memories WHERE text = ?", (BOXES,))[0]
        (receipt,) = talk.rows("SELECT id FROM memories WHERE text = ?", (RECEIPT,))[0]
        wired = talk.rows(
            "SELECT a, b, weight FROM edges WHERE a IN (?, ?) OR b IN (?, ?)",
            (boxes, receipt, boxes, receipt),
        )
    assert wired == []
    assert BOXES not in [item.text for item in after]
    assert RECEIPT not in [item.text for item in after]
