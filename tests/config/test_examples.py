"""The example TOML files in config/ parse, and document every key there is."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import msgspec

from souls.config import SoulConfig
from supervisor.config import DaemonConfig, read_toml

CONFIG = Path(__file__).resolve().parents[2] / "config"


def _keys(kind: Any, prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for field in msgspec.structs.fields(kind):
        path = f"{prefix}{field.name}"
        if isinstance(field.type, type) and issubclass(field.type, msgspec.Struct):
            keys |= _keys(field.type, f"{path}.")
        else:
            keys.add(path)
    return keys


def _documented(path: Path) -> set[str]:
    """Keys set in the file or named in a commented-out ``# key = value`` line."""
    text = path.read_text()
    keys: set[str] = set()
    section = ""

    def walk(table: dict[str, Any], prefix: str) -> None:
        for key, value in table.items():
            if isinstance(value, dict):
                walk(value, f"{prefix}{key}.")
            else:
                keys.add(f"{prefix}{key}")

    walk(tomllib.loads(text), "")
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped.strip("[]") + "."
        elif stripped.startswith("# ") and " = " in stripped:
            name = stripped[2:].split(" = ", 1)[0]
            if name.replace("_", "").isalnum():
                keys.add(section + name)
    return keys


def test_daemon_example_parses_and_covers_every_key() -> None:
    path = CONFIG / "soupd.example.toml"
    assert read_toml(path, DaemonConfig) == DaemonConfig()
    assert _keys(DaemonConfig) <= _documented(path)


def test_soul_example_parses_and_covers_every_key() -> None:
    path = CONFIG / "souls" / "example.toml"
    assert read_toml(path, SoulConfig) == SoulConfig()
    assert _keys(SoulConfig) <= _documented(path)
