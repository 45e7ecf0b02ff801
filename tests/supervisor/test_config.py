"""Configuration loading: TOML into frozen Structs, errors that name the file and key path."""

from __future__ import annotations

from pathlib import Path

import pytest

from souls.config import MailboxConfig, RestartConfig, SoulConfig, StoreConfig
from souls.intake.attention_gate import AttentionConfig
from souls.intake.hygiene_gate import HygieneConfig
from souls.recall.context import ContextConfig
from souls.recall.recall import RecallConfig
from supervisor.config import (
    DaemonConfig,
    Settings,
    check_file,
    load_settings,
    read_toml,
)
from supervisor.errors import ConfigError
from supervisor.paths import locate


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def config_error(path: Path, kind: type[object] = SoulConfig) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        read_toml(path, kind)
    error = caught.value
    assert error.code == "config.invalid"
    assert error.path == str(path)
    assert error.message.startswith(f"{path}: ")  # the operator sees the file first
    return error


class Home:
    """An XDG home in a temporary folder: config dir, state dir, runtime dir."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.config_dir = root / "config" / "soupd"
        self.env = {
            "HOME": str(root),
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_RUNTIME_DIR": str(root / "run"),
        }

    def soul(self, name: str, text: str = "") -> Path:
        return write(self.config_dir / "souls" / f"{name}.toml", text)

    def daemon(self, text: str) -> Path:
        return write(self.config_dir / "soupd.toml", text)

    def load(self, *, config: str | None = None, socket: str | None = None) -> Settings:
        return load_settings(locate(self.env, config=config, socket=socket))


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path)


def test_an_empty_soul_file_is_all_defaults(tmp_path: Path) -> None:
    config = read_toml(write(tmp_path / "a.toml", ""), SoulConfig)
    assert config == SoulConfig()
    assert config.brain_dir is None
    assert config.mailbox == MailboxConfig()
    assert config.store == StoreConfig()
    assert config.restart == RestartConfig()
    assert config.hygiene == HygieneConfig()
    assert config.attention == AttentionConfig()
    assert config.recall == RecallConfig()
    assert config.context == ContextConfig()
    assert (config.mailbox.capacity, config.mailbox.batch) == (1024, 512)
    assert (config.restart.max_restarts, config.restart.max_seconds) == (3, 5.0)
    assert config.attention.drop_below == 0.25


def test_an_empty_daemon_file_is_all_defaults(tmp_path: Path) -> None:
    config = read_toml(write(tmp_path / "soupd.toml", ""), DaemonConfig)
    assert config == DaemonConfig()
    assert config.socket.mode == "0600"
    assert config.testing.fault_injection is False


def test_values_are_read_into_their_sections(tmp_path: Path) -> None:
    path = write(
        tmp_path / "a.toml",
        """
        brain_dir = "~/brains/ada"
        [mailbox]
        capacity = 16
        [attention]
        drop_below = 0.4
        alarm_keywords = ["oops"]
        [recall]
        k = 3
        """,
    )
    config = read_toml(path, SoulConfig)
    assert config.brain_dir == "~/brains/ada"
    assert config.mailbox == MailboxConfig(capacity=16)
    assert config.attention.drop_below == 0.4
    assert config.attention.alarm_keywords == ["oops"]
    assert config.recall.k == 3


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[mailbox]\ncapcity = 3\n", "mailbox.capcity"),
        ("nope = 1\n", "nope"),
        ("[mailboxes]\ncapacity = 3\n", "mailboxes"),
        ("[attention]\ndrop_bellow = 0.1\n", "attention.drop_bellow"),
    ],
)
def test_unknown_keys_are_named_with_their_path(tmp_path: Path, text: str, key: str) -> None:
    path = write(tmp_path / "ada.toml", text)
    error = config_error(path)
    assert error.key == key
    assert "unknown key" in error.problem
    assert error.message == f"{path}: {key}: {error.problem}"


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ('[mailbox]\ncapacity = "big"\n', "mailbox.capacity", "int"),
        ('[store]\nsynchronous = "off"\n', "store.synchronous", "off"),
        ("[attention]\nalarm_keywords = [1]\n", "attention.alarm_keywords[0]", "str"),
        ("brain_dir = 5\n", "brain_dir", "str"),
        ("mailbox = 5\n", "mailbox", "object"),
    ],
)
def test_wrong_types_name_the_key(tmp_path: Path, text: str, key: str, expected: str) -> None:
    error = config_error(write(tmp_path / "ada.toml", text))
    assert error.key == key
    assert expected in error.problem


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[mailbox]\ncapacity = 0\n", "mailbox"),
        ("[attention]\ndrop_below = 1.5\n", "attention"),
        ("[recall]\nk = 500\n", "recall"),
        ('[hygiene]\nextra_patterns = ["("]\n', "hygiene"),
    ],
)
def test_out_of_range_values_name_the_section(tmp_path: Path, text: str, key: str) -> None:
    error = config_error(write(tmp_path / "ada.toml", text))
    assert error.key == key


@pytest.mark.parametrize(
    ("text", "key"),
    [
        # Values a soul's supervisor or child spec refuses at start must be refused
        # here, by `soupd config check` and before anything is applied.
        ("[restart]\nmax_restarts = -1\n", "restart"),
        ("[restart]\nmax_seconds = 0\n", "restart"),
        ("[restart]\nshutdown = -1\n", "restart"),
    ],
)
def test_restart_settings_the_supervisor_refuses_are_config_errors(
    tmp_path: Path, text: str, key: str
) -> None:
    error = config_error(write(tmp_path / "ada.toml", text))
    assert error.key == key


def test_bad_toml_syntax(tmp_path: Path) -> None:
    error = config_error(write(tmp_path / "ada.toml", "[recall\nk = 3\n"))
    assert error.key == ""
    assert "not valid TOML" in error.problem
    assert "line 1" in error.problem


def test_unreadable_and_non_utf8_files(tmp_path: Path) -> None:
    missing = config_error(tmp_path / "missing.toml")
    assert "cannot read" in missing.problem
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes('brain_dir = "caf\u00e9"\n'.encode("latin-1"))
    assert "UTF-8" in config_error(latin1).problem


@pytest.mark.parametrize("mode", ["0600", "0660", "0640", "600"])
def test_socket_modes_that_are_fine(tmp_path: Path, mode: str) -> None:
    path = write(tmp_path / "soupd.toml", f'[socket]\nmode = "{mode}"\n')
    assert read_toml(path, DaemonConfig).socket.mode == mode


@pytest.mark.parametrize("mode", ["0666", "0604", "0601", "0777", "1600", "0o1600", "rw", "08"])
def test_socket_modes_that_are_refused(tmp_path: Path, mode: str) -> None:
    path = write(tmp_path / "soupd.toml", f'[socket]\nmode = "{mode}"\n')
    error = config_error(path, DaemonConfig)
    assert error.key == "socket"
    assert repr(mode) in error.problem


def test_daemon_unknown_key(tmp_path: Path) -> None:
    path = write(tmp_path / "soupd.toml", "[socket]\npath = '/x'\nmod = '0600'\n")
    assert config_error(path, DaemonConfig).key == "socket.mod"


def test_no_files_at_all_means_one_default_soul(home: Home) -> None:
    settings = home.load()
    assert dict(settings.souls) == {"default": SoulConfig()}
    assert settings.daemon == DaemonConfig()
    assert settings.config_file == home.config_dir / "soupd.toml"
    assert settings.souls_dir == home.config_dir / "souls"
    assert settings.state_dir == home.root / "state" / "soupd"
    assert settings.socket == home.root / "run" / "soupd" / "soupd.sock"
    assert settings.soul_dir("default") == home.root / "state" / "soupd" / "souls" / "default"
    assert settings.brain_dir("default") == settings.soul_dir("default")


def test_soul_files_are_the_souls(home: Home) -> None:
    home.soul("alpha")
    home.soul("beta", "[mailbox]\ncapacity = 8\n")
    write(home.config_dir / "souls" / "notes.txt", "not a soul")
    settings = home.load()
    assert sorted(settings.souls) == ["alpha", "beta"]
    assert settings.souls["beta"].mailbox.capacity == 8


def test_a_soul_file_with_an_invalid_name_is_refused(home: Home) -> None:
    home.soul("alpha")
    bad = home.soul("-bad")
    with pytest.raises(ConfigError) as caught:
        home.load()
    assert caught.value.path == str(bad)
    assert "rename the file" in caught.value.message


def test_one_bad_soul_file_fails_the_whole_load(home: Home) -> None:
    home.soul("alpha")
    bad = home.soul("beta", "[mailbox]\ncapcity = 8\n")
    with pytest.raises(ConfigError) as caught:
        home.load()
    assert (caught.value.path, caught.value.key) == (str(bad), "mailbox.capcity")


def test_relative_paths_are_resolved_against_the_config_file(home: Home) -> None:
    home.daemon(
        """
        [paths]
        state_dir = "state-here"
        souls_dir = "my-souls"
        [socket]
        path = "run/soupd.sock"
        """
    )
    write(home.config_dir / "my-souls" / "gamma.toml", "")
    home.soul("ignored")  # the default souls/ folder is no longer read
    settings = home.load()
    assert settings.state_dir == home.config_dir / "state-here"
    assert settings.souls_dir == home.config_dir / "my-souls"
    assert settings.socket == home.config_dir / "run" / "soupd.sock"
    assert sorted(settings.souls) == ["gamma"]


def test_absolute_paths_are_kept(home: Home, tmp_path: Path) -> None:
    home.daemon(f'[paths]\nstate_dir = "{tmp_path / "abs"}"\n')
    assert home.load().state_dir == tmp_path / "abs"


def test_brain_dir_from_the_soul_file(home: Home, tmp_path: Path) -> None:
    home.soul("alpha", f'brain_dir = "{tmp_path / "brains" / "alpha"}"\n')
    assert home.load().brain_dir("alpha") == tmp_path / "brains" / "alpha"


def test_socket_flag_and_environment_override_the_file(home: Home, tmp_path: Path) -> None:
    home.daemon('[socket]\npath = "/nowhere/file.sock"\n')
    assert home.load().socket == Path("/nowhere/file.sock")
    home.env["SOUPD_SOCKET"] = str(tmp_path / "env.sock")
    assert home.load().socket == tmp_path / "env.sock"
    assert home.load(socket=str(tmp_path / "flag.sock")).socket == tmp_path / "flag.sock"


def test_an_explicit_config_file_must_exist(home: Home, tmp_path: Path) -> None:
    missing = tmp_path / "elsewhere" / "soupd.toml"
    with pytest.raises(ConfigError) as caught:
        home.load(config=str(missing))
    assert caught.value.path == str(missing)
    assert "not found" in caught.value.message
    home.env["SOUPD_CONFIG"] = str(missing)
    with pytest.raises(ConfigError):
        home.load()


def test_an_explicit_config_file_brings_its_souls_folder(home: Home, tmp_path: Path) -> None:
    named = write(tmp_path / "etc" / "soupd.toml", "[testing]\nfault_injection = true\n")
    write(tmp_path / "etc" / "souls" / "delta.toml", "")
    settings = home.load(config=str(named))
    assert settings.daemon.testing.fault_injection is True
    assert sorted(settings.souls) == ["delta"]
    assert settings.config_file == named


def test_a_bad_daemon_file_names_itself(home: Home) -> None:
    path = home.daemon("[log]\nlevel = 'loud'\n")
    with pytest.raises(ConfigError) as caught:
        home.load()
    assert (caught.value.path, caught.value.key) == (str(path), "log.level")


def test_check_file_tells_soul_files_from_daemon_files(home: Home) -> None:
    assert check_file(home.soul("alpha")) == "soul"
    assert check_file(home.daemon("")) == "daemon"
    with pytest.raises(ConfigError) as caught:
        check_file(home.soul("alpha", "[recall]\nmax = 1\n"))
    assert caught.value.key == "recall.max"
    with pytest.raises(ConfigError, match="invalid"):
        check_file(home.soul("..x"))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[schedule]\ndecay = "S03:00"\n', "decay 'S03:00' is not a time of day"),
        ('[schedule]\nweekly = "25:00"\n', "weekly '25:00' is not a time of day"),
        ('[schedule]\ntimezone = "Mars/Olympus"\n', "not a known IANA zone"),
    ],
)
def test_a_souls_own_schedule_is_checked_like_the_daemons(
    home: Home, text: str, problem: str
) -> None:
    """A soul's [schedule] overrides are the soul file's error at load and at reload,
    never a crash when the daemon schedules the soul's jobs."""
    path = home.soul("alpha", text)
    with pytest.raises(ConfigError) as caught:
        home.load()
    assert caught.value.path == str(path)
    assert caught.value.key == "schedule"
    assert problem in caught.value.message
    with pytest.raises(ConfigError):
        check_file(path)
