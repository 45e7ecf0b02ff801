"""The layout of the code: the import contracts hold, and each room says what it is.

The contracts live in ``[tool.importlinter]`` of ``pyproject.toml``; ``lint-imports`` checks
them here, so CI fails on an import that crosses a layer. The other tests keep the rooms
honest: every subpackage of :mod:`souls` has a docstring and an ``__all__`` naming the
modules other rooms import, and nothing new lands flat in ``souls/``.
"""

from __future__ import annotations

import importlib
import pkgutil
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

import souls

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
# What may stay flat in souls/: the actor's vocabulary and its one TOML file.
FLAT = {"config", "events", "messages", "results"}


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    if not LINT_IMPORTS.exists():
        pytest.fail(
            "lint-imports is not installed; install the test extras: pip install -e '.[test]'"
        )
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"},
    )


def test_import_contracts_hold() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_broken_contract_names_the_import(tmp_path: Path) -> None:
    """A store module that reaches up into the collision memory breaks the layers and
    the report names the very import (a contract that cannot fail would prove nothing)."""
    for package in ("souls", "supervisor", "channels", "soupd"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    store = tmp_path / "souls" / "store" / "store.py"
    store.write_text(store.read_text() + "\nfrom souls.collision.cards import Card  # noqa\n")
    result = _lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "souls.store is not allowed to import souls.collision" in result.stdout
    assert "souls.store.store -> souls.collision.cards" in result.stdout


def test_every_room_is_a_layer() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")
    assert layers["containers"] == ["souls"]
    assert layers["exhaustive"] is True
    named = {name.strip() for layer in layers["layers"] for name in layer.split("|")}
    assert named == {m.name for m in pkgutil.iter_modules(souls.__path__)}


def test_souls_holds_rooms_and_the_actors_vocabulary_only() -> None:
    flat = {m.name for m in pkgutil.iter_modules(souls.__path__) if not m.ispkg}
    assert flat == FLAT, "a new module belongs in a room (a subpackage of souls/), not flat"


def _rooms() -> list[str]:
    rooms = sorted(f"souls.{m.name}" for m in pkgutil.iter_modules(souls.__path__) if m.ispkg)
    return [*rooms, "supervisor.cli"]


@pytest.mark.parametrize("room", _rooms())
def test_room_says_what_it_holds(room: str) -> None:
    package = importlib.import_module(room)
    assert package.__doc__, room
    assert len(package.__doc__.strip().splitlines()) >= 3, room
    modules = {m.name for m in pkgutil.iter_modules(package.__path__)}
    assert set(package.__all__) <= modules, f"{room}.__all__ names modules it does not have"
    assert package.__all__ == sorted(package.__all__)


def test_other_rooms_import_only_public_modules() -> None:
    """``__all__`` of a room is its public surface: every module another room (or
    ``supervisor``, ``channels``) imports is listed, and every listed one is imported."""
    graph = grimp.build_graph("souls", "supervisor", "channels", cache_dir=None)
    for room in _rooms():
        public = set(importlib.import_module(room).__all__)
        used = {
            module.rsplit(".", 1)[1]
            for module in graph.find_children(room)
            if any(
                not importer.startswith(room + ".")
                for importer in graph.find_modules_that_directly_import(module)
            )
        }
        entry = {"main"} if room == "supervisor.cli" else set()
        assert used | entry == public, (
            f"{room}: imported from outside {sorted(used)}, listed {sorted(public)}"
        )
