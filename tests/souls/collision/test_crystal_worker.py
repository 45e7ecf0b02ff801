# ruff: noqa: RUF001  (full-width punctuation is the point)
"""A long summary is read for its card in a worker process (souls.actor.deck): the
reading made there crystallises the card the loop's own reading does."""

from __future__ import annotations

from collections import Counter

from conversations import turns

from souls.collision.crystal import (
    CardConfig,
    Counts,
    Draft,
    conclude,
    crystallise,
    read_summary,
    terms,
)
from souls.collision.lines import key
from souls.mind.reflect import ExtractiveReflector, Observation
from souls.text.tokenize import tokens
from supervisor.pace import in_worker

MESSY = [
    ("李雷", "那个, 周三的发布要不改到周五? 嗯……其实还是周三吧, 测试还没跑完"),
    ("Mia", "ok so um, the standup is at 9:30 tmrw? no wait, 10, Joe moved it"),
    ("韩梅梅", "线上报警了！支付服务 12 次超时，李雷 在查。回滚以后恢复了"),
    ("Joe", "lol ok"),
    ("Priya", "[photo: the whiteboard] so the plan is: migrate billing first. then auth."),
    ("李雷", "对了 预算只有 40 万, 不是 30 万, 我之前听错了, 抱歉"),
    ("Mia", "deploy 31 failed: database migration timeout on db-4, rolling back!!"),
    ("Tomás", "can we revisit the cache ttl? 30s felt fine but Priya saw stale prices"),
]


def reflects() -> list[tuple[str, str, Counts]]:
    """(summary, previous, rarity) of each reflect over a real conversation with messy
    chat (English and Chinese, fillers, asides, alarms) mixed in, every 8 turns."""
    said = [(speaker, text) for _, _, speaker, text in turns()]
    mixed = [turn for i, turn in enumerate(said) for turn in ([turn, MESSY[i % len(MESSY)]])]
    reflector = ExtractiveReflector()
    summary, found, documents = "", [], Counter[str]()
    for start in range(0, len(mixed), 8):
        batch = mixed[start : start + 8]
        observations = [
            Observation(start + i + 1, text, 0.5, 0.6, "message", speaker, float(start + i))
            for i, (speaker, text) in enumerate(batch)
        ]
        for _, text in batch:
            documents.update(set(tokens(text)))
        previous, summary = summary, reflector.summarise(summary, observations, 4000)
        found.append((summary, previous, Counts(start + len(batch), dict(documents))))
    return found


async def test_a_reading_from_a_worker_crystallises_the_loops_card() -> None:
    people = frozenset(t for name in ("Mia", "Joe", "Priya", "Tomás") for t in tokens(name))
    known: set[str] = set()
    cards = 0
    for summary, previous, rarity in reflects():
        reading = read_summary(summary, previous)
        assert await in_worker(read_summary, summary, previous) == reading
        assert reading.terms == terms(summary)
        draft = crystallise(summary, previous, known, rarity, CardConfig(), people)
        far = await in_worker(read_summary, summary, previous)
        assert conclude(far, known, rarity, CardConfig(), people) == draft
        assert conclude(far, sorted(known), rarity, CardConfig(), people) == draft  # any collection
        if draft.conclusions:
            cards += 1
            known |= {key(line) for line in draft.conclusions + draft.questions}
    assert cards >= 6  # the conversation concluded things


def test_a_known_line_is_not_concluded_again() -> None:
    drafts = [(s, p, r, crystallise(s, p, set(), r, CardConfig())) for s, p, r in reflects()]
    summary, previous, rarity, draft = next(d for d in drafts if len(d[3].conclusions) >= 2)
    known = {key(draft.conclusions[0])}
    again = conclude(read_summary(summary, previous), known, rarity, CardConfig())
    assert again != Draft([], [], [], [])
    assert draft.conclusions[0] not in again.conclusions
