"""The tide: protein proposals are small groups of cards that keep colliding (presented
together) or whose memories keep firing together (strong Hebbian edges), never a chain
of links lumped into one; closure proposals are open questions a later card answers;
the settlement counts closures made, strong approvals and the silence rate."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from html.parser import HTMLParser
from pathlib import Path

from souls.collision.cards import CardStore
from souls.collision.markdown import to_html
from souls.collision.tide import ClosureProposal, ProteinProposal, TideConfig, closures, tide
from souls.store.changes import Changes
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document

NOW = 1_800_000_000.0
CONFIG = TideConfig()


def event(text: str) -> NewEvent:
    return NewEvent(
        None, "message", None, None, None, False, None, NOW, NOW, 0.5, text, fts_document(text)
    )


@asynccontextmanager
async def deck(tmp_path: Path) -> AsyncIterator[tuple[Store, CardStore]]:
    store = await Store.open(tmp_path / "soul.db")
    try:
        yield store, CardStore(store, tmp_path / "cards")
    finally:
        await store.close()


async def draws(store: Store, drawn: list[tuple[list[int], bool]]) -> None:
    async with store.transaction() as db:
        await db.executemany(
            "INSERT INTO draws (seed, topic, cards, wildcard, presented, verdicts, created)"
            " VALUES (1, 'topic', ?, ?, ?, '[]', ?)",
            [(json.dumps(cards), cards[-1], int(shown), NOW) for cards, shown in drawn],
        )


async def test_strong_hebbian_edges_link_cards_into_a_proposal(tmp_path: Path) -> None:
    async with deck(tmp_path) as (store, cards):
        await store.append([event(f"memory {n}") for n in range(1, 7)])  # memories 1..6
        for n, memories in enumerate([[1], [2], [3], [4], [5, 6]], 1):
            await cards.add(title=f"c{n}", conclusions=[f"c{n}"], memories=memories, now=NOW)
        edges = Changes()
        edges.edges[(1, 2)] = 4.0  # cards 1 and 2: strong
        edges.edges[(1, 3)] = 3.0  # cards 1 and 3: just strong enough
        edges.edges[(2, 3)] = 3.5  # cards 2 and 3: so 1, 2, 3 are linked each to each
        edges.edges[(3, 4)] = 2.9  # cards 3 and 4: too weak
        edges.edges[(5, 6)] = 9.0  # inside card 5: no pair
        await store.flush(edges, NOW)
        report = await tide(store, await cards.all(), NOW, CONFIG, hebbian_threshold=3.0)
        assert report.protein_proposals == [ProteinProposal([1, 2, 3], 0, 4.0)]
        assert "- 0001 + 0002 + 0003 (Hebbian edge 4)" in report.markdown

        await cards.add(title="p", conclusions=["p"], members=[1, 2], now=NOW)
        joined = await tide(store, await cards.all(), NOW, CONFIG, hebbian_threshold=3.0)
        assert joined.protein_proposals == [ProteinProposal([2, 3], 0, 3.5)]  # 1-2 joined


async def test_a_chain_of_links_is_no_protein(tmp_path: Path) -> None:
    """A week of draws over ten cards: every card was drawn with its neighbours, and
    silent draws link nothing. Linking the chain would lump all ten into one."""
    async with deck(tmp_path) as (store, cards):
        for n in range(10):
            await cards.add(title=f"c{n}", conclusions=[f"conclusion {n}"], now=NOW)
        chain = [([n, n + 1, (n + 5) % 10 + 1], True) for n in range(1, 10)]
        await draws(store, chain * 2 + [([1, 5, 9], False)] * 3)
        report = await tide(store, await cards.all(), NOW, CONFIG)
    proposals = report.protein_proposals
    assert proposals
    assert all(2 <= len(p.cards) <= CONFIG.max_members for p in proposals)
    grouped = [c for p in proposals for c in p.cards]
    assert len(grouped) == len(set(grouped))  # a card is in one proposal at most
    pairs = {tuple(sorted((a, b))) for cards_, _ in chain for a in cards_ for b in cards_ if a != b}
    for p in proposals:  # every two cards of a group were presented together
        assert all((a, b) in pairs for i, a in enumerate(p.cards) for b in p.cards[i + 1 :])
    assert (1, 5) not in {(p.cards[0], p.cards[-1]) for p in proposals}  # silent draws


async def test_a_later_card_that_answers_an_open_question_is_a_closure_proposal(
    tmp_path: Path,
) -> None:
    async with deck(tmp_path) as (store, cards):
        berlin = await cards.add(
            title="offer",
            conclusions=["the job offer from the Berlin startup came through"],
            questions=["should you really move to Berlin though?", "I'm not sure, remind me?"],
            now=NOW,
        )
        await cards.add(  # says "Berlin" and "move", but asks: no answer
            title="asking", conclusions=["so will you move to Berlin?"], now=NOW
        )
        answer = await cards.add(
            title="decided",
            conclusions=[
                "my mum got sick",
                "I turned down the Berlin job, I won't move 1000 km away right now",
            ],
            now=NOW,
        )
        earlier = await cards.add(title="earlier?", conclusions=["a"], questions=["b c?"], now=NOW)
        every = await cards.all()
        proposals = closures(every, CONFIG)
        assert proposals == [
            ClosureProposal(
                berlin.number,
                1,
                "should you really move to Berlin though?",
                answer.number,
                2,
                "I turned down the Berlin job, I won't move 1000 km away right now",
            )
        ]
        assert earlier.number not in {p.card for p in proposals}
        for p in proposals:
            await cards.close(p.card, p.question, p.answered_by, p.line, NOW)
        await draws(store, [([1, 2, 3], True), ([1, 2, 4], False), ([2, 3, 4], False)])
        report = await tide(store, await cards.all(), NOW + 60, CONFIG)
    assert report.closure_proposals == []  # applied, so no longer proposed
    assert report.closures_made == 1
    assert report.silence_rate == round(2 / 3, 4)
    assert "- closures made: 1" in report.markdown


class _Tags(HTMLParser):
    """The tags of a page, each with the tag it sits in."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.seen: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.append((tag, self.open[-1] if self.open else ""))
        if tag not in {"meta", "br", "img", "hr"}:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        while self.open and self.open.pop() != tag:
            pass


def tags(page: str) -> list[tuple[str, str]]:
    parser = _Tags()
    parser.feed(page)
    return parser.seen


async def test_the_report_renders_its_markdown(tmp_path: Path) -> None:
    async with deck(tmp_path) as (store, cards):
        for n in range(3):
            await cards.add(title=f"t{n}", conclusions=[f"c{n}"], now=NOW)
        await draws(store, [([1, 2, 3], True)])  # presented, no verdict yet
        report = await tide(store, await cards.all(), NOW + 60, CONFIG)
    assert not report.complete
    assert "**Reconciliation incomplete:**" in report.markdown
    assert "<strong>Reconciliation incomplete:</strong>" in report.html
    assert "**" not in report.html
    placed = tags(report.html)
    items = [parent for tag, parent in placed if tag == "li"]
    assert len(items) >= 5
    assert set(items) == {"ul"}  # every item in a list


def test_raw_html_in_markdown_is_text() -> None:
    rendered = to_html(
        "- a <script>alert(1)</script>\n- <img src=x onerror=alert(1)>\n\n"
        "[link](javascript:alert(1))\n\n<div onclick=x>raw</div>\n"
    )
    assert "<script" not in rendered
    assert "<img" not in rendered
    assert "<div" not in rendered
    assert 'href="javascript' not in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
