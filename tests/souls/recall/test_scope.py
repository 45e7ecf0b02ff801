"""Recall narrowed to a sender (or the person linked to it), a session, a kind, a time
range (#18.5): over a real store, the scope holds in every layer recall draws from."""

from __future__ import annotations

from pathlib import Path

import anyio

from souls.recall.recall import RecallConfig, recall
from souls.store.store import NewEvent, Scope, Store
from souls.text.tokenize import fts_document

DAY = 86_400.0
T0 = 1_777_593_600.0  # 2026-05-01

SAID = [
    # text, sender, person, session, kind, ts
    ("kiwi jam recipe from grandma", "ada@tg", "ada", "s1", "dm", T0),
    ("kiwi prices went up again", "bo", None, "s1", "message", T0 + DAY),
    ("kiwi harvest report", "ci-bot", None, "s2", "webhook", T0 + 40 * DAY),
    ("more kiwi jam, with lime", "ada@slack", "ada", "s3", "message", T0 + 41 * DAY),
]


def event(
    text: str, sender: str, person: str | None, session: str, kind: str, ts: float
) -> NewEvent:
    return NewEvent(
        ref=None, kind=kind, channel=None, sender=sender, group=None, mentioned=False,
        session=session, ts=ts, recorded=ts, salience=0.5, text=text, doc=fts_document(text),
        person=person,
    )  # fmt: skip


async def test_a_scope_narrows_recall_to_what_is_within_it(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        store = await Store.open(tmp_path / "soul.db", context_turns=2)
        try:
            await store.append([event(*said) for said in SAID])
            stats = await store.term_stats()

            async def texts(scope: Scope | None = None) -> list[str]:
                found = await recall(store, stats, RecallConfig(), "kiwi jam", 10, scope=scope)
                return sorted(item.text for item in found.items)

            everything = await texts()
            by_person = await texts(Scope(sender="ada"))
            by_account = await texts(Scope(sender="ada@slack"))
            in_session = await texts(Scope(session="s1"))
            of_kind = await texts(Scope(kind="webhook"))
            in_may = await texts(Scope(since=T0, until=T0 + 31 * DAY))
            nothing = await texts(Scope(sender="ada", kind="webhook"))
        finally:
            await store.close()
    assert len(everything) == 4
    assert by_person == ["kiwi jam recipe from grandma", "more kiwi jam, with lime"]
    assert by_account == ["more kiwi jam, with lime"]
    assert in_session == ["kiwi jam recipe from grandma", "kiwi prices went up again"]
    assert of_kind == ["kiwi harvest report"]
    assert in_may == ["kiwi jam recipe from grandma", "kiwi prices went up again"]
    assert nothing == []


def test_an_empty_scope_is_no_scope() -> None:
    assert not Scope()
    assert Scope(since=0.0)
