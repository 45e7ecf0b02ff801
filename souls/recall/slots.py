"""Questions that ask for a fact the soul's claims hold: "who is my employer?", "which
city does she live in now?", 她在哪个城市.

A query word that names a slot (employer, company, city, address, phone...) asks for
that slot's value, and the memory that states the value in force answers it even when
it holds none of the query's words ("I left Siemens and joined Bosch" for "who is my
employer?"). :func:`asked_slots` says which slots a query asks for and what share of the
query's evidence the naming words are; recall brings the memories of the slots' active
claims (:meth:`souls.store.store.Store.stating`) below every memory the query's own
words found, so nothing that matched lexically loses its place.

Only the claims in force: a superseded value is older news, and its memory comes only
as the query's words find it (below its successor, see :func:`souls.recall.recall`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from souls.store.bm25 import TermStats
from souls.text.tokenize import query_terms

__all__ = ["Asked", "asked_slots"]

# The words (as a query says them) that name each slot. Only nouns and verbs that ask for
# the slot itself: "work" or "live" are everyday words (and the statements hold them
# anyway), "employer" or "address" are seldom in what people say of themselves.
_NAMING: dict[str, tuple[str, ...]] = {
    "employer": (
        "employer", "employers", "employed", "employment", "company", "companies", "firm",
        "workplace", "公司", "单位",
    ),
    "location": ("address", "city", "relocate", "relocated", "reside", "resides", "城市"),
    "job": ("profession", "occupation", "career", "职业"),
    "phone": ("phone", "cellphone", "mobile", "电话", "手机"),
    "pet_name": ("pet", "pets", "宠物"),
    "partner_name": (
        "partner", "boyfriend", "girlfriend", "husband", "wife", "spouse", "男朋友", "女朋友",
        "老公", "老婆",
    ),
    "hometown": ("hometown", "老家"),
    "birthday": ("birthday", "生日"),
    "allergy": ("allergy", "allergies", "allergic", "过敏"),
}  # fmt: skip


@functools.cache
def _by_term() -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """Each naming word's terms as a query tokenises them, keyed by its longest term (a
    Chinese word: the whole bigram), with the slots it names and all its terms (城市:
    城, 市 and 城市): the word's evidence is all of them, not the bigram alone."""
    out: dict[str, tuple[set[str], set[str]]] = {}
    for slot, words in _NAMING.items():
        for word in words:
            terms = query_terms(word)
            if terms:
                slots, parts = out.setdefault(max(terms, key=len), (set(), set()))
                slots.add(slot)
                parts.update(terms)
    return {term: (frozenset(slots), frozenset(parts)) for term, (slots, parts) in out.items()}


@dataclass(frozen=True, slots=True)
class Asked:
    """The slots a query asks for, and the share of the query's evidence (its terms
    weighted by :meth:`~souls.store.bm25.TermStats.weight`) the words naming them hold."""

    slots: tuple[str, ...]
    share: float


def asked_slots(asked: Sequence[str], stats: TermStats) -> Asked | None:
    """What the query (its terms, ``asked``) asks for, or None when no word names a slot."""
    naming = _by_term()
    named = [term for term in asked if term in naming]
    if not named:
        return None
    naming_terms = set().union(*(naming[term][1] for term in named))
    evidence = {term: stats.weight(term) for term in asked}
    whole = sum(evidence.values())
    held = sum(weight for term, weight in evidence.items() if term in naming_terms)
    share = held / whole if whole else 1.0
    slots = sorted({slot for term in named for slot in naming[term][0]})
    return Asked(tuple(slots), share)
