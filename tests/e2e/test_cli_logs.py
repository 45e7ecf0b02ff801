"""The daemon's log lines an operator reads: requests with their peer and method, the
per-turn line at debug only, one line for a fired reminder and none of apscheduler's
chatter."""

from __future__ import annotations

import datetime as dt
import os

from e2e.harness import Home, StartSoupd, wait_for


def test_request_lines_name_the_peer_and_the_method(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.write_config('[log]\nlevel = "debug"\n')
    soupd_home.add_soul("alpha")
    daemon = start_soupd()
    daemon.push("alpha", "hello")
    daemon.call("recall", {"soul": "nobody", "query": "x"})

    def requests() -> list[dict[str, object]]:
        return [e for e in daemon.log() if str(e["event"]).startswith("socket.request")]

    lines = wait_for(lambda: len(requests()) >= 2 and requests(), "request lines")
    done = next(e for e in lines if e["method"] == "event.push")
    failed = next(e for e in lines if e["method"] == "recall")
    assert (done["event"], done["level"], done["peer_uid"]) == (
        "socket.request",
        "debug",
        os.getuid(),
    )
    assert (failed["event"], failed["level"], failed["code"]) == (
        "socket.request_failed",
        "info",
        "unknown_soul",
    )
    assert failed["peer_uid"] == os.getuid()
    # The turn's line comes at its end, which may be after its replies (a push that made
    # the soul reflect is answered before the card is made).
    wait_for(
        lambda: any(e["event"] == "soul.turn" and e["level"] == "debug" for e in daemon.log()),
        "the soul.turn line at debug",
    )


def test_at_info_a_reminder_fires_in_one_line(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("alpha")
    daemon = start_soupd()
    daemon.push("alpha", "hello")
    due = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)
    daemon.result("task.add", {"soul": "alpha", "text": "water the plants", "at": due.isoformat()})

    wait_for(lambda: daemon.result("tasks", {"soul": "alpha"})["fired"], "the reminder to fire", 15)
    log = daemon.log()

    assert not [e for e in log if str(e.get("logger", "")).startswith("apscheduler")]
    assert not [e for e in log if e["event"] == "soul.turn"]  # debug
    (fired,) = [e for e in log if str(e.get("job", "")).startswith("due:")]
    assert (fired["event"], fired["soul"]) == ("scheduler.task_due", "alpha")
    assert "water the plants" not in str(log)  # the text stays out of the log
