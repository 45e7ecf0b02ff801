"""People behind accounts (souls/store/persons.py, souls/store/postgres/persons.py) on
both backends (the fixtures of tests/backends.py): a link makes the person, attributes
the account's events and the claims read from them, and moves an account linked
before; every identity and person read back in the same order; the speakers recall
knows include a person linked after they were first read."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from souls.store.changes import Changes, NewClaim
from souls.store.interface import SoulStore
from souls.store.store import NewEvent
from souls.text.tokenize import fts_document

T0 = 1_780_000_000.0

Opener = Callable[[], Awaitable[SoulStore]]


def event(i: int, channel: str, sender: str) -> NewEvent:
    text = f"message {i}: my city is Lyon"
    return NewEvent(
        ref=f"r{i}", kind="message", channel=channel, sender=sender, group=None,
        mentioned=False, session=None, ts=T0 + i, recorded=T0 + i, salience=0.5, text=text,
        doc=fts_document(text),
    )  # fmt: skip


def claim(claim_id: int, event_id: int, subject: str) -> NewClaim:
    return NewClaim(
        claim_id, "fact", subject, "city", "Lyon", "my city is Lyon", event_id, "rule", "high",
        "active", T0, None, T0, None, None, None,
    )  # fmt: skip


async def test_a_link_attributes_an_accounts_events_and_claims(
    store: SoulStore, opener: Opener
) -> None:
    ids = await store.append(
        [event(0, "telegram", "4711"), event(1, "slack", "U1"), event(2, "telegram", "4711")],
        Changes(claims=[claim(1, -1, "4711"), claim(2, -2, "U1"), claim(3, -3, "4711")]),
        now=T0 + 10,
    )
    assert len(ids) == 3
    assert "maria" not in await store.speakers()
    assert await store.link_person("maria", "telegram", "4711", T0 + 20) == (2, 2)
    assert "maria" in await store.speakers()
    assert await store.link_person("maria", "slack", "U1", T0 + 21) == (1, 1)
    assert await store.link_person("bob", "web", "b", T0 + 22) == (0, 0)
    for reader in (store, await opener()):
        assert await reader.identities() == [
            ("slack", "U1", "maria"), ("telegram", "4711", "maria"), ("web", "b", "bob")
        ]  # fmt: skip
        assert await reader.persons() == [
            (1, "maria", "slack", "U1"), (1, "maria", "telegram", "4711"), (2, "bob", "web", "b")
        ]  # fmt: skip
        origins = await reader.origins(ids)
        assert [origins[i].person for i in ids] == ["maria", "maria", "maria"]
    # Relinked: the account moves to the other person, its events and claims with it.
    assert await store.link_person("bob", "slack", "U1", T0 + 30) == (1, 1)
    assert ("slack", "U1", "bob") in await store.identities()
    origins = await store.origins(ids)
    assert [origins[i].person for i in ids] == ["maria", "bob", "maria"]
