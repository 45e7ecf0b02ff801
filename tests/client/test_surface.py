"""The package's promises that need no daemon: the two clients have the same methods
and arguments, every error code the daemon sends has its class, the socket is found
where the CLI finds it, and importing ``soupd`` loads nothing of the daemon."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import soupd
from soupd import _errors
from supervisor import errors as daemon_errors
from supervisor.config_file import client_socket
from supervisor.output_kinds import OUTPUT_KINDS
from supervisor.paths import locate

PUBLIC = sorted(
    name
    for name, member in vars(soupd.Client).items()
    if not name.startswith("_") and callable(member)
)


def test_the_package_exports_what_all_says() -> None:
    exported = {name for name in dir(soupd) if not name.startswith("_")}
    assert set(soupd.__all__) <= exported
    modules = {name for name in exported if inspect.ismodule(getattr(soupd, name))}
    assert exported - modules - {"annotations"} == set(soupd.__all__)


def test_the_output_kinds_mirror_the_daemons() -> None:
    # The package may not import the daemon's list: it keeps a copy, held equal here.
    assert soupd.OUTPUT_KINDS == OUTPUT_KINDS


def test_both_clients_have_the_same_methods_and_arguments() -> None:
    assert len(PUBLIC) >= 25
    asynchronous = sorted(
        name
        for name, member in vars(soupd.AsyncClient).items()
        if not name.startswith("_") and callable(member)
    )
    # Only closing differs in name: close() and ``await aclose()``.
    assert asynchronous == sorted("aclose" if name == "close" else name for name in PUBLIC)
    for name in PUBLIC:
        if name == "close":
            continue
        sync, asyn = getattr(soupd.Client, name), getattr(soupd.AsyncClient, name)
        assert inspect.signature(sync).parameters == inspect.signature(asyn).parameters, name
        if name not in ("subscribe", "statistics"):  # a context manager; a plain read
            assert inspect.iscoroutinefunction(asyn), name
            assert sync.__doc__ == asyn.__doc__, name
            returns = inspect.signature(sync).return_annotation
            assert returns == inspect.signature(asyn).return_annotation, name
            assert not returns.startswith("Call"), name


def _daemon_codes() -> dict[str, type[Exception]]:
    """Every code the daemon's exception classes carry: the tree of supervisor.errors
    and the errors souls defines (every module of souls imported, so the set does not
    depend on what other tests imported), except those that never cross the socket."""
    import souls

    for module in pkgutil.walk_packages(souls.__path__, "souls."):
        importlib.import_module(module.name)
    found: dict[str, type[Exception]] = {}
    stack = list(daemon_errors.SoupdError.__subclasses__())
    while stack:
        kind = stack.pop()
        stack.extend(kind.__subclasses__())
        ours = kind.__module__ == daemon_errors.__name__ or kind.__module__.startswith("souls.")
        if ours and isinstance(vars(kind).get("code"), str):
            found[kind.code] = kind
    never_on_the_wire = {
        "already_running",  # `soupd start` itself
        "child_start_failed",  # the supervision tree, at start
        "restart_intensity",
        "daemon_not_running",  # the CLI's own; the client raises its own class
        "usage",  # the CLI's own: its command line
    }
    return {code: kind for code, kind in found.items() if code not in never_on_the_wire}


def test_every_code_the_daemon_sends_has_its_class() -> None:
    codes = _daemon_codes()
    assert {"unknown_soul", "invalid_params", "busy", "disk_full", "timeout"} <= codes.keys()
    for code in codes:
        kind = soupd.error_class(code)
        assert kind is not soupd.SoupdError, f"no class of soupd for the daemon's {code!r}"
        assert kind.code == code
    for rule in ("empty", "too_long", "invalid_chars", "repeated_lines", "credential"):
        assert soupd.error_class(f"hygiene.{rule}").code == f"hygiene.{rule}"


def test_an_unknown_code_keeps_its_code() -> None:
    error = _errors.from_wire("brand_new_code", "what to do")
    assert type(error) is soupd.SoupdError
    assert (error.code, error.message) == ("brand_new_code", "what to do")
    rule = _errors.from_wire("hygiene.some_new_rule", "no")
    assert type(rule) is soupd.RejectedInput
    assert rule.rule == "some_new_rule"


def _environments(tmp_path: Path) -> list[dict[str, str]]:
    home = tmp_path / "home"
    named = tmp_path / "etc" / "soupd.toml"
    named.parent.mkdir(parents=True)
    named.write_text('[socket]\npath = "run/s.sock"\n', encoding="utf-8")
    xdg = tmp_path / "xdg"
    (xdg / "soupd").mkdir(parents=True)
    (xdg / "soupd" / "soupd.toml").write_text("[socket]\npath = '~/x.sock'\n", encoding="utf-8")
    empty = tmp_path / "empty"
    (empty / "soupd").mkdir(parents=True)
    (empty / "soupd" / "soupd.toml").write_text("[paths]\n", encoding="utf-8")
    return [
        {"HOME": str(home)},
        {"HOME": str(home), "XDG_RUNTIME_DIR": "/run/user/1000"},
        {"HOME": str(home), "XDG_RUNTIME_DIR": "relative/ignored"},
        {"HOME": str(home), "RUNTIME_DIRECTORY": "/run/soupd:/run/other"},
        {"HOME": str(home), "SOUPD_SOCKET": "~/my.sock", "SOUPD_CONFIG": str(named)},
        {"HOME": str(home), "SOUPD_CONFIG": str(named)},
        {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)},
        {"HOME": str(home), "XDG_CONFIG_HOME": str(empty), "XDG_RUNTIME_DIR": "/r"},
        {"HOME": str(home), "CONFIGURATION_DIRECTORY": str(named.parent)},
    ]


def test_the_socket_is_found_where_the_cli_finds_it(tmp_path: Path) -> None:
    for env in _environments(tmp_path):
        assert soupd.find_socket(env=env) == client_socket(locate(env)), env
    assert soupd.find_socket("/tmp/given.sock", env={"SOUPD_SOCKET": "/x"}) == Path(
        "/tmp/given.sock"
    )


def test_a_named_config_that_is_missing_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(soupd.ConfigInvalid, match="not found"):
        soupd.find_socket(env={"HOME": str(tmp_path), "SOUPD_CONFIG": str(tmp_path / "no")})


def test_importing_soupd_loads_nothing_of_the_daemon() -> None:
    probe = (
        "import sys, soupd; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'souls', 'supervisor', "
        "'channels', 'aiosqlite', 'structlog', 'apscheduler', 'mcp', 'httpx'}))"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert found.stdout.strip() == "[]"
