"""The logging pipeline: JSON lines off a TTY, contextvars bound, stdlib routed in.

``configure_logging`` sets process-wide state, so each case runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import logging
    import structlog
    from supervisor.logs import configure_logging

    configure_logging({level!r}, {output!r})
    structlog.contextvars.bind_contextvars(soul="ada", peer_uid=1000)
    structlog.get_logger("soupd.test").info("soul.turn", messages=3)
    structlog.get_logger("soupd.test").debug("event.stored", event_id=7)
    logging.getLogger("apscheduler.scheduler").warning("job %s missed", "decay")
    """
)


def run(level: str = "info", output: str = "auto") -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(level=level, output=output)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.splitlines()


def test_json_lines_when_stdout_is_not_a_tty() -> None:
    lines = [json.loads(line) for line in run()]

    turn, stdlib = lines
    assert turn["event"] == "soul.turn"
    assert turn["messages"] == 3
    assert turn["soul"] == "ada"
    assert turn["peer_uid"] == 1000
    assert turn["level"] == "info"
    assert turn["timestamp"].endswith("Z")
    # A standard-library logger comes out in the same shape, context included.
    assert stdlib["event"] == "job decay missed"
    assert stdlib["logger"] == "apscheduler.scheduler"
    assert stdlib["level"] == "warning"
    assert stdlib["soul"] == "ada"


def test_level_filters_and_debug_shows_bound_event_ids() -> None:
    lines = [json.loads(line) for line in run(level="debug")]
    stored = next(line for line in lines if line["event"] == "event.stored")
    assert stored["event_id"] == 7
    assert [json.loads(line)["event"] for line in run(level="warning")] == ["job decay missed"]


def test_console_rendering_on_request() -> None:
    lines = run(output="console")
    assert any("soul.turn" in line and "soul=ada" in line for line in lines)
    assert not lines[0].startswith("{")


CRASH = textwrap.dedent(
    """
    import structlog
    from supervisor.logs import configure_logging

    configure_logging("info", {output!r})

    def handle(text):
        params = {{"text": text}}
        raise RuntimeError("soul turn failed")

    try:
        handle("my flamingo diary, page " + "7" * 40)
    except RuntimeError:
        structlog.get_logger("soupd.soul").exception("soul.crashed", soul="ada")
    """
)


def test_a_crash_report_shows_types_and_places_never_the_text() -> None:
    for output in ("json", "console"):
        done = subprocess.run(
            [sys.executable, "-c", CRASH.format(output=output)],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        assert "soul.crashed" in done.stdout, done.stdout
        assert "RuntimeError" in done.stdout
        assert "soul turn failed" in done.stdout
        assert "handle" in done.stdout  # the frame is named
        assert "flamingo" not in done.stdout, (output, done.stdout)
        assert "7777" not in done.stdout
