"""What tells the values of a keyed slot apart, read from a claim's quote (DESIGN §3.10).

A pet's name is keyed by its kind ("My dog is called Biscuit" never replaces the cat
Tuanzi), a child's by son or daughter, a sibling's by brother or sister. ``key_of(slot,
quote)`` is the key of a claim: the first such word of its quote, in a normal form
(kitten → cat, 小狗 → dog, 女儿 → daughter), or None when the quote names none (a
stated entry, whose quote is its value, or "my kid"). What a caller may rely on: pure,
the same key for English and Chinese words of the same thing, and None matches any key
(a claim that does not say which pet it names may be about any).
"""

from __future__ import annotations

import re

__all__ = ["key_of", "same_key"]

_KEYS: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "pet_name": (
        (re.compile(r"(?i:\b(?:cat|kitten|kitty)s?\b)|猫"), "cat"),
        (re.compile(r"(?i:\b(?:dog|puppy|pup|doggo)s?\b)|狗"), "dog"),
        (re.compile(r"(?i:\b(?:rabbit|bunny|bunnies)s?\b)|兔"), "rabbit"),
        (re.compile(r"(?i:\bhamsters?\b)|仓鼠"), "hamster"),
        (re.compile(r"(?i:\b(?:parrot|bird)s?\b)|鹦鹉|鸟"), "bird"),
        (re.compile(r"(?i:\b(?:turtle|tortoise)s?\b)|乌龟|龟"), "turtle"),
        (re.compile(r"(?i:\b(?:goldfish|fish)\b)|鱼"), "fish"),
        (re.compile(r"(?i:\bhorses?\b)|马"), "horse"),
        (re.compile(r"(?i:\bguinea\s+pigs?\b)|豚鼠"), "guinea pig"),
        (re.compile(r"(?i:\b(?:snake|lizard|ferret)s?\b)|蛇|蜥蜴|雪貂"), "reptile"),
        (re.compile(r"龙猫"), "chinchilla"),
        (re.compile(r"刺猬"), "hedgehog"),
    ),
    "child_name": (
        (re.compile(r"(?i:\b(?:daughter|stepdaughter|baby\s+girl)s?\b)|女儿|闺女"), "daughter"),
        (re.compile(r"(?i:\b(?:son|stepson|baby\s+boy)s?\b)|儿子"), "son"),
    ),
    "sibling_name": (
        (re.compile(r"(?i:\b(?:sister|sis|stepsister|half-sister)s?\b)|姐|妹"), "sister"),
        (re.compile(r"(?i:\b(?:brother|bro|stepbrother|half-brother)s?\b)|哥|弟"), "brother"),
    ),
}


def key_of(slot: str, quote: str) -> str | None:
    """The key of a claim in ``slot`` with ``quote``: the kind named first, if any."""
    found: tuple[int, str] | None = None
    for pattern, key in _KEYS.get(slot, ()):
        m = pattern.search(quote)
        if m is not None and (found is None or m.start() < found[0]):
            found = (m.start(), key)
    return None if found is None else found[1]


def same_key(a: str | None, b: str | None) -> bool:
    """Whether claims with keys ``a`` and ``b`` may be about the same one."""
    return a is None or b is None or a == b
