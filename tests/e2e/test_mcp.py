"""``soupd mcp`` end to end: the real daemon, ``soupd mcp`` as a subprocess, and the MCP
SDK's own stdio client speaking to it (tool listing, calls, daemon errors as tool
errors, a daemon that is not running yet)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
from anyio.streams.text import TextReceiveStream
from mcp import ClientSession, StdioServerParameters, stdio_client, types

from .harness import SOUPD, Home, StartSoupd

# A bound on each session, never a measurement.
SESSION_TIMEOUT = 30.0

PER_SOUL = {
    "add_memory",
    "search",
    "get_context",
    "forget",
    "check_confidence",
    "set_reminder",
    "draw_lightning",
    "give_verdict",
    "list_claims",
    "update_goal",
    "why",
    "memory_map",
    "read_memory",
}


@asynccontextmanager
async def session(home: Home, *args: str) -> AsyncIterator[ClientSession]:
    """An initialised MCP session with ``soupd mcp ARGS`` (its stderr kept in a file)."""
    server = StdioServerParameters(command=str(SOUPD), args=["mcp", *args], env=home.env)
    home.root.mkdir(parents=True, exist_ok=True)
    with (home.root / "mcp.err").open("w") as errlog, anyio.fail_after(SESSION_TIMEOUT):
        async with (
            stdio_client(server, errlog=errlog) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client


async def call(client: ClientSession, tool: str, **arguments: Any) -> types.CallToolResult:
    result = await client.call_tool(tool, arguments)
    assert isinstance(result, types.CallToolResult)
    return result


def text(result: types.CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def ok(result: types.CallToolResult) -> Any:
    """The structured result of a successful call (its text is the same, as JSON)."""
    assert not result.is_error, text(result)
    return result.structured_content


def failed(result: types.CallToolResult) -> str:
    assert result.is_error, result
    return text(result)


async def test_tools_on_one_soul(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    async with session(soupd_home, "--soul", "ada") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == PER_SOUL  # list_souls only when no soul is bound
        for tool in tools.values():
            assert tool.description
            assert tool.input_schema["type"] == "object"
            assert "soul" not in tool.input_schema["properties"]
        assert tools["add_memory"].input_schema["required"] == ["text"]
        assert tools["give_verdict"].input_schema["properties"]["verdict"]["enum"] == [
            "strong",
            "approve",
            "neutral",
            "oppose",
        ]

        added = ok(
            await call(
                client, "add_memory", text="The staging database is Postgres 16.", ref="mcp-1"
            )
        )
        assert added["status"] == "stored"
        again = ok(await call(client, "add_memory", text="anything", ref="mcp-1"))
        assert (again["status"], again["event_id"]) == ("duplicate", added["event_id"])

        found = ok(await call(client, "search", query="staging database", k=3))
        [item] = found["items"]
        assert item["text"] == "The staging database is Postgres 16."
        assert item["id"].startswith("m")
        assert item["refs"] == ["mcp-1"]
        assert 0 < item["relevance"] <= 1
        assert item["why"]
        assert json.loads(text(await call(client, "search", query="staging database"))) == found
        read = ok(await call(client, "read_memory", id=item["id"]))
        assert "Postgres 16" in json.dumps(read)

        context = await call(client, "get_context", query="which database is on staging")
        assert not context.is_error
        assert "Postgres 16" in text(context)  # the text itself, ready for a prompt

        tasks = ok(await call(client, "set_reminder", text="renew the cert", at="2031-01-01"))
        assert [task["text"] for task in tasks["pending"]] == ["renew the cert"]
        confidence = ok(await call(client, "check_confidence", topic="staging database"))
        assert confidence["state"] in {"confident", "uncertain", "low_confidence"}
        assert "claims" in ok(await call(client, "list_claims"))

        # The daemon's own errors, code and message intact.
        both = failed(await call(client, "forget", ref="mcp-1", match="staging"))
        assert both.startswith("invalid_params: forget needs exactly one of ref, match")
        bad_k = failed(await call(client, "search", query="x", k="many"))
        assert bad_k.startswith("invalid_params: invalid params for recall")
        assert "`k`" in bad_k
        bad_time = failed(await call(client, "set_reminder", text="x", at="next tuesday"))
        assert "not an ISO 8601 date-time" in bad_time
        # Arguments the tool does not offer never reach the socket.
        other = failed(await call(client, "search", query="x", soul="bob"))
        assert "does not take soul (this server works on soul 'ada')" in other
        wipe = failed(await call(client, "forget", all=True))
        assert "forget does not take all" in wipe
        assert failed(await call(client, "check_confidence")) == (
            "invalid_params: check_confidence needs topic"
        )

        forgotten = ok(await call(client, "forget", ref="mcp-1"))
        assert forgotten["events"] == 1
        assert ok(await call(client, "search", query="staging database"))["items"] == []
    assert daemon.counts("ada")[0] == 0


async def test_without_a_soul_each_tool_names_one(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    soupd_home.add_soul("bob")
    start_soupd()
    async with session(soupd_home) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == PER_SOUL | {"list_souls"}
        for name in PER_SOUL:
            assert tools[name].input_schema["required"][0] == "soul"
        souls = ok(await call(client, "list_souls"))["souls"]
        assert sorted(s["name"] for s in souls) == ["ada", "bob"]

        ok(await call(client, "add_memory", soul="bob", text="Bob keeps bees."))
        assert ok(await call(client, "search", soul="ada", query="bees"))["items"] == []
        assert ok(await call(client, "search", soul="bob", query="bees"))["items"]

        unknown = failed(await call(client, "search", soul="carol", query="bees"))
        assert unknown.startswith("unknown_soul: ")
        assert "carol" in unknown
        assert failed(await call(client, "search", query="bees")) == (
            "invalid_params: search needs soul"
        )


async def test_a_daemon_not_running_is_a_tool_error(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    async with session(soupd_home, "--soul", "ada") as client:
        assert len((await client.list_tools()).tools) == len(PER_SOUL)
        down = failed(await call(client, "add_memory", text="hello"))
        assert down.startswith("daemon_not_running: soupd is not running")
        assert "`soupd start`" in down

        # The MCP server kept running: once the daemon is up, the same session works.
        await anyio.to_thread.run_sync(start_soupd)
        assert ok(await call(client, "add_memory", text="hello"))["status"] == "stored"


async def test_stdout_carries_only_mcp(soupd_home: Home) -> None:
    frames = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "list_claims", "arguments": {}},
        },
    ]
    replies: dict[int, Any] = {}
    with anyio.fail_after(SESSION_TIMEOUT):
        async with await anyio.open_process(
            [str(SOUPD), "mcp", "--soul", "ada"], env=soupd_home.env
        ) as proc:
            assert proc.stdin is not None
            assert proc.stdout is not None
            await proc.stdin.send("".join(json.dumps(f) + "\n" for f in frames).encode())
            lines = TextReceiveStream(proc.stdout)
            buffer = ""
            while len(replies) < 3:
                buffer += await lines.receive()
                *complete, buffer = buffer.split("\n")
                for line in complete:
                    reply = json.loads(line)  # every line is a JSON-RPC message
                    assert reply["jsonrpc"] == "2.0"
                    replies[reply["id"]] = reply
            await proc.stdin.aclose()  # end of input: the server exits
            assert await proc.wait() == 0
    assert replies[1]["result"]["serverInfo"]["name"] == "soupd"
    assert len(replies[2]["result"]["tools"]) == len(PER_SOUL)
    assert replies[3]["result"]["isError"] is True  # no daemon: a tool error, not a crash
