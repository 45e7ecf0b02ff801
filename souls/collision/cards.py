"""Cards (primordial-soup's amino acids): one conversation's or reflect's conclusions.

A card holds one strong conclusion per line, its open questions and its connection
points (tags), and the events it came from. Invariants:

* Numbers are append-only and never reused (``AUTOINCREMENT``), so an old reference
  never points at the wrong card.
* A card is never rewritten: later notes are appended as new lines.
* Each card is also a Markdown file ``cards/NNNN.md`` in the soul's brain, readable
  without soupd; :meth:`CardStore.check` says where the folder and the database differ.
* A protein is a card that synthesises others (its members); it joins the pool.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import anyio
import msgspec

from souls.store.store import Store
from souls.text.tokenize import query_terms

__all__ = ["Card", "CardStore", "cited", "crystallise", "render"]

_CITATION = re.compile(r"\s*\[m\d+(?:,\s*m\d+)*\]")
_COUNT = re.compile(r"\s*\(\u00d7\d+\)")
_TAGS = 4


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


class CardStore:
    def __init__(self, store: Store, folder: Path) -> None:
        self._store = store
        self._folder = folder

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
        card = await self.get(number)
        assert card is not None
        await self._write(card)
        return card

    async def note(self, number: int, text: str, now: float) -> Card:
        """Append a note to a card; nothing it said before changes."""
        if not text.strip():
            raise ValueError("a note needs text")
        if await self.get(number) is None:
            raise ValueError(f"no card numbered {number}; list them with `soupd cards`")
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
        for number in numbers:
            card = await self.get(number)
            if card is not None:
                await self._write(card)

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
        where, params = ("WHERE number = ?", (number,)) if number is not None else ("", ())
        db = self._store.db
        heads = await db.execute_fetchall(
            "SELECT number, kind, title, source, created, strong_approvals, last_touched"
            " FROM cards"
            f" {where} ORDER BY number",
            params,
        )
        cards = []
        for num, kind, title, source, created, approvals, touched in heads:
            lines = await db.execute_fetchall(
                "SELECT kind, text FROM card_lines WHERE card = ? ORDER BY position", (num,)
            )
            members = await db.execute_fetchall(
                "SELECT member FROM card_members WHERE protein = ? ORDER BY member", (num,)
            )
            by_kind: dict[str, list[str]] = {
                "conclusion": [],
                "question": [],
                "tag": [],
                "note": [],
            }
            for line_kind, text in lines:
                by_kind[line_kind].append(text)
            cards.append(
                Card(
                    num, kind, title, source, created, by_kind["conclusion"], by_kind["question"],
                    by_kind["tag"], by_kind["note"], [m for (m,) in members], approvals,
                    touched,
                )
            )  # fmt: skip
        return cards

    async def _write(self, card: Card) -> None:
        await anyio.Path(self._folder).mkdir(parents=True, exist_ok=True)
        target = anyio.Path(self._folder / f"{card.number:04d}.md")
        partial = anyio.Path(self._folder / f".{card.number:04d}.md.partial")
        await partial.write_text(render(card), encoding="utf-8")
        await partial.rename(target)


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


def cited(summary: str) -> list[int]:
    """The memory ids a summary cites."""
    return sorted({int(n) for n in re.findall(r"m(\d+)", " ".join(_CITED.findall(summary)))})


_CITED = re.compile(r"\[m\d+(?:,\s*m\d+)*\]")


def crystallise(summary: str) -> tuple[list[str], list[str], list[str]]:
    """A reflect's conclusions, open questions and tags, read from its summary text.

    Lines under a question heading are questions; every other listed line is a
    conclusion. Citations and repeat counts are dropped. Tags are the content terms
    most of the lines share.
    """
    conclusions: list[str] = []
    questions: list[str] = []
    asking = False
    for raw in summary.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            asking = "question" in line.lower()
            continue
        if not line.startswith(("-", "*")):
            continue
        text = _COUNT.sub("", _CITATION.sub("", line.lstrip("-* "))).strip()
        if text:
            (questions if asking else conclusions).append(text)
    counts = Counter(t for text in conclusions + questions for t in set(query_terms(text)))
    tags = [t for t, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if n > 1]
    return conclusions, questions, tags[:_TAGS]
