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

Deterministic: same database, query and time, same answer; ties and near-ties (see
:func:`recall`) go to the more salient memory, then to the one said later, then to the
one stored later. Recall only reads; what it should change (edges, recall times,
competitors' salience) is returned for the soul to write. Asked to, it explains each
item (:class:`~souls.results.Explanation`).
"""

from __future__ import annotations

import heapq
import re
import sys
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import msgspec

from souls.embed.vectors import Near
from souls.mind.hebbian import Associations, HebbianConfig
from souls.recall.cues import Boosts, Cues, Factors, weigh, weigh_one
from souls.recall.slots import Asked, asked_slots
from souls.results import Explanation, RecallItem, TermWeight
from souls.store.bm25 import Held, Shares, TermStats, split
from souls.store.interface import SoulStore
from souls.store.neighbours import MAX_TURNS, Row
from souls.store.store import Candidate, Hit, Scope, Successor
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
    # What another form of a query word counts for ("failed" for "failures", "allergic"
    # for "allergies": stems Snowball leaves apart), against 1 for the word itself; 0:
    # only the word's own stem matches.
    related_share: float = 0.5
    # A memory holding as much of the query's words as a better one (their coverage
    # within near_tie_coverage) and within this share of its relevance is a near-tie
    # with it: the more salient memory comes first, then the more recent one.
    near_tie: float = 0.15
    near_tie_coverage: float = 0.02
    # With [embedding] on, a memory's semantic part is how far its cosine with the query
    # stands above the query's cosines with every memory of the soul, in standard
    # deviations z: 0 up to dense_z_low, 1 from dense_z_high, linear between (a cosine
    # means something only against that spread: models differ in scale, and a model that
    # does not know a language scores its texts alike); 0 too at a cosine not above
    # dense_floor. The memory gains dense_weight times its part of what its lexical
    # relevance leaves to 1; one with no word of the query comes on that alone. No
    # effect without vectors.
    dense_weight: float = 0.45
    dense_floor: float = 0.2
    dense_z_low: float = 1.5
    dense_z_high: float = 4.0
    # A query word that names a slot of the soul's claims ("who is my employer?", "which
    # city", 公司) brings the memories stating that slot's fact in force (via "claim",
    # see souls.recall.slots), as relevant as this share of the query's evidence the
    # naming words hold: above memories that match only the query's everyday words,
    # below those that match what it asks; 0: never.
    slot_share: float = 0.5

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
        if not 0 <= self.related_share <= 1 or not 0 <= self.near_tie < 1:
            raise ValueError("related_share must be in [0, 1] and near_tie in [0, 1)")
        if not 0 <= self.near_tie_coverage <= 1:
            raise ValueError("near_tie_coverage must be in [0, 1]")
        if not 0 <= self.dense_weight <= 1 or not -1 <= self.dense_floor < 1:
            raise ValueError("dense_weight must be in [0, 1] and dense_floor in [-1, 1)")
        if not 0 <= self.dense_z_low < self.dense_z_high:
            raise ValueError("dense_z_low must be >= 0 and below dense_z_high")
        if not 0 <= self.slot_share <= 1:
            raise ValueError("slot_share must be in [0, 1]")


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
    store: SoulStore,
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
    scope: Scope | None = None,
    dense: Near | None = None,
) -> Recollection:
    """The ``k`` best visible memories for ``query`` (plus associates), best first.
    ``now``: what relative dates ("yesterday") count from. ``explain``: each item says
    why it ranked. ``scope``: only memories within it (:class:`~souls.store.store.Scope`).
    ``dense``: the memories nearest to the query by embedding, with their cosine and
    the spread of the query's cosines (the semantic layer); their similarity, by its
    standing in that spread, joins the relevance (``[recall] dense_weight``)
    and brings those that hold no word of the query (``via: dense``). Without it (or
    empty), recall is lexical, exactly as it was.

    Each item carries its relevance in [0, 1] (:class:`~souls.results.RecallItem`): the
    share of the query's evidence it holds — each query word weighted by how rare it
    is among the soul's memories (words no memory holds count, as the rarest), another
    form of a word for ``[recall] related_share`` of it, a neighbouring turn's word for
    ``context_weight`` — times the speaker and date cues, at most 1. 1.0: the memory
    holds every word of the query, as strongly as a memory made of exactly those words
    would (or holds most of it, said by the person and on the day the query names);
    0.5: half of the query's evidence. It does not depend on how many memories matched
    nor on the soul's size beyond the words' rarity, so one threshold serves every
    query and soul. A memory cited by a summary line is at least as relevant as the
    share of the query its line covers; an associate (``via: hebbian``) is less
    relevant than every memory that matched, by its edge's strength.

    Items come in non-increasing relevance; relevances within ``[recall] near_tie`` of
    each other are a near-tie, which the more salient memory wins, then the more recent
    one. A memory whose fact a later claim superseded (a move, a rename, a new number)
    comes right below its successor, brought in (``via: successor``) when the query
    did not find it, as relevant as what it replaces. Nothing of relevance 0 (rounded
    to 3 decimals) is returned."""
    asked = query_terms(query)
    terms = [term for term in asked if stats.df(term)]
    related = stats.relatives(terms, asked) if config.related_share > 0 else {}
    slots = asked_slots(asked, stats) if config.slot_share > 0 else None
    if not terms and not related and not (dense and dense.cosines) and slots is None:
        return Recollection([], [])
    measure = _Measure(stats, config, asked, related)
    cues = await Cues.read(store, query, terms, now)
    spare = hebbian.rif_competitors if hebbian else 0
    lexical = bool(terms or related)
    found = _Found([], {}, {}, {}, {})
    if lexical:
        found = await _bm25(
            store, stats, config, [*terms, *related], measure.scale, cues, k + spare, scope
        )
    whys, rows, by_id = found.whys, found.rows, found.by_id
    measure.tokens.update(found.tokens)
    cited = _cited(layers, terms, asked, config.summary_line_coverage, stats) if lexical else []
    if scope and cited:
        inside = await store.within([memory_id for memory_id, _, _, _ in cited], scope)
        cited = [c for c in cited if c[0] in inside]
    via = {memory_id: layer for memory_id, _, layer, _ in cited}
    coverage = {memory_id: covered for memory_id, covered, _, _ in cited}
    cited_ids = [memory_id for memory_id, _, _, _ in cited][:k]
    wanted = [(m, coverage[m]) for m in cited_ids if m not in by_id]
    fetched = await _details(store, wanted, cache)
    rows = rows | await store.rows([m for m in cited_ids if m not in rows])
    relevance = {
        hit.memory_id: measure.of(rows.get(hit.memory_id), whys.get(hit.memory_id))
        for hit in found.hits
    }
    pool = [
        replace(hit, score=coverage[m])
        for m in cited_ids
        if (hit := fetched.get(m) or by_id.get(m)) is not None
    ]
    for hit in pool:
        own = measure.of(rows.get(hit.memory_id), whys.get(hit.memory_id))
        relevance[hit.memory_id] = max(coverage[hit.memory_id], own)
    taken = {hit.memory_id for hit in pool}
    pool += [hit for hit in found.hits if hit.memory_id not in taken]
    semantic: dict[int, float] = {}
    if dense and dense.cosines:
        semantic = await _semantic(store, config, dense, scope)
        pool += await _dense(
            store, config.dense_weight, pool, semantic, dense.cosines, relevance, via, cache
        )
    pool = [hit for hit in pool if round(min(relevance[hit.memory_id], 1.0), 3) > 0]
    if slots is not None:
        stated, raised = await _stated(store, config, slots, pool, relevance, k, cache, scope)
        pool += stated
        via |= {m: "claim" for m in [*(hit.memory_id for hit in stated), *raised]}
    when = found.when | {
        hit.memory_id: hit.created for hit in pool if hit.memory_id not in found.when
    }
    covered = {hit.memory_id: measure.held(rows.get(hit.memory_id)).coverage for hit in pool}
    ordered = _order(pool, relevance, covered, when, config, semantic)
    chosen_hits, rest = ordered[:k], ordered[k:]
    successors = await store.successors([h.memory_id for h in chosen_hits if h.superseded])
    chosen_hits, brought = await _succeeded(store, chosen_hits, successors, relevance, cache, scope)
    chosen_hits = chosen_hits[:k]
    # Retrieval-induced forgetting: the memories that ranked just below the cut and are
    # not returned, whatever brought them (a summary line's too: a near-tie can rank one
    # below the cut), are the competitors whose salience the recall lowers.
    returned = {hit.memory_id for hit in chosen_hits}
    # A fact in force that a slot question brought is not worn down for missing the cut.
    competitors = [
        hit.memory_id
        for hit in rest
        if hit.memory_id not in returned and via.get(hit.memory_id) != "claim"
    ][:spare]
    for memory_id in brought:
        via[memory_id] = "successor"
    seeds = [hit.memory_id for hit in chosen_hits]
    resonance = await _resonance(store, measure, seeds, whys, rows)
    share = hebbian.fire_share if hebbian is not None else 1.0

    def matched(memory_id: int) -> bool:
        return resonance.get(memory_id, 0.0) >= share

    walked: list[tuple[int, float]] = []
    if associations is not None and hebbian is not None and len(associations):
        spreading = [
            memory_id for memory_id in seeds if matched(memory_id) and memory_id not in brought
        ]
        walked = associations.walk(spreading, hebbian.max_hops, hebbian.max_associates)
    if scope and walked:
        inside = await store.within([memory_id for memory_id, _ in walked], scope)
        walked = [(m, strength) for m, strength in walked if m in inside]
    in_list = {hit.memory_id for hit in chosen_hits}
    fetched |= await _details(
        store, [(m, w) for m, w in walked if m not in in_list and m not in fetched], cache
    )
    if cache is not None:
        for hit in chosen_hits:
            cache.put(hit)
    items = [
        _item(hit, via.get(hit.memory_id, "bm25"), relevance[hit.memory_id]) for hit in chosen_hits
    ]
    created = {hit.memory_id: hit.created for hit in chosen_hits}
    # An associate matched nothing of the query itself: it is less relevant than the
    # least relevant memory that did, by how strong its edge is.
    floor = min((relevance[m] for m in seeds), default=0.0)
    threshold = hebbian.association_threshold if hebbian is not None else 1.0
    for memory_id, strength in sorted(walked, key=lambda pair: (-pair[1], pair[0])):
        associate = fetched.get(memory_id)
        if associate is not None and memory_id not in created:
            relevance[memory_id] = min(floor, 1.0) * strength / (strength + threshold)
            items.append(_item(replace(associate, score=strength), "hebbian", relevance[memory_id]))
            created[memory_id] = associate.created
    fired = [m for m in seeds if matched(m) and m not in brought] if hebbian else []
    if explain:
        items = await _explained(
            store,
            stats,
            config,
            [*terms, *related],
            measure,
            cues,
            items,
            whys,
            cited,
            when,
            successors,
            {m: (dense.cosines[m], config.dense_weight * part) for m, part in semantic.items()}
            if dense
            else {},
            slots,
        )
    shown = {memory_id: resonance.get(memory_id, 0.0) for memory_id in seeds}
    return Recollection(items, competitors, fired, created, shown)


async def _stated(
    store: SoulStore,
    config: RecallConfig,
    slots: Asked,
    pool: list[Hit],
    relevance: dict[int, float],
    k: int,
    cache: HitCache | None,
    scope: Scope | None,
) -> tuple[list[Hit], list[int]]:
    """The memories stating the fact in force of a slot the query asks for, latest
    first, at most ``k``: each at least as relevant as the share of the query its naming
    words hold (``slot_share`` of it; set in ``relevance``), so that they rank among what
    the query's words found by that, above matches of its everyday words only. Returns
    the ones not in ``pool`` yet, and the ones in it whose relevance this raised."""
    share = config.slot_share * slots.share
    if round(min(share, 1.0), 3) <= 0:
        return [], []
    in_pool = {hit.memory_id for hit in pool}
    ids = await store.stating(slots.slots, k + len(in_pool))
    if scope and ids:
        inside = await store.within(ids, scope)
        ids = [m for m in ids if m in inside]
    ids = ids[:k]
    raised = [m for m in ids if m in in_pool and relevance[m] < share]
    for memory_id in raised:
        relevance[memory_id] = share
    for i, had in enumerate(pool):
        if had.memory_id in raised:
            pool[i] = replace(had, score=share)
    new = [m for m in ids if m not in in_pool]
    fetched = await _details(store, [(m, share) for m in new], cache)
    out = []
    for memory_id in new:
        hit = fetched.get(memory_id)
        if hit is not None:
            relevance[memory_id] = share
            out.append(replace(hit, score=share))
    return out, raised


async def _semantic(
    store: SoulStore, config: RecallConfig, dense: Near, scope: Scope | None
) -> dict[int, float]:
    """The semantic part of each memory near the query, in (0, 1]: its cosine's
    standing among the query's cosines, from ``dense_z_low`` (0) to ``dense_z_high``
    (1); none at a cosine not above ``dense_floor``. Within ``scope`` only."""
    low, high = config.dense_z_low, config.dense_z_high
    parts = {
        m: part
        for m, c in dense.cosines.items()
        if c > config.dense_floor
        and (part := min(1.0, (dense.standing(c) - low) / (high - low))) > 0
    }
    if scope and parts:
        inside = await store.within(list(parts), scope)
        parts = {m: part for m, part in parts.items() if m in inside}
    return parts


async def _dense(
    store: SoulStore,
    weight: float,
    pool: list[Hit],
    semantic: dict[int, float],
    dense: dict[int, float],
    relevance: dict[int, float],
    via: dict[int, str],
    cache: HitCache | None,
) -> list[Hit]:
    """Fuse the semantic parts into ``relevance`` (in place): a memory of ``pool``
    gains ``dense_weight`` of a part of what it lacks to 1; one the query's words did
    not find comes on its part alone. Returns those (visible ones), ``via`` dense."""
    for hit in pool:
        part = semantic.get(hit.memory_id)
        if part:
            relevance[hit.memory_id] = _fused(relevance[hit.memory_id], weight * part)
    taken = {hit.memory_id for hit in pool}
    wanted = [(m, dense[m]) for m in semantic if m not in taken]
    fetched = await _details(store, wanted, cache)
    out = []
    for memory_id, cosine in wanted:
        found = fetched.get(memory_id)
        if found is not None:
            out.append(replace(found, score=cosine))
            relevance[memory_id] = _fused(0.0, weight * semantic[memory_id])
            via[memory_id] = "dense"
    return out


def _fused(lexical: float, semantic: float) -> float:
    """Lexical relevance joined by a semantic part: it fills that share of what the
    lexical part leaves to 1, so the sum stays within [0, 1] below the cap and never
    lowers a relevance already above it."""
    return lexical + semantic * max(0.0, 1.0 - lexical)


class _Measure:
    """What memories' rows hold of one query, each row worked out once: its relevance
    (before the cap, and times the cues), its R and its coverage."""

    def __init__(
        self, stats: TermStats, config: RecallConfig, asked: Sequence[str], related: dict[str, str]
    ) -> None:
        self.asked = asked
        self.related = related
        self.scale = {term: config.related_share for term in related}
        self.stats = stats
        self.context_weight = config.context_weight
        self.shares = Shares(stats, asked, related, config.related_share, config.context_weight)
        # Rows already split into tokens (own, context), by memory: BM25's best.
        self.tokens: dict[int, tuple[list[str], list[str]]] = {}
        self._held: dict[int, Held] = {}

    def plain(self, row: Row) -> float:
        """Relevance without the other forms of the query's words (for explanations)."""
        shares = Shares(self.stats, self.asked, {}, 0.0, self.context_weight)
        return shares.of(*split(row.doc, row.prior, row.later)).relevance

    def held(self, row: Row | None) -> Held:
        if row is None:
            return _NOTHING
        held = self._held.get(row.memory_id)
        if held is None:
            own, near = self.tokens.get(row.memory_id) or split(row.doc, row.prior, row.later)
            held = self._held[row.memory_id] = self.shares.of(own, near)
        return held

    def of(self, row: Row | None, why: Factors | None) -> float:
        """Relevance, before it is capped at 1 (the cap is for showing: above it, the
        order still tells memories apart)."""
        held = self.held(row).relevance
        return held * why.speaker * why.time if why is not None else held

    def resonance(self, row: Row | None, why: Factors | None) -> float:
        held = self.held(row).resonance
        return min(held * why.speaker * why.time, 1.0) if why is not None else held


_NOTHING = Held(0.0, 0.0, 0.0)


def _order(
    hits: list[Hit],
    relevance: dict[int, float],
    coverage: dict[int, float],
    when: dict[int, float],
    config: RecallConfig,
    semantic: dict[int, float] | None = None,
) -> list[Hit]:
    """``hits`` by relevance, best first. A run of hits that each hold as much of the
    query's words as the run's first (coverage within ``near_tie_coverage``), as much of
    its meaning (their semantic parts within it too) and are within ``near_tie`` of its
    relevance is a near-tie: in it, the more salient comes first, then the one said
    later, then the one stored later. (Without the semantic condition, memories found
    by their embedding alone, none holding a word of the query, would all tie and the
    latest would win over the nearest.)"""
    meaning = semantic or {}
    ranked = sorted(hits, key=lambda hit: (-relevance[hit.memory_id], -hit.memory_id))
    out: list[Hit] = []
    start = 0
    while start < len(ranked):
        first = ranked[start].memory_id
        least = relevance[first] * (1 - config.near_tie)
        end = start + 1
        while end < len(ranked):
            other = ranked[end].memory_id
            if (
                relevance[other] < least
                or abs(coverage[first] - coverage[other]) > config.near_tie_coverage
                or abs(meaning.get(first, 0.0) - meaning.get(other, 0.0)) > config.near_tie_coverage
            ):
                break
            end += 1
        out += sorted(
            ranked[start:end],
            key=lambda hit: (-hit.salience, -when.get(hit.memory_id, 0.0), -hit.memory_id),
        )
        start = end
    return out


async def _succeeded(
    store: SoulStore,
    hits: list[Hit],
    successors: dict[int, Successor],
    relevance: dict[int, float],
    cache: HitCache | None,
    scope: Scope | None,
) -> tuple[list[Hit], set[int]]:
    """``hits`` with each superseded memory's successor right above it (moved up, or
    brought in), as relevant as it at least; the ids brought in."""
    if not successors:
        return hits, set()
    wanted = {s.memory_id for s in successors.values()}
    if scope:
        wanted &= await store.within(list(wanted), scope)
    present = {hit.memory_id: hit for hit in hits}
    fetched = await _details(store, [(m, 0.0) for m in wanted if m not in present], cache)
    out: list[Hit] = []
    placed: set[int] = set()
    brought: set[int] = set()
    for hit in hits:
        if hit.memory_id in placed:
            continue
        successor = successors.get(hit.memory_id)
        after = successor.memory_id if successor is not None else None
        if after is not None and after in wanted and after not in placed:
            new = present.get(after) or fetched.get(after)
            if new is not None:
                if after not in present:
                    brought.add(after)
                relevance[after] = max(relevance.get(after, 0.0), relevance[hit.memory_id])
                out.append(replace(new, score=max(new.score, hit.score)))
                placed.add(after)
        out.append(hit)
        placed.add(hit.memory_id)
    return out, brought


async def _resonance(
    store: SoulStore,
    measure: _Measure,
    ids: list[int],
    whys: dict[int, Factors],
    rows: dict[int, Row],
) -> dict[int, float]:
    """R of each memory of ``ids`` for the whole query: what its row (its text, and its
    neighbours as they count in recall) holds of the whole query, times what the
    query's cues (speaker, dates) made of it, at most 1. ``rows``: those at hand; the
    others are read."""
    missing = [memory_id for memory_id in ids if memory_id not in rows]
    if missing:
        rows = rows | await store.rows(missing)
    return {
        memory_id: measure.resonance(rows[memory_id], whys.get(memory_id))
        for memory_id in ids
        if memory_id in rows
    }


class HitCache:
    """The latest memories recall returned, by id: associates and cited memories are
    mostly memories recalled before (an edge forms only between memories recalled
    together), so most of them need no read. Memories never change text; drop the cache
    whenever memories may have been hidden (decay).

    Bounded by bytes, not by count: ``budget`` is what its rows may take (a text's own
    size in CPython, plus ``_ENTRY`` for the rest of the row), so that a soul of short
    chat turns keeps every memory it recalled of its last ten thousand or so, and one of
    long documents fewer, in the same memory."""

    _ENTRY = 256  # bytes a cached row takes besides its text (Hit, key, links), about

    def __init__(self, budget: int = 4 << 20) -> None:
        self._hits: OrderedDict[int, Hit] = OrderedDict()
        self._budget = budget
        self._used = 0

    def __len__(self) -> int:
        return len(self._hits)

    @property
    def used(self) -> int:
        """The bytes its rows take, by the count above."""
        return self._used

    def get(self, memory_id: int) -> Hit | None:
        hit = self._hits.get(memory_id)
        if hit is not None:
            self._hits.move_to_end(memory_id)
        return hit

    def put(self, hit: Hit) -> None:
        old = self._hits.pop(hit.memory_id, None)
        if old is not None:
            self._used -= self._cost(old)
        self._hits[hit.memory_id] = hit
        self._used += self._cost(hit)
        while self._used > self._budget and len(self._hits) > 1:
            _, evicted = self._hits.popitem(last=False)
            self._used -= self._cost(evicted)

    def _cost(self, hit: Hit) -> int:
        return sys.getsizeof(hit.text) + self._ENTRY


async def _details(
    store: SoulStore, wanted: list[tuple[int, float]], cache: HitCache | None
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


@dataclass(frozen=True, slots=True)
class _Found:
    """BM25's best memories (visible ones, best first), how each memory scored was
    scored and, for the best, their index rows (also split: own tokens, context's) and
    when they were said."""

    hits: list[Hit]
    whys: dict[int, Factors]
    rows: dict[int, Row]
    when: dict[int, float]
    tokens: dict[int, tuple[list[str], list[str]]]

    @property
    def by_id(self) -> dict[int, Hit]:
        return {hit.memory_id: hit for hit in self.hits}


async def _bm25(
    store: SoulStore,
    stats: TermStats,
    config: RecallConfig,
    terms: list[str],
    scale: dict[str, float],
    cues: Cues,
    limit: int,
    scope: Scope | None = None,
) -> _Found:
    """The ``limit`` best memories by BM25 and cues, how each was scored, and the index
    rows of those scored. ``scale``: the terms that count for less than a query word
    (other forms of one).

    Only memories that match the query themselves come — their own text holds a query
    term, or someone the query names said them: their neighbours lift them, never bring
    them alone (checked on the candidates' rows)."""
    weight = config.context_weight
    probe = stats.discriminating(terms, config.common_term_share, config.common_term_floor)
    rare = max(config.common_term_share * stats.documents, config.common_term_floor)
    fallback = stats.df(probe[0]) > rare  # no term is discriminating: the rarest stands in
    held = frozenset(terms)
    if len(probe) == len(terms) and not cues and not fallback and not scale:
        # Every term fetches and nothing re-ranks: FTS5's ranking is the exact order, of
        # which the best that hold a term themselves. Should too many of the best hold
        # them only in their neighbours, SQLite filters (exact, and slower).
        match = fts_match(terms)
        found = await store.candidates(match, 2 * limit, weight, scope=scope)
        kept = []
        for c in found:
            if not held.isdisjoint(c.doc.split()):
                kept.append(c)
                if len(kept) == limit:
                    break
        if len(kept) < limit and len(found) == 2 * limit:
            kept = (await store.candidates(match, limit, weight, own=match, scope=scope))[:limit]
        return _Found(
            [c.hit(c.score) for c in kept if c.visible],
            {c.memory_id: Factors(c.score) for c in kept},
            {c.memory_id: Row(c.memory_id, c.doc, c.prior, c.later) for c in kept},
            {c.memory_id: _when(c) for c in kept},
            {c.memory_id: split(c.doc, c.prior, c.later) for c in kept},
        )
    wanted = max(limit * config.candidates_per_result, 50)
    common = [term for term in terms if term not in probe]
    named = cues.named
    if fallback:
        # The rarest term is in most rows' context: it fetches by the memories' own text
        # only (a cheaper scan, and every candidate holds a term), and every term is
        # scored here.
        found = await store.candidates(fts_match(probe), wanted, scope=scope)
        common = terms
    else:
        found = await store.candidates(fts_match(probe), wanted, weight, scope=scope)
        if scale:
            # FTS5 counts every term fully: the terms that count for less are scored
            # here, all of them (the candidates' own score is not used).
            common = terms
    # A candidate's FTS5 score already holds the probe terms' share of BM25 (same
    # formula, same statistics); only the common terms are left to add. Candidates
    # come best FTS5 score first: once one could not reach the ``limit``-th best so far
    # even with the most the common terms and cues add, no later one can either.
    boosts = _boosts(config)
    score = stats.scorer(common, weight, scale) if common else None
    # With terms that count for less, every term is scored here, and the candidate's
    # FTS5 score (each probe term fully) bounds what the probe terms add.
    unbound = [term for term in common if term not in probe] if scale else common
    reach = stats.bound(unbound) if unbound else 0.0
    most = cues.most(boosts) if cues else 1.0
    whys: dict[int, Factors] = {}
    # Each candidate scored, split once (own tokens, context's), with its score.
    scored: dict[int, tuple[Candidate, tuple[list[str], list[str]], float]] = {}
    best: list[float] = []  # the ``limit`` best scores so far, a min-heap
    for c in found:
        if not fallback and len(best) == limit and (c.score + reach) * most < best[0]:
            break
        tokens = split(c.doc, c.prior, c.later)
        if not fallback and not _matches(c, held, named, tokens[0]):
            continue
        base = 0.0 if fallback or scale else c.score
        why = whys[c.memory_id] = Factors(base + score(*tokens) if score is not None else base)
        if cues and (origin := c.origin()) is not None:
            weigh_one(cues, boosts, why, origin)
        total = why.score
        scored[c.memory_id] = (c, tokens, total)
        if len(best) < limit:
            heapq.heappush(best, total)
        elif total > best[0]:
            heapq.heapreplace(best, total)
    # As Store.hits would: the best ``limit``, then only the visible among them.
    top = [scored[m] for m in sorted(scored, key=lambda m: (-scored[m][2], -m))[:limit]]
    return _Found(
        [c.hit(total) for c, _, total in top if c.visible],
        whys,
        {c.memory_id: Row(c.memory_id, c.doc, c.prior, c.later) for c, _, _ in top},
        {c.memory_id: _when(c) for c, _, _ in top},
        {c.memory_id: tokens for c, tokens, _ in top},
    )


def _when(c: Candidate) -> float:
    """When a candidate was said: its event's time, else when it was stored."""
    return c.ts if c.ts is not None else (c.created or 0.0)


def _matches(c: Candidate, held: frozenset[str], named: frozenset[str], own: list[str]) -> bool:
    """Whether a candidate matches the query itself, not only through its neighbours:
    said by someone the query names, or its own text (``own``: its tokens) holds a query
    term."""
    if named and (c.person in named or c.sender in named):
        return True
    return not held.isdisjoint(own)


def _boosts(config: RecallConfig) -> Boosts:
    return Boosts(config.speaker_boost, config.date_boost, config.period_boost)


async def _explained(
    store: SoulStore,
    stats: TermStats,
    config: RecallConfig,
    terms: Sequence[str],
    measure: _Measure,
    cues: Cues,
    items: list[RecallItem],
    whys: dict[int, Factors],
    cited: Collection[tuple[int, float, str, bool]],
    when: dict[int, float],
    successors: dict[int, Successor],
    semantic: dict[int, tuple[float, float]],
    slots: Asked | None = None,
) -> list[RecallItem]:
    """``items`` with their explanations: BM25 by term (text and context), cues, the
    summary line or Hebbian edge that brought them, and each part of their relevance.
    ``semantic``: by memory, its cosine with the query and its weighted semantic part."""
    rows = await store.rows([item.id for item in items])
    missing = {item.id: Factors() for item in items if item.id not in whys}
    if missing:
        origins = await store.origins(list(missing))
        if cues:
            await weigh(store, cues, _boosts(config), missing)
        when = when | {m: origin.ts for m, origin in origins.items() if m not in when}
    salience = {
        hit.memory_id: hit.salience for hit in await store.hits([(i.id, 0.0) for i in items])
    }
    coverage = {memory_id: share for memory_id, share, _, _ in cited}
    by_known = {memory_id for memory_id, _, _, known in cited if known}
    predecessor = {s.memory_id: (old, s.change) for old, s in successors.items()}
    shown = {item.id for item in items}
    weight = config.context_weight
    scale = measure.scale
    out = []
    for item in items:
        why = whys.get(item.id) or missing[item.id]
        row = rows.get(item.id)
        shares = (
            stats.explain(terms, row.doc.split(), f"{row.prior} {row.later}".split(), weight, scale)
            if row is not None
            else []
        )
        bm25 = sum(share.score for share in shares)
        near = sum(
            share.score * weight * share.context / (share.text + weight * share.context)
            for share in shares
        )
        held = measure.held(row)
        lexical = held.relevance
        plain = measure.plain(row) if row is not None and measure.related else lexical
        related = lexical - plain
        reasons = [
            f"relevance {item.relevance:.3f}: lexical {lexical:.3f}"
            + f" (holds {held.coverage:.0%} of the query's evidence)"
            + (f" (of it {related:.3f} from other forms of the query's words)" if related else "")
            + (f" x speaker {why.speaker:g}" if why.speaker != 1 else "")
            + (f" x time {why.time:g}" if why.time != 1 else "")
        ]
        near_query = semantic.get(item.id)
        dense = None
        if near_query is not None:
            cosine, part = near_query
            dense = round(cosine, 6)
            reasons[0] += (
                f" + semantic {part:.3f} of what it leaves to 1 (embedding cosine {cosine:.3f}"
                " with the query's)"
            )
            if item.via == "dense":
                reasons.append("brought by its embedding alone: it holds no word of the query")
        if shares:
            listed = ", ".join(
                f"{s.term} {s.score:.3f}"
                + (" (another form of a query word)" if s.term in scale else "")
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
        if item.via == "claim" and slots is not None:
            reasons.append(
                f"states the fact in force the query asks for ({', '.join(slots.slots)}):"
                f" relevance at least {slots.share * config.slot_share:.3f}, the share of"
                " the query its naming words hold (times [recall] slot_share)"
            )
        hebbian = item.score if item.via == "hebbian" else None
        if hebbian is not None:
            reasons.append(
                f"associated by a Hebbian edge of weight {hebbian:g} (less relevant than what"
                " matched)"
            )
        said = when.get(item.id)
        if said is not None:
            day = datetime.fromtimestamp(said, UTC).strftime("%Y-%m-%d %H:%M")
            reasons.append(
                f"near-ties: salience {salience.get(item.id, 0.0):g}, then said {day} UTC"
            )
        succeeds = predecessor.get(item.id)
        superseded = successors.get(item.id)
        if succeeds is not None and succeeds[0] in shown:
            reasons.append(f"supersedes m{succeeds[0]} ({succeeds[1]}): ranks above it")
        elif succeeds is not None:
            reasons.append(f"supersedes m{succeeds[0]} ({succeeds[1]})")
        if superseded is not None and superseded.memory_id in shown:
            reasons.append(
                f"superseded by m{superseded.memory_id} ({superseded.change}): ranks below it"
            )
        explanation = Explanation(
            bm25=round(bm25, 6),
            terms=[TermWeight(s.term, round(s.score, 6), s.text, s.context) for s in shares],
            context=round(near, 6),
            speaker=why.speaker,
            time=why.time,
            summary=summary,
            hebbian=hebbian,
            lexical=round(lexical, 6),
            related=round(related, 6),
            dense=dense,
            salience=salience.get(item.id),
            when=said,
            succeeds=succeeds[0] if succeeds is not None else None,
            superseded_by=superseded.memory_id if superseded is not None else None,
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
            if known > 0:
                share = held
            else:  # no term of the query's own (only other forms of its words): none
                share = sum(w for t, w in idf.items() if t in words) / total if total else 0.0
            if share >= coverage:
                matches.append((share, position, ids))
        for share, _, ids in sorted(matches, key=lambda m: (-m[0], m[1])):
            for memory_id in ids:
                if memory_id not in seen:
                    seen.add(memory_id)
                    cited.append((memory_id, round(share, 4), layer, known <= 0))
    return cited


def _item(hit: Hit, via: str, relevance: float) -> RecallItem:
    return RecallItem(
        id=hit.memory_id,
        kind=hit.kind,
        text=hit.text,
        score=round(hit.score, 6),
        via=via,
        refs=[hit.ref] if hit.ref is not None else [],
        relevance=round(min(relevance, 1.0), 3),
    )
