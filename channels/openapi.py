"""The HTTP API's OpenAPI 3.1 document, made from the socket's method table.

Nothing here is written per method: each method's request body is the JSON Schema of
its params Struct (``msgspec.json.schema_components``), its 200 answer that of its
result Struct when the method table names one (an object otherwise), and its
operationIds come from its name (``rpc_memory_get``, ``soul_memory_get``), so a method
added to :mod:`channels.methods` is an HTTP route, documented, without a line changed
here.
The routes (one home for their paths, which :mod:`channels.http_api` serves):

* ``POST /v1/rpc/<method>``: any method; the body is its params, as on the socket.
* ``POST /v1/souls/{soul}/<method>``: a method that takes ``soul``, named by the path
  (the body may leave it out); ``POST /v1/souls/{soul}/events`` is ``event.push``.
* ``GET /v1/souls/{soul}/subscribe`` and ``GET /v1/subscribe``: ``subscribe`` as
  Server-Sent Events.
* ``POST /v1/webhooks/{channel}``: a webhook channel's deliveries, as on its own port
  (its signature, no bearer token).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from supervisor.output_kinds import OUTPUT_KINDS

__all__ = [
    "EVENTS",
    "OPENAPI",
    "RPC",
    "SOUL_METHOD",
    "SOUL_SUBSCRIBE",
    "SUBSCRIBE",
    "WEBHOOK",
    "openapi",
    "takes_soul",
]

OPENAPI = "/openapi.json"
RPC = "/v1/rpc/{method}"
SOUL_METHOD = "/v1/souls/{soul}/{method}"
EVENTS = "/v1/souls/{soul}/events"
SOUL_SUBSCRIBE = "/v1/souls/{soul}/subscribe"
SUBSCRIBE = "/v1/subscribe"
WEBHOOK = "/v1/webhooks/{channel}"

_REF = "#/components/schemas/{name}"
_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]+")
# The answer of a method whose result is a plain table (no Struct says more).
_OBJECT = {"type": "object"}
_ERROR = {
    "description": "an error: the soupd code (what clients branch on) and what to do",
    "content": {"application/json": {"schema": {"$ref": _REF.format(name="Error")}}},
}
_ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            "required": ["code", "message"],
        }
    },
    "required": ["error"],
}
# The statuses an error may come with (channels.http_api maps the codes onto them).
_STATUSES = {
    "400": "invalid params or body (invalid_params, bad_frame)",
    "401": "no or wrong bearer token",
    "404": "unknown soul, method or item (unknown_soul, unknown_method, not_found)",
    "408": "the body did not arrive in time",
    "413": "the body is over [socket] max_frame_bytes",
    "422": "refused by the hygiene gate (hygiene.<rule>)",
    "429": "the soul is busy (busy)",
    "503": "the soul is unavailable, restarting or shutting down (soul_unavailable)",
    "504": "no answer within [http] request_timeout (timeout)",
    "507": "the soul's disk is full (disk_full)",
}
_SSE = {
    "description": (
        "text/event-stream: first an event `subscribed`, then one event `output` per "
        "output (data: {soul, kind, ts, payload}); `overflow` outputs say how many were "
        "dropped while the reader was slow; a comment every 15 s keeps the stream open"
    ),
    "content": {"text/event-stream": {"schema": {"type": "string"}}},
}


def takes_soul(params: type[Any]) -> bool:
    """Whether a params Struct has a required ``soul`` string (a per-soul route)."""
    fields = {f.name: f for f in msgspec.structs.fields(params)}
    soul = fields.get("soul")
    return soul is not None and soul.required and soul.type is str


def openapi(
    version: str,
    methods: Mapping[str, type[Any]],
    subscribe: type[Any],
    results: Mapping[str, type[Any]] | None = None,
) -> Any:
    """The document for ``methods`` (name -> params Struct; ``subscribe`` excluded), the
    200 answer of each method in ``results`` (name -> result Struct) described by its
    Struct's schema, of every other one as an object."""
    names = sorted(methods)
    typed = sorted(results or {})
    refs, components = msgspec.json.schema_components(
        [methods[name] for name in names] + [subscribe] + [(results or {})[name] for name in typed],
        schema_hook=_schema_hook,
        ref_template=_REF,
    )
    by_name = dict(zip(names, refs[: len(names)], strict=True))
    sub = refs[len(names)]["$ref"].rsplit("/", 1)[1]
    answers = dict(zip(typed, refs[len(names) + 1 :], strict=True))
    components["Error"] = _ERROR_SCHEMA
    paths: dict[str, Any] = {
        OPENAPI: {
            "get": {
                "summary": "this document",
                "operationId": "openapi",
                "security": [],
                "responses": {"200": {"description": "the OpenAPI document"}},
            }
        }
    }
    for name in names:
        answer = answers.get(name, _OBJECT)
        operation = _operation(name, by_name[name], answer, _identifier("rpc", name))
        paths[RPC.format(method=name)] = {"post": operation}
    for name in names:
        if not takes_soul(methods[name]):
            continue
        title = by_name[name]["$ref"].rsplit("/", 1)[1]
        body = f"{title}.InPath"
        components[body] = _without_soul(components[title])
        in_path = {"$ref": _REF.format(name=body)}
        answer = answers.get(name, _OBJECT)
        operation = _operation(name, in_path, answer, _identifier("soul", name))
        operation["parameters"] = [_SOUL]
        paths[SOUL_METHOD.format(soul="{soul}", method=name)] = {"post": operation}
        if name == "event.push":
            alias = {**operation, "operationId": "soul_events"}
            paths[EVENTS] = {"post": alias}
    query = [
        _query(
            "kinds",
            "only outputs of these kinds, comma-separated (all when absent): "
            + ", ".join(OUTPUT_KINDS),
        ),
        _query("buffer", "outputs held while the reader is slow", "integer"),
    ]
    paths[SOUL_SUBSCRIBE] = {"get": _stream("soul_subscribe", [_SOUL, *query], sub)}
    souls = _query("souls", "only outputs of these souls, comma-separated (all when absent)")
    paths[SUBSCRIBE] = {"get": _stream("subscribe", [souls, *query], sub)}
    paths[WEBHOOK] = {"post": _WEBHOOK}
    ids = [op["operationId"] for path in paths.values() for op in path.values()]
    if len(ids) != len(set(ids)):  # two method names made one identifier
        raise ValueError(f"operationIds collide: {sorted(i for i in ids if ids.count(i) > 1)}")
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "soupd",
            "version": version,
            "description": (
                "The soupd socket's methods over HTTP: JSON in and out, the same params, "
                "results and error codes. Send `Authorization: Bearer <token>`, the "
                "token being the content of the daemon's token file (see the README)."
            ),
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


_WEBHOOK = {
    "summary": "a delivery to a webhook channel, as on the channel's own port",
    "description": (
        "Signed with the channel's secret (X-Hub-Signature-256: sha256=<HMAC-SHA256 of the "
        "body>) unless the channel allows unsigned requests; no bearer token. A GitHub "
        "delivery (X-GitHub-Event) or one event object. 200 accepted (what each soul made "
        "of it), 202 no event, 400, 401 bad signature, 413 over max_body, 503 not "
        "acknowledged (send it again). Errors are {error: {code, message}}, as on every route."
    ),
    "operationId": "webhook",
    "security": [],
    "parameters": [
        {"name": "channel", "in": "path", "required": True, "schema": {"type": "string"}}
    ],
    "requestBody": {"content": {"application/json": {"schema": {}}}},
    "responses": {
        status: {"description": why}
        for status, why in (
            ("200", "stored, duplicate or dropped by each soul"),
            ("202", "a delivery that is no event"),
            ("400", "malformed"),
            ("401", "missing or wrong signature"),
            ("404", "no webhook channel of that name"),
            ("413", "over the channel's max_body"),
            ("503", "a soul did not acknowledge it; send it again"),
        )
    },
}
_SOUL = {"name": "soul", "in": "path", "required": True, "schema": {"type": "string"}}


def _query(name: str, description: str, kind: str = "string") -> dict[str, Any]:
    return {"name": name, "in": "query", "description": description, "schema": {"type": kind}}


def _identifier(prefix: str, method: str) -> str:
    """An operationId: ``rpc_memory_get`` for the method ``memory.get`` (letters,
    digits and ``_`` only, as code generators want them)."""
    return f"{prefix}_{_NOT_IDENTIFIER.sub('_', method)}"


def _schema_hook(kind: type[Any]) -> dict[str, Any]:
    """The schema of a type msgspec has none for: a field typed ``object`` holds any
    JSON value."""
    if kind is object:
        return {"description": "any JSON value"}
    raise NotImplementedError


def _operation(method: str, body: Any, answer: Any, operation_id: str) -> dict[str, Any]:
    return {
        "summary": f"the socket method {method}",
        "operationId": operation_id,
        "requestBody": {"required": False, "content": {"application/json": {"schema": body}}},
        "responses": {
            "200": {
                "description": f"the result of {method}, as the socket gives it",
                "content": {"application/json": {"schema": answer}},
            },
            **{status: {**_ERROR, "description": why} for status, why in _STATUSES.items()},
        },
    }


def _stream(operation_id: str, parameters: list[Any], params: str) -> dict[str, Any]:
    return {
        "summary": f"the socket's subscribe ({params}) as Server-Sent Events",
        "operationId": operation_id,
        "parameters": parameters,
        "responses": {"200": _SSE, "400": _ERROR, "401": _ERROR, "404": _ERROR},
    }


def _without_soul(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A params schema for a body whose soul is in the path."""
    properties = {k: v for k, v in schema.get("properties", {}).items() if k != "soul"}
    required = [k for k in schema.get("required", []) if k != "soul"]
    trimmed = {**schema, "properties": properties, "title": f"{schema.get('title')} (in path)"}
    if required:
        trimmed["required"] = required
    else:
        trimmed.pop("required", None)
    return trimmed
