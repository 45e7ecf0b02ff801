"""Cross-channel identity: the person behind an account (Skynet's remember_person).

A person has a name and linked identities, each a (channel, external id) pair such as
``("telegram", "4711")`` or ``("slack", "U024BE7LH")``. An event whose channel and sender
are linked is attributed to the person (``events.person``): its claims are about the
person, its feelings become a somatic marker on the person, and recall's speaker
awareness reads the person rather than the account — so the same person writing from
two apps is one person. Linking an account that already has events attributes those
too (their claims follow), and relinking an account to another person moves it.

Only the soul actor writes (one transaction per link); the map of identities is kept in
memory, read at load.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from souls.store.interface import SoulStore

__all__ = ["Person", "Persons", "parse_identity"]

_MAX_NAME = 100


class Person(msgspec.Struct, frozen=True):
    id: int
    name: str
    identities: list[str]  # "channel:external id", sorted


def parse_identity(value: str) -> tuple[str, str]:
    """``"telegram:4711"`` as ``("telegram", "4711")``; ValueError saying the form."""
    channel, sep, external = value.partition(":")
    if not sep or not channel.strip() or not external.strip():
        raise ValueError(f"{value!r} is not CHANNEL:ID (e.g. telegram:4711 or slack:U024BE7LH)")
    return channel.strip(), external.strip()


class Persons:
    def __init__(self, store: SoulStore) -> None:
        self._store = store
        self._by_identity: dict[tuple[str, str], str] = {}

    async def load(self) -> None:
        self._by_identity = {
            (channel, external): name for channel, external, name in await self._store.identities()
        }

    def resolve(self, channel: str | None, sender: str | None) -> str | None:
        """The person behind ``sender`` on ``channel``, if linked."""
        if channel is None or sender is None:
            return None
        return self._by_identity.get((channel, sender))

    async def link(self, name: str, channel: str, external: str, now: float) -> dict[str, object]:
        """Link ``channel:external`` to the person ``name`` (made when new); attribute the
        account's events and their claims and questions to the person."""
        name = " ".join(name.split())
        if not name or len(name) > _MAX_NAME:
            raise ValueError(f"a person's name must be 1-{_MAX_NAME} characters")
        previous = self._by_identity.get((channel, external))
        events, claims = await self._store.link_person(name, channel, external, now)
        self._by_identity[(channel, external)] = name
        return {
            "person": name,
            "identity": f"{channel}:{external}",
            "moved_from": previous if previous != name else None,
            "events": events,
            "claims": claims,
        }

    async def all(self) -> list[Person]:
        rows = await self._store.persons()
        people: dict[int, Person] = {}
        for person_id, name, channel, external in rows:
            person = people.setdefault(person_id, Person(person_id, name, []))
            if channel is not None:
                person.identities.append(f"{channel}:{external}")
        return list(people.values())

    def names(self) -> Sequence[str]:
        return sorted(set(self._by_identity.values()))
