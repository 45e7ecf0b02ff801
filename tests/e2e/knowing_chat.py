# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese chat)
"""Four weeks of messy chat, English and Chinese, full of facts that change (#17).

Sam writes from Telegram in English, with typos, fillers and second thoughts; 小林
writes in Chinese from the CLI; the assistant answers and makes a promise of its own.
People introduce themselves, move house, change jobs and phone numbers, rename a cat,
get a dog, call off a plan, state and reach (or drop) goals — and also ask questions,
quote other people, daydream and joke, none of which says anything about the speaker.

:data:`FACTS` is what a careful reader holds at the end (subject, slot, value, state),
:data:`TOLD` the events told, :data:`GOALS` the goals; :data:`NEVER` values that must not
come out of any turn. ``tests/e2e/test_knowing_chat.py`` plays the chat through the real
daemon and checks every claim, entry and goal it produced against these.
"""

from __future__ import annotations

import datetime as dt

__all__ = ["FACTS", "GOALS", "NEVER", "START", "TOLD", "TURNS", "Turn", "timestamp"]

START = "2026-04-06T08:00:00Z"  # day 0, a Monday


def timestamp(day: int, hour: int) -> str:
    """When a turn of ``day`` at ``hour`` was said (ISO 8601, UTC)."""
    start = dt.datetime.fromisoformat(START.replace("Z", "+00:00"))
    return (start + dt.timedelta(days=day, hours=hour)).strftime("%Y-%m-%dT%H:%M:%SZ")


# (day, hour, sender, kind, text); sender "" for the assistant
Turn = tuple[int, int, str, str, str]

TURNS: tuple[Turn, ...] = (
    # -- week 1 --------------------------------------------------------------------------
    (0, 8, "sam", "message", "hiii ok quick intro lol"),
    (0, 8, "sam", "message", "my name is Sam btw, and I live in Paris"),
    (0, 8, "sam", "message", "I work as a nurse at St Mary's. night shifts, ugh"),
    (0, 8, "", "assistant", "Nice to meet you, Sam! How long have you been a nurse?"),
    (0, 9, "sam", "message", "like 6 yrs? idk. anyway my cat is called Tuanzi"),
    (0, 9, "sam", "message", "oh and I'm allergic to peanuts, like seriously allergic"),
    (0, 9, "sam", "message", "My phone number is +33 6 12 34 56 78 if u need it"),
    (0, 9, "sam", "message", "My goal this year is to run a half marathon"),
    (0, 9, "sam", "message", "do you know any good running apps?"),
    (1, 20, "sam", "message", "if I move to Lyon I'd need a car tbh"),
    (1, 20, "sam", "message", 'my sister said "I live in Berlin now", so random'),
    (1, 21, "sam", "message", "I love jazz. and cheese. mostly cheese haha"),
    (2, 7, "小林", "message", "嗯嗯 早上好"),
    (2, 7, "小林", "message", "我叫林小雨，我住在北京"),
    (2, 7, "小林", "message", "我在华为公司上班，挺累的"),
    (2, 8, "小林", "message", "我养了一只狗叫旺财"),
    (2, 8, "小林", "message", "我对花生过敏，哈哈跟你一样"),
    (2, 8, "小林", "message", "我的手机号是13812345678"),
    (2, 8, "小林", "message", "我们打算明年买房"),
    (2, 9, "小林", "message", "你觉得北京的房子贵吗？"),
    (2, 9, "小林", "message", "我老婆说她想换工作，不过还没定"),
    # -- week 2 --------------------------------------------------------------------------
    (7, 19, "sam", "message", "ugh long shift. anyway"),
    (7, 19, "sam", "message", "We renamed the cat, she is called Mochi now."),
    (7, 19, "sam", "message", "and we adopted a puppy!! My dog is called Biscuit"),
    (7, 20, "sam", "message", "I'm going to the dentist on Friday, dreading it"),
    (7, 20, "", "assistant", "Good luck! I'll remind you on Thursday."),
    (8, 21, "sam", "message", "I promise I'll send you the lasagna recipe tomorrow"),
    (9, 7, "sam", "message", "Honestly I've been training every morning for the half marathon"),
    (9, 8, "小林", "message", "如果我去深圳工作的话，就得搬家了"),
    (10, 8, "小林", "message", "我昨天去了一趟长城，累死了"),
    # -- week 3 --------------------------------------------------------------------------
    (14, 18, "sam", "message", "big news: we moved from Paris to Lyon last weekend!!"),
    (14, 18, "sam", "message", "new number btw, my number is now +33 7 98 76 54 32"),
    (14, 18, "sam", "message", "I cancelled the dentist, I'll go next month instead"),
    (15, 9, "小林", "message", "我换工作了，现在在腾讯上班"),
    (15, 9, "小林", "message", "我们从北京搬到上海了"),
    (15, 9, "小林", "message", "我换号了，新号码是13987654321"),
    # -- week 4 --------------------------------------------------------------------------
    (21, 10, "sam", "message", "I finally ran it!!! 21k baby"),
    (21, 10, "sam", "message", "what's my phone number again? lol i forget everything"),
    (22, 20, "小林", "message", "我们放弃买房了，房价太高了"),
)

# (subject, slot, value, state) of every fact and plan at the end.
FACTS: frozenset[tuple[str, str, str, str]] = frozenset(
    {
        ("sam", "name", "Sam", "active"),
        ("sam", "location", "Paris", "superseded"),
        ("sam", "location", "Lyon", "active"),
        ("sam", "job", "nurse", "active"),
        ("sam", "employer", "St Mary's", "active"),
        ("sam", "pet_name", "Tuanzi", "superseded"),
        ("sam", "pet_name", "Mochi", "active"),
        ("sam", "pet_name", "Biscuit", "active"),
        ("sam", "pet_kind", "cat", "active"),
        ("sam", "pet_kind", "dog", "active"),
        ("sam", "allergy", "peanuts", "active"),
        ("sam", "phone", "+33 6 12 34 56 78", "superseded"),
        ("sam", "phone", "+33 7 98 76 54 32", "active"),
        ("sam", "likes", "jazz", "active"),
        ("sam", "plan", "going to the dentist", "superseded"),
        ("sam", "commitment", "send you the lasagna recipe", "active"),
        ("assistant", "commitment", "remind you", "active"),
        ("小林", "name", "林小雨", "active"),
        ("小林", "location", "北京", "superseded"),
        ("小林", "location", "上海", "active"),
        ("小林", "employer", "华为公司", "superseded"),
        ("小林", "employer", "腾讯", "active"),
        ("小林", "pet_name", "旺财", "active"),
        ("小林", "pet_kind", "狗", "active"),
        ("小林", "allergy", "花生", "active"),
        ("小林", "phone", "13812345678", "superseded"),
        ("小林", "phone", "13987654321", "active"),
        ("小林", "plan", "明年买房", "superseded"),  # a plan too, closed when given up
    }
)

# (subject, a piece of the event's value) of every told event.
TOLD: frozenset[tuple[str, str]] = frozenset(
    {
        ("sam", "adopted a puppy"),
        ("sam", "moved from Paris to Lyon"),
        ("sam", "training every morning for the half marathon"),
        ("小林", "去了一趟长城"),
        ("小林", "养了一只狗叫旺财"),
        ("sam", "renamed the cat"),
        ("sam", "cancelled the dentist"),
        ("小林", "从北京搬到上海"),
    }
)

# (speaker, statement, state) of every goal.
GOALS: frozenset[tuple[str, str, str]] = frozenset(
    {
        ("sam", "run a half marathon (this year)", "achieved"),
        ("小林", "明年买房", "abandoned"),
    }
)

# Values no turn may give anyone: other people's words, daydreams, questions.
NEVER: frozenset[str] = frozenset({"Berlin", "深圳", "Lyon I'd need a car", "换工作"})
