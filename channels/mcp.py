"""``soupd mcp``: the daemon's socket methods as MCP tools, served over stdio.

A proxy, not a second writer: it never opens a soul's database. Each tool call is one
socket call on a fresh connection, so the server outlives the daemon (a call while
the daemon is down is a tool error saying to start it; the next call after
``soupd start`` works). A daemon error reply becomes a tool error (``isError``) that
carries the daemon's code and message unchanged. Bound to one soul (``--soul``), it
starts only once the daemon has confirmed that soul (:func:`check_soul`): an unknown
soul, or no daemon to ask, ends it before it serves anything.

Every tool says what it does to the soul (``readOnlyHint``, ``destructiveHint``,
``idempotentHint``) and the shape of its structured result (``outputSchema``); a soul's
context and memory map are also resources (``soupd://SOUL/context``,
``soupd://SOUL/map``), and the server's instructions tell an agent how to use it all.

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
from mcp.shared.exceptions import MCPError

from channels.client import Client
from souls.messages import memory_id
from supervisor.errors import DaemonNotRunning, InvalidParams, SoupdError, UnknownSoul

__all__ = ["INSTRUCTIONS", "TOOLS", "Tool", "check_soul", "serve", "tool_list"]

# JSON-RPC error of a resource the server does not have (MCP's resources/read).
RESOURCE_NOT_FOUND = -32002

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


def _labelled(item: Mapping[str, Any]) -> dict[str, Any]:
    """A memory as the socket gives it, its id the label the other tools show (m12)."""
    return {**item, "id": f"m{item['id']}"}


def _memory_page(result: Any) -> tuple[str, Any]:
    return _as_json({"items": [_labelled(i) for i in result["items"]], **_rest(result, "items")})


def _memory_one(result: Any) -> tuple[str, Any]:
    return _as_json(_labelled(result))


def _memory_updated(result: Any) -> tuple[str, Any]:
    return _as_json({**result, "id": f"m{result['id']}", "replaced": f"m{result['replaced']}"})


def _rest(result: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    return {key: value for key, value in result.items() if key not in keys}


def _string(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _integer(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "description": description, **extra}


def _boolean(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}


# Output schemas: the keys a result always has, typed; more keys may come (a result
# grows fields over releases), so objects stay open.
_INT: dict[str, Any] = {"type": "integer"}
_NUM: dict[str, Any] = {"type": "number"}
_STR: dict[str, Any] = {"type": "string"}
_BOOL: dict[str, Any] = {"type": "boolean"}
_OPT_STR: dict[str, Any] = {"type": ["string", "null"]}
_OPT_INT: dict[str, Any] = {"type": ["integer", "null"]}


def _array(items: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": dict(items)}


def _object(**properties: Mapping[str, Any]) -> dict[str, Any]:
    """An object with these keys, all required."""
    return {
        "type": "object",
        "properties": {key: dict(value) for key, value in properties.items()},
        "required": list(properties),
    }


_MEMORY = _object(
    id=_STR,
    kind=_STR,
    text=_STR,
    salience=_NUM,
    created=_NUM,
    hidden_at={"type": ["number", "null"]},
    event_id=_OPT_INT,
    ref=_OPT_STR,
    sender=_OPT_STR,
    session=_OPT_STR,
    ts={"type": ["number", "null"]},
)
_MEMORY_ID = {
    "type": ["string", "integer"],
    "description": "The memory's id as search and list_memories show it (m12), or 12.",
}
_CLAIM = _object(
    id=_INT, type=_STR, subject=_STR, slot=_OPT_STR, value=_STR, state=_STR, confidence=_STR
)
_GOAL = _object(
    id=_INT,
    speaker=_STR,
    statement=_STR,
    domain=_STR,
    priority=_INT,
    state=_STR,
    triggers=_array(_STR),
    progress=_array(_object(at=_NUM, text=_STR)),
)
_FORGOTTEN = _object(
    events=_INT,
    memories=_INT,
    edges=_INT,
    summaries=_INT,
    markers=_INT,
    card_lines=_INT,
    claims=_INT,
    questions=_INT,
    scrubbed=_INT,
    goals=_INT,
    dry_run=_BOOL,
)


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
    # What it does to the soul (MCP's hints): only reads; may remove or overwrite what
    # the soul holds; repeating the same call changes nothing more.
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    # JSON Schema of its structured result (``structuredContent``).
    output: Mapping[str, Any] | None = None
    # Arguments naming a memory: a label (m12) or its number, sent as the number.
    memory_ids: tuple[str, ...] = ()


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
        output=_object(event_id=_OPT_INT, status=_STR),
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
        read_only=True,
        output=_object(
            items=_array(
                _object(
                    id=_STR,
                    text=_STR,
                    relevance=_NUM,
                    why=_array(_STR),
                    refs=_array(_STR),
                )
            )
        ),
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
        read_only=True,
        output=_object(text=_STR, hash=_STR),
    ),
    Tool(
        "forget",
        "forget",
        "DESTRUCTIVE, cannot be undone: delete events from the soul's memory for good, "
        "with everything derived from them (memories, claims, goals, summaries, card "
        "lines). Give exactly one of ref, id or match. Use it only when the user asks you to "
        "forget something; call it with dry_run first to see how much would go, tell the "
        "user, then call it again without dry_run. Returns the counts.",
        {
            "ref": _string("Delete the event stored with this ref."),
            "id": _MEMORY_ID | {"description": "Delete this memory (m12) and its event."},
            "match": _string("Delete every event whose text contains this (any case)."),
            "dry_run": _boolean("Only count what would be deleted; delete nothing."),
        },
        destructive=True,
        idempotent=True,
        output=_FORGOTTEN,
        memory_ids=("id",),
    ),
    Tool(
        "check_confidence",
        "confidence",
        "How well the soul knows a topic: confident, uncertain or low_confidence, with "
        "a score and the known gaps. Use it before stating something as fact.",
        {"topic": _string("The topic, in a few words.")},
        ("topic",),
        read_only=True,
        output=_object(
            topic=_STR,
            state={"type": "string", "enum": ["confident", "uncertain", "low_confidence"]},
            score=_NUM,
            gaps=_array({}),
        ),
    ),
    Tool(
        "set_reminder",
        "task.add",
        "Add a task with a due time to the soul's TASKS.md; when it falls due the soul "
        "is woken and the task shows in its context. Use it for anything promised for later. "
        "Setting the same text and time again adds nothing (existing: true).",
        {
            "text": _string("What to do."),
            "at": _string("When: ISO 8601, e.g. 2026-11-29T09:30:00Z (UTC when no zone)."),
        },
        ("text", "at"),
        idempotent=True,
        output=_object(
            pending=_array(_object(key=_STR, due=_NUM, text=_STR)),
            errors=_array({}),
            fired=_array({}),
            key=_STR,
            existing=_BOOL,
        ),
    ),
    Tool(
        "draw_lightning",
        "lightning",
        "Draw the soul's conclusion cards at random and judge them against a topic, to find "
        "a connection nobody asked for; most draws stay silent (not presented). Use it when "
        "stuck or looking for a fresh angle; show a presented draw to the user and pass "
        "their verdicts to give_verdict.",
        {
            "topic": _string("What the cards are judged against, e.g. the current problem."),
            "seed": _integer("Reproduce an earlier draw: its seed (from the ledger)."),
        },
        output=_object(draw=_INT, seed=_INT, topic=_STR, cards=_array(_INT), presented=_BOOL),
    ),
    Tool(
        "give_verdict",
        "verdict",
        "Record the USER's verdict on one card of a presented draw (from draw_lightning); "
        "one per card. Verdicts belong to the user: ask them and pass on what they said; "
        "never judge a card yourself or guess their verdict. A strong approval points at a "
        "card line and makes the card drawn more.",
        {
            "draw": _integer("The draw's number."),
            "card": _integer("The card's number."),
            "verdict": _string(
                "The user's verdict: how useful the card was here.",
                enum=["strong", "approve", "neutral", "oppose"],
            ),
            "line": _integer("For strong: the card line (conclusion number) it points at."),
        },
        ("draw", "card", "verdict"),
        output=_object(draw=_INT, card=_INT, verdict=_STR, line=_OPT_INT),
    ),
    Tool(
        "list_claims",
        "claims",
        "The facts, rules and claims the soul holds (with ids c7, r3), and its unanswered "
        "questions. Use it to check what is known before asking the user again.",
        {"all": _boolean("Superseded and retracted ones too.")},
        read_only=True,
        output=_object(claims=_array(_CLAIM), questions=_array({})),
    ),
    Tool(
        "add_claim",
        "claim.add",
        "State a fact, preference or rule the user told you, as a claim (c12) the soul "
        "holds until it is corrected or retracted. A claim on the same subject and slot "
        "as an active one supersedes it.",
        {
            "value": _string("The claim, in plain words (e.g. 'prefers tea')."),
            "type": _string(
                "What sort of claim (default fact).",
                enum=["fact", "rule", "event", "decision", "preference", "experience", "identity"],
            ),
            "slot": _string(
                "What it is about, so a later claim on it supersedes this one (e.g. location, "
                "employer); an unknown slot is refused with the list."
            ),
            "subject": _string("Whom it is about (default: user)."),
            "confidence": _string("How sure (default high).", enum=["high", "medium", "low"]),
        },
        ("value",),
        output=_object(claim=_CLAIM, outcome=_STR),
    ),
    Tool(
        "correct_claim",
        "claim.correct",
        "Correct a claim the soul holds (when the user says it is wrong): the old claim is "
        "closed and a new one with the corrected value replaces it.",
        {
            "id": _integer("The claim's number (7 for c7)."),
            "value": _string("The corrected value."),
        },
        ("id", "value"),
        destructive=True,
        output=_object(claim=_CLAIM, closed=_array(_INT)),
    ),
    Tool(
        "retract_claim",
        "claim.retract",
        "Retract a claim (when the user says it no longer holds or never did): it stops "
        "being used; list_claims with all shows it as retracted.",
        {"id": _integer("The claim's number (7 for c7).")},
        ("id",),
        destructive=True,
        idempotent=True,
        output=_object(claim=_CLAIM, closed=_array(_INT)),
    ),
    Tool(
        "list_goals",
        "goals",
        "The goals, plans and values the soul knows of (g3...), with their state, "
        "priority and progress notes.",
        read_only=True,
        output=_object(goals=_array(_GOAL)),
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
                "description": "Phrases that should bring the goal to mind (1-2; "
                "required from priority 3 up).",
            },
            "note": _string("A progress note (required for progress)."),
        },
        ("action",),
        output=_object(outcome=_STR, goal=_GOAL),
    ),
    Tool(
        "list_persons",
        "persons",
        "The people the soul knows and the accounts (CHANNEL:ID) linked to each.",
        read_only=True,
        output=_object(persons=_array(_object(id=_INT, name=_STR, identities=_array(_STR)))),
    ),
    Tool(
        "link_person",
        "person.link",
        "Link an account to a person (e.g. slack:U123 is Ann), so what either account said "
        "counts as that person's: their claims and goals are merged.",
        {
            "person": _string("The person's name."),
            "identity": _string("The account as CHANNEL:ID, e.g. slack:U123."),
        },
        ("person", "identity"),
        idempotent=True,
        output=_object(person=_STR, identity=_STR, moved_from=_OPT_STR),
    ),
    Tool(
        "why",
        "why",
        "Why a context said what it said: the items it injected, their scores and "
        "reasons. Use it when a context surprised you.",
        {"hash": _string("The context's hash (a prefix will do); default: the latest.")},
        read_only=True,
        output=_object(
            hash=_STR, items=_array(_object(id=_STR, kind=_STR, score=_NUM, reason=_STR))
        ),
    ),
    Tool(
        "memory_map",
        "map",
        "A map of the soul's memory: situations, goals, archive and evidence, by id. "
        "Use it to see what is there, then read_memory for details.",
        {"budget": _integer("Characters (200-20000, default 2000).", minimum=200, maximum=20000)},
        read_only=True,
        output=_object(map=_STR),
    ),
    Tool(
        "read_memory",
        "memory.read",
        "Read one item in full by the id a search, map or context shows.",
        {"id": _string("The item's id: m12, e5, s2, c7, r3, g1 or q4.")},
        ("id",),
        read_only=True,
        output={"type": "object"},  # its keys depend on the kind of item
    ),
    Tool(
        "list_memories",
        "memory.list",
        "Page through the soul's memories, newest first, each with its id (m12), text, who "
        "said it and when; narrow by sender, session, kind or time. Pass next_cursor back "
        "as cursor for the next page (null after the last). To find memories on a topic, "
        "search instead.",
        {
            "cursor": _string("The next_cursor of the page before; omit for the newest."),
            "limit": _integer("Memories per page (default 50).", minimum=1, maximum=1000),
            "sender": _string("Only what this sender (or the person linked to them) said."),
            "session": _string("Only memories of this conversation."),
            "kind": _string("Only memories of this kind (observation, message...)."),
            "since": _string("Only from this time on: ISO 8601."),
            "until": _string("Only before this time: ISO 8601 (exclusive)."),
        },
        shape=_memory_page,
        read_only=True,
        output=_object(items=_array(_MEMORY), next_cursor=_OPT_STR),
    ),
    Tool(
        "get_memory",
        "memory.get",
        "One memory by id (m12), hidden by decay or not, with the event it came from.",
        {"id": _MEMORY_ID},
        ("id",),
        shape=_memory_one,
        read_only=True,
        output=_MEMORY,
        memory_ids=("id",),
    ),
    Tool(
        "update_memory",
        "memory.update",
        "Correct a memory's text (when the user says it is wrong): the old memory and "
        "everything derived from it are forgotten and the corrected text is stored in its "
        "place, with the same sender, time and ref; returns the new id. The old text cannot "
        "be brought back.",
        {"id": _MEMORY_ID, "text": _string("The corrected text, in full.")},
        ("id", "text"),
        shape=_memory_updated,
        destructive=True,
        output=_object(id=_STR, event_id=_INT, replaced=_STR, forgot=_FORGOTTEN),
        memory_ids=("id",),
    ),
    Tool(
        "delete_memory",
        "memory.delete",
        "DESTRUCTIVE, cannot be undone: delete one memory (m12) and its event for good, "
        "with everything derived from them. Only when the user asks; returns the counts.",
        {"id": _MEMORY_ID},
        ("id",),
        destructive=True,
        idempotent=True,
        output=_FORGOTTEN,
        memory_ids=("id",),
    ),
    Tool(
        "create_soul",
        "soul.create",
        "Create a soul (a separate memory) and start it: its settings file is written to "
        "the daemon's config folder. Give config as a table of its TOML settings (e.g. "
        '{"lightning": {"n": 4}}) or toml as the file\'s text, or neither for defaults. '
        "A name whose soul was deleted with its memories kept is refused unless reopen is "
        "true (then the soul starts on those memories).",
        {
            "soul": _string("The new soul's name (letters, digits, - and _)."),
            "config": {"type": "object", "description": "Its settings, as TOML tables."},
            "toml": _string("Its settings file's text, instead of config."),
            "reopen": _boolean(
                "Start it on the memories a deleted soul of that name kept (default false)."
            ),
        },
        ("soul",),
        per_soul=False,
        output=_object(soul=_STR, file=_STR, state=_STR),
    ),
    Tool(
        "delete_soul",
        "soul.delete",
        "Stop a soul and remove its settings file. Its memories are kept on disk (creating "
        "it again with reopen brings them back) unless purge is true: then they are deleted "
        "for good, also those a soul deleted earlier kept. Only when the user asks.",
        {
            "soul": _string("The soul to delete."),
            "purge": _boolean("Also delete its memories, for good (default false)."),
        },
        ("soul",),
        per_soul=False,
        destructive=True,
        idempotent=True,
        output=_object(soul=_STR, stopped=_BOOL, purged=_BOOL),
    ),
    Tool(
        "list_souls",
        "soul.list",
        "The souls this daemon runs and their state; each other tool takes one as soul.",
        per_soul=False,
        read_only=True,
        output=_object(souls=_array(_object(name=_STR, state=_STR))),
    ),
)

INSTRUCTIONS = """\
soupd is a long-term memory ({where}). How to use it:
- At the start of a conversation or a new topic, call get_context with the user's \
message (or read the resource soupd://SOUL/context) and put its text in front of your \
reasoning. Items carry ids: m12 a memory, c5 a claim, g3 a goal, q2 a question.
- Before answering anything that may depend on earlier conversations, search; \
read_memory gives an item in full, memory_map (or soupd://SOUL/map) shows what is there, \
list_memories pages through every memory.
- Store what is worth remembering with add_memory (give a ref, e.g. the message id, so \
a retry stores it once). Facts and preferences the user states go in with add_claim; \
when the user corrects one, correct_claim or retract_claim, never a second add; a \
memory that is wrong is corrected with update_memory.
- Check check_confidence before stating something as fact; say you do not know rather \
than guess.
- Goals: list_goals, update_goal (new, progress, achieve...). People: link_person ties \
an account (slack:U1) to a person.
- forget and delete_memory delete for good: only when the user asks; call forget with \
dry_run first and tell the user what would go before you call it for real.
- draw_lightning looks for an unasked-for connection; verdicts on its cards belong \
to the user: ask them, then give_verdict with their answer.
- Tools that change nothing are marked readOnlyHint; destructive ones destructiveHint.
"""

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
        annotations = types.ToolAnnotations(
            title=tool.name.replace("_", " ").capitalize(),
            read_only_hint=tool.read_only,
            # Meaningful only for a tool that writes; said for every tool all the same.
            destructive_hint=tool.destructive,
            idempotent_hint=tool.idempotent or tool.read_only,
            # A soul's memory is a closed world: no tool reaches outside the daemon.
            open_world_hint=False,
        )
        tools.append(
            types.Tool(
                name=tool.name,
                description=tool.description,
                input_schema=schema,
                output_schema=dict(tool.output) if tool.output is not None else None,
                annotations=annotations,
            )
        )
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
    for key in tool.memory_ids:
        if key in params:
            params[key] = memory_id(params[key])
    if soul is not None and tool.per_soul:
        params["soul"] = soul
    return {**params, **tool.fixed}


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


# A soul's resources: what the tool of the same name gives, read without arguments.
_RESOURCES = {
    "context": (
        "context",
        "text/markdown",
        "The soul's context block (identity, summary, goals, gut feelings, known gaps, "
        "due tasks), as get_context gives it without a query.",
    ),
    "map": (
        "map",
        "text/plain",
        "The map of the soul's memory (situations, goals, archive, evidence, by id), "
        "as memory_map gives it.",
    ),
}


def _resource_uri(soul: str, name: str) -> str:
    return f"soupd://{soul}/{name}"


def _resources(soul: str) -> list[types.Resource]:
    return [
        types.Resource(
            name=f"{soul}/{name}",
            title=f"{name.capitalize()} of {soul}",
            uri=_resource_uri(soul, name),
            description=description,
            mime_type=mime,
        )
        for name, (_, mime, description) in _RESOURCES.items()
    ]


def _templates() -> list[types.ResourceTemplate]:
    return [
        types.ResourceTemplate(
            name=name,
            title=f"A soul's {name}",
            uri_template=_resource_uri("{soul}", name),
            description=description,
            mime_type=mime,
        )
        for name, (_, mime, description) in _RESOURCES.items()
    ]


def _parse_uri(uri: str, soul: str | None) -> tuple[str, str]:
    """The soul and resource a ``soupd://SOUL/NAME`` URI names. Raises MCPError."""
    rest = uri.removeprefix("soupd://")
    name, _, kind = rest.partition("/")
    if rest == uri or not name or kind not in _RESOURCES:
        raise MCPError(
            RESOURCE_NOT_FOUND,
            f"no resource {uri!r}; resources are soupd://SOUL/context and soupd://SOUL/map",
        )
    if soul is not None and name != soul:
        raise MCPError(
            RESOURCE_NOT_FOUND, f"no resource {uri!r}: this server works on soul {soul!r}"
        )
    return name, kind


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

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        if soul is not None:
            return types.ListResourcesResult(resources=_resources(soul))
        try:
            async with Client.connect(socket) as client:
                souls = (await client.call("soul.list", {}))["souls"]
        except SoupdError:
            # No daemon to ask: the templates still say how to name one.
            return types.ListResourcesResult(resources=[])
        return types.ListResourcesResult(
            resources=[r for entry in souls for r in _resources(entry["name"])]
        )

    async def list_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=_templates())

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        name, kind = _parse_uri(str(params.uri), soul)
        method, mime, _ = _RESOURCES[kind]
        try:
            async with Client.connect(socket) as client:
                result = await client.call(method, {"soul": name})
        except UnknownSoul as error:
            raise MCPError(RESOURCE_NOT_FOUND, f"{error.code}: {error.message}") from None
        except SoupdError as error:
            raise MCPError(types.INTERNAL_ERROR, f"{error.code}: {error.message}") from None
        text = result["text"] if kind == "context" else result["map"]
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=params.uri, mime_type=mime, text=text)]
        )

    where = f"this server works on soul {soul!r}" if soul else "each tool takes a soul"
    return Server(
        "soupd",
        version=importlib.metadata.version("soupd"),
        instructions=INSTRUCTIONS.format(where=where).replace("SOUL", soul or "SOUL"),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


async def check_soul(socket: Path, soul: str) -> None:
    """Refuse to serve a soul the daemon does not have: UnknownSoul. A daemon that is
    not running cannot say, so nothing is served then either: DaemonNotRunning (a
    server bound to a soul nobody checked would fail each call, maybe for good)."""
    try:
        async with Client.connect(socket) as client:
            souls = (await client.call("soul.list", {}))["souls"]
    except DaemonNotRunning as down:
        raise DaemonNotRunning(
            f"soupd mcp --soul {soul}: {down.message}. Soul {soul!r} cannot be checked "
            "while the daemon is down, so nothing is served: start the daemon first, then "
            "the MCP server (or leave --soul out: then each tool call names its soul)"
        ) from None
    names = sorted(entry["name"] for entry in souls)
    if soul not in names:
        error = UnknownSoul(soul)
        error.message = (
            f"soupd mcp --soul {soul}: the daemon runs no soul {soul!r} "
            f"(its souls: {', '.join(names) or 'none'}); pick one of them, or create it "
            f"with `soupd soul create {soul}`"
        )
        raise error


async def serve(socket: Path, soul: str | None = None) -> None:
    """Serve MCP on stdin/stdout until stdin closes; calls go to the daemon at ``socket``.
    With ``soul``, raises before serving: UnknownSoul when the daemon has no such soul,
    DaemonNotRunning when no daemon answers. Without it, a daemon that is down makes
    each call a tool error saying so, and the server serves on until it is up."""
    if soul is not None:
        await check_soul(socket, soul)
    server = _server(socket, soul)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
