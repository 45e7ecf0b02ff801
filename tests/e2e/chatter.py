# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese chat)
"""Messy multi-turn chat, English and Chinese, for tests that need a lot of real text.

People hedge, fill, misspell and change their minds; the same speakers come back with
different numbers and days, so no two lines in a row are the same (the hygiene gate
refuses a line repeated three times) and nothing looks like a credential.
"""

from __future__ import annotations

import random

__all__ = ["conversation", "turns"]

_SPEAKERS = ["Mia", "Joe", "Priya", "李雷", "韩梅梅", "Tomás", "小王"]
_DAYS = ["monday", "tuesday", "thursday", "friday", "周三", "周五", "下周一"]
_TURNS = [
    "ok so um, the standup is at {h}:30 tmrw? no wait, {h2}, {who} moved it",
    "yeah {day} works. actually hmm, no — lets do {day2}, the migration needs a day",
    "i said {n} replicas but thats too many lol, {n2} is plenty for the staging box",
    "那个，{day}的发布要不改到{day2}？嗯……其实还是{day}吧，测试还没跑完，大概{n}个用例",
    "好吧好吧，我跟产品说一下，呃，他们可能不太高兴，上次也是拖了{n2}天",
    "wait did anyone book the room for {day}? i thot {who} did but apparently not",
    "sorry typo, i meant {n} GB not {n2} — the disk on db-{n2} is nearly ful",
    "对了 {who} 说预算只有 {n} 万，不是 {n2} 万，我之前听错了，抱歉",
    "can we revisit the cache ttl? {n}s felt fine, but {who} saw stale prices at {h}pm",
    "嗯嗯，我觉得先别动缓存，等{day2}看监控再说，{who}你觉得呢",
    "fine by me. tbh i changed my mind twice already today, so take it w/ a grain of salt",
    "btw the invoice #{n}{n2} is still pending, finance pinged me around {h}",
]


def turns(seed: int, count: int) -> list[str]:
    """``count`` chat lines, ``"[hh:mm] speaker: text"``, the same for the same seed."""
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        template = _TURNS[(i * 5 + rng.randrange(len(_TURNS))) % len(_TURNS)]
        text = template.format(
            who=rng.choice(_SPEAKERS),
            day=rng.choice(_DAYS),
            day2=rng.choice(_DAYS),
            h=rng.randrange(7, 12),
            h2=rng.randrange(1, 6),
            n=rng.randrange(2, 400),
            n2=rng.randrange(2, 90),
        )
        stamp = (seed * 7 + i) % 1440  # minutes into the day: no two lines alike
        speaker = _SPEAKERS[(i + seed) % len(_SPEAKERS)]
        lines.append(f"[{stamp // 60:02d}:{stamp % 60:02d}] {speaker}: {text}")
    return lines


def conversation(seed: int, chars: int) -> str:
    """One transcript of about ``chars`` characters (never more)."""
    out: list[str] = []
    size = 0
    for line in turns(seed, chars // 20 + 1):
        if size + len(line) + 1 > chars:
            break
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)
