"""Many souls in one daemon: start-up time, memory per idle soul, waking a hibernated one.

``--souls`` soul files (default 1,000) in one daemon's souls folder, every key default
but ``[lifecycle] hibernate_after`` (``--hibernate-after``, short so that souls woken by
the bench fall asleep again soon). Measured on a real ``soupd start``:

* start-up: from spawning the daemon until its socket answers ``daemon.status`` (it
  listens only once every soul is hosted, so this is READY), on a fresh state (no soul
  has a database yet) and again on the state that run left (every soul has one);
* RSS (VmRSS, /proc/PID/status) with every soul hibernating, after the start-up
  catch-up is done, and per idle soul: (RSS - RSS of a daemon with one soul) / (N - 1);
* wake latency: the first reply from a hibernated soul (a ``recall``), p50/p95 over a
  sample of souls, beside the same request to the same soul once it is awake.

    python bench/scale.py [--souls 1000] [--sample 300] [--json FILE]

(Not ``bench/souls.py``: a script's folder comes first on ``sys.path``, and a module
named ``souls`` there would shadow the ``souls`` package for every script in bench/.)
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from _daemon import Client, Daemon, percentile, running_daemon, wait_until, write_json


def settled(daemon: Daemon) -> bool:
    """Catch-up done and every soul hibernating (or failed)."""
    with Client(daemon.socket) as client:
        status = client.call("daemon.status")
    return bool(status["souls_catching_up"] == 0 and status["souls_awake"] == 0)


def settled_rss(daemon: Daemon) -> int:
    wait_until(lambda: settled(daemon), "every soul to hibernate", timeout=600)
    time.sleep(0.5)  # let freed memory go back before reading VmRSS
    return daemon.rss_kib()


def populate(daemon: Daemon, names: list[str]) -> float:
    """One event into every soul (each wakes, creates its database); seconds taken."""
    started = time.perf_counter()
    with Client(daemon.socket) as client:
        for name in names:
            client.call("event.push", {"soul": name, "text": f"{name} keeps the lighthouse log"})
    return time.perf_counter() - started


def wake_latencies(daemon: Daemon, names: list[str]) -> tuple[list[float], list[float]]:
    """(first reply from each soul while hibernating, the next one while awake)."""
    asleep: list[float] = []
    awake: list[float] = []
    with Client(daemon.socket) as client:
        for name in names:
            params = {"soul": name, "query": "lighthouse log", "k": 5}
            for into in (asleep, awake):
                started = time.perf_counter()
                found = client.call("recall", params)
                into.append(time.perf_counter() - started)
                assert found["items"], f"{name} lost its memory"
    return asleep, awake


def measure(souls: int, sample: int, hibernate_after: float) -> dict[str, Any]:
    names = [f"soul{n:05d}" for n in range(souls)]
    toml = f"[lifecycle]\nhibernate_after = {hibernate_after}\n"
    with running_daemon({"solo": toml}) as solo:
        baseline = settled_rss(solo)
    root = Path(tempfile.mkdtemp(prefix="soupd-souls-"))
    try:
        with running_daemon(dict.fromkeys(names, toml), root=root) as cold:
            cold_start = cold.startup_s
            cold_rss = settled_rss(cold)
            populate_s = populate(cold, names)
        with running_daemon(root=root) as warm:
            warm_start = warm.startup_s
            warm_rss = settled_rss(warm)
            picked = random.Random(5).sample(names, min(sample, souls))
            asleep, awake = wake_latencies(warm, picked)
            after_rss = settled_rss(warm)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {
        "souls": souls,
        "startup_fresh_s": round(cold_start, 3),
        "startup_s": round(warm_start, 3),
        "rss_one_soul_mib": round(baseline / 1024, 1),
        "rss_fresh_mib": round(cold_rss / 1024, 1),
        "rss_mib": round(warm_rss / 1024, 1),
        "rss_after_wakes_mib": round(after_rss / 1024, 1),
        "rss_per_idle_soul_kib": round((warm_rss - baseline) / max(souls - 1, 1), 1),
        "first_wakes_per_s": round(souls / populate_s, 1),
        "wake_p50_ms": round(percentile(asleep, 50) * 1000, 2),
        "wake_p95_ms": round(percentile(asleep, 95) * 1000, 2),
        "awake_p50_ms": round(percentile(awake, 50) * 1000, 2),
        "awake_p95_ms": round(percentile(awake, 95) * 1000, 2),
        "wakes_sampled": len(asleep),
    }


LABELS = {
    "souls": "souls configured",
    "startup_fresh_s": "start-up, fresh state (s)",
    "startup_s": "start-up, every soul with a database (s)",
    "rss_one_soul_mib": "RSS, one soul (MiB)",
    "rss_fresh_mib": "RSS, all hibernating, fresh state (MiB)",
    "rss_mib": "RSS, all hibernating (MiB)",
    "rss_after_wakes_mib": "RSS, all hibernating again after the wakes (MiB)",
    "rss_per_idle_soul_kib": "RSS per idle soul (KiB)",
    "first_wakes_per_s": "first wakes/s (soul creates its database)",
    "wake_p50_ms": "first reply from a hibernated soul, p50 (ms)",
    "wake_p95_ms": "first reply from a hibernated soul, p95 (ms)",
    "awake_p50_ms": "the same request awake, p50 (ms)",
    "awake_p95_ms": "the same request awake, p95 (ms)",
    "wakes_sampled": "hibernated souls sampled",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--souls", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=300, help="souls whose wake is timed")
    parser.add_argument("--hibernate-after", type=float, default=1.0)
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    figures = measure(args.souls, args.sample, args.hibernate_after)
    for key, label in LABELS.items():
        print(f"{label:<52} {figures[key]:>10}")
    write_json(args.json, figures)


if __name__ == "__main__":
    main()
