"""The socket methods, dispatched in-process to real souls hosted as the daemon hosts them:
a Registry of SoulHandles whose child specs run under a dynamic ``souls`` Supervisor."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from conftest import MAILBOX_HYGIENE

from channels.methods import Methods
from souls.actor.clock import FixedClock
from souls.actor.mailbox import Future, Mailbox
from souls.config import SoulConfig
from supervisor.errors import (
    InvalidParams,
    RejectedInput,
    SoupdError,
    UnknownMethod,
    UnknownSoul,
)
from supervisor.registry import Registry, SoulHandle
from supervisor.tree import Supervisor

T0 = 1_780_000_000.0
STATUS = {"version": "test", "souls": 2}
ALL_METHODS = [
    "backup",
    "card.add",
    "card.note",
    "card.synthesize",
    "cards",
    "claim.add",
    "claim.correct",
    "claim.retract",
    "claim.update",
    "claims",
    "confidence",
    "context",
    "daemon.status",
    "decay",
    "event.import",
    "event.push",
    "export",
    "forget",
    "goal.update",
    "goals",
    "homeostasis",
    "ledger",
    "lightning",
    "logs",
    "map",
    "memory.delete",
    "memory.get",
    "memory.list",
    "memory.read",
    "memory.update",
    "person.link",
    "persons",
    "rebuild",
    "recall",
    "reflect",
    "soul.create",
    "soul.delete",
    "soul.list",
    "soul.stats",
    "status_page",
    "subscribe",
    "task.add",
    "tasks",
    "tide",
    "verdict",
    "weekly",
    "why",
]


pytestmark = MAILBOX_HYGIENE


@dataclass
class Host:
    methods: Methods
    registry: Registry

    async def call(self, method: str, params: Any = None) -> Any:
        """Dispatch like the server does and return the reply as the wire would carry it."""
        future = Future()
        raw = msgspec.Raw(msgspec.json.encode({} if params is None else params))
        with anyio.fail_after(5):
            await self.methods.dispatch(method, raw, future)
            value = await future.wait()
        return msgspec.json.decode(msgspec.json.encode(value))

    async def fails(self, method: str, params: Any, kind: type[SoupdError]) -> SoupdError:
        """The error a call ends with, whether dispatch raises it or the reply carries it."""
        with pytest.raises(kind) as caught:
            await self.call(method, params)
        return caught.value


@asynccontextmanager
async def hosted(
    root: Path,
    *names: str,
    fault_injection: bool = False,
    config: SoulConfig | None = None,
    forgotten: Callable[[str], None] | None = None,
) -> AsyncIterator[Host]:
    config = config or SoulConfig()
    registry = Registry()
    souls = Supervisor("souls", max_restarts=1_000_000, max_seconds=1.0)
    clock = FixedClock(T0)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            await tg.start(souls.run)
            for name in names:
                handle = SoulHandle(
                    name=name,
                    config=config,
                    db_path=root / name / "soul.db",
                    brain_dir=root / name / "brain",
                    mailbox=Mailbox(name, config.mailbox.capacity),
                )
                registry.add(handle)
                await souls.start_child(handle.child_spec(clock))
            methods = Methods(
                registry, lambda: STATUS, fault_injection=fault_injection, forgotten=forgotten
            )
            yield Host(methods, registry)
            tg.cancel_scope.cancel()


async def wait_until(predicate: Callable[[], bool]) -> None:
    # Handles publish no change events, so tests poll what a caller can observe.
    with anyio.fail_after(5):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.001)


async def test_unknown_method_lists_the_known_ones(tmp_path: Path) -> None:
    async with hosted(tmp_path, "alpha") as host:
        assert host.methods.names == ALL_METHODS
        error = await host.fails("event.pussh", {"soul": "alpha", "text": "x"}, UnknownMethod)
    assert error.code == "unknown_method"
    assert "'event.pussh'" in error.message
    for name in ALL_METHODS:
        assert name in error.message


async def test_event_push_goes_through_a_real_soul(tmp_path: Path) -> None:
    async with hosted(tmp_path, "alpha") as host:
        first = await host.call("event.push", {"soul": "alpha", "text": "hello", "ref": "m-1"})
        again = await host.call("event.push", {"soul": "alpha", "text": "hello", "ref": "m-1"})
        urgent = await host.call(
            "event.push", {"soul": "alpha", "text": "prod is down", "kind": "dm"}
        )
        stats = await host.call("soul.stats", {"soul": "alpha"})
        recalled = await host.call("recall", {"soul": "alpha", "query": "hello"})
    # The first event is all news to the soul's empty summary and makes it reflect; the
    # next one is new against that summary too, and reflects at once as well. The reply
    # names the tokens that were new.
    assert first == {
        "event_id": 1,
        "salience": 0.5,
        "status": "stored",
        "surprise": 1.0,
        "reflected": True,
        "novel": ["hello"],
    }
    assert again == {
        "event_id": 1,
        "salience": 0.5,
        "status": "duplicate",
        "surprise": None,
        "reflected": False,
        "novel": [],
    }
    assert urgent == {
        "event_id": 2,
        "salience": 1.0,
        "status": "stored",
        "surprise": 1.0,
        "reflected": True,
        "novel": ["prod"],
    }
    assert stats["soul"] == "alpha"
    assert (stats["events"], stats["queued"]) == (2, 0)
    assert [(i["id"], i["text"], i["refs"]) for i in recalled["items"]] == [(1, "hello", ["m-1"])]


async def test_event_push_errors(tmp_path: Path) -> None:
    async with hosted(tmp_path, "alpha") as host:
        typed = await host.fails("event.push", {"soul": "alpha", "text": 5}, InvalidParams)
        extra = await host.fails(
            "event.push", {"soul": "alpha", "text": "x", "colour": "red"}, InvalidParams
        )
        no_soul = await host.fails("event.push", {"text": "x"}, InvalidParams)
        ghost = await host.fails("event.push", {"soul": "ghost", "text": "x"}, UnknownSoul)
        empty = await host.fails("event.push", {"soul": "alpha", "text": " "}, RejectedInput)
        stats = await host.call("soul.stats", {"soul": "alpha"})
    assert "`text`" in typed.message
    assert "`colour`" in extra.message
    assert "`soul`" in no_soul.message
    assert ghost.code == "unknown_soul"
    assert "'ghost'" in ghost.message
    assert empty.code == "hygiene.empty"
    assert stats["events"] == 0


async def test_event_import_mixes_decode_and_soul_rejections(tmp_path: Path) -> None:
    events = [
        {"text": "first good", "ref": "r-0"},
        {"text": 5},  # wrong type: rejected before the soul sees it
        {"text": ""},  # empty: rejected by the soul, which sees it at position 1
        {"text": "tick", "kind": "heartbeat"},
        {"txt": "typo"},  # unknown key
        {"text": "first good again", "ref": "r-0"},
        "not even an object",
        {"text": "second good"},
    ]
    async with hosted(tmp_path, "alpha") as host:
        result = await host.call("event.import", {"soul": "alpha", "events": events})
        stats = await host.call("soul.stats", {"soul": "alpha"})
    assert {k: result[k] for k in ("stored", "dropped", "duplicate", "rejected")} == {
        "stored": 2,
        "dropped": 1,
        "duplicate": 1,
        "rejected": 4,
    }
    assert [(r["index"], r["code"]) for r in result["reasons"]] == [
        (1, "invalid_params"),
        (2, "hygiene.empty"),
        (4, "invalid_params"),
        (6, "invalid_params"),
    ]
    assert "`text`" in result["reasons"][0]["message"]
    assert "`txt`" in result["reasons"][2]["message"]
    assert result["reasons_truncated"] is False
    assert stats["events"] == 2


async def test_event_import_of_only_bad_events(tmp_path: Path) -> None:
    async with hosted(tmp_path, "alpha") as host:
        result = await host.call(
            "event.import", {"soul": "alpha", "events": [{"text": 1}, {"text": 2}]}
        )
        empty = await host.call("event.import", {"soul": "alpha", "events": []})
    assert (result["stored"], result["rejected"]) == (0, 2)
    assert [r["index"] for r in result["reasons"]] == [0, 1]
    assert (empty["stored"], empty["rejected"], empty["reasons"]) == (0, 0, [])


async def test_soul_list(tmp_path: Path) -> None:
    async with hosted(tmp_path, "beta", "alpha") as host:
        listed = await host.call("soul.list")
        with pytest.raises(InvalidParams):
            await host.call("soul.list", {"soul": "alpha"})
    # Nothing was sent to them yet: they hibernate, their databases unopened.
    assert listed == {
        "souls": [
            {
                "name": name,
                "state": "hibernating",
                "restarts": 0,
                "wakes": 0,
                "queued": 0,
                "last_error": None,
            }
            for name in ("alpha", "beta")
        ]
    }


async def test_recall_and_context(tmp_path: Path) -> None:
    async with hosted(tmp_path, "alpha") as host:
        await host.call("event.push", {"soul": "alpha", "text": "the zebra escaped"})
        await host.call("event.push", {"soul": "alpha", "text": "lunch at noon"})
        recalled = await host.call("recall", {"soul": "alpha", "query": "zebra", "k": 5})
        context = await host.call("context", {"soul": "alpha", "query": "zebra"})
        bad_k = await host.fails("recall", {"soul": "alpha", "query": "x", "k": 0}, InvalidParams)
        no_query = await host.fails("recall", {"soul": "alpha"}, InvalidParams)
    # Each event was news and reflected into the summary, whose line about the first
    # covers the query.
    assert [item["id"] for item in recalled["items"]] == [1]
    assert recalled["items"][0]["via"] == "summary"
    # Without a SOUL.md the context opens with the built-in identity.
    assert [s["name"] for s in context["sections"]] == ["identity", "summary", "recalled"]
    assert context["sections"][0]["text"].startswith("## IDENTITY\n")
    assert context["sections"][1]["text"] == (
        "## MEMORY\n## Notable\n- the zebra escaped [m1]\n- lunch at noon [m2]\n\n"
    )
    assert context["sections"][2]["memory_ids"] == [1]
    assert "[m1] the zebra escaped" in context["text"]
    assert "max_k" in bad_k.message
    assert "`query`" in no_query.message


async def test_daemon_status_is_whatever_the_daemon_reports(tmp_path: Path) -> None:
    async with hosted(tmp_path, "alpha") as host:
        assert await host.call("daemon.status") == STATUS


async def test_debug_crash_is_absent_without_fault_injection(tmp_path: Path) -> None:
    async with hosted(tmp_path, "alpha") as host:
        assert "debug.crash" not in host.methods.names
        error = await host.fails("debug.crash", {"soul": "alpha"}, UnknownMethod)
        assert "debug.crash" not in error.message.split("known methods:")[1]
        (handle,) = host.registry.handles()
        assert handle.restarts == 0


async def test_debug_crash_restarts_the_soul_with_its_data(tmp_path: Path) -> None:
    async with hosted(tmp_path, "alpha", fault_injection=True) as host:
        assert host.methods.names == sorted([*ALL_METHODS, "debug.crash"])
        await host.call("event.push", {"soul": "alpha", "text": "remember the zebra"})
        assert await host.call("debug.crash", {"soul": "alpha"}) == {"crashing": "alpha"}
        (handle,) = host.registry.handles()
        await wait_until(lambda: handle.restarts == 1 and handle.state == "running")
        recalled = await host.call("recall", {"soul": "alpha", "query": "zebra"})
        pushed = await host.call("event.push", {"soul": "alpha", "text": "after the restart"})
        listed = await host.call("soul.list")
    assert [item["text"] for item in recalled["items"]] == ["remember the zebra"]
    assert pushed["event_id"] == 2
    assert listed["souls"][0]["restarts"] == 1
    assert listed["souls"][0]["state"] == "running"


async def test_forgetting_everything_is_told_once_done(tmp_path: Path) -> None:
    # The daemon drops the soul's conversation (the chat it last heard from) then.
    told: list[str] = []
    async with hosted(tmp_path, "alpha", forgotten=told.append) as host:
        await host.call("event.push", {"soul": "alpha", "text": "hello", "ref": "m-1"})
        await host.call("forget", {"soul": "alpha", "ref": "m-1"})
        assert told == []  # a part of it: the conversation stays
        result = await host.call("forget", {"soul": "alpha", "all": True})
        assert told == ["alpha"]
        assert (await host.call("soul.stats", {"soul": "alpha"}))["events"] == 0
    assert result["events"] == 0  # m-1 went before
