"""Where each soul last heard from someone survives a restart: the file round-trips,
only a change writes, a bad file is a warning and an empty map, the flusher writes
soon after a change yet at most once per interval, and the channels supervisor loads
the file at start and writes it once more when it stops."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest
from running import running_souls, wait_until
from structlog.testing import capture_logs

from channels.config import WebhookConfig
from channels.conversations import Conversations
from channels.supervisor import Channels
from supervisor.outputs import Outputs


def the_file(tmp_path: Path) -> Path:
    return tmp_path / "state" / "channels" / "conversations.json"


async def reloaded(path: Path) -> Conversations:
    fresh = Conversations(path)
    await fresh.load()
    return fresh


async def test_the_map_round_trips_through_a_private_file(tmp_path: Path) -> None:
    path = the_file(tmp_path)
    conversations = Conversations(path)
    await conversations.load()  # no file yet: an empty map, nothing logged
    assert conversations.statistics().entries == 0
    conversations.note("ada", "tg", "77")
    conversations.note("bob", "phone", "group.G")
    conversations.note("ada", "tg", "78")  # one entry per soul: the latest wins
    await conversations.flush()

    again = await reloaded(path)
    assert (again.latest("ada"), again.latest("bob")) == (("tg", "78"), ("phone", "group.G"))
    assert again.latest("cy") is None
    assert again.statistics().entries == 2
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left


async def test_only_a_change_writes(tmp_path: Path) -> None:
    path = the_file(tmp_path)
    conversations = Conversations(path)
    conversations.note("ada", "tg", "77")
    assert conversations.statistics().dirty
    await conversations.flush()
    assert (conversations.statistics().writes, conversations.statistics().dirty) == (1, False)
    written = path.stat().st_mtime_ns

    conversations.note("ada", "tg", "77")  # the same place again: nothing to write
    assert not conversations.statistics().dirty
    await conversations.flush()
    assert conversations.statistics().writes == 1
    assert path.stat().st_mtime_ns == written

    conversations.note("ada", "tg", "78")
    await conversations.flush()
    assert conversations.statistics().writes == 2
    assert (await reloaded(path)).latest("ada") == ("tg", "78")


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe\x00garbage",
        b"",
        b'{"version": 1, "souls": {"ada": ["tg", "77"]}}',  # wrong shape
        b'{"version": 2, "souls": {}}',  # a newer soupd's file
        b"[]",
    ],
)
async def test_a_malformed_file_is_a_warning_and_an_empty_map(
    tmp_path: Path, content: bytes
) -> None:
    path = the_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    conversations = Conversations(path)
    with capture_logs() as logs:
        await conversations.load()
    assert conversations.statistics().entries == 0
    [warning] = [e for e in logs if e["event"] == "channels.conversations_unreadable"]
    assert (warning["log_level"], warning["file"]) == ("warning", str(path))

    conversations.note("ada", "tg", "77")  # and the next change replaces the bad file
    await conversations.flush()
    assert (await reloaded(path)).latest("ada") == ("tg", "77")


async def test_forgetting_a_channel_persists(tmp_path: Path) -> None:
    path = the_file(tmp_path)
    conversations = Conversations(path)
    conversations.note("ada", "tg", "77")
    conversations.note("bob", "phone", "+2")
    await conversations.flush()

    conversations.forget_channel("slack")  # points at nothing: no change, no write
    assert not conversations.statistics().dirty
    conversations.forget_channel("tg")
    assert conversations.latest("ada") is None
    await conversations.flush()
    again = await reloaded(path)
    assert (again.latest("ada"), again.latest("bob")) == (None, ("phone", "+2"))
    assert again.channels() == {"phone"}


async def test_a_soul_that_forgot_everything_is_dropped_and_persisted(tmp_path: Path) -> None:
    path = the_file(tmp_path)
    conversations = Conversations(path)
    conversations.note("ada", "tg", "77")
    conversations.note("bob", "phone", "+2")
    await conversations.flush()
    conversations.forget_soul("nobody")  # no entry: no change, no write
    assert not conversations.statistics().dirty
    conversations.forget_soul("ada")
    await conversations.flush()
    again = await reloaded(path)
    assert (again.latest("ada"), again.latest("bob")) == (None, ("phone", "+2"))


async def test_a_failed_write_keeps_the_map_dirty_and_warns_once(tmp_path: Path) -> None:
    blocker = tmp_path / "state"
    blocker.write_text("a file where the folder should be")
    conversations = Conversations(the_file(tmp_path))
    conversations.note("ada", "tg", "77")
    with capture_logs() as logs:
        await conversations.flush()
        await conversations.flush()
    stats = conversations.statistics()
    assert (stats.writes, stats.write_failures, stats.dirty) == (0, 2, True)
    levels = [e["log_level"] for e in logs if e["event"] == "channels.conversations_write_failed"]
    assert levels == ["warning", "debug"]
    assert conversations.latest("ada") == ("tg", "77")  # routing goes on from memory


async def test_the_flusher_writes_soon_after_a_change_then_waits_its_interval(
    tmp_path: Path,
) -> None:
    conversations = Conversations(the_file(tmp_path), interval=3600)
    async with anyio.create_task_group() as tg:
        await tg.start(conversations.run)
        await anyio.sleep(0.05)
        assert conversations.statistics().writes == 0  # nothing changed: nothing written
        conversations.note("ada", "tg", "77")
        await wait_until(lambda: conversations.statistics().writes == 1, "the first write")
        for n in range(100):  # a burst of changes within the interval
            conversations.note("ada", "tg", str(n))
        await anyio.sleep(0.1)
        assert (conversations.statistics().writes, conversations.statistics().dirty) == (1, True)
        tg.cancel_scope.cancel()
    await conversations.flush()  # what the owner does once everything has stopped
    assert (await reloaded(the_file(tmp_path))).latest("ada") == ("tg", "99")


async def test_the_channels_supervisor_loads_at_start_and_writes_at_stop(tmp_path: Path) -> None:
    path = the_file(tmp_path)
    path.parent.mkdir(parents=True)
    stored: dict[str, Any] = {
        "ada": {"channel": "hooks", "conversation": "c-1"},
        "bob": {"channel": "gone", "conversation": "c-2"},  # removed while we were down
    }
    path.write_text(json.dumps({"version": 1, "souls": stored}))
    hooks = WebhookConfig(name="hooks", souls=["ada"], port=0, allow_unauthenticated=True)

    async with running_souls(tmp_path / "souls", "ada") as registry:
        channels = Channels([hooks], registry, Outputs(), conversations=path)
        async with anyio.create_task_group() as tg:
            await tg.start(channels.run)
            assert channels.conversations.latest("ada") == ("hooks", "c-1")
            assert channels.conversations.latest("bob") is None
            channels.conversations.note("ada", "hooks", "c-3")
            tg.cancel_scope.cancel()

    again = await reloaded(path)
    assert (again.latest("ada"), again.latest("bob")) == (("hooks", "c-3"), None)
