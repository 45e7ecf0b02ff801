"""The ``soupd`` client commands against a running daemon: human output, --json, errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from e2e.harness import Daemon, Home


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


def one_line_error(result: subprocess.CompletedProcess[str], code: int = 1) -> str:
    """The command failed with ``code`` and said why on exactly one stderr line."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("soupd: ")
    return lines[0]


def test_send_human_output_for_each_status(soupd: Daemon) -> None:
    home = soupd.home

    stored = ok(
        home.cli("send", "alpha", "Deploy failed: database migration timeout", "--ref", "cli-1")
    )
    assert stored.startswith("stored event ")
    assert "salience 0.80" in stored
    duplicate = ok(home.cli("send", "alpha", "again", "--ref", "cli-1"))
    assert duplicate.startswith("duplicate of event ")
    assert stored.split()[2] in duplicate  # the first event's id
    dropped = ok(home.cli("send", "alpha", "tick", "--kind", "heartbeat"))
    assert dropped.startswith("dropped: salience 0.20")
    assert soupd.counts("alpha") == (1, 1)


def test_send_json_and_flags_reach_the_gate(soupd: Daemon) -> None:
    home = soupd.home

    dm = json.loads(ok(home.cli("--json", "send", "alpha", "hello", "--kind", "dm")))
    assert dm["status"] == "stored"
    assert dm["salience"] == 0.9
    # The soul's first event: all news to its empty summary, so it reflects.
    assert (dm["surprise"], dm["reflected"]) == (1.0, True)
    mentioned = json.loads(
        ok(
            home.cli(
                "--json",
                "send",
                "alpha",
                "hi team",
                "--group",
                "ops",
                "--mentioned",
                "--sender",
                "ana",
                "--channel",
                "slack",
                "--session",
                "s1",
                "--ts",
                "2026-01-02T03:04:05Z",
                "--ref",
                "flags",
            )
        )
    )
    # New against the summary "hello": it reflects at once, and says what was new.
    assert mentioned == {
        "event_id": mentioned["event_id"],
        "salience": 0.9,
        "status": "stored",
        "surprise": 1.0,
        "reflected": True,
        "novel": ["team"],
    }
    unmentioned = json.loads(
        ok(home.cli("--json", "send", "alpha", "hi team", "--group", "ops", "--ts", "1767225600"))
    )
    assert unmentioned["salience"] == 0.35
    assert soupd.counts("alpha") == (3, 3)


def test_recall_human_and_json(soupd: Daemon) -> None:
    home = soupd.home
    soupd.push("alpha", "Deploy failed: database migration timeout", ref="ops-1")
    soupd.push("alpha", "Lunch is at noon")

    human = ok(home.cli("recall", "alpha", "deployment failures"))
    (line,) = human.splitlines()
    assert line.startswith("[m")
    assert "Deploy failed: database migration timeout" in line
    assert "refs: ops-1" in line
    raw = json.loads(ok(home.cli("--json", "recall", "alpha", "deployment failures", "-k", "1")))
    assert raw == soupd.result("recall", {"soul": "alpha", "query": "deployment failures", "k": 1})
    assert ok(home.cli("recall", "alpha", "zeppelin")).strip() == "(nothing recalled)"


def test_context_human_and_json(soupd: Daemon) -> None:
    home = soupd.home
    (home.soul_dir("alpha") / "SOUL.md").write_text("I am Alpha, careful and brief.\n")
    soupd.push("alpha", "The backup job runs at 02:00")

    human = ok(home.cli("context", "alpha", "backup"))
    raw = json.loads(ok(home.cli("--json", "context", "alpha", "backup")))

    assert raw == soupd.result("context", {"soul": "alpha", "query": "backup"})
    assert human == raw["text"].rstrip("\n") + "\n"
    assert "I am Alpha, careful and brief." in human
    assert "The backup job runs at 02:00" in human
    # A soul without SOUL.md or memories: the built-in identity and nothing else.
    bare = ok(home.cli("context", "beta"))
    assert bare.startswith("## IDENTITY\nYou have a long-term memory")
    assert "## RECALLED" not in bare


def test_status_souls_and_stats(soupd: Daemon) -> None:
    home = soupd.home
    soupd.push("alpha", "one event")

    status = json.loads(ok(home.cli("--json", "status")))
    assert status["pid"] == soupd.pid
    assert status["socket"] == str(home.socket)
    assert status["souls"] == 2
    human = ok(home.cli("status"))
    assert f"pid: {soupd.pid}" in human.splitlines()

    souls = json.loads(ok(home.cli("--json", "souls")))
    # beta was sent nothing: it still hibernates, as every soul starts.
    assert [(s["name"], s["state"], s["restarts"]) for s in souls["souls"]] == [
        ("alpha", "running", 0),
        ("beta", "hibernating", 0),
    ]
    table = ok(home.cli("souls")).splitlines()
    assert table[0].split() == ["NAME", "STATE", "RESTARTS", "QUEUED"]
    assert table[1].split()[:3] == ["alpha", "running", "0"]
    assert table[2].split()[:3] == ["beta", "hibernating", "0"]

    stats = json.loads(ok(home.cli("--json", "stats", "alpha")))
    assert (stats["soul"], stats["events"], stats["memories"]) == ("alpha", 1, 1)
    lines = ok(home.cli("stats", "alpha")).splitlines()
    assert "events: 1" in lines
    assert "memories: 1" in lines


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


IMPORT_LINES = [
    json.dumps({"text": "imported alpha note", "ref": "f-1"}),  # 1 stored
    json.dumps({"text": "imported beta note", "ref": "f-2", "kind": "dm"}),  # 2 stored
    "{this is not json",  # 3 bad_json
    "",  # 4 blank: skipped
    json.dumps({"text": "imported alpha note again", "ref": "f-1"}),  # 5 duplicate
    json.dumps({"text": "tick", "kind": "heartbeat"}),  # 6 dropped
    json.dumps({"text": 5}),  # 7 invalid_params
    json.dumps({"text": "token " + "ghp" + "_" + "a1B2c3D4e5F6g7H8i9J0" + "K" * 16}),  # 8 secret
    json.dumps({"text": "数据库迁移超时", "ref": "f-3"}),  # 9 stored
]


def test_import_file_human_output_names_each_bad_line(soupd: Daemon, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "events.jsonl", IMPORT_LINES)

    done = soupd.home.cli("import", "alpha", path)

    assert (done.returncode, done.stderr) == (5, "")  # refused input: some lines were rejected
    lines = done.stdout.splitlines()

    assert lines[0] == "stored 3, dropped 1, duplicate 1, rejected 3"
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["line 3", "line 7", "line 8"]
    assert lines[1].split(":")[1].strip() == "bad_json"
    assert lines[2].split(":")[1].strip() == "invalid_params"
    assert lines[3].split(":")[1].strip() == "hygiene.credential"
    assert soupd.counts("alpha") == (3, 3)
    assert [i["refs"] for i in soupd.recall("alpha", "迁移")] == [["f-3"]]


def test_import_file_json_output(soupd: Daemon, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "events.jsonl", IMPORT_LINES)

    done = soupd.home.cli("--json", "import", "alpha", path)

    assert done.returncode == 5
    result = json.loads(done.stdout)
    assert {k: result[k] for k in ("stored", "dropped", "duplicate", "rejected")} == {
        "stored": 3,
        "dropped": 1,
        "duplicate": 1,
        "rejected": 3,
    }
    assert [(r["line"], r["code"]) for r in result["reasons"]] == [
        (3, "bad_json"),
        (7, "invalid_params"),
        (8, "hygiene.credential"),
    ]
    assert all(r["message"] for r in result["reasons"])
    # Importing the same file again stores nothing new.
    again = json.loads(soupd.home.cli("--json", "import", "alpha", path).stdout)
    assert (again["stored"], again["duplicate"]) == (0, 4)
    assert soupd.counts("alpha") == (3, 3)


def test_import_of_a_large_file_spans_several_frames(soupd: Daemon, tmp_path: Path) -> None:
    lines = [
        json.dumps({"text": f"bulk event {i} " + "pad " * 60, "ref": f"b-{i}"}) for i in range(5000)
    ]
    path = write_jsonl(tmp_path / "bulk.jsonl", lines)
    assert path.stat().st_size > 1 << 20  # more than one frame's worth

    result = json.loads(ok(soupd.home.cli("--json", "import", "alpha", path)))

    assert (result["stored"], result["rejected"]) == (5000, 0)
    assert soupd.counts("alpha") == (5000, 5000)


def test_import_of_a_missing_file_is_a_one_line_error(soupd: Daemon, tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"

    for path in (missing, tmp_path):  # none, and a folder (which cannot be read as one)
        result = soupd.home.cli("import", "alpha", path)

        # A usage error, as the README's exit codes say: the command named no usable file.
        line = one_line_error(result, code=2)
        assert line.startswith(f"soupd: usage: cannot read {path}: "), line
        assert "name a JSON-lines file to import" in line
    as_json = soupd.home.cli("--json", "import", "alpha", missing)
    assert as_json.returncode == 2
    assert json.loads(as_json.stderr)["error"]["code"] == "usage"
    assert soupd.counts("alpha") == (0, 0)


def test_import_reports_rejected_lines_in_file_order(soupd: Daemon, tmp_path: Path) -> None:
    lines = [
        json.dumps({"text": "the first note, kept", "ref": "o-1"}),  # 1 stored
        json.dumps({"text": "line\nline\nline", "ref": "o-2"}),  # 2 rejected by the soul
        "",  # 3 blank
        "not json",  # 4 rejected by the CLI
        json.dumps({"texts": "a misspelt field"}),  # 5 rejected by the daemon's decoding
        json.dumps({"type": "fact", "value": "", "source": "user"}),  # 6 a stated claim
        json.dumps({"text": "key " + "AKIA" + "ABCDEFGHIJ234567"}),  # 7 a credential
        json.dumps({"type": "identity", "person": 9, "channel": "tg", "external": "x"}),  # 8
        json.dumps({"text": "the last note, kept", "ref": "o-3"}),  # 9 stored
    ]
    path = write_jsonl(tmp_path / "mixed.jsonl", lines)

    done = soupd.home.cli("--json", "import", "alpha", path)

    assert done.returncode == 5, done.stderr
    result = json.loads(done.stdout)
    assert (result["stored"], result["rejected"]) == (2, 6)
    assert [(r["line"], r["code"]) for r in result["reasons"]] == [
        (2, "hygiene.repeated_lines"),
        (4, "bad_json"),
        (5, "invalid_params"),
        (6, "invalid_params"),
        (7, "hygiene.credential"),
        (8, "bad_record"),
    ]
    # No message names another place than its line: not the event's index in a
    # request, nor a line of the file for a line of the text.
    by_line = {r["line"]: r["message"] for r in result["reasons"]}
    assert "invalid params for this event: " in by_line[5]
    assert "(ending at line 3 of the text)" in by_line[2]
    human = soupd.home.cli("import", "alpha", path).stdout.splitlines()
    assert [row.split(":")[0] for row in human[1:]] == [f"  line {n}" for n in (2, 4, 5, 6, 7, 8)]


NOT_FOUND, REFUSED, NOT_RUNNING = 6, 5, 4


@pytest.mark.parametrize(
    ("args", "code", "status"),
    [
        (("send", "nobody", "hello"), "unknown_soul", NOT_FOUND),
        (("recall", "nobody", "hello"), "unknown_soul", NOT_FOUND),
        (("stats", "nobody"), "unknown_soul", NOT_FOUND),
        (("send", "alpha", "line\nline\nline"), "hygiene.repeated_lines", REFUSED),
        (("send", "alpha", "key " + "AKIA" + "ABCDEFGHIJ234567"), "hygiene.credential", REFUSED),
        (("send", "alpha", "hello", "--ts", "next tuesday"), "invalid_params", REFUSED),
        (("recall", "alpha", "hello", "-k", "0"), "invalid_params", REFUSED),
    ],
)
def test_daemon_errors_are_one_line_with_the_code(
    soupd: Daemon, args: tuple[str, ...], code: str, status: int
) -> None:
    line = one_line_error(soupd.home.cli(*args), code=status)

    assert line.startswith(f"soupd: {code}: ")
    assert soupd.counts("alpha") == (0, 0)


@pytest.mark.parametrize(
    "args", [("status",), ("souls",), ("send", "default", "hi"), ("recall", "default", "hi")]
)
def test_daemon_not_running_says_how_to_start_it(soupd_home: Home, args: tuple[str, ...]) -> None:
    line = one_line_error(soupd_home.cli(*args), code=NOT_RUNNING)

    assert "not running" in line
    assert "soupd start" in line
    assert str(soupd_home.socket) in line


def test_socket_flag_points_the_client_elsewhere(soupd: Daemon, tmp_path: Path) -> None:
    elsewhere = tmp_path / "nothing-here.sock"

    line = one_line_error(soupd.home.cli("--socket", elsewhere, "status"), code=NOT_RUNNING)
    assert str(elsewhere) in line
    assert "soupd start" in line
    status = json.loads(ok(soupd.home.cli("--socket", soupd.home.socket, "--json", "status")))
    assert status["pid"] == soupd.pid


def test_config_check_accepts_good_files(soupd_home: Home) -> None:
    daemon_file = soupd_home.write_config(
        '[socket]\nmode = "0600"\nmax_frame_bytes = 65536\n\n[log]\nlevel = "debug"\n'
    )
    soul_file = soupd_home.add_soul("alpha", "[recall]\nk = 5\n\n[mailbox]\ncapacity = 64\n")
    empty_soul = soupd_home.add_soul("beta")

    assert "ok" in ok(soupd_home.cli("config", "check", daemon_file))
    assert "ok" in ok(soupd_home.cli("config", "check", soul_file))
    assert "ok" in ok(soupd_home.cli("config", "check", empty_soul))
    whole = ok(soupd_home.cli("config", "check"))
    assert "ok" in whole
    assert "alpha" in whole
    assert "beta" in whole


@pytest.mark.parametrize(
    ("where", "text", "expected"),
    [
        ("soupd.toml", '[socket]\nmodee = "0600"\n', "socket.modee"),
        ("soupd.toml", '[testing]\nfault_injection = "yes"\n', "testing.fault_injection"),
        ("soupd.toml", '[sockets]\npath = "/tmp/x"\n', "sockets"),
        ("soupd.toml", "[socket\nmode = 1\n", "not valid TOML"),
        ("souls/alpha.toml", "[recall]\nkk = 3\n", "recall.kk"),
        ("souls/alpha.toml", '[recall]\nk = "ten"\n', "recall.k"),
        ("souls/alpha.toml", "[attention.extra]\nx = 1\n", "attention.extra"),
    ],
)
def test_config_check_names_file_and_key_path(
    soupd_home: Home, where: str, text: str, expected: str
) -> None:
    path = soupd_home.config_dir / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")

    for args in (("config", "check", path), ("config", "check")):
        line = one_line_error(soupd_home.cli(*args), code=2)
        assert str(path) in line
        assert expected in line


def test_config_check_of_a_missing_file_fails(soupd_home: Home, tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"

    line = one_line_error(soupd_home.cli("config", "check", missing), code=2)
    assert str(missing) in line


@pytest.mark.parametrize("example", ["soupd.example.toml", "souls/example.toml"])
def test_config_check_accepts_the_shipped_examples(soupd_home: Home, example: str) -> None:
    path = Path(__file__).resolve().parents[2] / "config" / example

    assert "ok" in ok(soupd_home.cli("config", "check", path))
