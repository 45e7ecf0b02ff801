"""Times at the edges of what a soul stores: refused at the boundary, or handled by every
path that derives from them (due dates, the memory map, context, export, decay).

Reported: ``"ts": "9999-12-31"`` crashed the soul in its claim dates (year 10000), so
every other push of the turn failed and four tries left the soul failed;
``"9999-12-31T23:59:59-12:00"`` was stored and then every ``map`` crashed the soul.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from e2e.harness import Daemon, Home, request_frame, running
from souls.events import MAX_TS

# Date phrases the claim rules resolve against the event's time, English and Chinese.
PHRASES = [
    "I promise I'll send the invoice next Friday",
    "we plan to move to Leipzig in three weeks",
    "dentist appointment tomorrow at 9, don't let me forget",
    "我答应你下周五之前把报告发给你",
    "我们打算明年买房",
    "my birthday is on 8 May",
    "the lease ends in 2 years",
]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    home = Home(tmp_path_factory.mktemp("time-range"))
    home.add_soul("ada")
    try:
        with running(home) as daemon:
            yield daemon
    finally:
        home.cleanup()


def serves(daemon: Daemon) -> None:
    """Every path that reads stored times answers, and the soul is still up."""
    for method, params in [
        ("map", {"soul": "ada"}),
        ("claims", {"soul": "ada"}),
        ("context", {"soul": "ada", "query": "when is the invoice due?"}),
        ("context", {"soul": "ada"}),
        ("recall", {"soul": "ada", "query": "invoice Leipzig 报告"}),
        ("export", {"soul": "ada"}),
        ("tasks", {"soul": "ada"}),
    ]:
        reply = daemon.call(method, params)
        assert "error" not in reply, (method, reply)
    (row,) = [s for s in daemon.result("soul.list")["souls"] if s["name"] == "ada"]
    assert row["state"] in ("running", "hibernating"), row


@pytest.mark.parametrize(
    ("ts", "problem"),
    [
        ("9999-12-31", "outside the times soupd stores"),
        ("0001-01-01", "outside the times soupd stores"),
        ("9999-12-31T23:59:59-12:00", "outside the times soupd stores"),
        ("10000-01-01", "is not an ISO 8601 date-time"),
    ],
)
def test_out_of_range_iso_times_are_refused_and_the_turn_goes_on(
    daemon: Daemon, ts: str, problem: str
) -> None:
    frames = [
        {"soul": "ada", "text": "a note before", "ts": "2026-03-01T10:00:00Z"},
        {"soul": "ada", "text": f"{PHRASES[0]} ({ts})", "ts": ts},
        {"soul": "ada", "text": "a note after", "ts": "2026-03-01T10:01:00Z"},
    ]
    with daemon.connect() as conn:
        conn.send(b"".join(request_frame(n, "event.push", p) for n, p in enumerate(frames)))
        replies = {r["id"]: r for r in (conn.recv() for _ in frames)}
    assert replies[0]["result"]["status"] == "stored"
    assert replies[2]["result"]["status"] == "stored"
    error = replies[1]["error"]
    assert error["code"] == "invalid_params", error
    assert ts in error["message"]
    assert problem in error["message"]
    serves(daemon)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ts=st.one_of(
        st.sampled_from([0.0, 1.0, 86_400.0, MAX_TS - 1, MAX_TS - 86_400 * 366]),
        st.floats(min_value=0, max_value=MAX_TS, exclude_max=True),
    ),
    phrase=st.sampled_from(PHRASES),
)
def test_every_admitted_time_is_served_by_every_derived_path(
    daemon: Daemon, ts: float, phrase: str
) -> None:
    pushed = daemon.push("ada", phrase, ts=ts, sender="mel", session="edges")
    assert pushed["status"] in ("stored", "duplicate"), pushed
    serves(daemon)
