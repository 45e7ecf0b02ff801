# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese chat)
"""Six weeks of messy conversation, English and Chinese, about goals, plans and values.

Melanie writes from Telegram (account ``mel``, linked to the person Melanie after the
first week) and from Slack as ``Melanie``; 李雷 writes in Chinese; the assistant
answers. People hedge, joke, quote others, ask, dream out loud and change their minds.
:data:`EXPECTED` is what a careful reader takes from it: every goal, plan and value
stated by its holder, in its state at the end — nothing from questions, hypotheticals,
other people's words or filler. ``tests/e2e/test_goals.py`` plays it through the daemon
and ``bench/goals.py`` prints what comes out.
"""

from __future__ import annotations

__all__ = ["EXPECTED", "START", "TURNS", "Turn"]

START = "2026-03-02T09:00:00Z"  # day 0

# (day, hour, channel, sender, kind, text)
Turn = tuple[int, int, str, str, str, str]

TURNS: tuple[Turn, ...] = (
    (0, 9, "telegram", "mel", "message", "heyyy ok so new year new me lol"),
    (0, 9, "telegram", "mel", "message", "My goal this year is to run a half marathon"),
    (0, 9, "cli", "assistant", "assistant", "That's a great goal! Do you want a training plan?"),
    (0, 10, "telegram", "mel", "message", "maybe later haha. what's a good first race?"),
    (
        0,
        10,
        "telegram",
        "mel",
        "message",
        "my sister said her goal is to do a full ironman, she's nuts",
    ),
    (
        1,
        20,
        "telegram",
        "mel",
        "message",
        "ugh work was long. I want to say thanks for yesterday btw",
    ),
    (
        1,
        20,
        "telegram",
        "mel",
        "message",
        "I believe in respecting people's privacy, I refuse to spread rumors",
    ),
    (
        1,
        21,
        "telegram",
        "mel",
        "message",
        "someone at the office keeps gossiping about Jen and it drives me crazy",
    ),
    (2, 8, "telegram", "mel", "message", "If I won the lottery I'd want to buy a boat someday lol"),
    (2, 8, "telegram", "mel", "message", "I'm going to the gym tomorrow, wish me luck"),
    (3, 19, "cli", "lilei", "message", "嗯嗯，今天好累啊"),
    (3, 19, "cli", "lilei", "message", "我们打算明年买房，所以现在在存钱"),
    (3, 19, "cli", "assistant", "assistant", "好的，需要我帮你做个预算表吗？"),
    (3, 20, "cli", "lilei", "message", "你觉得我们应该买学区房吗？"),
    (3, 20, "cli", "lilei", "message", "我老婆说她想明年换工作，不过还没定"),
    (4, 12, "cli", "lilei", "message", "如果中了彩票我就辞职环游世界哈哈"),
    (4, 12, "cli", "lilei", "message", "我的原则是不借钱给朋友"),
    (8, 7, "slack", "Melanie", "message", "morning! ran 8k today, legs are dead"),
    (
        8,
        7,
        "slack",
        "Melanie",
        "message",
        "Honestly I've been training every morning for the half marathon",
    ),
    (
        9,
        18,
        "slack",
        "Melanie",
        "message",
        "also I'd love to learn Spanish one day, my abuela would be so happy",
    ),
    (10, 9, "cli", "user", "message", "How should I budget this month?"),
    (11, 21, "cli", "lilei", "message", "这个月房租又涨了，烦"),
    (
        12,
        21,
        "slack",
        "Melanie",
        "message",
        "Should I sign up for the Lisbon race or is that crazy?",
    ),
    (15, 20, "cli", "lilei", "message", "我坚持每天早上跑步，已经三个月了"),
    (18, 9, "telegram", "mel", "message", "ok I signed up!!! race is in 4 weeks"),
    (22, 10, "cli", "lilei", "message", "唉，房价太高了"),
    (25, 19, "cli", "lilei", "message", "we gave up on the house, prices are insane"),
    (
        25,
        19,
        "cli",
        "assistant",
        "assistant",
        "That sounds frustrating. Renting for now makes sense.",
    ),
    (29, 8, "telegram", "mel", "message", "omg omg"),
    (29, 8, "telegram", "mel", "message", "I finally ran it! 2:05, not bad for a first timer"),
    (
        30,
        12,
        "slack",
        "Melanie",
        "message",
        "my coworker told me I should run a full marathon next, no way lol",
    ),
    (
        33,
        20,
        "slack",
        "Melanie",
        "message",
        "I'm planning to visit my grandma in Mexico City this summer",
    ),
    (40, 9, "cli", "lilei", "message", "我打算今年考个驾照，周末就去报名"),
)

# (holder, statement, state): what the conversation says, at the end.
EXPECTED: frozenset[tuple[str, str, str]] = frozenset(
    {
        ("Melanie", "run a half marathon (this year)", "achieved"),
        ("Melanie", "believe in respecting people's privacy", "active"),
        ("Melanie", "refuse to spread rumors", "active"),
        ("Melanie", "learn Spanish one day", "active"),
        ("Melanie", "visit my grandma in Mexico City this summer", "active"),
        ("lilei", "明年买房", "abandoned"),
        ("lilei", "不借钱给朋友", "active"),
        ("lilei", "坚持每天早上跑步", "active"),
        ("lilei", "今年考个驾照", "active"),
    }
)
