"""Every kind of bad input gets one error reply with the right code, and changes nothing.

One daemon serves the whole module (it is only ever sent input that must not be
stored); each test checks that the soul's stored counts did not move, and that the
same connection still answers a valid request afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from e2e.harness import Connection, Daemon, Home, request_frame, running

MAX_FRAME = 1 << 20
ALNUM = "a1B2c3D4e5F6g7H8i9J0"  # fake secrets are assembled at run time


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    home = Home(tmp_path_factory.mktemp("bad-input"))
    home.add_soul("alpha")
    try:
        with running(home) as daemon:
            # One stored event, so "nothing changed" is checked against a non-empty store.
            daemon.push("alpha", "the baseline event")
            yield daemon
    finally:
        home.cleanup()


@pytest.fixture
def conn(daemon: Daemon) -> Iterator[Connection]:
    """A connection to the module's daemon; on teardown the daemon's stored counts must
    be what they were before the test."""
    before = daemon.counts("alpha")
    with daemon.connect() as conn:
        yield conn
    assert daemon.counts("alpha") == before


def still_serves(conn: Connection) -> None:
    """The connection still answers a valid request, with its own id."""
    conn.send(request_frame("after", "soul.stats", {"soul": "alpha"}))
    reply = conn.recv()
    assert reply["id"] == "after"
    assert reply["result"]["soul"] == "alpha"


def assert_error(reply: dict[str, Any], code: str, id: Any) -> str:
    assert set(reply) == {"id", "error"}, reply
    assert reply["id"] == id
    assert reply["error"]["code"] == code, reply
    message = reply["error"]["message"]
    assert isinstance(message, str)
    assert message.strip()
    return message


# Frames that cannot be read as a request at all: answered with id null.
UNREADABLE = {
    "truncated-json": b'{"id": 1, "method": "event.push", "params": {"soul": "alpha"',
    "not-json": b"hello daemon",
    "array": b"[1, 2]",
    "string": b'"event.push"',
    "number": b"42",
    "null": b"null",
    "no-method": b'{"id": 2, "params": {}}',
    "method-not-string": b'{"id": 3, "method": 7}',
    "id-is-object": b'{"id": {"n": 1}, "method": "soul.list"}',
    "unknown-top-level-key": b'{"id": 4, "method": "soul.list", "params": {}, "x": 1}',
    "invalid-utf8-in-method": b'{"id": 5, "method": "event.\xff"}',
    "invalid-utf8-in-text": (
        b'{"id": 6, "method": "event.push", "params": {"soul": "alpha", "text": "caf\xe9"}}'
    ),
    "utf8-encoded-surrogate": (
        b'{"id": 7, "method": "event.push", "params": {"soul": "alpha", "text": "\xed\xa0\x80"}}'
    ),
}


@pytest.mark.parametrize("frame", UNREADABLE.values(), ids=UNREADABLE.keys())
def test_unreadable_frame_is_a_bad_frame_with_null_id(conn: Connection, frame: bytes) -> None:
    conn.send(frame + b"\n")

    assert_error(conn.recv(), "bad_frame", None)
    still_serves(conn)


def test_unknown_method_lists_the_known_ones(conn: Connection) -> None:
    conn.send(request_frame(11, "event.pull", {"soul": "alpha", "text": "x"}))

    message = assert_error(conn.recv(), "unknown_method", 11)
    assert "event.pull" in message
    assert "event.push" in message
    still_serves(conn)


def test_debug_crash_is_unknown_without_fault_injection(conn: Connection) -> None:
    conn.send(request_frame(12, "debug.crash", {"soul": "alpha"}))

    assert_error(conn.recv(), "unknown_method", 12)
    still_serves(conn)


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("event.push", {"soul": "nobody", "text": "hello"}),
        ("event.import", {"soul": "nobody", "events": [{"text": "hello"}]}),
        ("recall", {"soul": "nobody", "query": "hello"}),
        ("context", {"soul": "nobody"}),
        ("soul.stats", {"soul": "nobody"}),
    ],
)
def test_unknown_soul(conn: Connection, method: str, params: dict[str, Any]) -> None:
    conn.send(request_frame(13, method, params))

    message = assert_error(conn.recv(), "unknown_soul", 13)
    assert "nobody" in message
    still_serves(conn)


# (method, params, a word the message must contain)
INVALID_PARAMS = {
    "text-is-number": ("event.push", {"soul": "alpha", "text": 5}, "text"),
    "text-missing": ("event.push", {"soul": "alpha"}, "text"),
    "soul-missing": ("event.push", {"text": "hello"}, "soul"),
    "soul-is-number": ("event.push", {"soul": 3, "text": "hello"}, "soul"),
    "mentioned-is-string": (
        "event.push",
        {"soul": "alpha", "text": "hello", "mentioned": "yes"},
        "mentioned",
    ),
    "kind-is-list": ("event.push", {"soul": "alpha", "text": "hello", "kind": ["dm"]}, "kind"),
    "ts-is-bool": ("event.push", {"soul": "alpha", "text": "hello", "ts": True}, "ts"),
    "ts-not-a-date": ("event.push", {"soul": "alpha", "text": "hello", "ts": "soon"}, "ts"),
    "ts-implausible": ("event.push", {"soul": "alpha", "text": "hello", "ts": 1e20}, "ts"),
    "params-null": ("event.push", None, "object"),
    "params-array": ("event.push", [{"soul": "alpha", "text": "hello"}], "object"),
    "unknown-push-key": (
        "event.push",
        {"soul": "alpha", "text": "hello", "priority": 1},
        "priority",
    ),
    "unknown-list-key": ("soul.list", {"verbose": True}, "verbose"),
    "k-is-string": ("recall", {"soul": "alpha", "query": "x", "k": "ten"}, "k"),
    "k-is-zero": ("recall", {"soul": "alpha", "query": "x", "k": 0}, "k"),
    "query-missing": ("recall", {"soul": "alpha"}, "query"),
    "events-not-list": ("event.import", {"soul": "alpha", "events": {"text": "x"}}, "events"),
    # A kind no output has would be a stream that never delivers: refused, naming them.
    "subscribe-unknown-kind": (
        "subscribe",
        {"kinds": ["reflect", "reflects"]},
        "unknown output kind 'reflects'; the kinds are card, direct, internal_signal, log, "
        "overflow, reflect, reply, spark, tide, wakeup",
    ),
    "unknown-import-key": (
        "event.import",
        {"soul": "alpha", "events": [], "dry_run": True},
        "dry_run",
    ),
}


@pytest.mark.parametrize(
    ("method", "params", "word"), INVALID_PARAMS.values(), ids=INVALID_PARAMS.keys()
)
def test_invalid_params(conn: Connection, method: str, params: Any, word: str) -> None:
    body: dict[str, Any] = {"id": 14, "method": method, "params": params}
    conn.send(json.dumps(body).encode() + b"\n")

    message = assert_error(conn.recv(), "invalid_params", 14)
    assert word in message
    still_serves(conn)


PEM_HEADER = "-----BEGIN " + "RSA PRIVATE KEY-----"
HYGIENE = {
    "too-long": ("x" * 8001, "too_long"),
    "too-long-cjk": ("字" * 8001, "too_long"),
    "bell": ("ring the \x07 bell", "invalid_chars"),
    "nul": ("nul\x00byte", "invalid_chars"),
    "carriage-return": ("windows\r\nline", "invalid_chars"),
    "escape": ("colour \x1b[31mred", "invalid_chars"),
    "c1-control": ("c1 \x85 control", "invalid_chars"),
    "replacement-char": ("decoded badly \ufffd here", "invalid_chars"),
    "repeated-lines": ("same line\nsame line\nsame line", "repeated_lines"),
    "repeated-with-blanks": ("stuck\n\nstuck\n\n\nstuck\n", "repeated_lines"),
    "github-token": ("my token is ghp" + "_" + ALNUM + ALNUM[:16], "credential"),
    "aws-key-id": ("AKIA" + "ABCDEFGHIJ234567 is the key", "credential"),
    "pem-private-key": (PEM_HEADER + "\nMIIEowIBAAKCAQEA\n", "credential"),
    "url-password": ("postgres://admin:" + "Hunter2x@db.internal/app", "credential"),
    "empty": ("", "empty"),
    "whitespace": (" \n\t \n", "empty"),
}


@pytest.mark.parametrize(("text", "rule"), HYGIENE.values(), ids=HYGIENE.keys())
def test_hygiene_rejects_by_rule(conn: Connection, text: str, rule: str) -> None:
    conn.send(request_frame(15, "event.push", {"soul": "alpha", "text": text, "ref": "h"}))

    message = assert_error(conn.recv(), f"hygiene.{rule}", 15)
    if rule == "credential":
        assert ALNUM[:16] not in message
        assert "Hunter2x" not in message
    still_serves(conn)


def test_hygiene_rejection_via_import_is_per_event(conn: Connection) -> None:
    events = [{"text": text} for text, _ in HYGIENE.values()]

    result = conn.result("event.import", {"soul": "alpha", "events": events})

    assert (result["stored"], result["rejected"]) == (0, len(HYGIENE))
    assert [(r["index"], r["code"]) for r in result["reasons"]] == [
        (i, f"hygiene.{rule}") for i, (_, rule) in enumerate(HYGIENE.values())
    ]


def push_of_size(size: int, id: Any) -> bytes:
    """A push frame of exactly ``size`` bytes (newline excluded)."""
    empty = request_frame(id, "event.push", {"soul": "alpha", "text": ""})[:-1]
    frame = request_frame(id, "event.push", {"soul": "alpha", "text": "y" * (size - len(empty))})
    assert len(frame) == size + 1
    return frame


def test_oversized_frame_is_skipped_and_the_next_request_on_it_works(conn: Connection) -> None:
    # The valid request rides in the same write, right behind the oversized line.
    conn.send(
        push_of_size(MAX_FRAME + 1, 16)
        + request_frame(17, "recall", {"soul": "alpha", "query": "baseline"})
    )

    message = assert_error(conn.recv(), "frame_too_large", None)
    assert str(MAX_FRAME) in message
    reply = conn.recv()
    assert reply["id"] == 17
    assert [i["text"] for i in reply["result"]["items"]] == ["the baseline event"]
    still_serves(conn)


def test_oversized_frame_sent_in_pieces(conn: Connection) -> None:
    frame = push_of_size(3 * MAX_FRAME, 18)
    for start in range(0, len(frame) - 1, 100_000):  # everything but the newline...
        conn.send(frame[start : min(start + 100_000, len(frame) - 1)])
    conn.send(b"\n")  # ...then the newline on its own

    assert_error(conn.recv(), "frame_too_large", None)
    still_serves(conn)


def test_frame_of_exactly_the_cap_is_read(conn: Connection) -> None:
    # It is read and decoded (so its id is answered); its text is too long to store.
    conn.send(push_of_size(MAX_FRAME, 19))

    assert_error(conn.recv(), "hygiene.too_long", 19)
    still_serves(conn)


def test_blank_lines_get_no_reply(conn: Connection) -> None:
    conn.send(b"\n   \n\t\n")
    still_serves(conn)


def test_string_ids_are_echoed_and_replies_match_requests(conn: Connection) -> None:
    conn.send(
        request_frame("a", "event.push", {"soul": "alpha", "text": ""})
        + request_frame("b", "recall", {"soul": "alpha", "query": "baseline"})
        + request_frame(20, "nope")
    )
    replies = {r["id"]: r for r in (conn.recv() for _ in range(3))}

    assert set(replies) == {"a", "b", 20}
    assert replies["a"]["error"]["code"] == "hygiene.empty"
    assert replies["b"]["result"]["items"]
    assert replies[20]["error"]["code"] == "unknown_method"


def test_last_frame_without_newline_is_answered_at_half_close(conn: Connection) -> None:
    conn.send(request_frame(21, "soul.stats", {"soul": "alpha"})[:-1])
    conn.sock.shutdown(2 - 1)  # SHUT_WR: no more requests

    reply = conn.recv()
    assert reply["id"] == 21
    assert "result" in reply
    assert conn.recv_frame() is None  # then the daemon closes its side


def test_garbage_then_hangup_leaves_the_daemon_serving(daemon: Daemon) -> None:
    before = daemon.counts("alpha")
    with daemon.connect() as conn:
        conn.send(b'{"id": 1, "method": "event.push", "params": {"soul": "alpha", "te')
    with daemon.connect() as conn:
        conn.send(b"\xff\xfe\x00garbage\n")
        assert_error(conn.recv(), "bad_frame", None)

    with daemon.connect() as conn:
        still_serves(conn)
    assert daemon.counts("alpha") == before
    status = daemon.result("daemon.status")
    assert status["errors"] >= 1
    assert status["pid"] == daemon.pid


def test_daemon_survived_every_bad_input(daemon: Daemon) -> None:
    assert daemon.proc.poll() is None
    assert daemon.counts("alpha") == (1, 1)
    log = daemon.log()
    assert not [e for e in log if e.get("level") in ("error", "critical")], log
    assert Path(daemon.home.socket).exists()
