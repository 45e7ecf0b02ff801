# ruff: noqa: RUF001  (curly apostrophes are what the patterns match)
"""Whether what a claim rule read says anything to remember (DESIGN §3.10).

A rule's grammar can be right while its value carries nothing a memory could use later:
the pleasantries and echoes of chat ("I had a great time", "I went through a lot", "I'm
working on it", "I did the same thing", 我试了一下, 我们聊了很多), or what is about the
listener rather than the speaker ("I love hearing from you", 我很喜欢和你聊天). The rules of
``souls.knowledge.claim_events`` and ``souls.knowledge.claim_rules`` ask here before they
keep a value. What a caller may rely on:

- ``bleached(words)``: the words after a told event's verb hold no content word. Every
  word is a function word, a pronoun or anaphor, a quantity (a lot, so much), an
  evaluation of the experience (a great time, a blast, my best) or a filler; an object
  that opens with "the same" is an echo of the listener's news, whatever follows. A lone
  particle is no object but part of the verb ("we met up", "I'm feeling down").
- ``zh_bleached(obj)``: a Chinese object that is only a measure of how much or how long
  (一下, 很多, 好久).
- ``to_listener(text)``: the text names the listener (you, your, u, 你, 您) or the talk
  with them ("our chats").
- Pure, and word lists only: no pattern here reads a topic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["LIGHT_VERBS", "bleached", "to_listener", "zh_bleached"]

# Words that carry no content of their own after an event's verb.
_EMPTY = frozenset(
    """a an the some any all so such much many more most lot lots bit ton tons little few
    plenty bunch of to for with in on at into onto out up down off over back through around
    about from by as it its this that these those there here me myself us ourselves one ones
    something anything everything nothing stuff thing things now then today tonight again
    lately recently already yet anymore ever too also still day days time times moment moments
    while week weekend night great good best better nice fun amazing awesome laugh laughs
    wonderful lovely fantastic incredible blast ball rough hard tough long way heart soul
    chance forward same my our lol haha lmao omg tbh really very pretty quite just totally
    super pic pics photo photos picture pictures selfie selfies snap adventure
    mind""".split()
)
# Verbs that say nothing without an object: "I got.", "I did today" are no events.
LIGHT_VERBS = frozenset(
    "got get gotten did do done made make had have went go gone put take took come came learned"
    " learnt".split()
)
_STRIP = ".,!?;:'’\"“”()"
_PARTICLES = frozenset("up out through down off over back away around".split())
_ADVERBIAL = frozenset("now then today tonight lately recently already yet again too also".split())
_LISTENER = re.compile(
    r"(?i:\b(?:you|your|yours|yourself|yourselves|ya|u)\b|\byou[’'](?:re|ve|ll|d)"
    r"|\bour\s+(?:chats?|talks?|conversations?|catch-?ups?)\b)|你|您"
)
_ZH_MEASURES = frozenset(
    "一下 一下子 很多 好多 不少 好久 半天 一会 一会儿 一点 一点儿 一些 一遍 一次 一番".split()
)


def bleached(words: Sequence[str]) -> bool:
    """Whether the object ``words`` of a told event say nothing (see the module's
    docstring); an empty object is not bleached (the caller decides about a bare verb)."""
    low = [w.lower().strip(_STRIP) for w in words]
    low = [w for w in low if w]
    while low and low[-1] in _ADVERBIAL:
        low.pop()  # "feeling down lately" is "feeling down"
    if not low or (len(low) == 1 and low[0] in _PARTICLES):
        return False  # "we met up", "I'm feeling down": the verb says it
    if low[0] == "same" or low[:2] == ["the", "same"]:
        return True
    if low[0] == "to" and len(low) > 2:
        return bleached(low[2:])  # "wanted to try that": what is tried says it
    return all(w in _EMPTY for w in low)


def zh_bleached(obj: str) -> bool:
    """Whether a Chinese object is only a measure of how much or how long (我试了一下)."""
    return obj in _ZH_MEASURES


def to_listener(text: str) -> bool:
    """Whether ``text`` names the listener: then it is about them, or about speaking to
    them, not a fact of the speaker's own."""
    return _LISTENER.search(text) is not None
