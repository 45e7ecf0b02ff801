"""Many requests in flight on one connection: every id answered exactly once."""

from __future__ import annotations

from collections import Counter

from e2e.harness import Daemon, pipelined_pushes, request_frame, wait_for

N = 2000


def test_two_thousand_pushes_written_in_one_go(soupd: Daemon) -> None:
    blob = pipelined_pushes("alpha", ((f"p-{i}", f"pipelined note {i} tag{i}") for i in range(N)))
    with soupd.connect() as conn:
        writer = conn.send_in_background(blob)
        replies = [conn.recv() for _ in range(N)]
        writer.join(timeout=15)
        assert not writer.is_alive()

        answered = Counter(r["id"] for r in replies)
        assert set(answered) == set(range(1, N + 1))
        assert set(answered.values()) == {1}
        assert all(r["result"]["status"] == "stored" for r in replies), replies[:3]
        event_ids = {r["id"]: r["result"]["event_id"] for r in replies}
        assert len(set(event_ids.values())) == N
        # The same connection still takes an ordinary request afterwards.
        assert conn.result("soul.stats", {"soul": "alpha"})["events"] == N

    assert soupd.counts("alpha") == (N, N)
    (item,) = soupd.recall("alpha", "tag1234")
    assert item["refs"] == ["p-1234"]


def test_pipelined_mix_of_methods_and_errors(soupd: Daemon) -> None:
    frames = []
    expected: dict[int, str] = {}
    for i in range(1, 601):
        if i % 3 == 0:
            frames.append(request_frame(i, "event.push", {"soul": "nobody", "text": "x"}))
            expected[i] = "unknown_soul"
        elif i % 3 == 1:
            soul = "alpha" if i % 2 else "beta"
            frames.append(request_frame(i, "event.push", {"soul": soul, "text": f"mixed {i}"}))
            expected[i] = "stored"
        else:
            frames.append(request_frame(i, "recall", {"soul": "alpha", "query": "mixed"}))
            expected[i] = "recall"
    with soupd.connect() as conn:
        writer = conn.send_in_background(b"".join(frames))
        replies = [conn.recv() for _ in range(len(frames))]
        writer.join(timeout=15)

    got: dict[int, str] = {}
    for reply in replies:
        assert reply["id"] not in got, f"id {reply['id']} answered twice"
        if "error" in reply:
            got[reply["id"]] = reply["error"]["code"]
        elif "items" in reply["result"]:
            got[reply["id"]] = "recall"
        else:
            got[reply["id"]] = reply["result"]["status"]
    assert got == expected
    stored = sum(1 for v in expected.values() if v == "stored")
    assert soupd.counts("alpha")[0] + soupd.counts("beta")[0] == stored


def test_several_connections_at_once(soupd: Daemon) -> None:
    conns = [soupd.connect() for _ in range(4)]
    try:
        writers = [
            c.send_in_background(
                pipelined_pushes("alpha", ((f"c{n}-{i}", f"conn {n} note {i}") for i in range(250)))
            )
            for n, c in enumerate(conns)
        ]
        for conn in conns:
            replies = [conn.recv() for _ in range(250)]
            assert sorted(r["id"] for r in replies) == list(range(1, 251))
            assert {r["result"]["status"] for r in replies} == {"stored"}
        for writer in writers:
            writer.join(timeout=15)
    finally:
        for conn in conns:
            conn.close()
    assert soupd.counts("alpha") == (1000, 1000)


def test_client_that_hangs_up_with_requests_in_flight(soupd: Daemon) -> None:
    blob = pipelined_pushes("alpha", ((f"gone-{i}", f"abandoned note {i}") for i in range(N)))
    sent = blob[: len(blob) // 2]  # about half the frames, the last one cut short
    complete = sent.count(b"\n")
    with soupd.connect() as conn:
        conn.send(sent)
    # Nobody reads these replies; the daemon must shrug and keep serving. Once the
    # abandoned connection is gone (only the asking one is left), all it read is settled.
    wait_for(lambda: soupd.result("daemon.status")["connections"] == 1, "the hang-up")
    assert soupd.push("alpha", "still here")["status"] == "stored"
    events, memories = soupd.counts("alpha")
    assert events == memories
    assert 1 <= events <= complete + 1
    # Each ref stored at most once, and nothing half-written was stored.
    replay = soupd.result(
        "event.import",
        {"soul": "alpha", "events": [{"text": "x", "ref": f"gone-{i}"} for i in range(N)]},
    )
    assert replay["duplicate"] == events - 1
    assert replay["stored"] == N - (events - 1)
