"""The cognitive loop inside one soul, driven by a fake clock (no sleeping): decay
tiers, retrieval-induced forgetting, Hebbian edge decay, the weekly layer, gaps that
survive a restart, marker labels through restart, decay, forget, rebuild and export,
outputs, and that escalation never reaches the soul's own LLM calls."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from fake_model import KEY, KEY_ENV, answer, fake_model

from souls.actor.clock import FixedClock
from souls.actor.mailbox import Mailbox
from souls.actor.rights import ForgetResult, RebuildResult
from souls.actor.soul import Soul
from souls.config import SoulConfig
from souls.events import EventIn
from souls.intake.surprise import SurpriseConfig, WorldModel
from souls.llm.chat import LLMConfig
from souls.messages import (
    Confidence,
    Context,
    Decay,
    Export,
    Forget,
    Homeostasis,
    Message,
    Observe,
    PersonLink,
    Rebuild,
    Recall,
    Reflect,
    Stats,
    Weekly,
)
from souls.mind.hebbian import Associations, HebbianConfig, pairs
from souls.mind.reflection import ReflectClock, ReflectConfig
from souls.results import ContextResult, PushResult, SoulStats
from souls.text.tokenize import tokens
from supervisor.errors import SoulUnavailable

DAY = 86_400.0
T0 = 1_800_000_000.0


@dataclass
class Lab:
    root: Path
    clock: FixedClock
    mailbox: Mailbox[Message]
    outputs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def ask(self, message: Message) -> Any:
        return await self.mailbox.ask(message, timeout=10)

    async def push(self, text: str, **fields: Any) -> PushResult:
        result = await self.ask(Observe(EventIn(text=text, **fields)))
        assert isinstance(result, PushResult)
        return result

    def sql(self, query: str) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.root / "soul.db") as db:
            return db.execute(query).fetchall()


@asynccontextmanager
async def soul(
    root: Path, config: SoulConfig | None = None, clock: FixedClock | None = None
) -> AsyncIterator[Lab]:
    lab = Lab(root, clock or FixedClock(T0), Mailbox("ada", 1024))

    def emit(kind: str, payload: dict[str, Any]) -> None:
        lab.outputs.append((kind, payload))

    actor = Soul(
        "ada",
        config or SoulConfig(),
        db_path=root / "soul.db",
        brain_dir=root,
        clock=lab.clock,
        emit=emit,
    )
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run, lab.mailbox)
            yield lab
            tg.cancel_scope.cancel()
    lab.mailbox.discard(SoulUnavailable("the test is over"))


# -- pure pieces ---------------------------------------------------------------------


def test_novelty_is_the_share_of_unknown_tokens() -> None:
    world = WorldModel("## Notable\n- deploy ok [m1]")
    assert world.novelty(tokens("deploy ok")) == 0.0
    assert world.novelty(tokens("deploy failed")) == 0.5
    assert world.novelty(tokens("database migration timeout")) == 1.0
    assert world.novelty([]) == 0.0
    assert WorldModel("").novelty(tokens("anything at all")) == 1.0


def test_reflect_clock_triggers_on_every_surprise_and_periodically() -> None:
    """No count-based cooldown: each surprise reflects at once (the storm guard is
    time-based, see tests/souls/mind/test_reflection.py)."""
    config, surprise = ReflectConfig(every=4), SurpriseConfig(threshold=0.65)
    clock = ReflectClock()
    assert clock.observe(1.0, T0, config, surprise) == "surprise"
    clock.reflected("surprise", 1)
    assert clock.observe(1.0, T0 + 1, config, surprise) == "surprise"
    clock.reflected("surprise", 2)
    assert clock.observe(0.9, T0 + 2, config, surprise) == "surprise"
    clock.reflected("surprise", 3)
    assert [clock.observe(0.0, T0 + 3, config, surprise) for _ in range(4)] == [
        None,
        None,
        None,
        "periodic",
    ]
    assert ReflectClock.from_state(clock.to_state()) == clock


def test_pairs_and_association_walk() -> None:
    assert pairs([3, 1, 2, 1]) == [(1, 2), (1, 3), (2, 3)]
    graph = Associations([(1, 2, 5.0), (2, 3, 4.0), (3, 4, 9.0), (1, 5, 3.0)])
    assert len(graph) == 4
    assert graph.walk([1], hops=1, limit=10) == [(2, 5.0), (5, 3.0)]
    assert graph.walk([1], hops=2, limit=10) == [(2, 5.0), (5, 3.0), (3, 4.0)]
    assert graph.walk([1], hops=2, limit=2) == [(2, 5.0), (5, 3.0)]
    assert graph.walk([1, 2], hops=1, limit=10) == [(3, 4.0), (5, 3.0)]
    assert graph.walk([9], hops=2, limit=10) == []


def test_hebbian_config_validates() -> None:
    with pytest.raises(ValueError, match="nightly_factor"):
        HebbianConfig(nightly_factor=1.5)


# -- through the soul ------------------------------------------------------------------


async def test_decay_tiers_follow_the_fake_clock(tmp_path: Path) -> None:
    async with soul(tmp_path) as lab:
        low = await lab.push("lunch was soup", kind="heartbeat", mentioned=True)  # 0.6
        mid = await lab.push("the api key rotates monthly")  # 0.5
        group = await lab.push("someone said hi", group="ops")  # 0.35
        high = await lab.push("prod outage: disk full", kind="dm")  # 1.0
        assert [p.salience for p in (low, mid, group, high)] == [0.6, 0.5, 0.35, 1.0]

        lab.clock.advance(6 * DAY)
        assert (await lab.ask(Decay())).hidden == 0
        lab.clock.advance(2 * DAY)  # day 8: the low tier (< 0.4) goes
        assert (await lab.ask(Decay())).hidden == 1
        # Recalling a mid-tier memory resets its clock.
        lab.clock.advance(20 * DAY)  # day 28
        await lab.ask(Recall("api key"))
        lab.clock.advance(4 * DAY)  # day 32: "lunch" (0.6, not recalled) goes, "api" stays
        report = await lab.ask(Decay())
        assert report.hidden == 1
        assert report.purged == 1  # "hi", hidden on day 8, is 7+ days past hiding
        lab.clock.advance(6 * DAY)  # day 38: "lunch" is not yet 7 days hidden...
        assert (await lab.ask(Decay())).purged == 0
        lab.clock.advance(1 * DAY)  # day 39: ...now it is
        report = await lab.ask(Decay())
        assert report.purged == 1
        left = await lab.ask(Recall("soup api hi outage"))
        stats = await lab.ask(Stats())
    assert {item.text for item in left.items} == {
        "the api key rotates monthly",
        "prod outage: disk full",
    }
    assert stats.events == 4  # events are never decayed
    assert stats.memories == 2


async def test_a_dry_run_decay_counts_the_real_one_and_changes_nothing(tmp_path: Path) -> None:
    config = SoulConfig(hebbian=HebbianConfig(nightly_factor=0.5, prune_below=0.6))
    async with soul(tmp_path, config) as lab:
        await lab.push("someone said hi", group="ops")  # 0.35: hidden after a week
        await lab.push("red kite")
        await lab.push("red fox")
        await lab.push("grey heron")
        await lab.push("deploy failed with an error")
        await lab.ask(Recall("red"))  # one edge, 1.0: 0.5 after a night, pruned
        lab.clock.advance(8 * DAY)
        await lab.ask(Stats())  # the turn's changes are committed by now
        tables = ("memories", "edges", "markers", "soul_state")
        queries = [f"SELECT * FROM {t}" for t in tables] + ["SELECT rowid FROM memory_fts"]
        before = [lab.sql(query) for query in queries]

        counted = await lab.ask(Decay(dry_run=True))

        assert [lab.sql(query) for query in queries] == before
        done = await lab.ask(Decay())
    assert counted.dry_run
    assert (counted.hidden, counted.edges_pruned) == (1, 1)
    assert counted.markers_pruned == 0
    assert done == msgspec.structs.replace(counted, dry_run=False)
    assert [lab.sql(query) for query in queries] != before


async def test_competitors_just_below_the_cut_lose_salience(tmp_path: Path) -> None:
    async with soul(tmp_path) as lab:
        for n in range(8):
            await lab.push(f"note {n} about the garden" + " garden" * (8 - n))
        found = await lab.ask(Recall("garden", k=2))
        await lab.ask(Stats())  # the turn's changes are committed by now
    assert len(found.items) == 2
    kept = {i.id for i in found.items}
    salience = dict(lab.sql("SELECT id, salience FROM memories"))
    rest = sorted(set(salience) - kept)
    competitors = [m for m in rest if salience[m] < 0.5]
    assert len(competitors) == 5
    assert all(salience[m] == pytest.approx(0.49) for m in competitors)
    assert all(salience[m] == 0.5 for m in kept)
    recalls = dict(lab.sql("SELECT id, recalls FROM memories"))
    assert [recalls[m] for m in sorted(kept)] == [1, 1]


async def test_edges_fade_nightly_and_are_pruned(tmp_path: Path) -> None:
    config = SoulConfig(hebbian=HebbianConfig(nightly_factor=0.5, prune_below=0.3))
    async with soul(tmp_path, config) as lab:
        await lab.push("red kite")
        await lab.push("red fox")
        # Not every memory is red: "red" points at the two that are, so they fire (a
        # word in every memory tells nothing and wires nothing).
        await lab.push("grey heron")
        await lab.ask(Recall("red"))
        await lab.ask(Decay())
        assert lab.sql("SELECT weight FROM edges") == [(0.5,)]
        await lab.ask(Decay())
        stats = await lab.ask(Stats())
    assert lab.sql("SELECT weight FROM edges") == []
    assert stats.edges == 0


async def test_weekly_layer_and_summary_first_recall(tmp_path: Path) -> None:
    async with soul(tmp_path) as lab:
        for day in range(10):
            await lab.push(f"day {day}: quiet shift", ts=T0 - (9 - day) * DAY)
        weekly = await lab.ask(Weekly())
        context = await lab.ask(Context("shift"))
    assert weekly.layer == "weekly"
    assert weekly.observations == 8  # the events of the last 7 days, both ends included
    assert (tmp_path / "WEEKLY.md").read_text().strip()
    names = [s.name for s in context.sections]
    assert names[:3] == ["identity", "summary", "weekly"]  # no SOUL.md: the built-in one
    assert context.text.index("## MEMORY") < context.text.index("## THIS WEEK")


async def test_gaps_persist_across_a_restart(tmp_path: Path) -> None:
    async with soul(tmp_path) as lab:
        first = await lab.ask(Confidence("quantum networking"))
        second = await lab.ask(Confidence("quantum networking"))
    assert first.state == "low_confidence"
    assert second.gaps
    assert "quantum" in second.gaps[0]
    async with soul(tmp_path) as lab:
        context = await lab.ask(Context())
    gaps = next(s for s in context.sections if s.name == "known_gaps")
    assert "quantum networking" in gaps.text
    assert gaps.text.count("quantum networking") == 1  # recorded once, not per check


async def test_homeostasis_signal_is_published_and_shown_once(tmp_path: Path) -> None:
    async with soul(tmp_path) as lab:
        await lab.push("everything failed, the build is broken")
        result = await lab.ask(Homeostasis())
        first = await lab.ask(Context())
        second = await lab.ask(Context())
    assert result.distance > 0.35
    assert result.signal
    assert (
        "internal_signal",
        {"signal": result.signal, "distance": result.distance},
    ) in lab.outputs
    assert isinstance(first, ContextResult)
    assert "## INTERNAL SIGNAL\n" + result.signal in first.text
    assert "INTERNAL SIGNAL" not in second.text


async def test_restart_rebuilds_the_mind_from_the_database(tmp_path: Path) -> None:
    async with soul(tmp_path) as lab:
        await lab.push("the deploy failed again")
        before = await lab.ask(Context("deploy"))
        stats_before = await lab.ask(Stats())
    async with soul(tmp_path) as lab:
        after = await lab.ask(Context("deploy"))
        same = await lab.push("the deploy failed again")
        stats_after = await lab.ask(Stats())
    assert after.prefix_hash == before.prefix_hash
    assert "GUT FEELINGS" in after.text
    assert same.surprise == 0.0  # the world model came back with the summary
    assert stats_after.markers == stats_before.markers
    assert stats_after.reflects == stats_before.reflects


async def test_low_confidence_never_routes_a_reflect_to_the_escalation_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Escalation is for the answer's call that asked for it (souls.llm.answer); a
    low-confidence sense leaves the soul's own client, its reflects and judge, alone."""
    monkeypatch.setenv(KEY_ENV, KEY)
    async with fake_model(answer("## Notable\n- summary by a model [m1]")) as model:
        llm = LLMConfig(
            base_url=model.url,
            model="small",
            escalation_model="large",
            api_key_env=KEY_ENV,
            timeout=5.0,
        )
        async with soul(tmp_path, SoulConfig(llm=llm)) as lab:
            await lab.push("hello model")  # reflects (surprise) with the small model
            unsure = await lab.ask(Confidence("string theory"))
            await lab.push("a second note")
            await lab.ask(Reflect())
            memory = (tmp_path / "MEMORY.md").read_text()
    assert unsure.state == "low_confidence"
    assert {r.body["model"] for r in model.requests} == {"small"}
    assert "summary by a model" in memory


async def test_a_broken_llm_falls_back_to_the_extractive_reflector(tmp_path: Path) -> None:
    llm = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", timeout=0.5, retries=0)
    async with soul(tmp_path, SoulConfig(llm=llm)) as lab:
        pushed = await lab.push("deploy failed: database migration timeout")
    assert pushed.reflected
    assert "deploy failed: database migration timeout [m1]" in (tmp_path / "MEMORY.md").read_text()


async def test_stats_count_the_cognitive_state(tmp_path: Path) -> None:
    async with soul(tmp_path) as lab:
        await lab.push("the deploy failed")
        await lab.push("red kite")
        await lab.push("red fox")
        await lab.ask(Recall("red"))
        await lab.ask(Confidence("volcanoes"))
        stats = await lab.ask(Stats())
    assert isinstance(stats, SoulStats)
    assert stats.edges == 1
    assert stats.markers >= 1
    assert stats.gaps == 1
    assert stats.reflects >= 1
    assert stats.last_surprise is not None


def gut(context: ContextResult) -> list[str]:
    """The feeling lines of a context's GUT FEELINGS section."""
    found = [s.text for s in context.sections if s.name == "gut_feelings"]
    return [line for text in found for line in text.splitlines() if line.startswith("- ")]


LABELLED = "SELECT topic, valence, label FROM markers ORDER BY topic, valence"
ABOUT_CAROLINE = "how is caroline's deploy going?"


async def test_marker_labels_are_words_and_survive_restart_decay_rebuild_and_export(
    tmp_path: Path,
) -> None:
    async with soul(tmp_path) as lab:
        await lab.push("Caroline, the deploy failed", ref="a")  # opens a sentence: lowered
        await lab.push("Thanks Caroline, the deployments went great", ref="b")  # a name
        await lab.push("Wow, I'm so glad the painting worked, haha", ref="c")
        shown = gut(await lab.ask(Context(ABOUT_CAROLINE)))
        rows = lab.sql(LABELLED)
    # The query touches Caroline and the deploy, the latest events the rest.
    assert shown == [
        "- Caroline: uneasy (negative, 0.8)",
        "- deploy: uneasy (negative, 0.8)",
        "- Caroline: good (positive, 0.5)",
        "- deploy: good (positive, 0.5)",
        "- painting: good (positive, 0.5)",
    ]
    assert rows == [
        ("carolin", "negative", "Caroline"),
        ("carolin", "positive", "Caroline"),
        ("deploy", "negative", "deploy"),
        ("deploy", "positive", "deploy"),
        ("paint", "positive", "painting"),
    ]  # no "wow", "im", "haha" or "went", nor "glad" (a feeling word, not a topic)
    async with soul(tmp_path) as lab:
        # No latest events yet after a restart: what the query touches.
        assert gut(await lab.ask(Context(ABOUT_CAROLINE))) == shown[:4]
        await lab.ask(Decay(now=T0 + DAY))
        assert lab.sql(LABELLED) == rows
        rebuilt = await lab.ask(Rebuild())
        assert isinstance(rebuilt, RebuildResult)
        assert (rebuilt.markers_after, rebuilt.markers_changed) == (5, 5)  # decayed weights
        assert lab.sql(LABELLED) == rows
        again = await lab.ask(Rebuild())
        assert again.markers_changed == 0
        export = await lab.ask(Export())
        records = [r for r in export["records"] if r["type"] == "marker"]
        labels = {(r["topic"], r["valence"]): r["label"] for r in records}
        assert labels == {(t, v): label for t, v, label in rows}
        assert [line.split(":")[0] for line in gut(await lab.ask(Context(ABOUT_CAROLINE)))] == [
            "- Caroline",
            "- deploy",
            "- Caroline",
            "- deploy",
        ]


async def test_forget_recomputes_labels_from_the_events_that_remain(tmp_path: Path) -> None:
    async with soul(tmp_path) as lab:
        await lab.push("Caroline, the deploy failed", ref="a")
        await lab.push("Thanks Caroline, the deployments went great", ref="b")
        forgot = await lab.ask(Forget(ref="b"))
        assert isinstance(forgot, ForgetResult)
        assert forgot.markers == 2
        assert lab.sql(LABELLED) == [
            ("carolin", "negative", "caroline"),  # only ever met opening a sentence now
            ("deploy", "negative", "deploy"),
        ]
        shown = gut(await lab.ask(Context(ABOUT_CAROLINE)))
        assert shown[0] == "- caroline: uneasy (negative, 0.8)"


async def test_rows_stored_before_labels_show_their_topic_until_fed_again(
    tmp_path: Path,
) -> None:
    async with soul(tmp_path) as lab:
        await lab.push("Thanks Caroline, the deployments went great")
    with sqlite3.connect(tmp_path / "soul.db") as db:
        db.execute("UPDATE markers SET label = NULL")  # as the migration leaves old rows
    async with soul(tmp_path) as lab:
        assert gut(await lab.ask(Context(ABOUT_CAROLINE)))[0] == "- carolin: good (positive, 0.5)"
        await lab.push("a great build by Caroline")
        assert gut(await lab.ask(Context(ABOUT_CAROLINE)))[0] == "- Caroline: good (positive, 1.0)"
        assert lab.sql("SELECT label FROM markers WHERE topic = 'deploy'") == [(None,)]


async def test_a_person_s_marker_is_labelled_with_their_name_and_rebuilt_alike(
    tmp_path: Path,
) -> None:
    async with soul(tmp_path) as lab:
        await lab.ask(PersonLink(person="Ann", channel="slack", external="U42"))
        await lab.push("the vet failed us again", channel="slack", sender="U42")
        assert lab.sql("SELECT label FROM markers WHERE topic = 'ann'") == [("Ann",)]
        assert "- Ann: uneasy (negative, 0.8)" in gut(await lab.ask(Context("how is ann?")))
        rebuilt = await lab.ask(Rebuild())
        assert isinstance(rebuilt, RebuildResult)
        assert rebuilt.markers_changed == 0


@pytest.mark.parametrize(
    ("person", "query", "topic"),
    [
        ("Melanie", "how is Melanie?", "melani"),  # the stem is not the lowercase name
        ("Ann Lee", "how is Ann doing?", "ann"),  # a two-word name: its first word
        ("Ann Lee", "and Ann Lee?", "ann"),
    ],
)
async def test_a_linked_person_s_feeling_shows_when_a_query_names_them(
    tmp_path: Path, person: str, query: str, topic: str
) -> None:
    feeling = f"- {person}: uneasy (negative, 0.8)"
    person_rows = f"SELECT valence, label FROM markers WHERE topic = '{topic}'"
    async with soul(tmp_path) as lab:
        await lab.ask(PersonLink(person=person, channel="slack", external="U7"))
        await lab.push("the vet failed us again", channel="slack", sender="U7")
        await lab.push("the build failed", ref="b")
        assert feeling in gut(await lab.ask(Context(query)))
        assert lab.sql(person_rows) == [("negative", person)]
    async with soul(tmp_path) as lab:  # no latest events: only the query touches
        assert gut(await lab.ask(Context(query))) == [feeling]
        rebuilt = await lab.ask(Rebuild())
        assert isinstance(rebuilt, RebuildResult)
        assert rebuilt.markers_changed == 0
        forgot = await lab.ask(Forget(ref="b"))
        assert isinstance(forgot, ForgetResult)
        assert lab.sql(person_rows) == [("negative", person)]
        assert gut(await lab.ask(Context(query))) == [feeling]


async def test_a_scheduled_job_runs_once_a_period_whoever_fires_it(tmp_path: Path) -> None:
    # Two daemons of a shared store fire a soul's nightly decay at the same time; the
    # soul's state says it ran: the second is a no-op. Asked for by hand, it always runs.
    config = SoulConfig(hebbian=HebbianConfig(nightly_factor=0.5, prune_below=0.3))
    async with soul(tmp_path, config) as lab:
        for text in ("red kite", "red fox", "grey heron", "deploy failed with an error"):
            await lab.push(text)
        await lab.ask(Recall("red"))  # one edge of weight 1.0
        await lab.ask(Stats())
        assert lab.sql("SELECT weight FROM edges") == [(1.0,)]
        first = await lab.ask(Decay(period=DAY))
        assert first is not None
        weight = lab.sql("SELECT weight FROM edges")
        assert weight == [(0.5,)]
        lab.clock.advance(DAY / 4)
        assert await lab.ask(Decay(period=DAY)) is None  # ran 6 h ago: not again
        assert await lab.ask(Homeostasis(period=900.0)) is not None
        assert await lab.ask(Homeostasis(period=900.0)) is None
        assert lab.sql("SELECT weight FROM edges") == weight
        again = await lab.ask(Decay())  # by hand: runs
        assert again is not None
        assert lab.sql("SELECT weight FROM edges") == []  # 0.25: pruned below 0.3
        lab.clock.advance(DAY)
        assert await lab.ask(Decay(period=DAY)) is not None  # a day on: runs
        assert await lab.ask(Weekly(period=7 * DAY)) is not None
        assert await lab.ask(Weekly(period=7 * DAY)) is None
