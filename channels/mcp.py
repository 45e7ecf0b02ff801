"""``soupd mcp``: the daemon's socket methods as MCP tools, served over stdio.

A proxy, not a second writer: it never opens a soul's database. Each tool call is one
socket call on a fresh connection, so the server outlives the daemon (a call while
the daemon is down is a tool error saying to start it; the next call after
``soupd start`` works). A daemon error reply becomes a tool error (``isError``) that
carries the daemon's code and message unchanged.

Stdout carries MCP frames only; anything else goes to stderr.
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from channels.client import Client
from supervisor.errors import InvalidParams, SoupdError

__all__ = ["TOOLS", "Tool", "serve", "tool_list"]

Shape = Callable[[Any], tuple[str, Any]]


def _as_json(result: Any) -> tuple[str, Any]:
    return json.dumps(result, ensure_ascii=False, indent=1), result


def _search_items(result: Any) -> tuple[str, Any]:
    # The id is the label memory_read takes and a context shows (m12).
    items = [
        {
            "id": f"m{item['id']}",
            "text": item["text"],
            # In [0, 1], comparable across queries: 1 holds the whole query, 0.5 half.
            "relevance": item.get("relevance", 0.0),
            "why": item.get("explain", {}).get("reasons", []) or [item["via"]],
            "refs": item["refs"],
        }
        for item in result["items"]
    ]
    return _as_json({"items": items})


def _context_text(result: Any) -> tuple[str, Any]:
    return result["text"], {"text": result["text"], "hash": result["hash"]}


def _string(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _integer(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "description": description, **extra}


@dataclass(frozen=True, slots=True)
class Tool:
    """One MCP tool: a socket method, its arguments (JSON Schema properties, passed
    through under the same names) and how its result reads for an agent."""

    name: str
    method: str
    description: str
    properties: Mapping[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    # Params always sent, which the agent does not choose.
    fixed: Mapping[str, Any] = field(default_factory=dict)
    shape: Shape = _as_json
    # Whether the tool works on one soul (its params carry ``soul``).
    per_soul: bool = True


TOOLS: tuple[Tool, ...] = (
    Tool(
        "add_memory",
        "event.push",
        "Store something in the soul's memory: a message, a fact the user told you, a "
        "decision, an observation. Use it for anything worth remembering in later "
        "conversations; the same ref is stored once, so retries are safe.",
        {
            "text": _string("What to remember, as said or observed."),
            "kind": _string("What sort of event: message (default), dm, assistant, webhook..."),
            "sender": _string("Who said it (a user name, or your own name)."),
            "session": _string("The conversation it belongs to."),
            "ref": _string("A unique key for this event (e.g. a message id), for idempotency."),
        },
        ("text",),
    ),
    Tool(
        "search",
        "recall",
        "Search the soul's memory for a query and get the best-matching memories, best "
        "first, each with its id (m12, readable with read_memory), text, relevance (0 to 1: "
        "1 holds everything the query asks, 0.5 half of it; the same scale for every query) "
        "and why it matched. Use it before answering anything that may depend on earlier "
        "conversations; narrow it by sender, session, kind or time when you know them.",
        {
            "query": _string("What to look for, in plain words."),
            "k": _integer("How many memories at most (default: the soul's setting).", minimum=1),
            "sender": _string("Only what this sender (or the person linked to them) said."),
            "session": _string("Only memories of this conversation."),
            "kind": _string("Only memories of this kind (message, dm, assistant, voice...)."),
            "since": _string("Only from this time on: ISO 8601 (2026-06-01T00:00:00Z)."),
            "until": _string("Only before this time: ISO 8601 (until is exclusive)."),
        },
        ("query",),
        fixed={"explain": True},
        shape=_search_items,
    ),
    Tool(
        "get_context",
        "context",
        "Get the soul's context block as text: identity, summary, goals, gut feelings, "
        "known gaps, due tasks and memories recalled for the query. Use it at the start of "
        "a conversation or a new topic and put the text in front of your reasoning.",
        {
            "query": _string("The current topic or user message, to recall for."),
            "session": _string("The conversation, so recalls count against its budget."),
        },
        shape=_context_text,
    ),
    Tool(
        "forget",
        "forget",
        "Delete events from the soul's memory for good, with everything derived from "
        "them. Give exactly one of ref or match. Use it when the user asks you to forget "
        "something; returns how much was deleted.",
        {
            "ref": _string("Delete the event stored with this ref."),
            "match": _string("Delete every event whose text contains this (any case)."),
        },
    ),
    Tool(
        "check_confidence",
        "confidence",
        "How well the soul knows a topic: confident, uncertain or low_confidence, with "
        "a score and the known gaps. Use it before stating something as fact.",
        {"topic": _string("The topic, in a few words.")},
        ("topic",),
    ),
    Tool(
        "set_reminder",
        "task.add",
        "Add a task with a due time to the soul's TASKS.md; when it falls due the soul "
        "is woken and the task shows in its context. Use it for anything promised for later.",
        {
            "text": _string("What to do."),
            "at": _string("When: ISO 8601, e.g. 2026-11-29T09:30:00Z (UTC when no zone)."),
        },
        ("text", "at"),
    ),
    Tool(
        "draw_lightning",
        "lightning",
        "Draw the soul's conclusion cards at random and judge them against a topic, to find "
        "a connection nobody asked for; most draws stay silent (not presented). Use it when "
        "stuck or looking for a fresh angle; the user's verdicts go to give_verdict.",
        {
            "topic": _string("What the cards are judged against, e.g. the current problem."),
            "seed": _integer("Reproduce an earlier draw: its seed (from the ledger)."),
        },
    ),
    Tool(
        "give_verdict",
        "verdict",
        "Record the user's verdict on one card of a presented draw (from draw_lightning); "
        "one per card. A strong approval points at a card line and makes the card drawn more.",
        {
            "draw": _integer("The draw's number."),
            "card": _integer("The card's number."),
            "verdict": _string(
                "How useful the card was here.",
                enum=["strong", "approve", "neutral", "oppose"],
            ),
            "line": _integer("For strong: the card line (conclusion number) it points at."),
        },
        ("draw", "card", "verdict"),
    ),
    Tool(
        "list_claims",
        "claims",
        "The facts, rules and claims the soul holds (with ids c7, r3), and its unanswered "
        "questions. Use it to check what is known before asking the user again.",
        {"all": {"type": "boolean", "description": "Superseded and retracted ones too."}},
    ),
    Tool(
        "update_goal",
        "goal.update",
        "Create or update a goal the user (or you) means to bring about. Actions: new, "
        "progress (with a note), change, achieve, abandon, pause, resume. Without goal_id "
        "the goal is found by its statement.",
        {
            "action": _string(
                "What happens to the goal.",
                enum=["new", "progress", "change", "achieve", "abandon", "pause", "resume"],
            ),
            "statement": _string("The goal (new, change), or words to find it by."),
            "goal_id": _integer("The goal's number (3 for g3), instead of its statement."),
            "speaker": _string("Who holds the goal (default: user)."),
            "domain": _string("Its area, e.g. work, health."),
            "priority": _integer("1-5, 5 highest.", minimum=1, maximum=5),
            "triggers": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Phrases that should bring the goal to mind (1-2).",
            },
            "note": _string("A progress note (required for progress)."),
        },
        ("action",),
    ),
    Tool(
        "why",
        "why",
        "Why a context said what it said: the items it injected, their scores and "
        "reasons. Use it when a context surprised you.",
        {"hash": _string("The context's hash (a prefix will do); default: the latest.")},
    ),
    Tool(
        "memory_map",
        "map",
        "A map of the soul's memory: situations, goals, archive and evidence, by id. "
        "Use it to see what is there, then read_memory for details.",
        {"budget": _integer("Characters (200-20000, default 2000).", minimum=200, maximum=20000)},
    ),
    Tool(
        "read_memory",
        "memory.read",
        "Read one item in full by the id a search, map or context shows.",
        {"id": _string("The item's id: m12, e5, s2, c7, r3, g1 or q4.")},
        ("id",),
    ),
    Tool(
        "list_souls",
        "soul.list",
        "The souls this daemon runs and their state; each other tool takes one as soul.",
        per_soul=False,
    ),
)

_SOUL = _string("The soul (memory) to work on; list_souls names them.")


def tool_list(soul: str | None) -> list[types.Tool]:
    """The tools as MCP lists them: bound to ``soul``, or each taking a ``soul``."""
    tools = []
    for tool in TOOLS:
        if soul is not None and not tool.per_soul:
            continue
        properties = dict(tool.properties)
        required = list(tool.required)
        if soul is None and tool.per_soul:
            properties = {"soul": _SOUL, **properties}
            required.insert(0, "soul")
        schema: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
        }
        if required:
            schema["required"] = required
        tools.append(types.Tool(name=tool.name, description=tool.description, input_schema=schema))
    return tools


def _params(tool: Tool, arguments: Mapping[str, Any], soul: str | None) -> dict[str, Any]:
    """The socket params for a call. Raises InvalidParams.

    Only the tool's own arguments pass, whatever the socket would accept: ``forget``
    takes no ``all`` here, and a server bound to a soul takes no ``soul``."""
    allowed = set(tool.properties) | ({"soul"} if soul is None and tool.per_soul else set())
    unknown = sorted(set(arguments) - allowed)
    if unknown:
        bound = f" (this server works on soul {soul!r})" if soul and "soul" in unknown else ""
        raise InvalidParams(
            f"{tool.name} does not take {', '.join(unknown)}{bound}; "
            f"it takes {', '.join(sorted(allowed)) or 'no arguments'}"
        )
    missing = [key for key in ("soul", *tool.required) if key in allowed and key not in arguments]
    if missing:
        raise InvalidParams(f"{tool.name} needs {', '.join(missing)}")
    params = {key: value for key, value in arguments.items() if value is not None}
    if soul is not None and tool.per_soul:
        params["soul"] = soul
    return {**params, **tool.fixed}


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def _server(socket: Path, soul: str | None) -> Server[Any]:
    tools = {tool.name: tool for tool in TOOLS if soul is None or tool.per_soul}
    listed = tool_list(soul)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = tools.get(params.name)
        if tool is None:
            return _error(f"unknown tool {params.name!r}; tools: {', '.join(tools)}")
        try:
            request = _params(tool, params.arguments or {}, soul)
            async with Client.connect(socket) as client:
                result = await client.call(tool.method, request)
        except SoupdError as error:
            return _error(f"{error.code}: {error.message}")
        text, structured = tool.shape(result)
        return types.CallToolResult(
            content=[types.TextContent(text=text)],
            structured_content=structured if isinstance(structured, dict) else None,
        )

    where = f"soul {soul!r}" if soul else "any soul (each tool takes soul)"
    return Server(
        "soupd",
        version=importlib.metadata.version("soupd"),
        instructions=f"A living memory for {where}, served by the soupd daemon.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve(socket: Path, soul: str | None = None) -> None:
    """Serve MCP on stdin/stdout until stdin closes; calls go to the daemon at ``socket``."""
    server = _server(socket, soul)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
