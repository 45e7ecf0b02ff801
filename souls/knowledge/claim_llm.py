"""Reading a model's extraction answer for one event (DESIGN §3.10, Chaos): what passes.

Pure: no I/O, no clock. The answer to ``claims.llm_prompt(text)`` holds two kinds of
items, and each is judged against ``text``, the event it came from:

    slot claim   {"slot", "value", "quote", "confidence"}: the three gates of
                 ``claims.gate`` (slot whitelist, verbatim quote with value support,
                 credential); what passes is a ``Candidate`` with ``source="llm"``.
    unspoken     {"kind": "unspoken", "quote"}: the model only says *that* a sentence
                 hints at something left unsaid, never *what*. Only the quote gate
                 applies (and the credential check): the item becomes the whole
                 sentence of ``text`` holding the quote, addressed ``unspoken.<hash>``
                 by that sentence (the same sentence is one item, whoever said it how
                 often). The model decides whether, never what is written, so a lying
                 model cannot put words in the store. Unspoken items are never facts:
                 they are kept apart from the claims and never injected.

Everything refused is counted by cause (``Reading.refused``): a gate's name (slot,
quote, support, credential), ``malformed`` (an item that is neither kind),
``oversize`` (an answer longer than the caller's bound, never parsed), ``garbage``
(an answer with no readable array). Parsing is linear in the answer's length, which
the caller bounds, and reads at most 64 items.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from typing import Literal

import msgspec

from souls.knowledge.claims import (
    Candidate,
    gate,
    llm_candidate,
    llm_items,
    looks_like_secret,
    subject_of,
)

__all__ = [
    "ExtractionConfig",
    "Reading",
    "Unspoken",
    "read_answer",
    "sentence_of",
    "unspoken_id",
]

# Where a sentence ends: its terminal punctuation (Latin or CJK) or a line break.
_END = re.compile(r"[.!?\u3002\uff01\uff1f\n]+")
# An unspoken item is one sentence; a "sentence" longer than this is cut to it.
_MAX_SENTENCE = 1000


class ExtractionConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # "auto": every stored event also goes to the [llm] model for claims, behind the same
    # three gates as the rules', when base_url is set; "off": the rules alone.
    llm: Literal["auto", "off"] = "auto"
    # Events waiting for the model, at most: this many, of this many bytes of text in
    # all. An event that finds the backlog full is not extracted by the model (counted
    # as skipped); the rules read it anyway.
    backlog: int = 256
    backlog_bytes: int = 1_048_576
    # A model's answer longer than this many characters is refused unread.
    max_answer: int = 65_536

    def __post_init__(self) -> None:
        if self.backlog < 1 or self.backlog_bytes < 1 or self.max_answer < 1:
            raise ValueError("backlog, backlog_bytes and max_answer must be at least 1")


class Unspoken(msgspec.Struct, frozen=True, kw_only=True):
    id: str  # unspoken.<hash of the sentence>
    subject: str  # who said the sentence
    sentence: str  # verbatim from the event


class Reading(msgspec.Struct, kw_only=True):
    claims: list[Candidate] = msgspec.field(default_factory=list)  # passed the three gates
    unspoken: list[Unspoken] = msgspec.field(default_factory=list)
    refused: Counter[str] = msgspec.field(default_factory=Counter)


def unspoken_id(sentence: str) -> str:
    """The address of an unspoken item: ``unspoken.`` and 16 hex digits of the SHA-256
    of the NFC sentence with its whitespace collapsed."""
    same = " ".join(unicodedata.normalize("NFC", sentence).split())
    return "unspoken." + hashlib.sha256(same.encode()).hexdigest()[:16]


def sentence_of(text: str, quote: str) -> str | None:
    """The sentence(s) of ``text`` holding the first verbatim occurrence of ``quote``
    (both NFC), stripped, at most _MAX_SENTENCE characters; None when ``quote`` has
    fewer than 2 non-blank characters or does not occur."""
    text, quote = unicodedata.normalize("NFC", text), unicodedata.normalize("NFC", quote)
    if len(quote.strip()) < 2:
        return None
    at = text.find(quote)
    if at == -1:
        return None
    start = 0
    for end in _END.finditer(text, 0, at):
        start = end.end()
    found = _END.search(text, at + len(quote.rstrip()))
    stop = len(text) if found is None else found.end()
    return text[start:stop].strip()[:_MAX_SENTENCE]


def read_answer(
    raw: str,
    text: str,
    *,
    sender: str | None,
    ts: float,
    kind: str | None = None,
    max_answer: int,
) -> Reading:
    """What of ``raw`` (a model's answer for the event ``text``) may be stored, about
    ``subject_of(sender, kind)``; see the module docstring."""
    reading = Reading()
    if len(raw) > max_answer:
        reading.refused["oversize"] += 1
        return reading
    items = llm_items(raw)
    if not items and raw.strip() not in ("", "[]", "{}") and "[]" not in raw:
        reading.refused["garbage"] += 1
        return reading
    subject = subject_of(sender, kind)
    seen: set[str] = set()
    for item in items:
        if isinstance(item, dict) and item.get("kind") == "unspoken":
            _unspoken(reading, item.get("quote"), text, subject, seen)
            continue
        candidate = llm_candidate(item, subject=subject, ts=ts)
        if candidate is None:
            reading.refused["malformed"] += 1
            continue
        verdict = gate(candidate, text)
        if verdict.gate is not None:
            reading.refused[verdict.gate] += 1
        else:
            reading.claims.append(candidate)
    return reading


def _unspoken(reading: Reading, quote: object, text: str, subject: str, seen: set[str]) -> None:
    if not isinstance(quote, str):
        reading.refused["malformed"] += 1
        return
    sentence = sentence_of(text, quote)
    if sentence is None:
        reading.refused["quote"] += 1
        return
    if looks_like_secret(sentence, sentence):
        reading.refused["credential"] += 1
        return
    item = Unspoken(id=unspoken_id(sentence), subject=subject, sentence=sentence)
    if item.id not in seen:
        seen.add(item.id)
        reading.unspoken.append(item)
