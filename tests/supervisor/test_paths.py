"""Where soupd keeps things: XDG resolution from an environment mapping, and name checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from supervisor.errors import ConfigError
from supervisor.paths import (
    Locations,
    check_private_dir,
    check_socket_path,
    locate,
    soul_name_problem,
)

UID = os.getuid()


def test_xdg_variables_decide_every_default(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
    }
    assert locate(env) == Locations(
        config_file=tmp_path / "cfg" / "soupd" / "soupd.toml",
        default_souls_dir=tmp_path / "cfg" / "soupd" / "souls",
        default_state_dir=tmp_path / "state" / "soupd",
        default_socket=tmp_path / "run" / "soupd" / "soupd.sock",
        socket_override=None,
        explicit_config=False,
    )


def test_home_fallbacks_and_private_tmp_socket(tmp_path: Path) -> None:
    locations = locate({"HOME": str(tmp_path)})
    assert locations.config_file == tmp_path / ".config" / "soupd" / "soupd.toml"
    assert locations.default_souls_dir == tmp_path / ".config" / "soupd" / "souls"
    assert locations.default_state_dir == tmp_path / ".local" / "state" / "soupd"
    assert locations.default_socket == Path(f"/tmp/soupd-{UID}") / "soupd.sock"
    assert not locations.explicit_config


def test_empty_variables_count_as_unset(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": "",
        "XDG_STATE_HOME": "",
        "XDG_RUNTIME_DIR": "",
        "SOUPD_CONFIG": "",
        "SOUPD_SOCKET": "",
    }
    assert locate(env) == locate({"HOME": str(tmp_path)})


def test_relative_xdg_variables_are_ignored(tmp_path: Path) -> None:
    # The XDG base directory spec: a relative path in these variables is invalid and
    # must be ignored, else soupd's files would land wherever it was started from.
    env = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": "cfg",
        "XDG_STATE_HOME": "state",
        "XDG_RUNTIME_DIR": "run",
    }
    assert locate(env) == locate({"HOME": str(tmp_path)})


def test_config_file_named_on_the_command_line_or_in_the_environment(tmp_path: Path) -> None:
    named = tmp_path / "etc" / "soupd.toml"
    from_env = locate({"HOME": str(tmp_path), "SOUPD_CONFIG": str(named)})
    assert from_env.config_file == named
    assert from_env.default_souls_dir == tmp_path / "etc" / "souls"
    assert from_env.explicit_config
    other = tmp_path / "other.toml"
    from_flag = locate({"HOME": str(tmp_path), "SOUPD_CONFIG": str(named)}, config=str(other))
    assert from_flag.config_file == other  # the flag wins over the environment
    assert from_flag.default_souls_dir == tmp_path / "souls"
    assert from_flag.explicit_config


def test_socket_override_flag_beats_environment(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "SOUPD_SOCKET": str(tmp_path / "env.sock")}
    assert locate(env).socket_override == tmp_path / "env.sock"
    flag = locate(env, socket=str(tmp_path / "flag.sock"))
    assert flag.socket_override == tmp_path / "flag.sock"
    assert locate({"HOME": str(tmp_path)}).socket_override is None


def test_soul_names_that_are_fine() -> None:
    for name in ["alpha", "a", "A-1", "ada.work", "x_y", "9lives", "a" * 64]:
        assert soul_name_problem(name) is None, name


@pytest.mark.parametrize(
    "name",
    ["", "../x", "..", "a..b", "a/b", ".hidden", "-dash", "_under", "a b", "é", "a" * 65, "x\n"],
)
def test_soul_names_that_are_refused(name: str) -> None:
    problem = soul_name_problem(name)
    assert problem is not None
    assert repr(name) in problem
    assert "1-64" in problem  # says what a valid name looks like


def test_private_dir_check(tmp_path: Path) -> None:
    check_private_dir(tmp_path / "missing")  # created later, privately
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    check_private_dir(private)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(ConfigError) as caught:
        check_private_dir(shared)
    assert caught.value.path == str(shared)
    assert "XDG_RUNTIME_DIR" in caught.value.message
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    with pytest.raises(ConfigError):
        check_private_dir(not_a_dir)


def test_socket_path_length_check(tmp_path: Path) -> None:
    check_socket_path(Path("/run/user/1000/soupd/soupd.sock"))
    long = Path("/tmp") / ("d" * 120) / "soupd.sock"
    with pytest.raises(ConfigError) as caught:
        check_socket_path(long)
    assert "--socket" in caught.value.message
