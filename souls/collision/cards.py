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
import msgspec

from souls.collision.lines import key
from souls.store.files import replace_text
from souls.store.store import Store
from supervisor.errors import MissingItem

__all__ = ["Card", "CardStore", "render"]


class Card(msgspec.Struct, frozen=True):
    number: int
    kind: str  # card | protein
    title: str
    source: str  # reflect | manual | synthesis
    created: float
    conclusions: list[str]
    questions: list[str]
    tags: list[str]
    notes: list[str]
    members: list[int]
    strong_approvals: int = 0
    last_touched: float = 0.0
    # The questions (numbered from 1) the user closed.
    closed: list[int] = msgspec.field(default_factory=list)
    # When its conclusions were reached: the latest of the events it came from (the
    # conversation's time, which an import may date long before ``created``).
    reached: float = 0.0

    @property
    def open_questions(self) -> list[tuple[int, str]]:
        """The questions not closed yet, with their numbers."""
        return [(i, q) for i, q in enumerate(self.questions, 1) if i not in self.closed]


class CardStore:
    def __init__(self, store: Store, folder: Path) -> None:
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
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                if members:
                    marks = ",".join("?" * len(members))
                    known = await db.execute_fetchall(
                        f"SELECT number FROM cards WHERE number IN ({marks})", list(members)
                    )
                    missing = set(members) - {n for (n,) in known}
                    if missing:
                        raise ValueError(f"no card numbered {sorted(missing)[0]} to synthesise")
                cursor = await db.execute(
                    "INSERT INTO cards (kind, title, source, created, last_touched)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (kind, title.strip() or conclusions[0][:80], source, now, now),
                )
                inserted = cursor.lastrowid
                assert inserted is not None
                number: int = inserted
                lines = [("conclusion", c) for c in conclusions]
                lines += [("question", q.strip()) for q in questions if q.strip()]
                lines += [("tag", t.strip()) for t in tags if t.strip()]
                await db.executemany(
                    "INSERT INTO card_lines (card, position, kind, text, created)"
                    " VALUES (?, ?, ?, ?, ?)",
                    [(number, i, k, text, now) for i, (k, text) in enumerate(lines)],
                )
                await db.executemany(
                    "INSERT INTO card_members (protein, member) VALUES (?, ?)",
                    [(number, m) for m in members],
                )
                # The events a card came from: those of the memories its summary cited.
                await db.executemany(
                    "INSERT OR IGNORE INTO card_sources (card, event_id)"
                    " SELECT ?, event_id FROM memories WHERE id = ? AND event_id IS NOT NULL",
                    [(number, m) for m in memories],
                )
        if self._keys is not None:
            self._keys.update(key(text) for kind, text in lines if kind != "tag")
        card = await self.get(number)
        assert card is not None
        await self._write(card)
        return card

    async def line_keys(self) -> set[str]:
        """The keys of every conclusion and open question any card holds."""
        if self._keys is None:
            rows = await self._store.db.execute_fetchall(
                "SELECT text FROM card_lines WHERE kind IN ('conclusion', 'question')"
            )
            self._keys = {key(text) for (text,) in rows}
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
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                await db.execute(
                    "INSERT INTO card_closures (card, question, answered_by, line, created)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (number, question, answered_by, line, now),
                )
                await db.execute(
                    "INSERT INTO card_lines (card, position, kind, text, created)"
                    " SELECT ?, coalesce(max(position), -1) + 1, 'note', ?, ?"
                    " FROM card_lines WHERE card = ?",
                    (number, text, now, number),
                )
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
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                rows = list(
                    await db.execute_fetchall(
                        "SELECT coalesce(max(position), -1) + 1 FROM card_lines WHERE card = ?",
                        (number,),
                    )
                )
                await db.execute(
                    "INSERT INTO card_lines (card, position, kind, text, created)"
                    " VALUES (?, ?, 'note', ?, ?)",
                    (number, rows[0][0], text.strip(), now),
                )
                await db.execute(
                    "UPDATE cards SET last_touched = ? WHERE number = ?", (now, number)
                )
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
        # One query per table whatever the number of cards: all() runs at every draw.
        one = number is not None
        params = (number,) if one else ()
        db = self._store.db
        heads = await db.execute_fetchall(
            "SELECT number, kind, title, source, created, strong_approvals, last_touched"
            f" FROM cards{' WHERE number = ?' if one else ''} ORDER BY number",
            params,
        )
        if not heads:
            return []
        lines: dict[int, dict[str, list[str]]] = {}
        for card, kind, text in await db.execute_fetchall(
            f"SELECT card, kind, text FROM card_lines{' WHERE card = ?' if one else ''}"
            " ORDER BY card, position",
            params,
        ):
            lines.setdefault(card, {}).setdefault(kind, []).append(text)
        members: dict[int, list[int]] = {}
        for protein, member in await db.execute_fetchall(
            "SELECT protein, member FROM card_members"
            f"{' WHERE protein = ?' if one else ''} ORDER BY protein, member",
            params,
        ):
            members.setdefault(protein, []).append(member)
        closed: dict[int, list[int]] = {}
        for card, question in await db.execute_fetchall(
            f"SELECT card, question FROM card_closures{' WHERE card = ?' if one else ''}"
            " ORDER BY card, question",
            params,
        ):
            closed.setdefault(card, []).append(question)
        reached: dict[int, float] = {
            card: ts
            for card, ts in await db.execute_fetchall(
                "SELECT s.card, max(e.ts) FROM card_sources AS s JOIN events AS e"
                f" ON e.id = s.event_id{' WHERE s.card = ?' if one else ''} GROUP BY s.card",
                params,
            )
        }
        cards = []
        for num, kind, title, source, created, approvals, touched in heads:
            by_kind = lines.get(num, {})
            cards.append(
                Card(
                    num, kind, title, source, created, by_kind.get("conclusion", []),
                    by_kind.get("question", []), by_kind.get("tag", []),
                    by_kind.get("note", []), members.get(num, []), approvals, touched,
                    closed.get(num, []), reached.get(num, created),
                )
            )  # fmt: skip
        return cards

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
