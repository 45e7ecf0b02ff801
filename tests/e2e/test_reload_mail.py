"""Mail queued for a soul whose config changes survives the reload, as it survives a
crash: answered by the incarnation that stops (what was queued when the reload came)
or by the one that starts with the new config (what arrived meanwhile), never failed.

Reported: restarting a changed soul answered its 512 queued requests with "retry once it
runs again".
"""

from __future__ import annotations

import signal
import threading
from typing import Any

import pytest

from e2e.harness import Daemon, Home, pipelined_pushes, running, wait_for

OUTCOMES = ("config.reloaded", "config.reload_rejected")


def reloaded(daemon: Daemon, seen: int) -> bool:
    done = [e for e in daemon.log() if e.get("event") in OUTCOMES]
    return len(done) > seen


@pytest.mark.parametrize("capacity", [4096, 2048], ids=["same-capacity", "new-capacity"])
def test_queued_mail_survives_a_config_change(soupd_home: Home, capacity: int) -> None:
    soupd_home.add_soul("ada", "cognition = true\n[mailbox]\ncapacity = 4096\n")
    total = 6000
    with running(soupd_home) as daemon, daemon.connect() as conn:
        replies: list[dict[str, Any]] = []

        def read() -> None:
            for _ in range(total):
                replies.append(conn.recv())

        reader = threading.Thread(target=read)
        reader.start()
        seen = sum(1 for e in daemon.log() if e.get("event") in OUTCOMES)
        blob = pipelined_pushes(
            "ada",
            ((f"r{i}", f"harbour crane log line {i}: wind {i % 17} knots") for i in range(total)),
        )
        sender = conn.send_in_background(blob)
        # Reload while mail is queued: the config changes under the soul.
        wait_for(lambda: len(replies) > 200, "the soul to be busy")
        soupd_home.add_soul(
            "ada", f"cognition = true\n[mailbox]\ncapacity = {capacity}\n[recall]\nk = 7\n"
        )
        daemon.send_signal(signal.SIGHUP)
        sender.join(60)
        reader.join(120)
        assert not reader.is_alive(), f"{len(replies)} of {total} replies"
        wait_for(lambda: reloaded(daemon, seen), "the reload to finish")
        failed = [r for r in replies if "error" in r]
        assert failed == [], failed[:3]
        assert {r["result"]["status"] for r in replies} == {"stored"}
        changed = [e for e in daemon.log() if e.get("event") == "soul.reloaded"]
        assert changed, daemon.output()
        assert changed[-1]["change"] == "changed", changed
        assert daemon.counts("ada")[0] == total
