"""Unanswered questions (DESIGN §3.10): a user's question the agent let pass.

A question is recorded when a person asks one (a question mark, ASCII or fullwidth, or
a Chinese sentence ending in 吗/呢, in an event of a person's kind). It stays *pending*
until the next ``assistant`` event of the same conversation (same session; without
sessions, every pending question without one): that reply *answers* it when it takes
up enough of the question's content terms, otherwise the question is *unanswered*, and an unanswered
question is unresolved pressure (U) until it is answered later or forgotten.

Pure: the soul stores the rows and decides when to look.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from souls.text.tokenize import query_terms, tokens

__all__ = [
    "ASKING_KINDS",
    "PendingQuestion",
    "Settlement",
    "addresses",
    "is_question",
    "settle",
]

# Events in which a person speaks (an assistant's own turns never ask the soul).
ASKING_KINDS = frozenset({"message", "dm", "voice"})
# Share of a question's content terms a reply must take up to answer it.
ANSWERED_SHARE = 0.34

# A question mark (ASCII or fullwidth), or 吗/呢 closing a sentence or the text.
_SENTENCE_END = re.compile("[?\uff1f]|[吗呢](?:[\u3002\uff01!]|\\s*$)")


def is_question(text: str) -> bool:
    """Whether ``text`` asks something: a question mark, or a Chinese 吗/呢 question."""
    return bool(_SENTENCE_END.search(text.strip()))


def addresses(question: str, reply: str, share: float = ANSWERED_SHARE) -> bool:
    """Whether ``reply`` takes up at least ``share`` of the question's content terms (and
    at least one). A question with no content terms is answered by any reply."""
    wanted = _content(question)
    if not wanted:
        return True
    taken = wanted & _content(reply)
    return bool(taken) and len(taken) / len(wanted) >= share


def _content(text: str) -> set[str]:
    # "" among the words keeps query_terms from falling back to a text's stopwords.
    return set(query_terms(text, [*tokens(text), ""])) - {""}


@dataclass(frozen=True, slots=True)
class PendingQuestion:
    id: int
    asker: str | None
    session: str | None
    text: str


@dataclass(frozen=True, slots=True)
class Settlement:
    question: int
    state: str  # answered | unanswered


def settle(
    pending: Sequence[PendingQuestion], *, session: str | None, reply: str
) -> list[Settlement]:
    """What an assistant reply settles: the pending questions of its conversation (same
    session, or all without one), each answered or unanswered."""
    mine = [q for q in pending if q.session == session]
    return [
        Settlement(q.id, "answered" if addresses(q.text, reply) else "unanswered") for q in mine
    ]
