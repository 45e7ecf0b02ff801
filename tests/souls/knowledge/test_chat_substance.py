# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese texts under test)
"""A held-out chat (#17): two friends catching up over a few days, English and Chinese,
with typos, fillers, pleasantries, echoes, reported speech and a change of mind, played
through Knowledge.perceive on a real soul database. What a careful reader would keep is
stored; the small talk around it leaves nothing behind (souls.knowledge.claim_substance
and the rule families that ask it)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from souls.knowledge.claims import extract_rules
from souls.knowledge.goal_talk import read_goals
from souls.knowledge.knowledge import Knowledge, KnowledgeConfig
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document

START = datetime(2024, 3, 4, 19, 0, tzinfo=UTC).timestamp()  # a Monday evening
DAY = 86_400.0

# (day, speaker, text): nothing of it comes from any benchmark.
CHAT: list[tuple[int, str, str]] = [
    (0, "priya", "hiii Wei!! long time no see lol. how r u?"),
    (0, "wei", "Heyy! I'm good, been super busy tbh. I had a great time at your party btw"),
    (
        0,
        "priya",
        "aww thanks!! I love hearing from you. So guess what, I adopted a dog named"
        " Biscuit last week!",
    ),
    (
        0,
        "wei",
        "omg so cute!! I'm so happy for you. I've always wanted to try that but my"
        " landlord says no pets",
    ),
    (0, "wei", "Btw I almost bought a new car yesterday lol, then I changed my mind"),
    (
        0,
        "priya",
        "haha same, I did the same thing last year. I'm working on it, trying my best to save lol",
    ),
    (1, "priya", "My friend was like, I quit my job yesterday, and I was shocked"),
    (1, "wei", "If I get the promotion I'll move to Shanghai next year"),
    (1, "wei", "我上周去了成都，超好吃！"),
    (1, "priya", "哇，好羡慕！我试了一下你推荐的那家店，还不错"),
    (1, "wei", "我们聊了很多，我会想你的"),
    (2, "priya", "I love the vibe! Also I'm allergic to peanuts, so no satay for me"),
    (2, "wei", "I'll keep my fingers crossed for you, and I'll send you the pics later"),
    (2, "wei", "I promise I'll call you on Friday about the flat"),
    (2, "priya", "I believe in you!! you got this"),
    (3, "priya", "My goal this year is to run a half marathon"),
    (3, "wei", "I love cooking Sichuan food, it's my thing"),
    (3, "priya", "I love chatting with you, talk soon!"),
    (3, "wei", "I'd love to go there someday"),
    (4, "wei", "we had a blast last weekend at the night market"),
    (4, "priya", "Ok I'm off to bed, I had a good day. I learned a lot"),
    (4, "wei", "我试了一下，感觉还行"),
    (4, "priya", "我们打算明年买房"),
    (4, "wei", "I was going to call you but my phone died"),
    (4, "priya", "I love every minute of it"),
]

# What a reader keeps: (speaker, slot, value).
KEPT = {
    ("priya", "pet_kind", "dog"),
    ("priya", "pet_name", "Biscuit"),
    ("priya", "event", "adopted a dog named Biscuit"),
    ("wei", "event", "去了成都"),
    ("priya", "allergy", "peanuts"),
    ("wei", "commitment", "call you"),
    ("wei", "likes", "cooking Sichuan food"),
    ("wei", "event", "had a blast last weekend at the night market"),
    ("priya", "plan", "明年买房"),
}
GOALS = {("priya", "run a half marathon (this year)"), ("priya", "明年买房")}


def _event(day: int, speaker: str, text: str) -> NewEvent:
    ts = START + day * DAY
    return NewEvent(
        None, "message", None, speaker, None, False, None, ts, ts, 0.5, text, fts_document(text)
    )


async def test_a_held_out_chat_keeps_what_was_said_and_nothing_of_the_small_talk(
    tmp_path: Path,
) -> None:
    store = await Store.open(tmp_path / "soul.db")
    try:
        knowledge = Knowledge(store, KnowledgeConfig(), HygieneGate(HygieneConfig()))
        await knowledge.load()
        for day, speaker, text in CHAT:
            one = _event(day, speaker, text)
            plan = await knowledge.perceive([one])
            ids = await store.append([one], plan.joined(), one.ts)
            knowledge.committed(plan, ids)
        claims = await knowledge.entries.claims(every=True)
        assert {(c.subject, c.slot, c.value) for c in claims} == KEPT
        assert {c.state for c in claims} == {"active"}
        goals = {(g.speaker, g.statement) for g in knowledge.goals.values()}
        assert goals == GOALS
        # "I believe in you" is encouragement, not a value of the speaker's own.
        assert not [g for g in knowledge.goals.values() if g.domain == "belief"]
    finally:
        await store.close()


def _said(text: str) -> set[tuple[str, str]]:
    found = {(c.slot, c.value) for c in extract_rules(text, sender="a", ts=START)}
    return found | {(f"goal.{g.action}", g.statement) for g in read_goals(text)}


def test_pleasantries_echoes_and_the_listener_leave_nothing() -> None:
    for text in (
        "I had a great time, thanks again!",
        "I went through a lot last year.",
        "I'm working on it.",
        "I felt the same way when I started.",
        "I've always wanted to try that!",
        "I enjoyed our chat yesterday.",
        "I'm looking forward to it.",
        "I love seeing you so happy.",
        "I enjoy talking with you about this stuff.",
        "I love stuff like that.",
        "I love the colors.",
        "I love the movie!",
        "I'll do my best to make you proud!",
        "I'll get the video to you soon!",
        "I believe in your power to make a difference.",
        "I'll make a list of the ones that suit what I believe in.",
        "She said, I moved to Denver last year.",
        "我很喜欢和你聊天",
        "我看了一下",
        "我会给你发照片的",
    ):
        assert _said(text) == set(), text


def test_what_the_filters_leave_standing() -> None:
    assert ("event", "met up") in _said("We met up last week at the lake.")
    assert ("event", "feeling down lately") in _said("I've been feeling down lately.")
    assert ("likes", "beach") in _said("I love the beach, especially at sunset.")
    assert ("likes", "mountains") in _said("I love the mountains.")
    assert ("likes", "good party") in _said("I love a good party lol")
    assert ("event", "adopted a cat") in _said("I was like, I adopted a cat last week!")
    assert ("commitment", "send you the pics") in _said("I'll send you the pics tonight.")
    assert ("goal.new", "make this studio work") in _said("I'm determined to make this studio work")
    assert not _said("I'm determined to make it work")
