"""``soupd config check`` reports every problem at once, says what a key could have been
and which values a setting takes, and warns of a channel's unset credential."""

from __future__ import annotations

import json
import subprocess

from e2e.harness import Home

SECRET_VARIABLE = "SOUPD_TEST_WEBHOOK_SECRET_NOT_SET"


def errors(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert all(line.startswith("soupd: config error: ") for line in lines), lines
    return lines


def test_every_error_of_every_file_is_reported(soupd_home: Home) -> None:
    daemon = soupd_home.write_config(
        '[socket]\nmodee = "0600"\nmax_frame_bytes = "big"\n\n[log]\nlevel = "loud"\n'
    )
    alpha = soupd_home.add_soul("alpha", '[recall]\nkk = 3\n\n[mailbox]\ncapacity = "x"\n')
    beta = soupd_home.add_soul("beta", "[attention]\nthreshold = 1\nwhat = 2\n")
    soupd_home.add_soul("gamma")

    lines = errors(soupd_home.cli("config", "check"))

    found = {(line.split(": ")[2], line.split(": ")[3]) for line in lines}
    assert {key for _, key in found} >= {
        "socket.modee",
        "socket.max_frame_bytes",
        "log.level",
        "recall.kk",
        "mailbox.capacity",
        "attention.what",
    }, lines
    assert {path for path, _ in found} == {str(daemon), str(alpha), str(beta)}
    assert len(lines) == len(found)


def test_an_enum_error_lists_the_values(soupd_home: Home) -> None:
    path = soupd_home.write_config('[log]\nlevel = "loud"\n')

    (line,) = errors(soupd_home.cli("config", "check", path))

    assert "log.level" in line
    assert "'debug', 'info', 'warning', 'error'" in line


def test_an_unknown_key_suggests_the_closest(soupd_home: Home) -> None:
    soul = soupd_home.add_soul("alpha", "[mailbox]\ncapcity = 64\n")

    (line,) = errors(soupd_home.cli("config", "check", soul))

    assert "mailbox.capcity: unknown key; did you mean 'capacity'?" in line


def test_an_unset_secret_variable_is_a_warning(soupd_home: Home) -> None:
    soupd_home.add_soul("alpha")
    soupd_home.write_config(
        f'[[channels]]\nkind = "webhook"\nname = "hooks"\nsouls = ["alpha"]\n'
        f'secret_env = "{SECRET_VARIABLE}"\n'
    )

    result = soupd_home.cli("config", "check")

    assert result.returncode == 0, result.stderr
    (warning,) = result.stderr.splitlines()
    assert warning.startswith("soupd: warning: ")
    assert "channels[0].secret_env" in warning
    assert SECRET_VARIABLE in warning
    report = json.loads(soupd_home.cli("config", "check", "--json").stdout)
    assert report["ok"] is True
    assert [w["key"] for w in report["warnings"]] == ["channels[0].secret_env"]
    soupd_home.extra_env[SECRET_VARIABLE] = "s3cret"
    assert soupd_home.cli("config", "check").stderr == ""


def test_json_report_lists_the_errors(soupd_home: Home) -> None:
    soupd_home.add_soul("alpha", "[recall]\nkk = 3\nk = 0.5\n")

    result = soupd_home.cli("--json", "config", "check")

    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert report["ok"] is False
    assert sorted(e["key"] for e in report["errors"]) == ["recall.k", "recall.kk"]


def test_an_unknown_channel_kind_does_not_hide_the_other_errors(soupd_home: Home) -> None:
    soupd_home.add_soul("ada")
    path = soupd_home.write_config(
        '[log]\nlevel = "loud"\nformat = "pretty"\n\n[socket]\nmdoe = "0600"\n\n'
        f'[[channels]]\nname = "hooks"\nkind = "webhook"\nsouls = ["ada"]\n'
        f'secret_env = "{SECRET_VARIABLE}"\n\n'
        '[[channels]]\nname = "hooks2"\nkind = "webhok"\nsouls = ["ada"]\n\n'
        '[[channels]]\nname = "hooks3"\nkind = "webhook"\nsouls = ["ada"]\nport = "x"\n'
    )

    for args in (("config", "check", path), ("config", "check")):
        result = soupd_home.cli(*args)

        assert result.returncode == 2, result.stderr
        lines = result.stderr.splitlines()
        errors = [line for line in lines if line.startswith("soupd: config error: ")]
        warnings = [line for line in lines if line.startswith("soupd: warning: ")]
        assert len(errors) + len(warnings) == len(lines), lines
        keys = [line.split(": ")[3] for line in errors]
        assert sorted(keys) == [
            "channels[1].kind",
            "channels[2].port",
            "log.format",
            "log.level",
            "socket.mdoe",
        ], lines
        assert any("unknown kind 'webhok'" in line for line in errors)
        (warning,) = warnings
        assert "channels[0].secret_env" in warning
        assert SECRET_VARIABLE in warning
