"""The systemd units in deploy/ pass `systemd-analyze verify` (where it is installed)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
SOUPD = Path(sys.executable).parent / "soupd"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
@pytest.mark.parametrize(
    "units",
    [("soupd.service", "soupd.socket"), ("soupd-user.service",)],
    ids=["system", "user"],
)
def test_units_verify(tmp_path: Path, units: tuple[str, ...]) -> None:
    paths = []
    for unit in units:
        text = (DEPLOY / unit).read_text()
        # The units name where the README installs soupd; point them at this one.
        text = text.replace("/opt/soupd/.venv/bin/soupd", str(SOUPD))
        text = text.replace("%h/soupd/.venv/bin/soupd", str(SOUPD))
        # A user unit is checked like a system one (no user manager runs here).
        name = unit.replace("-user", "")
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    result = subprocess.run(
        ["systemd-analyze", "verify", *paths], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "soupd" not in result.stderr, result.stderr


def test_deploy_has_what_the_readme_installs() -> None:
    for name in (
        "soupd.service",
        "soupd.socket",
        "soupd-user.service",
        "soupd.sysusers",
        "soupd.tmpfiles",
        "soupd.toml",
        "README.md",
    ):
        assert (DEPLOY / name).is_file(), name


def test_the_system_config_is_valid() -> None:
    from supervisor.config import DaemonConfig, read_toml

    config = read_toml(DEPLOY / "soupd.toml", DaemonConfig)
    assert config.socket.mode == "0660"
