"""The OpenAPI document comes from the method table, and error codes map to statuses."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import msgspec
import pytest

from channels.connection import SubscribeParams
from channels.http_errors import status_of
from channels.methods import Methods
from channels.openapi import openapi, takes_soul
from supervisor.registry import Registry


def table(methods: Methods) -> dict[str, type[Any]]:
    return {n: methods.params_of(n) for n in methods.names if n != "subscribe"}


def results(methods: Methods) -> dict[str, type[Any]]:
    typed = {n: methods.result_of(n) for n in methods.names if n != "subscribe"}
    return {n: kind for n, kind in typed.items() if kind is not None}


def test_operation_ids_are_identifiers_and_typed_results_have_their_schema() -> None:
    methods = Methods(Registry(), dict, fault_injection=True)
    document = openapi("0.1.0", table(methods), SubscribeParams, results(methods))
    paths, schemas = document["paths"], document["components"]["schemas"]
    operations = [op for path in paths.values() for op in path.values()]
    ids = [op["operationId"] for op in operations]
    assert all(re.fullmatch(r"[A-Za-z0-9_]+", i) for i in ids), ids
    assert len(ids) == len(set(ids))
    assert paths["/v1/rpc/memory.get"]["post"]["operationId"] == "rpc_memory_get"
    assert paths["/v1/souls/{soul}/memory.get"]["post"]["operationId"] == "soul_memory_get"
    typed = results(methods)
    assert {"event.push", "recall", "context", "memory.get", "forget", "tasks"} <= set(typed)
    for name in table(methods):
        routes = [f"/v1/rpc/{name}", f"/v1/souls/{{soul}}/{name}"]
        for route in (r for r in routes if r in paths):
            answer = paths[route]["post"]["responses"]["200"]["content"]["application/json"]
            if name not in typed:
                assert answer["schema"] == {"type": "object"}, name
                continue
            ref = answer["schema"]["$ref"].rsplit("/", 1)[1]
            assert schemas[ref]["properties"], name
            assert ref == typed[name].__name__, name
    push = schemas["PushResult"]
    assert {"event_id", "salience", "status"} <= set(push["properties"])


def test_every_method_is_a_route_with_its_params_schema() -> None:
    methods = Methods(Registry(), dict)
    document = openapi("0.1.0", table(methods), SubscribeParams)
    msgspec.json.decode(msgspec.json.encode(document))  # plain JSON all through
    paths, schemas = document["paths"], document["components"]["schemas"]
    for name in methods.names:
        if name == "subscribe":
            continue
        body = paths[f"/v1/rpc/{name}"]["post"]["requestBody"]["content"]["application/json"]
        schema = schemas[body["schema"]["$ref"].rsplit("/", 1)[1]]
        assert schema["additionalProperties"] is False, name
        if takes_soul(methods.params_of(name)):
            assert "soul" in schema["required"], name
            assert f"/v1/souls/{{soul}}/{name}" in paths, name
    assert "debug.crash" not in {p.rsplit("/", 1)[1] for p in paths}
    ids = [
        op["operationId"] for path in paths.values() for op in path.values() if "operationId" in op
    ]
    assert len(ids) == len(set(ids))


def test_a_method_added_to_the_table_appears_by_itself() -> None:
    # debug.crash is in the table only with fault injection: nothing else changes.
    methods = Methods(Registry(), dict, fault_injection=True)
    document = openapi("0.1.0", table(methods), SubscribeParams)
    crash = document["paths"]["/v1/souls/{soul}/debug.crash"]["post"]
    ref = crash["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(body["properties"]) == {"reason"}  # the soul is the path's
    assert "/v1/rpc/debug.crash" in document["paths"]


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("invalid_params", 400),
        ("bad_frame", 400),
        ("unauthorized", 401),
        ("unknown_soul", 404),
        ("unknown_method", 404),
        ("not_found", 404),
        ("frame_too_large", 413),
        ("hygiene.credential", 422),
        ("busy", 429),
        ("soul_unavailable", 503),
        ("timeout", 504),
        ("disk_full", 507),
        ("soul_exists", 409),
        ("something_new", 500),
    ],
)
def test_error_codes_map_to_statuses(code: str, status: int) -> None:
    assert status_of(code) == status


def test_the_schemas_say_what_the_methods_accept() -> None:
    """Each schema is valid JSON Schema (2020-12, as OpenAPI 3.1 uses), and a body the
    method takes validates while one it refuses does not."""
    methods = Methods(Registry(), dict)
    document = openapi("0.1.0", table(methods), SubscribeParams, results(methods))
    for schema in document["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)

    def validates(path: str, body: Any) -> bool:
        content = document["paths"][path]["post"]["requestBody"]["content"]
        root = {**content["application/json"]["schema"], "components": document["components"]}
        return jsonschema.Draft202012Validator(root).is_valid(body)

    recall = {"soul": "ada", "query": "boiler", "k": 3, "since": "2026-01-01T00:00:00Z"}
    assert validates("/v1/rpc/recall", recall)
    assert not validates("/v1/rpc/recall", {**recall, "qurey": "typo"})
    assert not validates("/v1/rpc/recall", {"soul": "ada"})
    assert not validates("/v1/rpc/recall", {**recall, "k": "three"})
    # In the path's route the soul is the path's: the body goes without it.
    assert validates("/v1/souls/{soul}/recall", {"query": "boiler"})
    assert not validates("/v1/souls/{soul}/recall", {"query": "boiler", "extra": 1})
    assert validates("/v1/souls/{soul}/events", {"text": "hello", "ref": "m-1"})
    assert validates("/v1/rpc/event.import", {"soul": "ada", "events": [{"text": "a"}]})
