"""``soupd mcp`` end to end: the real daemon, ``soupd mcp`` as a subprocess, and the MCP
SDK's own stdio client speaking to it (tool listing, calls, daemon errors as tool
errors, a daemon that is not running yet)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
import jsonschema
import pytest
from anyio.streams.text import TextReceiveStream
from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.shared.exceptions import MCPError

from .harness import SOUPD, Home, StartSoupd

# A bound on each session, never a measurement.
SESSION_TIMEOUT = 30.0

# What each tool does to the soul, as its annotations must say.
READ_ONLY = {
    "search",
    "get_context",
    "check_confidence",
    "list_claims",
    "list_goals",
    "list_persons",
    "why",
    "memory_map",
    "read_memory",
    "list_memories",
    "get_memory",
}
DESTRUCTIVE = {"forget", "correct_claim", "retract_claim", "update_memory", "delete_memory"}
WRITES = {
    "add_memory",
    "set_reminder",
    "draw_lightning",
    "give_verdict",
    "add_claim",
    "update_goal",
    "link_person",
}
PER_SOUL = READ_ONLY | DESTRUCTIVE | WRITES


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
        assert tasks["existing"] is False
        # The same reminder again stores nothing new and says so.
        again = ok(await call(client, "set_reminder", text="renew the cert", at="2031-01-01"))
        assert (again["existing"], again["key"]) == (True, tasks["key"])
        assert (again["pending"], again["errors"]) == (tasks["pending"], [])
        lines = (soupd_home.soul_dir("ada") / "TASKS.md").read_text(encoding="utf-8")
        assert lines.count("renew the cert") == 1
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
        assert set(tools) == PER_SOUL | {"list_souls", "create_soul", "delete_soul"}
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
    # Without --soul, each call names its soul: the server starts with no daemon to ask.
    async with session(soupd_home) as client:
        assert len((await client.list_tools()).tools) == len(PER_SOUL) + 3
        down = failed(await call(client, "add_memory", soul="ada", text="hello"))
        assert down.startswith("daemon_not_running: soupd is not running")
        assert "`soupd start`" in down

        # The MCP server kept running: once the daemon is up, the same session works.
        await anyio.to_thread.run_sync(start_soupd)
        added = ok(await call(client, "add_memory", soul="ada", text="hello"))
        assert added["status"] == "stored"


def test_a_soul_cannot_be_served_while_the_daemon_is_down(soupd_home: Home) -> None:
    """--soul NAME binds the server to a soul only a running daemon can vouch for: with
    none, it fails at start (exit 4, as the README's exit codes say), serving nothing."""
    soupd_home.add_soul("ada")  # a soul file is no proof: the daemon may not run it
    for soul in ("ada", "nosuch"):
        done = subprocess.run(
            [str(SOUPD), "mcp", "--soul", soul],
            env=soupd_home.env,
            input="",
            capture_output=True,
            text=True,
            timeout=SESSION_TIMEOUT,
        )
        assert done.returncode == 4, done.stderr  # the daemon is not running
        assert done.stdout == ""  # no MCP frame: it never served
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"soupd: daemon_not_running: soupd mcp --soul {soul}: ")
        assert "soupd is not running" in line
        assert "`soupd start`" in line
        assert "nothing is served" in line
    as_json = subprocess.run(
        [str(SOUPD), "mcp", "--soul", "ada", "--json"],
        env=soupd_home.env,
        input="",
        capture_output=True,
        text=True,
        timeout=SESSION_TIMEOUT,
    )
    assert as_json.returncode == 4
    assert json.loads(as_json.stderr)["error"]["code"] == "daemon_not_running"


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
            "params": {"name": "list_claims", "arguments": {"soul": "ada"}},
        },
    ]
    replies: dict[int, Any] = {}
    with anyio.fail_after(SESSION_TIMEOUT):
        async with await anyio.open_process([str(SOUPD), "mcp"], env=soupd_home.env) as proc:
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
    assert len(replies[2]["result"]["tools"]) == len(PER_SOUL) + 3
    assert replies[3]["result"]["isError"] is True  # no daemon: a tool error, not a crash


async def checked(
    client: ClientSession, schemas: dict[str, Any], tool: str, **arguments: Any
) -> Any:
    """A successful call whose structured result validates against the tool's
    outputSchema (the SDK's client checks too; this says which key failed)."""
    structured = ok(await call(client, tool, **arguments))
    jsonschema.validate(structured, schemas[tool])
    return structured


async def test_annotations_and_output_schemas(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    start_soupd()
    async with session(soupd_home, "--soul", "ada") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name, tool in tools.items():
            hints = tool.annotations
            assert hints is not None, name
            assert hints.read_only_hint is (name in READ_ONLY), name
            assert hints.destructive_hint is (name in DESTRUCTIVE), name
            assert hints.open_world_hint is False, name
            assert hints.title, name
            assert tool.output_schema is not None, name
            assert tool.output_schema["type"] == "object", name
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert tools["forget"].annotations is not None
        assert tools["forget"].annotations.idempotent_hint is True
        assert tools["add_memory"].annotations is not None
        assert tools["add_memory"].annotations.idempotent_hint is False
        assert "DESTRUCTIVE" in (tools["forget"].description or "")
        assert "dry_run" in tools["forget"].input_schema["properties"]
        verdict = tools["give_verdict"].description or ""
        assert "belong to the user" in verdict
        assert "never judge a card yourself" in verdict
        schemas = {name: tool.output_schema for name, tool in tools.items()}

        # Every result validates against its schema, and a wrong schema would fail.
        added = await checked(client, schemas, "add_memory", text="I moved to Lisbon in May.")
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**added, "status": 3}, schemas["add_memory"])
        await checked(client, schemas, "search", query="Lisbon")
        await checked(client, schemas, "get_context", query="where do I live")
        await checked(client, schemas, "check_confidence", topic="Lisbon")
        await checked(client, schemas, "set_reminder", text="call mum", at="2031-01-01")
        await checked(client, schemas, "list_claims")
        await checked(client, schemas, "why")
        await checked(client, schemas, "memory_map")
        await checked(client, schemas, "read_memory", id="m1")
        await checked(client, schemas, "forget", match="Lisbon", dry_run=True)


async def test_instructions_and_resources(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    soupd_home.add_soul("bob")
    daemon = start_soupd()
    daemon.push("ada", "The staging database is Postgres 16.", ref="r1")
    async with session(soupd_home, "--soul", "ada") as client:
        instructions = client.instructions or ""
        for said in ("get_context", "search", "add_memory", "dry_run", "give_verdict"):
            assert said in instructions
        assert "soupd://ada/context" in instructions
        assert "belong to the user" in instructions

        listed = (await client.list_resources()).resources
        assert sorted(str(r.uri) for r in listed) == ["soupd://ada/context", "soupd://ada/map"]
        assert all(r.description and r.mime_type for r in listed)
        templates = (await client.list_resource_templates()).resource_templates
        assert sorted(t.uri_template for t in templates) == [
            "soupd://{soul}/context",
            "soupd://{soul}/map",
        ]

        context = (await client.read_resource("soupd://ada/context")).contents
        [block] = context
        assert isinstance(block, types.TextResourceContents)
        assert block.text == daemon.result("context", {"soul": "ada"})["text"]
        assert "IDENTITY" in block.text
        [mapped] = (await client.read_resource("soupd://ada/map")).contents
        assert isinstance(mapped, types.TextResourceContents)
        assert "m1" in mapped.text  # the stored memory, by id
        assert mapped.text == daemon.result("map", {"soul": "ada"})["map"]

        with pytest.raises(MCPError, match="this server works on soul 'ada'"):
            await client.read_resource("soupd://bob/context")
        with pytest.raises(MCPError, match="no resource"):
            await client.read_resource("soupd://ada/secrets")

    async with session(soupd_home) as client:
        uris = sorted(str(r.uri) for r in (await client.list_resources()).resources)
        assert uris == [
            "soupd://ada/context",
            "soupd://ada/map",
            "soupd://bob/context",
            "soupd://bob/map",
        ]
        [bob_map] = (await client.read_resource("soupd://bob/map")).contents
        assert isinstance(bob_map, types.TextResourceContents)
        assert "m1" not in bob_map.text  # bob stored nothing
        with pytest.raises(MCPError, match="unknown_soul"):
            await client.read_resource("soupd://carol/map")
        assert "each tool takes a soul" in (client.instructions or "")


def test_an_unknown_soul_fails_at_start(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    start_soupd()
    done = subprocess.run(
        [str(SOUPD), "mcp", "--soul", "nosuch"],
        env=soupd_home.env,
        input="",
        capture_output=True,
        text=True,
        timeout=SESSION_TIMEOUT,
    )
    assert done.returncode == 6  # not found, as the README's exit codes say
    assert done.stdout == ""  # no MCP frame: it never served
    assert "unknown_soul" in done.stderr
    assert "the daemon runs no soul 'nosuch' (its souls: ada)" in done.stderr
    assert "`soupd soul create nosuch`" in done.stderr


async def test_forget_dry_run_removes_nothing(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    for n in range(3):
        daemon.push("ada", f"The vault passphrase hint number {n} is a pelican.", ref=f"v{n}")
    daemon.push("ada", "Lunch is at noon.", ref="lunch")
    before = daemon.counts("ada")
    async with session(soupd_home, "--soul", "ada") as client:
        dry = ok(await call(client, "forget", match="pelican", dry_run=True))
        assert dry["dry_run"] is True
        assert dry["events"] == 3
        assert dry["memories"] >= 3
        assert daemon.counts("ada") == before
        again = ok(await call(client, "forget", match="pelican", dry_run=True))
        assert again == dry  # counting changed nothing
        assert len(ok(await call(client, "search", query="pelican"))["items"]) == 3
        # (the search linked what it found: Hebbian edges the forget now also takes)
        dry = ok(await call(client, "forget", match="pelican", dry_run=True))

        real = ok(await call(client, "forget", match="pelican"))
        assert real["dry_run"] is False
        assert {**real, "dry_run": True} == dry  # the dry run counted what the forget did
        assert ok(await call(client, "search", query="pelican"))["items"] == []
        assert daemon.counts("ada")[0] == before[0] - 3
        nothing = ok(await call(client, "forget", match="pelican", dry_run=True))
        assert nothing["events"] == 0
        # One memory by its id, as search shows it: counted, then forgotten.
        (lunch,) = ok(await call(client, "search", query="lunch"))["items"]
        one = ok(await call(client, "forget", id=lunch["id"], dry_run=True))
        assert (one["events"], one["memories"], one["dry_run"]) == (1, 1, True)
        assert daemon.counts("ada") == (before[0] - 3, 1)
        assert ok(await call(client, "forget", id=lunch["id"])) == {**one, "dry_run": False}
        assert daemon.counts("ada") == (before[0] - 4, 0)
    # The socket's own forget of everything, counted only.
    daemon.push("ada", "Lunch is at one today.", ref="lunch-2")
    left = daemon.counts("ada")
    counted = daemon.result("forget", {"soul": "ada", "all": True, "dry_run": True})
    assert (counted["events"], counted["dry_run"]) == (1, True)
    assert daemon.counts("ada") == left
    assert daemon.recall("ada", "lunch")


async def test_claims_goals_and_persons(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    start_soupd()
    async with session(soupd_home, "--soul", "ada") as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        added = await checked(
            client, schemas, "add_claim", value="Lisbon", slot="location", subject="ann"
        )
        first = added["claim"]["id"]
        assert added["claim"]["value"] == "Lisbon"
        corrected = await checked(client, schemas, "correct_claim", id=first, value="Porto")
        assert corrected["closed"] == [first]
        assert corrected["claim"]["value"] == "Porto"
        second = corrected["claim"]["id"]
        active = (await checked(client, schemas, "list_claims"))["claims"]
        assert [(c["id"], c["value"]) for c in active] == [(second, "Porto")]
        retracted = await checked(client, schemas, "retract_claim", id=second)
        assert retracted["claim"]["state"] == "retracted"
        assert (await checked(client, schemas, "list_claims"))["claims"] == []
        every = (await checked(client, schemas, "list_claims", all=True))["claims"]
        assert {c["id"] for c in every} == {first, second}
        refused = failed(await call(client, "add_claim", value="x", type="gossip"))
        assert refused.startswith("invalid_params")

        goal = await checked(
            client, schemas, "update_goal", action="new", statement="run a marathon", priority=2
        )
        assert goal["outcome"] == "created"
        noted = await checked(
            client, schemas, "update_goal", action="progress", goal_id=goal["goal"]["id"],
            note="ran 10 km",
        )  # fmt: skip
        assert [n["text"] for n in noted["goal"]["progress"]] == ["ran 10 km"]
        goals = (await checked(client, schemas, "list_goals"))["goals"]
        assert [(g["statement"], g["state"]) for g in goals] == [("run a marathon", "active")]

        linked = await checked(client, schemas, "link_person", person="Ann", identity="slack:U1")
        assert (linked["person"], linked["identity"]) == ("Ann", "slack:U1")
        persons = (await checked(client, schemas, "list_persons"))["persons"]
        assert [(p["name"], p["identities"]) for p in persons] == [("Ann", ["slack:U1"])]
        bad = failed(await call(client, "link_person", person="Ann", identity="no-channel"))
        assert bad.startswith("invalid_params")


async def test_memories_by_id(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    for n, text in enumerate(
        ["The staging database is Postgres 16.", "Lunch with Bob at noon.", "Ann likes tea."]
    ):
        daemon.push("ada", text, ref=f"r{n}", sender="ann")
    async with session(soupd_home, "--soul", "ada") as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        first = await checked(client, schemas, "list_memories", limit=2)
        assert [m["text"] for m in first["items"]] == ["Ann likes tea.", "Lunch with Bob at noon."]
        assert first["items"][0]["id"].startswith("m")
        assert first["items"][0]["sender"] == "ann"
        rest = await checked(client, schemas, "list_memories", cursor=first["next_cursor"])
        assert [m["text"] for m in rest["items"]] == ["The staging database is Postgres 16."]
        assert rest["next_cursor"] is None
        staging = rest["items"][0]["id"]

        got = await checked(client, schemas, "get_memory", id=staging)
        assert got["text"] == "The staging database is Postgres 16."
        number = int(staging[1:])
        assert await checked(client, schemas, "get_memory", id=number) == got  # 12 or m12
        assert failed(await call(client, "get_memory", id="c7")).startswith("invalid_params")

        updated = await checked(
            client,
            schemas,
            "update_memory",
            id=staging,
            text="The staging database is Postgres 17.",
        )
        assert updated["replaced"] == staging
        assert updated["forgot"]["events"] == 1
        found = ok(await call(client, "search", query="staging database"))["items"]
        assert [item["text"] for item in found] == ["The staging database is Postgres 17."]
        assert [item["id"] for item in found] == [updated["id"]]
        gone = failed(await call(client, "get_memory", id=staging))
        assert gone.startswith("not_found")

        lunch = first["items"][1]["id"]
        deleted = await checked(client, schemas, "delete_memory", id=lunch)
        assert deleted["events"] == 1
        assert ok(await call(client, "search", query="lunch Bob"))["items"] == []
    assert daemon.counts("ada")[0] == 2


async def test_souls_at_run_time(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    start_soupd()
    async with session(soupd_home, "--soul", "ada") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert not names & {"create_soul", "delete_soul", "list_souls"}  # bound to ada
    async with session(soupd_home) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        schemas = {name: tool.output_schema for name, tool in tools.items()}
        create, delete = tools["create_soul"].annotations, tools["delete_soul"].annotations
        assert create is not None
        assert (create.read_only_hint, create.destructive_hint) == (False, False)
        assert delete is not None
        assert (delete.read_only_hint, delete.destructive_hint) == (False, True)
        assert delete.idempotent_hint is True

        made = await checked(client, schemas, "create_soul", soul="bob")
        assert made["soul"] == "bob"
        assert (soupd_home.config_dir / "souls" / "bob.toml").exists()
        listed = (await checked(client, schemas, "list_souls"))["souls"]
        assert sorted(s["name"] for s in listed) == ["ada", "bob"]
        ok(await call(client, "add_memory", soul="bob", text="Bob keeps bees."))
        assert ok(await call(client, "search", soul="bob", query="bees"))["items"]

        gone = await checked(client, schemas, "delete_soul", soul="bob")
        assert (gone["stopped"], gone["purged"]) == (True, False)
        listed = (await checked(client, schemas, "list_souls"))["souls"]
        assert [s["name"] for s in listed] == ["ada"]
        assert failed(await call(client, "search", soul="bob", query="bees")).startswith(
            "unknown_soul"
        )
        # Its memories were kept: the same name brings them back, when asked.
        unasked = failed(await call(client, "create_soul", soul="bob"))
        assert unasked.startswith("invalid_params"), unasked
        assert "reopen" in unasked
        await checked(client, schemas, "create_soul", soul="bob", reopen=True)
        assert ok(await call(client, "search", soul="bob", query="bees"))["items"]
