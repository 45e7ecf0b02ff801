"""Mangled config files under a running daemon, then SIGHUP: it never goes down.

hypothesis mutates a soul's TOML and ``soupd.toml`` (bytes inserted, deleted or
replaced, lines dropped, doubled, swapped or replaced by nasty ones, the file cut
short) of one running daemon and sends SIGHUP. Every reload ends either applied or
rejected; a rejection is logged naming the file and the problem, and the souls keep
the config they had (a soul's ``[hygiene] max_chars`` is the witness). Before the next
example the good files are put back and reloaded.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from e2e.harness import Daemon, Home, running, wait_for

SOUL_TOML = """\
# alpha: the soul under test
cognition = true

[mailbox]
capacity = 1024
batch = 512

[restart]
max_restarts = 3
max_seconds = 5.0

[recall]
k = 2
max_k = 200

[hygiene]
max_chars = 700
extra_patterns = ["internal-[0-9]+"]

[schedule]
decay = "03:00"
"""

DAEMON_TOML = """\
# soupd.toml under test
[paths]
souls_dir = "souls"

[schedule]
timezone = "UTC"
decay = "03:00"
weekly_day = "sun"
weekly = "04:00"
homeostasis_minutes = 15.0

[socket]
max_in_flight = 512

[supervision]
max_restarts = 3
max_seconds = 5.0
"""

NASTY_SOUL_LINES = [
    'k = "two"',
    "k = -1",
    "k = 1e400",
    "max_k = 1",
    "capacity = 0",
    "capacity = 99999999999999999999",
    'brain_dir = "~nosuchuser/brain"',
    'brain_dir = "/proc/1/brain"',
    'brain_dir = "brains/alpha"',
    "[recall]",
    "[[recall]]",
    "[recall.k]",
    "max_restarts = -5",
    'synchronous = "off"',
    'extra_patterns = ["("]',
    'cognition = "yes"',
    'timezone = "Mars/Olympus"',
    'decay = "25:00"',
    "a.b.c = 1",
    'x = """never closed',
    "k = 0x10",
    "\x00",
    "\ufeff",
    "[restart]\nmax_restarts = 0",
]
NASTY_DAEMON_LINES = [
    'state_dir = "~nosuchuser/state"',
    'souls_dir = "~nosuchuser/souls"',
    'souls_dir = "/nonexistent/souls"',
    'souls_dir = "elsewhere"',
    'path = "/tmp/elsewhere.sock"',
    'mode = "0777"',
    'mode = "rw"',
    'timezone = "Mars/Olympus"',
    'weekly_day = "funday"',
    "homeostasis_minutes = 0",
    "max_frame_bytes = 10",
    "max_in_flight = 0",
    "[paths]",
    "[socket]",
    "[testing]\nfault_injection = true",
    '[log]\nlevel = "loud"',
    "[[schedule]]",
    "\x00",
]


def mutate(text: str, ops: list[tuple[str, float, float, int, str]]) -> bytes:
    """Apply edits; positions are fractions of the current length so they always fit."""
    data = text.encode()
    for op, where, other, byte, line in ops:
        if op.startswith("byte"):
            at = int(where * len(data))
            if op == "byte-delete":
                data = data[:at] + data[at + 1 :]
            elif op == "byte-insert":
                data = data[:at] + bytes([byte]) + data[at:]
            else:
                data = data[:at] + bytes([byte]) + data[at + 1 :]
            continue
        if op == "truncate":
            data = data[: int(where * len(data))]
            continue
        lines = data.split(b"\n")
        i, j = int(where * len(lines)), int(other * len(lines))
        if op == "line-delete":
            del lines[i]
        elif op == "line-double":
            lines.insert(i, lines[i])
        elif op == "line-swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "line-insert":
            lines.insert(i, line.encode())
        else:  # line-replace
            lines[i] = line.encode()
        data = b"\n".join(lines)
    return data


def edits(nasty: list[str]) -> st.SearchStrategy[list[tuple[str, float, float, int, str]]]:
    op = st.tuples(
        st.sampled_from(
            [
                "byte-delete",
                "byte-insert",
                "byte-replace",
                "truncate",
                "line-delete",
                "line-double",
                "line-swap",
                "line-insert",
                "line-replace",
            ]
        ),
        st.floats(0, 1, exclude_max=True),
        st.floats(0, 1, exclude_max=True),
        st.integers(0, 255),
        st.sampled_from(nasty),
    )
    return st.lists(op, min_size=1, max_size=4)


FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
OUTCOMES = ("config.reloaded", "config.reload_rejected")
# A soul that serves: awake, or hibernating until its next message.
HEALTHY = ("running", "hibernating")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    home = Home(tmp_path_factory.mktemp("hostile-toml"))
    home.write_config(DAEMON_TOML)
    home.add_soul("alpha", SOUL_TOML)
    home.add_soul("beta")
    try:
        with running(home) as daemon:
            for n in range(3):
                daemon.push("alpha", f"harbour note {n}", ref=f"h{n}")
                daemon.push("beta", f"beta harbour note {n}", ref=f"b{n}")
            yield daemon
    finally:
        home.cleanup()


def reload(daemon: Daemon) -> dict[str, Any]:
    """SIGHUP, then the log line that says how the reload ended."""
    seen = sum(1 for e in daemon.log() if e.get("event") in OUTCOMES)
    daemon.send_signal(signal.SIGHUP)

    def outcome() -> dict[str, Any] | None:
        assert daemon.proc.poll() is None, f"soupd died on reload:\n{daemon.output()}"
        done = [e for e in daemon.log() if e.get("event") in OUTCOMES]
        return done[seen] if len(done) > seen else None

    return wait_for(outcome, "the reload to finish")  # type: ignore[no-any-return]


def souls(daemon: Daemon) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in daemon.result("soul.list")["souls"]}


def assert_good_config_in_force(daemon: Daemon) -> None:
    assert daemon.proc.poll() is None, daemon.output()
    assert daemon.result("daemon.status")["pid"] == daemon.pid
    rows = souls(daemon)
    assert set(rows) == {"alpha", "beta"}, rows
    assert all(row["state"] in HEALTHY for row in rows.values()), rows
    # alpha.toml's max_chars is the witness: a text one character longer is refused
    # with that limit (a learning soul's recall is no fixed witness).
    too_long = daemon.call("event.push", {"soul": "alpha", "text": "y" * 701})
    assert too_long["error"]["code"] == "hygiene.too_long", too_long
    assert "limit of 700" in too_long["error"]["message"]
    assert daemon.recall("beta", "harbour")


def restore(daemon: Daemon) -> None:
    """Put the good files back and reload them."""
    daemon.home.write_config(DAEMON_TOML)
    daemon.home.add_soul("alpha", SOUL_TOML)
    assert reload(daemon)["event"] == "config.reloaded"
    assert_good_config_in_force(daemon)


def at_line(text: str, number: int) -> float:
    """The position fraction that ``mutate`` reads as line ``number`` of ``text``."""
    return (number + 0.5) / len(text.split("\n"))


def insert(text: str, number: int, line: str) -> list[tuple[str, float, float, int, str]]:
    return [("line-insert", at_line(text, number), 0.0, 0, line)]


def check_outcome(daemon: Daemon, path: Path, outcome: dict[str, Any]) -> None:
    event(outcome["event"])
    assert daemon.proc.poll() is None, daemon.output()
    assert daemon.result("daemon.status")["pid"] == daemon.pid
    if outcome["event"] == "config.reload_rejected":
        assert outcome["level"] == "error"
        assert outcome["file"] == str(path)
        assert isinstance(outcome["problem"], str)
        assert outcome["problem"].strip()
        assert_good_config_in_force(daemon)  # the last good config stays in force
        return
    # The edit was valid after all: applied, every soul still known and able to run.
    rows = souls(daemon)
    assert set(rows) == {"alpha", "beta"}, rows
    assert rows["beta"]["state"] in HEALTHY, rows["beta"]
    assert rows["alpha"]["state"] in HEALTHY, rows["alpha"]
    assert daemon.recall("alpha", "harbour")  # and it answers


@FUZZ
@given(ops=edits(NASTY_SOUL_LINES))
@example(ops=insert(SOUL_TOML, 0, 'brain_dir = "~nosuchuser/brain"'))
@example(ops=insert(SOUL_TOML, 0, 'brain_dir = "/proc/1/brain"'))
@example(ops=insert(SOUL_TOML, 0, "\x00"))
@example(ops=[("byte-replace", 0.5, 0.0, 0xFF, "")])
def test_mangled_soul_file(daemon: Daemon, ops: list[Any]) -> None:
    path = daemon.home.config_dir / "souls" / "alpha.toml"
    path.write_bytes(mutate(SOUL_TOML, ops))
    try:
        check_outcome(daemon, path, reload(daemon))
    finally:
        restore(daemon)


@FUZZ
@given(ops=edits(NASTY_DAEMON_LINES))
@example(ops=insert(DAEMON_TOML, 2, 'state_dir = "~nosuchuser/state"'))
@example(ops=insert(DAEMON_TOML, 2, 'souls_dir = "~nosuchuser/souls"'))
@example(ops=insert(DAEMON_TOML, 3, 'souls_dir = "elsewhere"'))
@example(ops=[("line-replace", at_line(DAEMON_TOML, 2), 0.0, 0, 'souls_dir = "elsewhere"')])
@example(ops=[("line-delete", at_line(DAEMON_TOML, 2), 0.0, 0, "")])
def test_mangled_daemon_file(daemon: Daemon, ops: list[Any]) -> None:
    path = daemon.home.config_dir / "soupd.toml"
    path.write_bytes(mutate(DAEMON_TOML, ops))
    try:
        check_outcome(daemon, path, reload(daemon))
    finally:
        restore(daemon)


def test_an_edit_the_soul_cannot_start_with_is_refused(daemon: Daemon) -> None:
    """Valid TOML, but the soul cannot run with it: the soul keeps its previous config."""
    path = daemon.home.config_dir / "souls" / "alpha.toml"
    edit = SOUL_TOML.replace("max_chars = 700", "max_chars = 800")
    path.write_text('brain_dir = "/proc/1/no-brain-here"\n' + edit)
    try:
        assert reload(daemon)["event"] == "config.reloaded"
        (refused,) = [e for e in daemon.log() if e.get("event") == "soul.config_rejected"][-1:]
        assert (refused["soul"], refused["file"], refused["level"]) == ("alpha", str(path), "error")
        assert "/proc/1/no-brain-here" in refused["problem"]
        assert_good_config_in_force(daemon)  # max_chars = 700 still, not the edit's 800
    finally:
        restore(daemon)


def test_daemon_survived_every_edit(daemon: Daemon) -> None:
    assert_good_config_in_force(daemon)
    crashed = [e for e in daemon.log() if e.get("event") in ("child.crashed", "soul.failed")]
    assert not crashed, crashed[:3]
