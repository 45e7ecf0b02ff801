"""Soul files written and removed at run time: TOML from a table, the atomic write that
never replaces a file, the removal that never follows a link."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest

from supervisor.errors import InvalidParams
from supervisor.soul_files import (
    purge_state,
    remove_soul_file,
    soul_path,
    toml_text,
    write_soul_file,
)


@pytest.mark.parametrize(
    "table",
    [
        {},
        {"brain_dir": "~/brains/ada"},
        {"recall": {"k": 3, "explain": True}, "lifecycle": {"hibernate_after": 0.5}},
        {"hygiene": {"extra_patterns": ["tok_[0-9]+", 'a"b\\c\n']}},
        {"llm": {"model": "qwen", "extra": {"deep key": "ünïcode", "n": -1}}},
    ],
)
def test_toml_text_reads_back_as_the_table(table: dict[str, Any]) -> None:
    assert tomllib.loads(toml_text(table)) == table


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({"recall": [{"k": 1}]}, "recall"),
        ({"k": None}, "k"),
        ({"x": float("nan")}, "finite"),
        ({"": 1}, "key"),
    ],
)
def test_toml_text_refuses_what_a_soul_setting_cannot_be(table: dict[str, Any], said: str) -> None:
    with pytest.raises(InvalidParams, match=said):
        toml_text(table)


def test_names_that_are_not_safe_file_names_are_refused(tmp_path: Path) -> None:
    assert soul_path(tmp_path, "ada-2.x") == tmp_path / "ada-2.x.toml"
    for bad in ("../ada", "a/b", ".ada", "", "a" * 65, "ada\x00"):
        with pytest.raises(InvalidParams, match="soul name"):
            soul_path(tmp_path, bad)


def test_write_is_private_whole_and_never_replaces(tmp_path: Path) -> None:
    path = tmp_path / "souls" / "ada.toml"
    write_soul_file(path, "[recall]\nk = 3\n")
    assert path.read_text() == "[recall]\nk = 3\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    with pytest.raises(FileExistsError):
        write_soul_file(path, "")
    assert path.read_text() == "[recall]\nk = 3\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["ada.toml"]  # no temporary left
    # A link planted where the file goes is not followed: the target stays untouched.
    target = tmp_path / "elsewhere"
    target.write_text("mine")
    os.symlink(target, path.parent / "bob.toml")
    with pytest.raises(FileExistsError):
        write_soul_file(path.parent / "bob.toml", "x")
    assert target.read_text() == "mine"


def test_remove_and_purge_never_follow_links(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep").write_text("mine")
    link = tmp_path / "ada.toml"
    os.symlink(target / "keep", link)
    assert remove_soul_file(link) is True
    assert remove_soul_file(link) is False
    assert (target / "keep").read_text() == "mine"
    state = tmp_path / "state"
    os.symlink(target, state)
    purge_state(state)
    assert not state.exists()
    assert (target / "keep").read_text() == "mine"
    real = tmp_path / "real"
    (real / "brain").mkdir(parents=True)
    (real / "soul.db").write_text("x")
    purge_state(real)
    assert not real.exists()
