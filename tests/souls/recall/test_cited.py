"""Parts of recall's ranking on their own: summary lines and a query holding none of
the soul's words itself, only other forms of them (no line covers anything, and recall
answers: it divided by zero and crashed the soul, found by bench/paraphrase.py on an
ops soul); near-ties between memories found by meaning; a cosine's standing."""

from __future__ import annotations

import pytest

from souls.embed.vectors import Near
from souls.recall.recall import Citations, RecallConfig, _cited, _order
from souls.store.bm25 import TermStats
from souls.store.store import Hit
from souls.text.tokenize import query_terms


def test_no_line_covers_a_query_without_a_term_of_its_own() -> None:
    stats = TermStats({"deploy": 300, "ok": 300}, documents=300, tokens=600)
    layers = [("summary", Citations("- deploys all ok [m1] [m2]\n- nothing failed [m3]"))]
    asked = query_terms("is any server running out of storage?")
    terms = [term for term in asked if stats.df(term)]
    assert terms == []
    assert _cited(layers, terms, asked, 0.5, stats) == []
    # With a term of its own, a line covering it cites its memories.
    asked = query_terms("deploys ok?")
    cited = _cited(layers, [t for t in asked if stats.df(t)], asked, 0.5, stats)
    assert [memory_id for memory_id, *_ in cited] == [1, 2]


def _hit(memory_id: int) -> Hit:
    return Hit(memory_id, "observation", f"memory {memory_id}", 0.5, 0.0, None, None, 0.0)


def test_memories_found_by_meaning_alone_rank_by_it_not_by_recency() -> None:
    # Two memories holding no word of the query (coverage 0), within near_tie of each
    # other's relevance: lexically a near-tie, which the later memory would win. Their
    # semantic parts differ: the nearer by meaning comes first.
    config = RecallConfig()
    hits = [_hit(1), _hit(2)]
    relevance = {1: 0.40, 2: 0.37}
    coverage = {1: 0.0, 2: 0.0}
    when = {1: 100.0, 2: 200.0}
    lexical = _order(hits, relevance, coverage, when, config)
    assert [h.memory_id for h in lexical] == [2, 1]  # a near-tie: the later one
    semantic = _order(hits, relevance, coverage, when, config, {1: 0.89, 2: 0.82})
    assert [h.memory_id for h in semantic] == [1, 2]
    # As near in meaning too (within near_tie_coverage): a near-tie again.
    close = _order(hits, relevance, coverage, when, config, {1: 0.89, 2: 0.88})
    assert [h.memory_id for h in close] == [2, 1]


def test_a_cosine_counts_by_its_standing_among_the_souls_cosines() -> None:
    near = Near({7: 0.55, 8: 0.30}, mean=0.10, spread=0.08)
    assert near.standing(0.55) == pytest.approx(5.625)
    assert near.standing(0.30) == pytest.approx(2.5)
    assert Near({1: 0.9}, mean=0.9, spread=0.0).standing(0.9) == 0.0
