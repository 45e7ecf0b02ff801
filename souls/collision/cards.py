"""Cards (primordial-soup's amino acids): one conversation's or reflect's conclusions.

A card holds one strong conclusion per line, its open questions and its connection
points (tags), and the events it came from. Invariants:

* Numbers are append-only and never reused (``AUTOINCREMENT``), so an old reference
  never points at the wrong card.
* A card is never rewritten: later notes are appended as new lines.
* Each card is also a Markdown file ``cards/NNNN.md`` in the soul's brain, readable
  without soupd; :meth:`CardStore.check` says where the folder and the database differ.
* A protein is a card that synthesises others (its members); it joins the pool.
* A question is closed by the user (a tide's closure proposal, :meth:`CardStore.close`):
  recorded with the card line that answered it and noted on the card; a card with no
  open question left is closed (it draws at ``zeig_closed``).

What a reflect's card says is :mod:`souls.collision.crystal`'s business.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

import anyio

from souls.collision.lines import key
from souls.results import Card
from souls.store.cards import NewCard
from souls.store.files import replace_text
from souls.store.interface import SoulStore
from supervisor.errors import MissingItem

__all__ = ["Card", "CardStore", "render"]


class CardStore:
    def __init__(self, store: SoulStore, folder: Path) -> None:
        self._store = store
        self._folder = folder
        # The keys of every conclusion and question on a card (``lines.key``), made on
        # first use and kept current by ``add``: what a new card may not say again.
        self._keys: set[str] | None = None

    async def add(
        self,
        *,
        title: str,
        conclusions: Sequence[str],
        questions: Sequence[str] = (),
        tags: Sequence[str] = (),
        source: str = "manual",
        members: Sequence[int] = (),
        memories: Sequence[int] = (),
        now: float,
    ) -> Card:
        """Crystallise a new card (a protein when ``members`` are given)."""
        conclusions = [c.strip() for c in conclusions if c.strip()]
        if not conclusions:
            raise ValueError("a card needs at least one conclusion")
        kind = "protein" if members else "card"
        rows = self._store.cards
        # The soul is its store's only writer: a member found now is there at the write.
        missing = set(members) - await rows.existing(members) if members else set()
        if missing:
            raise ValueError(f"no card numbered {sorted(missing)[0]} to synthesise")
        lines = [("conclusion", c) for c in conclusions]
        lines += [("question", q.strip()) for q in questions if q.strip()]
        lines += [("tag", t.strip()) for t in tags if t.strip()]
        title = title.strip() or conclusions[0][:80]
        number = await rows.add(NewCard(kind, title, source, lines, members, memories, now))
        if self._keys is not None:
            self._keys.update(key(text) for kind, text in lines if kind != "tag")
        card = await self.get(number)
        assert card is not None
        await self._write(card)
        return card

    async def line_keys(self) -> set[str]:
        """The keys of every conclusion and open question any card holds."""
        if self._keys is None:
            self._keys = {key(text) for text in await self._store.cards.line_texts()}
        return self._keys

    async def close(
        self, number: int, question: int, answered_by: int, line: int, now: float
    ) -> Card:
        """Close question ``question`` of card ``number``: card ``answered_by``'s
        conclusion ``line`` answered it. Noted on the card; nothing it said changes."""
        card, answer = await self.get(number), await self.get(answered_by)
        if card is None or answer is None:
            missing = number if card is None else answered_by
            raise MissingItem(f"no card numbered {missing}; list them with `soupd cards`")
        if not 1 <= question <= len(card.questions) or question in card.closed:
            raise ValueError(f"card {number} has no open question {question}")
        if not 1 <= line <= len(answer.conclusions):
            raise ValueError(f"card {answered_by} has no conclusion line {line}")
        # The answer is named, not quoted: forgetting its events redacts it in one place.
        text = f"closed question {question}: answered by card {answered_by:04d} line {line}"
        await self._store.cards.close(number, question, answered_by, line, text, now)
        closed = await self.get(number)
        assert closed is not None
        await self._write(closed)
        return closed

    async def note(self, number: int, text: str, now: float) -> Card:
        """Append a note to a card; nothing it said before changes."""
        if not text.strip():
            raise ValueError("a note needs text")
        if await self.get(number) is None:
            raise MissingItem(f"no card numbered {number}; list them with `soupd cards`")
        await self._store.cards.note(number, text.strip(), now)
        card = await self.get(number)
        assert card is not None
        await self._write(card)
        return card

    async def rewrite(self, numbers: Sequence[int]) -> None:
        """Write these cards' files again from the database (after a redaction)."""
        self._keys = None  # redacted lines changed their text
        for number in numbers:
            card = await self.get(number)
            if card is not None:
                await self._write(card)

    async def restore(self) -> int:
        """Write every card file that is missing or differs from its card (the database
        is the truth, a file its view); how many were written."""
        folder = anyio.Path(self._folder)
        written = 0
        for card in await self.all():
            try:
                same = await (folder / f"{card.number:04d}.md").read_text(encoding="utf-8")
            except (FileNotFoundError, UnicodeDecodeError):
                same = None
            if same != render(card):
                await self._write(card)
                written += 1
        return written

    async def get(self, number: int) -> Card | None:
        cards = await self._load(number)
        return cards[0] if cards else None

    async def all(self) -> list[Card]:
        return await self._load(None)

    async def check(self) -> list[str]:
        """Where the cards folder and the database disagree (empty when they agree)."""
        problems = []
        expected = {f"{card.number:04d}.md": render(card) for card in await self.all()}
        folder = anyio.Path(self._folder)
        present = {p.name async for p in folder.glob("*.md")} if await folder.is_dir() else set()
        for name, text in sorted(expected.items()):
            if name not in present:
                problems.append(f"cards/{name} is missing")
            elif await (folder / name).read_text(encoding="utf-8") != text:
                problems.append(f"cards/{name} differs from card {int(name[:-3])} in the database")
        problems += [
            f"cards/{name} has no card in the database" for name in sorted(present - set(expected))
        ]
        return problems

    async def _load(self, number: int | None) -> list[Card]:
        return await self._store.cards.load(number)

    async def _write(self, card: Card) -> None:
        await anyio.Path(self._folder).mkdir(parents=True, exist_ok=True)
        # Through an exclusively created temporary: a planted link is never followed.
        target = self._folder / f"{card.number:04d}.md"
        await anyio.to_thread.run_sync(replace_text, target, render(card))


def render(card: Card) -> str:
    """The card as Markdown (what ``cards/NNNN.md`` holds)."""
    when = dt.datetime.fromtimestamp(card.created, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    label = "Protein" if card.kind == "protein" else "Card"
    out = [f"# {label} {card.number:04d} — {card.title}", "", f"{when} · {card.source}", ""]
    if card.members:
        out += ["Synthesises: " + ", ".join(f"{m:04d}" for m in card.members), ""]
    out += ["## Conclusions", *(f"{i}. {c}" for i, c in enumerate(card.conclusions, 1)), ""]
    if card.questions:
        out += ["## Open questions", *(f"{i}. {q}" for i, q in enumerate(card.questions, 1))]
        out.append("")
    if card.tags:
        out += ["## Connections", " ".join(f"#{t}" for t in card.tags), ""]
    if card.notes:
        out += ["## Notes", *(f"- {n}" for n in card.notes), ""]
    return "\n".join(out)
