"""Recall: rank a soul's visible memories for a query.

Three layers, in the order the design gives (summary → weekly → all):

1. lines of the consolidated summary, then of the weekly summary, that cover at least
   half of the whole query (its terms weighted by idf, words no memory holds too) bring
   the memories they cite (``[m<id>]``) first;
2. BM25 over every visible memory, each indexed with its neighbouring turns as lower-
   weighted context (:mod:`souls.store.neighbours`). The context lifts a memory that
   matches the query itself — its own text holds a query term, or it was said by
   someone the query names — and never brings one that does not: a turn about packing
   boxes is not about the cat's kidneys because the turn before it was. When every
   query term is discriminating
   (see :mod:`souls.store.bm25`), SQLite FTS5 ranks directly; otherwise FTS5 fetches
   candidates with the discriminating terms and each is scored by exact BM25 over all
   terms. Two cues then re-rank the candidates: a memory said by someone the query
   names scores ``1 + speaker_boost`` times more, one from a date (or week, month) the
   query names ``1 + date_boost`` (``1 + period_boost``) times more;
3. Hebbian associates: memories wired to those above by strong edges (``via:
   hebbian``).

Resonance R, what a recalled memory holds of the query, is its row's score over the
query's ideal score (:meth:`~souls.store.bm25.TermStats.resonance`), measured against
the *whole* query: words no memory holds count too, so "xylophone quantum zebra today"
is not answered by the one memory that says "today", and words every memory holds
count for nothing (DESIGN §3.5). Only the memories that really matched — R at least
``[hebbian] fire_share`` — fire together and spread to their associates: a recall
whose results hold nothing of the query (its one known word is in every memory) wires
nothing.

Deterministic: same database, query and time, same answer; ties go to the older
memory. Recall only reads; what it should change (edges, recall times, competitors'
salience) is returned for the soul to write. Asked to, it explains each item
(:class:`~souls.results.Explanation`).
"""

from __future__ import annotations

import heapq
import re
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace

import msgspec

from souls.mind.hebbian import Associations, HebbianConfig
from souls.recall.cues import Boosts, Cues, Factors, weigh, weigh_one
from souls.results import Explanation, RecallItem, TermWeight
from souls.store.bm25 import TermStats
from souls.store.neighbours import MAX_TURNS, Row
from souls.store.store import Candidate, Hit, Store
from souls.text.tokenize import fts_match, query_terms, tokens

__all__ = ["Citations", "HitCache", "RecallConfig", "Recollection", "recall"]

_CITATION = re.compile(r"\[m(\d+)\]")


class RecallConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # How many memories a recall returns when the caller does not say.
    k: int = 10
    # The most a caller may ask for in one recall.
    max_k: int = 200
    # Terms found in more than this share of memories only re-rank candidates; they
    # do not fetch them (they would make every memory a candidate).
    common_term_share: float = 0.02
    # ... but a term found in no more than this many memories always fetches: scoring a
    # few hundred candidates is cheap, and on a small soul recall stays exact BM25.
    common_term_floor: int = 200
    # Candidates fetched per memory returned (at least 50).
    candidates_per_result: int = 3
    # A summary line brings its memories first when it covers this share of the query
    # (its terms weighted by idf, as BM25 weighs them).
    summary_line_coverage: float = 0.5
    # Neighbouring turns (same session) indexed each side of a memory as its context;
    # 0: none. Applies to memories stored from then on.
    context_turns: int = 2
    # How much a query term found in a memory's context counts (1: as in its own text).
    # The context only lifts a memory that matches the query itself, never brings one.
    context_weight: float = 0.40
    # A memory said by someone the query names (its event's sender, or the person linked
    # to that account) scores 1 + this times.
    speaker_boost: float = 0.6
    # A memory from a day the query names ("on 8 May 2023", "yesterday") scores 1 + this
    # times; from a week or month it names ("in May 2023", "last week"), 1 + period_boost.
    date_boost: float = 1.0
    period_boost: float = 0.5

    def __post_init__(self) -> None:
        if not 1 <= self.k <= self.max_k:
            raise ValueError("k must be between 1 and max_k")
        if not 0 < self.common_term_share <= 1 or self.candidates_per_result < 1:
            raise ValueError("common_term_share must be in (0, 1], candidates_per_result >= 1")
        if self.common_term_floor < 0 or not 0 < self.summary_line_coverage <= 1:
            raise ValueError("common_term_floor >= 0 and summary_line_coverage in (0, 1]")
        if not 0 <= self.context_turns <= MAX_TURNS or not 0 <= self.context_weight <= 1:
            raise ValueError(
                f"context_turns must be between 0 and {MAX_TURNS} and context_weight in [0, 1]"
            )
        if min(self.speaker_boost, self.date_boost, self.period_boost) < 0:
            raise ValueError("speaker_boost, date_boost and period_boost must be >= 0")


@dataclass(frozen=True, slots=True)
class Recollection:
    items: list[RecallItem]
    # Memories that ranked just below the cut (retrieval-induced forgetting).
    competitors: list[int]
    # The memories that fire together: recalled on their own merit (not as associates)
    # and holding at least ``[hebbian] fire_share`` of the query.
    fired: list[int] = field(default_factory=list)
    # When each recalled memory was stored (what its rarity counts from in a context).
    created: dict[int, float] = field(default_factory=dict)
    # R of each memory recalled on its own merit: the share of the whole query it holds.
    resonance: dict[int, float] = field(default_factory=dict)


async def recall(
    store: Store,
    stats: TermStats,
    config: RecallConfig,
    query: str,
    k: int,
    *,
    layers: Sequence[tuple[str, Citations]] = (),
    associations: Associations | None = None,
    hebbian: HebbianConfig | None = None,
    cache: HitCache | None = None,
    now: float = 0.0,
    explain: bool = False,
) -> Recollection:
    """The ``k`` best visible memories for ``query`` (plus associates). ``now``: what
    relative dates ("yesterday") count from. ``explain``: each item says why it ranked."""
    asked = query_terms(query)
    terms = [term for term in asked if stats.df(term)]
    if not terms:
        return Recollection([], [])
    cues = await Cues.read(store, query, terms, now)
    spare = hebbian.rif_competitors if hebbian else 0
    ranked, whys, rows = await _bm25(store, stats, config, terms, cues, k + spare)
    by_id = {hit.memory_id: hit for hit in ranked}
    cited = _cited(layers, terms, asked, config.summary_line_coverage, stats)
    via = {memory_id: layer for memory_id, _, layer, _ in cited}
    # Cited memories first (in summary order), then BM25's; associates of those that
    # really matched. What BM25 did not already bring is read in one go.
    first = [memory_id for memory_id, _, _, _ in cited][:k]
    seeds = first + [hit.memory_id for hit in ranked if hit.memory_id not in via][: k - len(first)]
    resonance = await _resonance(store, stats, config, asked, seeds, whys, rows)
    share = hebbian.fire_share if hebbian is not None else 1.0

    def matched(memory_id: int) -> bool:
        return resonance.get(memory_id, 0.0) >= share

    walked: list[tuple[int, float]] = []
    if associations is not None and hebbian is not None and len(associations):
        spreading = [memory_id for memory_id in seeds if matched(memory_id)]
        walked = associations.walk(spreading, hebbian.max_hops, hebbian.max_associates)
    scores = {memory_id: covered for memory_id, covered, _, _ in cited} | dict(walked)
    wanted = [(m, scores[m]) for m in [*first, *(m for m, _ in walked)] if m not in by_id]
    fetched = await _details(store, wanted, cache)
    # A cited memory is scored by how much of the query its summary line covers.
    chosen = [fetched.get(m) or by_id.get(m) for m in first]
    chosen_hits = [replace(hit, score=scores[hit.memory_id]) for hit in chosen if hit is not None]
    taken = {hit.memory_id for hit in chosen_hits}
    rest = [hit for hit in ranked if hit.memory_id not in taken]
    room = max(k - len(chosen_hits), 0)
    chosen_hits += rest[:room]
    competitors = [hit.memory_id for hit in rest[room : room + spare]]
    if cache is not None:
        for hit in chosen_hits:
            cache.put(hit)
    items = [_item(hit, via.get(hit.memory_id, "bm25")) for hit in chosen_hits]
    created = {hit.memory_id: hit.created for hit in chosen_hits}
    for memory_id, strength in walked:
        associate = fetched.get(memory_id) or by_id.get(memory_id)
        if associate is not None and memory_id not in created:
            items.append(_item(replace(associate, score=strength), "hebbian"))
            created[memory_id] = associate.created
    fired = [hit.memory_id for hit in chosen_hits if matched(hit.memory_id)] if hebbian else []
    if explain:
        items = await _explained(store, stats, config, terms, cues, items, whys, cited)
    shown = {hit.memory_id: resonance.get(hit.memory_id, 0.0) for hit in chosen_hits}
    return Recollection(items, competitors, fired, created, shown)


async def _resonance(
    store: Store,
    stats: TermStats,
    config: RecallConfig,
    asked: Sequence[str],
    ids: list[int],
    whys: dict[int, Factors],
    rows: dict[int, Row],
) -> dict[int, float]:
    """R of each memory of ``ids`` for the query ``asked`` (all its terms): what its row
    (its text, and its neighbours as they count in recall) holds of the whole query,
    times what the query's cues (speaker, dates) made of it, at most 1. ``rows``: those
    at hand; the others are read."""
    missing = [memory_id for memory_id in ids if memory_id not in rows]
    if missing:
        rows = rows | await store.rows(missing)
    weight = config.context_weight
    found = {}
    for memory_id in ids:
        row = rows.get(memory_id)
        if row is None:
            continue
        held = stats.resonance(asked, row.doc.split(), f"{row.prior} {row.later}".split(), weight)
        why = whys.get(memory_id)
        found[memory_id] = min(held * why.speaker * why.time, 1.0) if why else held
    return found


class HitCache:
    """The latest memories recall returned, by id: associates and cited memories are
    mostly memories recalled before, so most of them need no read. Memories never
    change text; drop the cache whenever memories may have been hidden (decay)."""

    def __init__(self, size: int = 4096) -> None:
        self._hits: OrderedDict[int, Hit] = OrderedDict()
        self._size = size

    def get(self, memory_id: int) -> Hit | None:
        hit = self._hits.get(memory_id)
        if hit is not None:
            self._hits.move_to_end(memory_id)
        return hit

    def put(self, hit: Hit) -> None:
        self._hits[hit.memory_id] = hit
        self._hits.move_to_end(hit.memory_id)
        if len(self._hits) > self._size:
            self._hits.popitem(last=False)


async def _details(
    store: Store, wanted: list[tuple[int, float]], cache: HitCache | None
) -> dict[int, Hit]:
    found: dict[int, Hit] = {}
    missing = []
    for memory_id, score in wanted:
        hit = cache.get(memory_id) if cache is not None else None
        if hit is None:
            missing.append((memory_id, score))
        else:
            found[memory_id] = hit
    if missing:
        for hit in await store.hits(missing):
            found[hit.memory_id] = hit
            if cache is not None:
                cache.put(hit)
    return found


async def _bm25(
    store: Store,
    stats: TermStats,
    config: RecallConfig,
    terms: list[str],
    cues: Cues,
    limit: int,
) -> tuple[list[Hit], dict[int, Factors], dict[int, Row]]:
    """The ``limit`` best memories by BM25 and cues, how each was scored, and the index
    rows of those scored.

    Only memories that match the query themselves come — their own text holds a query
    term, or someone the query names said them: their neighbours lift them, never bring
    them alone (checked on the candidates' rows)."""
    weight = config.context_weight
    probe = stats.discriminating(terms, config.common_term_share, config.common_term_floor)
    rare = max(config.common_term_share * stats.documents, config.common_term_floor)
    fallback = stats.df(probe[0]) > rare  # no term is discriminating: the rarest stands in
    held = frozenset(terms)
    if len(probe) == len(terms) and not cues and not fallback:
        # Every term fetches and nothing re-ranks: FTS5's ranking is the exact order, of
        # which the best that hold a term themselves. Should too many of the best hold
        # them only in their neighbours, SQLite filters (exact, and slower).
        match = fts_match(terms)
        found = await store.candidates(match, 2 * limit, weight)
        kept = [c for c in found if not held.isdisjoint(c.doc.split())]
        if len(kept) < limit and len(found) == 2 * limit:
            kept = await store.candidates(match, limit, weight, own=match)
        kept = kept[:limit]
        return (
            [c.hit(c.score) for c in kept if c.visible],
            {c.memory_id: Factors(c.score) for c in kept},
            {c.memory_id: Row(c.memory_id, c.doc, c.prior, c.later) for c in kept},
        )
    wanted = max(limit * config.candidates_per_result, 50)
    common = [term for term in terms if term not in probe]
    named = cues.named
    if fallback:
        # The rarest term is in most rows' context: it fetches by the memories' own text
        # only (a cheaper scan, and every candidate holds a term), and every term is
        # scored here.
        found = await store.candidates(fts_match(probe), wanted)
        common = terms
    else:
        found = await store.candidates(fts_match(probe), wanted, weight)
    # A candidate's FTS5 score already holds the probe terms' share of BM25 (same
    # formula, same statistics); only the common terms are left to add. Candidates
    # come best FTS5 score first: once one could not reach the ``limit``-th best so far
    # even with the most the common terms and cues add, no later one can either.
    boosts = _boosts(config)
    score = stats.scorer(common, weight) if common else None
    reach = stats.bound(common) if common else 0.0
    most = cues.most(boosts) if cues else 1.0
    whys: dict[int, Factors] = {}
    best: list[float] = []  # the ``limit`` best scores so far, a min-heap
    for c in found:
        base = 0.0 if fallback else c.score
        if len(best) == limit and (base + reach) * most < best[0]:
            break
        if not fallback and not _matches(c, held, named):
            continue
        why = whys[c.memory_id] = Factors(
            base + score(c.doc, c.prior, c.later) if score is not None else base
        )
        if cues and (origin := c.origin()) is not None:
            weigh_one(cues, boosts, why, origin)
        if len(best) < limit:
            heapq.heappush(best, why.score)
        elif why.score > best[0]:
            heapq.heapreplace(best, why.score)
    rescored = sorted(
        ((memory_id, why.score) for memory_id, why in whys.items()),
        key=lambda pair: (-pair[1], pair[0]),
    )
    # As Store.hits would: the best ``limit``, then only the visible among them.
    by_id = {c.memory_id: c for c in found}
    rows = {m: Row(m, by_id[m].doc, by_id[m].prior, by_id[m].later) for m, _ in rescored[:limit]}
    return (
        [
            by_id[memory_id].hit(score)
            for memory_id, score in rescored[:limit]
            if by_id[memory_id].visible
        ],
        whys,
        rows,
    )


def _matches(c: Candidate, held: frozenset[str], named: frozenset[str]) -> bool:
    """Whether a candidate matches the query itself, not only through its neighbours:
    said by someone the query names, or its own text holds a query term."""
    if named and (c.person in named or c.sender in named):
        return True
    return not held.isdisjoint(c.doc.split())


def _boosts(config: RecallConfig) -> Boosts:
    return Boosts(config.speaker_boost, config.date_boost, config.period_boost)


async def _explained(
    store: Store,
    stats: TermStats,
    config: RecallConfig,
    terms: Sequence[str],
    cues: Cues,
    items: list[RecallItem],
    whys: dict[int, Factors],
    cited: Collection[tuple[int, float, str, bool]],
) -> list[RecallItem]:
    """``items`` with their explanations: BM25 by term (text and context), cues, and
    the summary line or Hebbian edge that brought them."""
    rows = await store.rows([item.id for item in items])
    missing = {item.id: Factors() for item in items if item.id not in whys}
    if cues and missing:
        await weigh(store, cues, _boosts(config), missing)
    coverage = {memory_id: share for memory_id, share, _, _ in cited}
    by_known = {memory_id for memory_id, _, _, known in cited if known}
    weight = config.context_weight
    out = []
    for item in items:
        why = whys.get(item.id) or missing[item.id]
        row = rows.get(item.id)
        shares = (
            stats.explain(terms, row.doc.split(), f"{row.prior} {row.later}".split(), weight)
            if row is not None
            else []
        )
        bm25 = sum(share.score for share in shares)
        near = sum(
            share.score * weight * share.context / (share.text + weight * share.context)
            for share in shares
        )
        reasons = []
        if shares:
            listed = ", ".join(
                f"{s.term} {s.score:.3f}"
                + (f" ({s.context}x in neighbouring turns)" if s.context else "")
                for s in shares
            )
            reasons.append(f"bm25 {bm25:.3f}: {listed}")
        reasons += why.reasons
        summary = coverage.get(item.id) if item.via in ("summary", "weekly") else None
        if summary is not None:
            reasons.append(
                f"cited by a {item.via} line covering {summary:.0%} of the query (by idf)"
                if item.id not in by_known
                else f"cited by a {item.via} line holding {summary:.0%} of the query's words"
                " (every memory holds them: nothing else ranks it)"
            )
        hebbian = item.score if item.via == "hebbian" else None
        if hebbian is not None:
            reasons.append(f"associated by a Hebbian edge of weight {hebbian:g}")
        explanation = Explanation(
            bm25=round(bm25, 6),
            terms=[TermWeight(s.term, round(s.score, 6), s.text, s.context) for s in shares],
            context=round(near, 6),
            speaker=why.speaker,
            time=why.time,
            summary=summary,
            hebbian=hebbian,
            reasons=reasons,
        )
        out.append(msgspec.structs.replace(item, explain=explanation))
    return out


class Citations:
    """A summary's lines that cite memories, tokenized once per summary version."""

    def __init__(self, text: str) -> None:
        self.lines: list[tuple[frozenset[str], list[int]]] = []
        for line in text.splitlines():
            ids = [int(n) for n in _CITATION.findall(line)]
            if ids:
                self.lines.append((frozenset(tokens(_CITATION.sub(" ", line))), ids))


def _cited(
    layers: Sequence[tuple[str, Citations]],
    terms: Sequence[str],
    asked: Sequence[str],
    coverage: float,
    stats: TermStats,
) -> list[tuple[int, float, str, bool]]:
    """(memory id, line coverage, layer, by known words) for memories cited by matching
    summary lines, best line first. A line covers the whole query (``asked``), each term
    weighed as evidence (:meth:`~souls.store.bm25.TermStats.weight`): words no memory
    holds count, as the rarest, and a line sharing only words every memory holds covers
    nothing of it — a line covering half the query points where the query does.

    When the words memories hold of the query (``terms``) are no evidence at all —
    every one in every memory — no line covers anything and BM25 cannot tell memories
    apart: then the lines holding the most of those words (by idf) come first, as the
    layered order (summary, weekly, all) has it ("by known words"). Either way a cited
    memory's R is what its own row holds (:func:`_resonance`), not its line's share."""
    evidence = {term: stats.weight(term) for term in asked}
    whole = sum(evidence.values())
    known = sum(evidence[term] for term in terms)
    idf = {term: stats.idf(term) for term in terms}
    total = sum(idf.values())
    cited: list[tuple[int, float, str, bool]] = []
    seen: set[int] = set()
    for layer, citations in layers:
        matches: list[tuple[float, int, list[int]]] = []
        for position, (words, ids) in enumerate(citations.lines):
            held = sum(w for term, w in evidence.items() if term in words) / whole if whole else 0.0
            share = held if known > 0 else sum(w for t, w in idf.items() if t in words) / total
            if share >= coverage:
                matches.append((share, position, ids))
        for share, _, ids in sorted(matches, key=lambda m: (-m[0], m[1])):
            for memory_id in ids:
                if memory_id not in seen:
                    seen.add(memory_id)
                    cited.append((memory_id, round(share, 4), layer, known <= 0))
    return cited


def _item(hit: Hit, via: str) -> RecallItem:
    return RecallItem(
        id=hit.memory_id,
        kind=hit.kind,
        text=hit.text,
        score=round(hit.score, 6),
        via=via,
        refs=[hit.ref] if hit.ref is not None else [],
    )
