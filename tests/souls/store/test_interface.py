"""The store interface (souls/store/interface.py) against both backends: every test here
runs on a real SQLite file and on a real PostgreSQL server (tests/pgserver.py), through
the same calls (the fixtures are tests/backends.py's). The last tests load
the same data into both and compare scores."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import asyncpg
import pytest

from souls.store.changes import AssemblyRow, Changes, ClaimClosing, NewClaim, SummaryVersion
from souls.store.interface import SoulStore
from souls.store.postgres.schema import MIGRATIONS as PG_MIGRATIONS
from souls.store.postgres.search import match_terms
from souls.store.postgres.store import PgStore
from souls.store.schema import MIGRATIONS
from souls.store.store import NewEvent, Scope, Store, StoreCounts
from souls.text.tokenize import fts_document, fts_match, query_terms, tokens

T0 = 1_780_000_000.0

Opener = Callable[[], Awaitable[SoulStore]]
Raw = Callable[..., Awaitable[list[tuple[object, ...]]]]


def new_event(
    text: str,
    ref: str | None = None,
    *,
    salience: float = 0.5,
    session: str | None = None,
    sender: str = "ada",
    ts: float = T0,
) -> NewEvent:
    return NewEvent(
        ref=ref, kind="message", channel="test", sender=sender, group=None, mentioned=False,
        session=session, ts=ts, recorded=T0, salience=salience, text=text,
        doc=fts_document(text),
    )  # fmt: skip


def integrity_errors() -> tuple[type[Exception], ...]:
    return (sqlite3.IntegrityError, asyncpg.UniqueViolationError)


async def test_migrations_are_all_applied_at_open(store: SoulStore, opener: Opener) -> None:
    names = [name for name, _ in (PG_MIGRATIONS if isinstance(store, PgStore) else MIGRATIONS)]
    assert await store.migrations() == sorted(names)
    again = await opener()
    assert await again.migrations() == sorted(names)


async def test_append_assigns_consecutive_ids_across_reopen(
    store: SoulStore, opener: Opener
) -> None:
    assert await store.append([new_event(f"first batch {i}") for i in range(3)]) == [1, 2, 3]
    assert await store.append([new_event("second batch")]) == [4]
    assert await store.append([]) == []
    await store.close()
    store = await opener()
    assert await store.append([new_event("after reopen"), new_event("and more")]) == [5, 6]
    assert await store.counts() == StoreCounts(events=6, memories=6, hidden=0)
    hits = await store.hits([(i, 1.0) for i in range(1, 7)])
    assert [h.text for h in hits][-2:] == ["after reopen", "and more"]
    assert {h.event_id for h in hits} == set(range(1, 7))


async def test_a_repeated_ref_is_found_and_fails_its_whole_batch(store: SoulStore) -> None:
    await store.append([new_event("one", "r-1", salience=0.4), new_event("two")], Changes(
        counters=Counter({"c": 1})))  # fmt: skip
    assert await store.known_refs(["r-1", "nope"]) == {"r-1": (1, 0.4)}
    assert await store.known_refs([]) == {}
    with pytest.raises(integrity_errors()):
        await store.append(
            [new_event("fresh", "r-2"), new_event("again", "r-1")],
            Changes(counters=Counter({"c": 10})),
        )
    assert await store.counts() == StoreCounts(events=2, memories=2, hidden=0)
    assert await store.counters() == {"c": 1}
    assert await store.search(fts_match(["fresh"]), 10) == []
    assert (await store.term_stats()).documents == 2
    # No holes: the next batch continues right after the last committed one.
    assert await store.append([new_event("next", "r-2")]) == [3]
    assert await store.known_refs(["r-2"]) == {"r-2": (3, 0.5)}


async def test_many_events_in_one_append(store: SoulStore) -> None:
    # More rows than one statement binds on SQLite (souls.store.bulk); COPY on PostgreSQL.
    count = 2500
    ids = await store.append([new_event(f"note number {i}", f"r-{i}") for i in range(count)])
    assert ids == list(range(1, count + 1))
    assert len(await store.search(fts_match(tokens("number")), 3)) == 3
    asked = [f"r-{i}" for i in range(0, 2 * count, 2)]  # every other one stored
    assert await store.known_refs(asked) == {f"r-{i}": (i + 1, 0.5) for i in range(0, count, 2)}
    (last,) = await store.hits([(count, 1.0)])
    assert (last.text, last.ref) == (f"note number {count - 1}", f"r-{count - 1}")


async def test_every_field_comes_back(store: SoulStore) -> None:
    event = NewEvent(
        ref="r-1", kind="voice", channel="telegram", sender="ada", group="team", mentioned=True,
        session="s-9", ts=T0 - 60, recorded=T0, salience=0.9, text="Deploy at noon",
        doc=fts_document("Deploy at noon"), surprise=0.25, person="Ada Lovelace",
    )  # fmt: skip
    await store.append([event])
    (found,) = await store.candidates(fts_match(["deploy"]), 5)
    # A transcribed event's memory is recalled as "voice".
    assert (found.kind, found.text, found.salience, found.ref, found.event_id) == (
        "voice", "Deploy at noon", 0.9, "r-1", 1
    )  # fmt: skip
    assert (found.sender, found.person, found.ts, found.created) == ("ada", "Ada Lovelace",
                                                                     T0 - 60, T0)  # fmt: skip
    assert await store.speakers() == {"ada", "Ada Lovelace"}
    assert await store.within([1], Scope(sender="Ada Lovelace", kind="voice")) == {1}
    assert await store.within([1], Scope(session="s-8")) == set()


async def test_echo_finds_the_same_words_from_another_channel(store: SoulStore) -> None:
    said = new_event("see you at noon", sender="ada", ts=T0)
    await store.append([said, new_event("see you at noon", sender="bo", ts=T0 + 1)])
    elsewhere = NewEvent(
        ref=None, kind="message", channel="telegram", sender="ada", group=None,
        mentioned=False, session=None, ts=T0 + 20, recorded=T0 + 20, salience=0.5,
        text="see you at noon", doc=fts_document("see you at noon"),
    )  # fmt: skip
    assert await store.echo(elsewhere, 30.0) == (1, 0.5)
    assert await store.echo(elsewhere, 10.0) is None  # too far apart
    assert await store.echo(said, 30.0) is None  # the same channel: not an echo
    other = NewEvent(
        ref=None, kind="message", channel="telegram", sender="ada", group=None,
        mentioned=False, session=None, ts=T0, recorded=T0, salience=0.5, text="see you",
        doc=fts_document("see you"),
    )  # fmt: skip
    assert await store.echo(other, 30.0) is None  # other words


async def test_penalties_lower_salience_never_below_zero(store: SoulStore) -> None:
    await store.append([new_event("one", salience=0.5), new_event("two", salience=0.5)])
    await store.flush(Changes(penalties={1: 0.2, 2: 0.9}, recalled={1}), now=T0)
    hits = await store.hits([(1, 1.0), (2, 1.0)])
    assert [h.salience for h in hits] == [pytest.approx(0.3), 0.0]


async def test_counters_are_upserted_and_persist(store: SoulStore, opener: Opener) -> None:
    await store.flush(Changes(counters=Counter({"dropped.attention": 2})), now=1.0)
    await store.append(
        [new_event("x")], Changes(counters=Counter({"dropped.attention": 3, "other": 1}))
    )
    assert await store.counters() == {"dropped.attention": 5, "other": 1}
    await store.close()
    again = await opener()
    await again.flush(Changes(counters=Counter({"other": 1})), now=2.0)
    assert await again.counters() == {"dropped.attention": 5, "other": 2}


async def test_search_orders_by_score_and_reads_the_memory(store: SoulStore) -> None:
    texts = [
        "the cat sat",
        "cats and dogs and more cats and cats",
        "a dog barked at the postman",
        "Cat food is expensive",
    ]
    await store.append([new_event(t, f"r-{i}") for i, t in enumerate(texts)])
    hits = await store.search(fts_match(["cat"]), 10)
    assert hits[0].memory_id == 2  # three occurrences beat one
    assert {hit.memory_id for hit in hits} == {1, 2, 4}
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)
    for hit in hits:
        assert hit.text == texts[hit.memory_id - 1]
        assert (hit.ref, hit.event_id, hit.kind) == (f"r-{hit.memory_id - 1}", hit.memory_id,
                                                     "observation")  # fmt: skip
    assert len(await store.search(fts_match(["cat"]), 2)) == 2
    assert await store.search(fts_match(["giraffe"]), 10) == []
    # Only rows whose own text also matches ``own``.
    both = await store.search(fts_match(["cat", "dog"]), 10, own=fts_match(["dog"]))
    assert {hit.memory_id for hit in both} == {2, 3}


async def test_read_by_id(store: SoulStore) -> None:
    await store.append([new_event(f"note {i}", f"r{i}", sender=f"s{i}") for i in range(5)])
    hits = await store.hits([(4, 2.5), (1, 1.0), (99, 0.5), (3, 0.25)])
    assert [(h.memory_id, h.score, h.text, h.ref) for h in hits] == [
        (4, 2.5, "note 3", "r3"),
        (1, 1.0, "note 0", "r0"),
        (3, 0.25, "note 2", "r2"),
    ]
    rows = await store.rows([2, 5, 42])
    assert sorted(rows) == [2, 5]
    assert rows[2].doc == fts_document("note 1")
    origins = await store.origins([1, 3])
    assert {m: (o.sender, o.ts) for m, o in origins.items()} == {1: ("s0", T0), 3: ("s2", T0)}
    assert await store.speakers() == {f"s{i}" for i in range(5)}


async def test_candidates_with_context_and_scope(store: SoulStore) -> None:
    # One session: each memory is indexed with two turns each side.
    turns = ["What did you research?", "Adoption agencies", "Nice, and the cat?", "Asleep"]
    ids = await store.append(
        [new_event(t, session="s1", sender=["bo", "ada"][i % 2], ts=T0 + i)
         for i, t in enumerate(turns)]
    )  # fmt: skip
    await store.append([new_event("research notes elsewhere", ts=T0 + 10)])
    own = await store.candidates(fts_match(["research"]), 10)
    assert [c.memory_id for c in own] == [5, 1]
    near = await store.candidates(fts_match(["research"]), 10, 0.4)
    # "Adoption agencies" (and the turn after it) hold "research" in their neighbours
    # only, and rank below the two that say it.
    assert [c.memory_id for c in near][:2] == [5, 1]
    assert {c.memory_id for c in near} == {1, 2, 3, 5}
    agencies = next(c for c in near if c.memory_id == ids[1])
    assert agencies.prior == fts_document(turns[0])
    assert agencies.later == f"{fts_document(turns[2])} {fts_document(turns[3])}"
    assert agencies.visible == 1
    assert (agencies.sender, agencies.ts, agencies.text) == ("ada", T0 + 1, turns[1])
    assert agencies.score < next(c for c in near if c.memory_id == ids[0]).score
    scoped = await store.candidates(fts_match(["research"]), 10, 0.4, scope=Scope(sender="ada"))
    assert {c.memory_id for c in scoped} == {ids[1], 5}
    assert await store.within([1, 2, 5], Scope(session="s1")) == {1, 2}
    assert await store.within([1, 2, 5], Scope(since=T0 + 5)) == {5}


async def test_term_stats_match_what_was_appended(store: SoulStore) -> None:
    texts = [
        "Deploying the database migration failed",
        "The database is fine, the deploy is fine",
        "数据库迁移失败了",
        "deploy deploy deploy",
    ]
    await store.append([new_event(t) for t in texts])
    stats = await store.term_stats()
    documents = [tokens(t) for t in texts]
    df: Counter[str] = Counter()
    for doc in documents:
        df.update(set(doc))
    assert (stats.documents, stats.tokens) == (4, sum(len(doc) for doc in documents))
    for term, count in df.items():
        assert stats.df(term) == count, term
    assert stats.df("数据") == 1


async def test_forget_takes_the_events_out_of_everything(store: SoulStore, opener: Opener) -> None:
    turns = ["we met at the zoo", "the giraffe was tall", "then lunch", "and home"]
    await store.append([new_event(t, f"r{i}", session="s", ts=T0 + i) for i, t in enumerate(turns)])
    before = await store.candidates(fts_match(query_terms("giraffe")), 10, 0.4)
    assert {c.memory_id for c in before} == {1, 2, 3, 4}  # its neighbours carry it too
    assert await store.forget([2, 99]) == 1
    assert await store.forget([]) == 0
    assert await store.known_refs(["r1"]) == {}
    assert await store.candidates(fts_match(query_terms("giraffe")), 10, 0.4) == []
    assert await store.hits([(2, 1.0)]) == []
    assert await store.counts() == StoreCounts(events=3, memories=3, hidden=0)
    # The neighbours' context was rewritten without it.
    rows = await store.rows([1, 3, 4])
    assert rows[1].later == f"{fts_document(turns[2])} {fts_document(turns[3])}"
    assert rows[3].prior == fts_document(turns[0])
    stats = await store.term_stats()
    assert stats.df("giraff") == 0
    assert stats.documents == 3
    assert stats.tokens == sum(len(r.tokens()) for r in rows.values())
    left = stats.tokens
    # The next append still continues the ids, and says the same after a reopen.
    assert await store.append([new_event("later on")]) == [5]
    again = await opener()
    assert (await again.term_stats()).tokens == left + len(tokens("later on"))


async def test_hidden_memories_leave_recall_and_the_statistics(
    store: SoulStore, opener: Opener
) -> None:
    turns = ["the giraffe was tall", "a zebra again", "home at noon"]
    await store.append([new_event(t, f"r{i}", session="s", ts=T0 + i) for i, t in enumerate(turns)])
    zebra = fts_match(query_terms("zebra"))
    assert [c.memory_id for c in await store.candidates(zebra, 10)] == [2]
    assert await store.hide([2, 99], T0 + 50) == 1
    assert await store.hide([2], T0 + 60) == 0  # hidden already
    assert await store.hide([], T0) == 0
    assert await store.counts() == StoreCounts(events=3, memories=3, hidden=1)
    assert await store.known_refs(["r1"]) == {"r1": (2, 0.5)}  # its event stays
    assert await store.candidates(zebra, 10) == []
    assert await store.search(zebra, 10) == []
    assert await store.hits([(2, 1.0), (1, 1.0)]) == await store.hits([(1, 1.0)])
    assert await store.rows([2]) == {}
    # Its neighbours still quote it as context: hiding rewrites no other row.
    near = await store.candidates(zebra, 10, 0.4)
    assert {c.memory_id for c in near} == {1, 3}
    rows = await store.rows([1, 3])
    stats = await store.term_stats()
    assert (stats.documents, stats.df("zebra")) == (2, 2)
    assert stats.tokens == sum(len(r.tokens()) for r in rows.values())
    # New turns no longer take it as a neighbour.
    assert await store.append([new_event("later on", session="s", ts=T0 + 70)]) == [4]
    assert (await store.rows([4]))[4].prior == f"{rows[3].doc} {rows[1].doc}"
    again = await opener()
    after = await again.term_stats()
    visible = await again.rows([1, 2, 3, 4])
    assert sorted(visible) == [1, 3, 4]
    assert (after.documents, after.tokens) == (3, sum(len(r.tokens()) for r in visible.values()))
    assert await again.counts() == StoreCounts(events=4, memories=4, hidden=1)


def assembly(hash: str, *, paused: bool = False, session: str | None = "s1") -> AssemblyRow:
    return AssemblyRow(
        hash=hash, session=session, query=None if session is None else "cats?",
        mode="retrieval", chars=120, recalled=40, paused=paused,
        items='[{"id": "m1", "kind": "memory"}]', sections='[{"name": "recall"}]',
    )  # fmt: skip


async def test_a_turns_derived_rows_are_written_and_rolled_back_with_it(
    store: SoulStore, raw: Raw
) -> None:
    await store.append([new_event("one"), new_event("two"), new_event("three", "r-3")])
    await store.flush(
        Changes(
            edges=Counter({(1, 2): 0.5, (2, 3): 0.25}),
            markers={("cat", "positive"): 0.7, ("cat", "negative"): 0.1, ("dog", "positive"): 0.3},
            marker_labels={"cat": "Cat"},
            gaps=[("lunch", "where"), ("zoo", "when")],
            summaries=[
                SummaryVersion("consolidated", "Ada likes cats", 3, "extractive", "periodic")
            ],
            assemblies=[assembly("h1")],
            surfaced={"m1": T0, "g1": T0},
        ),
        now=T0,
    )
    await store.append(
        [new_event("four")],
        Changes(
            edges=Counter({(1, 2): 0.5}),
            markers={("cat", "positive"): 0.9},
            marker_labels={"dog": "Dog", "cat": "Cat"},
            gaps=[("tea", "which")],
            summaries=[SummaryVersion("weekly", "A week of cats", 4, "llm", "weekly")],
            assemblies=[assembly("h2", paused=True, session=None)],
            surfaced={"m1": T0 - 5, "m2": T0 + 1},
        ),
        now=T0 + 60,
    )
    # A write that fails keeps none of its rows.
    with pytest.raises(integrity_errors()):
        await store.append(
            [new_event("again", "r-3")],
            Changes(edges=Counter({(1, 3): 1.0}), gaps=[("no", "no")], surfaced={"m9": T0},
                    summaries=[SummaryVersion("weekly", "no", 1, "llm", "weekly")]),
            now=T0 + 120,
        )  # fmt: skip
    assert await raw("SELECT a, b, weight, updated FROM edges ORDER BY a, b") == [
        (1, 2, 1.0, T0 + 60), (2, 3, 0.25, T0)
    ]  # fmt: skip
    assert await raw(
        "SELECT topic, valence, weight, updated, label FROM markers ORDER BY topic, valence"
    ) == [
        ("cat", "negative", 0.1, T0, "Cat"),
        ("cat", "positive", 0.9, T0 + 60, "Cat"),
        ("dog", "positive", 0.3, T0, "Dog"),
    ]
    # The ids are the soul's own, from 1.
    assert await raw("SELECT id, topic, detail, created FROM gaps ORDER BY id") == [
        (1, "lunch", "where", T0), (2, "zoo", "when", T0), (3, "tea", "which", T0 + 60)
    ]  # fmt: skip
    assert await raw(
        "SELECT id, layer, text, created, observations, reflector, reason FROM summaries"
        " ORDER BY id"
    ) == [
        (1, "consolidated", "Ada likes cats", T0, 3, "extractive", "periodic"),
        (2, "weekly", "A week of cats", T0 + 60, 4, "llm", "weekly"),
    ]
    # paused: 0 and 1 on SQLite, false and true on PostgreSQL (equal in Python).
    one, two = assembly("h1"), assembly("h2", paused=True, session=None)
    assert await raw(
        "SELECT id, hash, created, session, query, mode, chars, recalled, paused, items,"
        " sections FROM assemblies ORDER BY id"
    ) == [
        (1, "h1", T0, "s1", "cats?", "retrieval", 120, 40, 0, one.items, one.sections),
        (2, "h2", T0 + 60, None, None, "retrieval", 120, 40, 1, two.items, two.sections),
    ]
    # An item surfaced earlier than it last did keeps the later time.
    assert await raw("SELECT item, at FROM surfaced ORDER BY item") == [
        ("g1", T0), ("m1", T0), ("m2", T0 + 1)
    ]  # fmt: skip
    # Forgetting a memory takes its edges with it.
    assert await store.forget([2]) == 1
    assert await raw("SELECT a, b FROM edges") == []


LINES = [
    ("s1", "ada", "I adopted a cat from the shelter last week"),
    ("s1", "bo", "What is the cat called?"),
    ("s1", "ada", "Miso, she sleeps all day on the sofa"),
    ("s1", "bo", "Cats do that. My dog never sleeps"),
    (None, "ada", "Note: buy cat food and a scratching post"),
    ("s2", "bo", "The deploy failed again at noon"),
    ("s2", "ada", "Was it the database migration?"),
    ("s2", "bo", "Yes, the migration of the sofa table, funny name"),
    ("s2", "ada", "数据库迁移失败了, deploy again tomorrow"),
    ("s2", "bo", "ok, deploy deploy deploy"),
]


async def test_both_backends_score_exactly_alike(tmp_path: Path, pg_dsn: str) -> None:
    sqlite = await Store.open(tmp_path / "same.db", context_turns=2)
    pool = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=2)
    try:
        pg = await PgStore.open(pool, "same", context_turns=2)
        events = [new_event(text, session=s, sender=who, ts=T0 + i)
                  for i, (s, who, text) in enumerate(LINES)]  # fmt: skip
        for chunk in (events[:3], events[3:7], events[7:]):
            assert await sqlite.append(chunk) == await pg.append(chunk)
        await sqlite.forget([4])
        await pg.forget([4])
        queries = ["the cat sleeps", "deploy migration", "数据库", "sofa", "what is it called"]
        for q in queries:
            match = fts_match(query_terms(q))
            for weight in (None, 0.4, 1.0):
                a = await sqlite.candidates(match, 20, weight)
                b = await pg.candidates(match, 20, weight)
                assert [(c.memory_id, c.score) for c in a] == [(c.memory_id, c.score) for c in b]
                assert a == b
                hits_a = await sqlite.search(match, 5, weight)
                hits_b = await pg.search(match, 5, weight)
                assert [(h.memory_id, h.score) for h in hits_a] == [
                    (h.memory_id, h.score) for h in hits_b
                ]
        sa, sb = await sqlite.term_stats(), await pg.term_stats()
        assert (sa.documents, sa.tokens) == (sb.documents, sb.tokens)
        assert all(sa.df(t) == sb.df(t) for line in LINES for t in tokens(line[2]))
        await pg.close()
    finally:
        await sqlite.close()
        await pool.close()


def test_match_terms_reads_back_fts_match_and_nothing_else() -> None:
    terms = ["cat", 'say"hi', "数据"]
    assert match_terms(fts_match(terms)) == terms
    for bad in ["cat", '"cat" AND "dog"', '"cat" OR', 'doc : ("cat")', '"cat" NEAR "dog"']:
        with pytest.raises(ValueError, match="quoted terms"):
            match_terms(bad)


WORDS = (
    "cat cats dog deploy deployed migration database sofa sleep sleeps lunch noon tall "
    "giraffe zoo shelter adopt adopted research agency paint painter fail failure "
    "数据库 迁移 失败 部署 今天 Ada Bo Miso 42 2023"
).split()


async def test_both_backends_agree_on_random_souls(tmp_path: Path, pg_dsn: str) -> None:
    # Seeded random souls, all in one PostgreSQL database (each soul must see only its
    # own rows), each beside its own SQLite file: every search the same, to the last bit,
    # and what the claims say of the memories (superseded, successors, stating).
    rng = random.Random(21)
    hiding = random.Random(6)
    claiming = random.Random(18)
    hidden = pg_hidden = 0  # memories hidden so far
    succeeded = 0  # memories with a successor
    pool = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=2)
    try:
        found = 0  # searches that found anything
        for soul in range(6):
            turns = rng.choice([0, 1, 2, 3])
            sqlite = await Store.open(tmp_path / f"{soul}.db", context_turns=turns)
            pg = await PgStore.open(pool, f"random-{soul}", context_turns=turns)
            try:
                stored = 0
                in_force: dict[tuple[str, str], int] = {}  # (subject, slot) -> claim id
                claim_ids = iter(range(1, 1000))
                for _ in range(rng.randint(3, 8)):
                    batch = [
                        new_event(
                            " ".join(rng.choices(WORDS, k=rng.randint(1, 12))),
                            session=rng.choice(["a", "b", "c", None]),
                            sender=rng.choice(["ada", "bo"]),
                            ts=T0 + stored + i,
                        )
                        for i in range(rng.randint(1, 15))
                    ]
                    claimed = _claims(claiming, len(batch), T0 + stored, in_force, claim_ids)
                    stored += len(batch)
                    assert await sqlite.append(batch, claimed, T0) == await pg.append(
                        batch, claimed, T0
                    )
                    if rng.random() < 0.3:
                        doomed = rng.sample(range(1, stored + 1), k=min(3, stored))
                        assert await sqlite.forget(doomed) == await pg.forget(doomed)
                    if hiding.random() < 0.3:  # apart, so the rest draws as it did
                        faded = hiding.sample(range(1, stored + 1), k=min(2, stored))
                        hidden += await sqlite.hide(faded, T0)
                        assert await pg.hide(faded, T0) == hidden - pg_hidden
                        pg_hidden = hidden
                for _ in range(25):
                    terms = list(dict.fromkeys(tokens(" ".join(rng.choices(WORDS, k=3)))))
                    match = fts_match(terms)
                    weight = rng.choice([None, 0.0, 0.25, 0.4, 1.0])
                    limit = rng.choice([1, 3, 10, 50])
                    own = fts_match(terms[:1]) if rng.random() < 0.2 else None
                    scope = Scope(sender="ada") if rng.random() < 0.2 else None
                    a = await sqlite.candidates(match, limit, weight, own=own, scope=scope)
                    b = await pg.candidates(match, limit, weight, own=own, scope=scope)
                    assert a == b, (soul, match, weight, limit, own, scope)
                    hits_a = await sqlite.search(match, limit, weight)
                    hits_b = await pg.search(match, limit, weight)
                    assert hits_a == hits_b, (soul, match, weight, limit)
                    found += bool(a)
                sa, sb = await sqlite.term_stats(), await pg.term_stats()
                assert (sa.documents, sa.tokens) == (sb.documents, sb.tokens)
                assert all(sa.df(t) == sb.df(t) for w in WORDS for t in tokens(w))
                assert await sqlite.counts() == await pg.counts()
                ids = list(range(1, stored + 1))
                successors = await sqlite.successors(ids)
                assert successors == await pg.successors(ids)
                succeeded += len(successors)
                assert await sqlite.hits([(m, 1.0) for m in ids]) == await pg.hits(
                    [(m, 1.0) for m in ids]
                )
                for slots in (["employer"], ["location", "employer"]):
                    assert await sqlite.stating(slots, 7) == await pg.stating(slots, 7)
            finally:
                await sqlite.close()
                await pg.close()
    finally:
        await pool.close()
    assert found > 100
    assert hidden > 5
    assert succeeded > 5


def _claims(
    rng: random.Random,
    events: int,
    at: float,
    in_force: dict[tuple[str, str], int],
    ids: Iterator[int],
) -> Changes:
    """A claim for some of a batch's events (``-1 - offset``), each closing the one in
    force of its subject and slot."""
    changes = Changes()
    for offset in range(events):
        if rng.random() >= 0.4:
            continue
        subject, slot = rng.choice(["ada", "bo"]), rng.choice(["employer", "location"])
        value = rng.choice(["Bosch", "Siemens", "Lyon", "Paris", "Acme"])
        claim_id = next(ids)
        changes.claims.append(
            NewClaim(claim_id, "fact", subject, slot, value, value, -1 - offset, "rule",
                     "high", "active", at + offset, None, at + offset, None)
        )  # fmt: skip
        if (old := in_force.get((subject, slot))) is not None:
            changes.closings.append(ClaimClosing(old, "superseded", at + offset, at + offset))
        in_force[subject, slot] = claim_id
    return changes


async def test_the_counts_kept_between_queries_follow_every_write(
    store: SoulStore, opener: Opener
) -> None:
    # The store that answered queries all along keeps its BM25 counts (souls/store/
    # postgres/term_counts.py, souls/store/bm25.py) through appends (their neighbouring
    # turns rewritten), hides and forgets: it ranks as one opened afresh after each.
    words = ["deploy", "failed", "migration", "timeout", "lyon", "paris", "cat", "mochi"]
    rng = random.Random(7)
    asked = ("deploy failed", "migration timeout", "moved to lyon", "cat mochi paris")
    queries = [fts_match(query_terms(q)) for q in asked]

    async def ranked(s: SoulStore) -> list[list[tuple[int, float]]]:
        found = []
        for q in queries:
            for weight in (None, 0.4):
                found.append([(c.memory_id, round(c.score, 9))
                              for c in await s.candidates(q, 10, weight)])  # fmt: skip
        return found

    ids: list[int] = []
    for step in range(6):
        batch = [
            new_event(" ".join(rng.choices(words, k=rng.randint(2, 6))),
                      session=f"s{rng.randint(1, 2)}")
            for _ in range(rng.choice([3, 70]))  # arrays and COPY on PostgreSQL
        ]  # fmt: skip
        ids += await store.append(batch)
        await ranked(store)  # the terms asked now are kept
        if step == 2:
            assert await store.hide(ids[:5], T0 + 1) == 5
            store.drop_caches()  # as the soul's mind does once memories left the index
        if step == 4:
            assert await store.forget(ids[5:9]) == 4
        fresh = await opener()
        assert await ranked(store) == await ranked(fresh), step
        await fresh.close()
