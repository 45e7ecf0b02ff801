"""What is wrong with a configuration table, said the same way wherever it is checked.

:func:`problems` lists every problem of a table as a Struct of the configuration, each
key converted alone: ``soupd config check`` shows them all, and loading
(:func:`supervisor.config.convert`: the daemon's start and reload, ``soul.create``)
raises the first. An unknown key names the closest known one and the table's keys
(:func:`unknown_key`); a value of a fixed set that is none of it lists the set.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from supervisor.errors import ConfigError

__all__ = ["explain", "fails", "problems", "unknown_key", "value_problems"]


def unknown_key(key: str, known: Collection[str]) -> str:
    """The problem of ``key``, which is none of ``known``: the closest one and them all."""
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else "check its spelling"
    return f"unknown key; {hint} (keys: {', '.join(known)})"


def explain(message: str) -> tuple[str, str]:
    """Turn msgspec's "… - at `$.a.b`" into (``a.b``, what was expected)."""
    head, _, where = message.partition(" - at `$")
    key = where.rstrip("`").lstrip(".")
    if head.startswith("Object contains unknown field `"):
        field = head.split("`")[1]
        key = f"{key}.{field}" if key else field
        return key, "unknown key; check its spelling against config/*.example.toml"
    return key, head[:1].lower() + head[1:]


def problems(path: Path, data: Any, kind: type[Any], prefix: str = "") -> list[ConfigError]:
    """Every problem of ``data`` as a ``kind`` (a Struct of the configuration): each key
    converted alone, then the table whole when its keys are valid."""
    if not isinstance(data, Mapping):
        return [_problem(path, prefix, kind, data)] if fails(data, kind) else []
    fields = kind.__struct_fields__
    hints = typing.get_type_hints(kind)
    tag_field = kind.__struct_config__.tag_field  # a channel's "kind", checked by its union
    found: list[ConfigError] = []
    for key, value in data.items():
        where = f"{prefix}.{key}" if prefix else key
        if key == tag_field:
            continue
        if key not in fields:
            found.append(ConfigError(str(path), where, unknown_key(key, fields)))
            continue
        found += value_problems(path, where, value, hints[key])
    if not found and fails(data, kind):
        found.append(_problem(path, prefix, kind, data))
    return found


def value_problems(path: Path, where: str, value: Any, kind: Any) -> list[ConfigError]:
    """Every problem of one value at ``where`` as a ``kind`` (a Struct, a tagged union of
    them, a list of either, or a plain type)."""
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct) and isinstance(value, Mapping):
        return problems(path, value, kind, where)
    if (tagged := _tagged(kind, value)) is not None:
        return problems(path, value, tagged, where)
    if typing.get_origin(kind) is list and isinstance(value, list):
        (item,) = typing.get_args(kind)
        return [
            error
            for index, element in enumerate(value)
            for error in value_problems(path, f"{where}[{index}]", element, item)
        ]
    return [_problem(path, where, kind, value)] if fails(value, kind) else []


def _tagged(kind: Any, value: Any) -> type[msgspec.Struct] | None:
    """The member of a tagged union of Structs that a table names by its tag."""
    if not isinstance(value, Mapping):
        return None
    for member in typing.get_args(kind):
        if isinstance(member, type) and issubclass(member, msgspec.Struct):
            config = member.__struct_config__
            if config.tag_field is not None and value.get(config.tag_field) == config.tag:
                return member
    return None


def fails(value: Any, kind: Any) -> bool:
    """Whether ``value`` does not convert to ``kind``."""
    try:
        msgspec.convert(value, kind, strict=True)
    except msgspec.ValidationError:
        return True
    return False


def _problem(path: Path, where: str, kind: Any, value: Any) -> ConfigError:
    try:
        msgspec.convert(value, kind, strict=True)
    except msgspec.ValidationError as exc:
        inner, problem = explain(str(exc))
    else:  # pragma: no cover - only called for a value that fails
        raise AssertionError(where)
    if (choices := _choices(kind)) and not inner:
        problem += f"; use one of {', '.join(map(repr, choices))}"
    key = ".".join(part for part in (where, inner) if part).replace(".[", "[")
    return ConfigError(str(path), key, problem)


def _choices(kind: Any) -> tuple[Any, ...]:
    """The values of a ``Literal`` type (also inside ``X | None``); empty otherwise."""
    if typing.get_origin(kind) is Literal:
        return typing.get_args(kind)
    return tuple(v for arg in typing.get_args(kind) for v in _choices(arg))
