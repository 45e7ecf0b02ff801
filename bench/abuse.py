"""Resource attacks on the socket, one after another, against one real daemon.

The daemon runs with an open-file limit of ``--nofile`` (set on it before it starts).
A bystander holds one connection from the start and, every ``--every`` seconds, pings
(``daemon.status``, which no soul answers) and pushes a chat line to the soul ``timed``;
its latencies are filed under the attack running at the time. A sampler reads the
daemon's RSS 20 times a second. The attacks, each bounded in count and in time:

1. *descriptors*: ``--waves`` waves of ``--connections`` connections, each held
   ``--hold`` seconds, then closed;
2. *pipeliner*: one connection writes ``--exports`` ``export`` requests for the soul
   ``archive`` (pages of about 7 MB) and reads nothing for ``--stall`` seconds, then
   hangs up;
3. *slow-loris*: ``--loris`` connections for ``--loris-seconds``: a third silent, a
   third trickling a frame a byte at a time, a third sending a 1 MiB frame without
   its newline;
4. *gate flood*: ``--flood`` pushes of the hygiene gate's worst case,
   ``("sk-" * 2666)[:8000]``, to the soul ``target`` (at most ``--flood-window`` in
   flight, for at most ``--flood-seconds``).

Targets: the daemon stays up through every attack (same process, no child crashed, the
bystander's connection never dropped); RSS under the pipeliner <= 256 MiB; the timed
soul's push p99 during the gate flood <= 2x idle; ping p99 during the descriptor and
slow-loris attacks <= 50 ms. ``frame_timeout`` and ``idle_timeout`` are shortened
(``--frame-timeout``, ``--idle-timeout``) so that they act within the attack's window.

    python bench/abuse.py [--nofile 1024] [--connections 1100] [--exports 300] [--json -]

Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import random
import resource
import socket
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _daemon import Daemon, machine, percentile, rss_kib, running_daemon, write_json

WORST = ("sk-" * 2666)[:8000]
IDLE = "idle"
ATTACKS = ("descriptors", "pipeliner", "slow-loris", "gate flood")

_LINES = [
    "ok so um, the standup is at {h}:30 tmrw? no wait, {h2}, {who} moved it",
    "yeah {day} works. actually hmm, no, lets do {day2}, the migration needs a day",
    "i said {n} replicas but thats too many lol, {n2} is plenty for the staging box",
    "那个, {day}的发布要不改到{day2}? 嗯……其实还是{day}吧, 测试还没跑完",
    "wait did anyone book the room for {day}? i thot {who} did but apparently not",
    "sorry typo, i meant {n} GB not {n2}, the disk on db-{n2} is nearly ful",
    "对了 {who} 说预算只有 {n} 万, 不是 {n2} 万, 我之前听错了, 抱歉",
    "can we revisit the cache ttl? {n}s felt fine but {who} saw stale prices at {h}pm",
    "fine by me. tbh i changed my mind twice already today, take it w/ a grain of salt",
]
_WHO = ["Mia", "Joe", "Priya", "李雷", "韩梅梅", "Tomás"]
_DAYS = ["monday", "thursday", "friday", "周三", "周五"]


def chat(seed: int, chars: int) -> str:
    """A messy chat transcript of at most ``chars`` characters."""
    rng = random.Random(seed)
    lines: list[str] = []
    size = 0
    for i in range(chars):
        line = rng.choice(_LINES).format(
            who=rng.choice(_WHO),
            day=rng.choice(_DAYS),
            day2=rng.choice(_DAYS),
            h=rng.randrange(7, 12),
            h2=rng.randrange(1, 6),
            n=rng.randrange(2, 400),
            n2=rng.randrange(2, 90),
        )
        minute = (seed * 7 + i) % 1440
        line = f"[{minute // 60:02d}:{minute % 60:02d}] {rng.choice(_WHO)}: {line}"
        if size + len(line) + 1 > chars:
            break
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def frame(request_id: Any, method: str, params: dict[str, Any]) -> bytes:
    body = {"id": request_id, "method": method, "params": params}
    return json.dumps(body, ensure_ascii=False).encode() + b"\n"


class Line:
    """A blocking client with a timeout: one request at a time on one connection."""

    def __init__(self, path: Path, timeout: float = 60.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self._file = self.sock.makefile("rb")
        self._ids = 0

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self._ids += 1
        self.sock.sendall(frame(self._ids, method, params or {}))
        line = self._file.readline()
        if not line:
            raise ConnectionError("the daemon closed the connection")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def close(self) -> None:
        self._file.close()
        self.sock.close()


class Phases:
    """When each attack ran; latencies and RSS samples are filed by their time."""

    def __init__(self) -> None:
        self.marks: list[tuple[float, str]] = [(time.monotonic(), IDLE)]
        self.latency: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        self.rss_mib: dict[str, list[float]] = defaultdict(list)
        self.cpu_s: dict[str, list[float]] = defaultdict(list)  # the daemon's, cumulative
        self.failures: list[str] = []

    def mark(self, name: str) -> None:
        self.marks.append((time.monotonic(), name))

    def at(self, moment: float) -> str:
        return [name for start, name in self.marks if start <= moment][-1]


def bystand(path: str, every: float, stop: Any, out: Any) -> None:
    """In its own process (so that the attacks' Python does not delay it): ping and
    push every ``every`` seconds on one connection; send back (samples, failure)."""
    samples: list[tuple[float, float, float]] = []
    failure = None
    line = Line(Path(path), timeout=60.0)
    try:
        i = 0
        while not stop.wait(every):
            started = time.monotonic()
            line.call("daemon.status")
            pinged = time.monotonic()
            text = chat(10_000 + i, 160)
            line.call("event.push", {"soul": "timed", "text": text, "ref": f"b{i}"})
            pushed = time.monotonic()
            samples.append((started, (pinged - started) * 1000, (pushed - pinged) * 1000))
            i += 1
    except (OSError, ConnectionError, RuntimeError, ValueError) as exc:
        failure = f"{exc!r} at {time.monotonic():.3f}"
    finally:
        line.close()
    out.send((samples, failure))


class Bystander:
    def __init__(self, path: Path, every: float) -> None:
        context = multiprocessing.get_context("fork")
        self._stop = context.Event()
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(
            target=bystand, args=(str(path), every, self._stop, send), daemon=True
        )

    def start(self) -> None:
        self._process.start()

    def alive(self) -> bool:
        return self._process.is_alive()

    def finish(self, phases: Phases) -> None:
        self._stop.set()
        if self._receive.poll(60):
            samples, failure = self._receive.recv()
            for started, ping, push in samples:
                phase = phases.at(started)
                phases.latency[phase]["ping"].append(ping)
                phases.latency[phase]["push"].append(push)
            if failure is not None:
                phases.failures.append(f"bystander: {failure}")
        else:
            phases.failures.append("bystander: no samples")
        self._process.join(10)


class Sampler(threading.Thread):
    def __init__(self, pid: int, phases: Phases) -> None:
        super().__init__(daemon=True)
        self._pid, self._phases = pid, phases
        self.stop = threading.Event()

    def run(self) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            while not self.stop.wait(0.05):
                rss = rss_kib(self._pid) / 1024
                phase = self._phases.at(time.monotonic())
                self._phases.rss_mib[phase].append(rss)
                self._phases.cpu_s[phase].append(cpu_seconds(self._pid))


def cpu_seconds(pid: int) -> float:
    """The process's user + system CPU time so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def open_file_limit(soft: int) -> Iterator[None]:
    """Our own soft limit is ``soft`` inside (the daemon inherits it), as before outside."""
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, before[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


def raise_own_limit(need: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))


def nonblocking(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX)
    sock.setblocking(False)
    try:
        sock.connect(str(path))
    except OSError:  # the backlog is full (EAGAIN), or worse
        sock.close()
        return None
    return sock


def verdict(sock: socket.socket) -> str:
    """What the daemon did with a connection: the error code it sent, closed, or open."""
    try:
        data = sock.recv(1 << 16)
    except BlockingIOError:
        return "open"
    except OSError:
        return "reset"
    if not data:
        return "closed"
    with contextlib.suppress(ValueError, KeyError):
        return str(json.loads(data.partition(b"\n")[0])["error"]["code"])
    return "answered"


# --- the attacks ------------------------------------------------------------------------


def descriptors(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    seen: Counter[str] = Counter()
    for _ in range(args.waves):
        socks = []
        for _ in range(args.connections):
            sock = nonblocking(path)
            if sock is None:
                seen["connect failed"] += 1
            else:
                socks.append(sock)
        time.sleep(args.hold)
        for sock in socks:
            seen[verdict(sock)] += 1
            sock.close()
        time.sleep(0.5)
    return {"connections": dict(seen)}


def pipeliner(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(10)
    sock.connect(str(path))
    requests = b"".join(frame(i, "export", {"soul": "archive"}) for i in range(args.exports))
    sock.sendall(requests)
    time.sleep(args.stall)  # reading nothing
    sock.close()
    time.sleep(3.0)  # after the hang-up
    return {"exports": args.exports, "request_bytes": len(requests)}


def slow_loris(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    push = frame("loris", "event.push", {"soul": "timed", "text": chat(5, 7000)})
    big = frame("big", "event.push", {"soul": "timed", "text": chat(6, 1_100_000)})[: 1 << 20]
    silent: list[socket.socket] = []
    drip: list[socket.socket] = []
    heavy: dict[socket.socket, int] = {}  # bytes of ``big`` sent on each
    for i in range(args.loris):  # in turn, so that each kind gets served (and refused)
        sock = nonblocking(path)
        if sock is None:
            continue
        if i % 3 == 0:
            silent.append(sock)
        elif i % 3 == 1:
            drip.append(sock)
        else:
            heavy[sock] = 0
    deadline = time.monotonic() + args.loris_seconds
    step = 0
    while time.monotonic() < deadline:
        for sock in drip:
            with contextlib.suppress(OSError):
                sock.send(push[step % (len(push) - 1) : step % (len(push) - 1) + 1])
        for sock, sent in heavy.items():
            if sent < len(big):
                with contextlib.suppress(OSError):
                    heavy[sock] = sent + sock.send(big[sent : sent + (1 << 16)])
        step += 1
        time.sleep(0.25)
    seen: dict[str, Counter[str]] = {"silent": Counter(), "drip": Counter(), "1 MiB": Counter()}
    for name, socks in (("silent", silent), ("drip", drip), ("1 MiB", list(heavy))):
        for sock in socks:
            seen[name][verdict(sock)] += 1
            sock.close()
    return {"connections": {k: dict(v) for k, v in seen.items()}}


def gate_flood(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(120)
    sock.connect(str(path))
    window = threading.Semaphore(args.flood_window)
    statuses: Counter[str] = Counter()
    sent = 0
    done = threading.Event()

    def read() -> None:
        stream = sock.makefile("rb")
        with contextlib.suppress(OSError, ValueError):
            while not (done.is_set() and sum(statuses.values()) >= sent):
                line = stream.readline()
                if not line:
                    break
                reply = json.loads(line)
                statuses[
                    reply["result"]["status"] if "result" in reply else reply["error"]["code"]
                ] += 1
                window.release()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    started = time.monotonic()
    while sent < args.flood and time.monotonic() - started < args.flood_seconds:
        if not window.acquire(timeout=1.0):
            continue
        sock.sendall(
            frame(sent, "event.push", {"soul": "target", "text": WORST, "ref": f"f{sent}"})
        )
        sent += 1
    done.set()
    reader.join(120)
    sock.close()
    elapsed = time.monotonic() - started
    return {"pushes": sent, "replies": dict(statuses), "seconds": round(elapsed, 1)}


# --- running them -----------------------------------------------------------------------


def fill_archive(path: Path, events: int, chars: int) -> float:
    """Give ``archive`` ``events`` transcripts of ``chars``; returns one export page's MB."""
    line = Line(path, timeout=300)
    try:
        batch = max(1, (900_000 // (chars * 11 // 10)))
        for start in range(0, events, batch):
            chunk = [
                {"text": chat(i, chars), "ref": f"a{i}"}
                for i in range(start, min(events, start + batch))
            ]
            line.call("event.import", {"soul": "archive", "events": chunk})
        page = line.call("export", {"soul": "archive"})
    finally:
        line.close()
    return len(json.dumps(page, ensure_ascii=False).encode()) / 1e6


def stats(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"n": 0, "p50": None, "p99": None}
    return {
        "n": len(values),
        "p50": round(percentile(values, 50), 2),
        "p99": round(percentile(values, 99), 2),
    }


def crashed_children(daemon: Daemon) -> list[str]:
    found = []
    for line in (daemon.root / "daemon.log").read_text(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if entry.get("event") in ("child.crashed", "supervisor.gave_up"):
                found.append(str(entry.get("child")))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nofile", type=int, default=1024, help="the daemon's open-file limit")
    parser.add_argument("--connections", type=int, default=1100)
    parser.add_argument("--waves", type=int, default=3)
    parser.add_argument("--hold", type=float, default=2.0)
    parser.add_argument("--exports", type=int, default=300)
    parser.add_argument("--page-events", type=int, default=1000, help="events in archive")
    parser.add_argument("--event-chars", type=int, default=7000)
    parser.add_argument("--stall", type=float, default=15.0)
    parser.add_argument("--loris", type=int, default=1000)
    parser.add_argument("--loris-seconds", type=float, default=12.0)
    parser.add_argument("--flood", type=int, default=3000)
    parser.add_argument("--flood-window", type=int, default=8)
    parser.add_argument("--flood-seconds", type=float, default=20.0)
    parser.add_argument("--every", type=float, default=0.02, help="bystander period, s")
    # A p99 wants a few hundred samples: 10 s at one push every 20 ms gives ~400.
    parser.add_argument("--idle-seconds", type=float, default=10.0, help="idle phase, s")
    parser.add_argument(
        "--warmup-seconds", type=float, default=5.0, help="bystander running, unreported, s"
    )
    parser.add_argument("--frame-timeout", type=float, default=3.0)
    parser.add_argument("--idle-timeout", type=float, default=5.0)
    parser.add_argument("--only", choices=ATTACKS, action="append", help="run only these")
    parser.add_argument("--json", metavar="PATH", help="write the figures as JSON ('-': stdout)")
    args = parser.parse_args()
    raise_own_limit(args.connections + args.loris + 256)
    toml = f"[socket]\nframe_timeout = {args.frame_timeout}\nidle_timeout = {args.idle_timeout}\n"
    souls = {"archive": "", "target": "", "timed": "[lifecycle]\nhibernate_after = 0\n"}
    chosen = args.only or list(ATTACKS)
    runs: dict[str, Callable[[Path, argparse.Namespace], dict[str, Any]]] = {
        "descriptors": descriptors,
        "pipeliner": pipeliner,
        "slow-loris": slow_loris,
        "gate flood": gate_flood,
    }
    phases = Phases()
    notes: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        with open_file_limit(args.nofile):  # the daemon inherits it; we get ours back
            daemon = stack.enter_context(running_daemon(souls, daemon_toml=toml))
        pid = daemon.process.pid
        if "pipeliner" in chosen:
            notes["page_mb"] = round(
                fill_archive(daemon.socket, args.page_events, args.event_chars), 2
            )
        sampler = Sampler(pid, phases)
        bystander = Bystander(daemon.socket, args.every)
        # The bystander warms up before the idle figures: its soul's first turns (and
        # what filling the archive left the daemon to do) are not what idle means.
        phases.mark("between")
        sampler.start()
        bystander.start()
        time.sleep(args.warmup_seconds)
        phases.mark(IDLE)
        time.sleep(args.idle_seconds)  # the idle figures
        for name in chosen:
            phases.mark(name)
            notes[name] = runs[name](daemon.socket, args)
            notes[name]["up"] = daemon.process.poll() is None and bystander.alive()
            phases.mark("between")
            time.sleep(1.0)
        bystander.finish(phases)
        sampler.stop.set()
        sampler.join(5)
        alive = daemon.process.poll() is None
        crashed = crashed_children(daemon)
    figures = report(phases, notes, chosen, alive, crashed, args)
    figures["machine"] = machine()
    write_json(args.json, figures)
    return 0 if all(t["pass"] for t in figures["targets"]) else 1


def report(
    phases: Phases,
    notes: dict[str, Any],
    chosen: list[str],
    alive: bool,
    crashed: list[str],
    args: argparse.Namespace,
) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for name in [IDLE, *chosen]:
        rss = phases.rss_mib.get(name, [])
        latency = phases.latency.get(name, {})
        cpu = phases.cpu_s.get(name, [])
        rows[name] = {
            "rss_mib": {
                "first": round(rss[0], 1) if rss else None,
                "peak": round(max(rss), 1) if rss else None,
                "last": round(rss[-1], 1) if rss else None,
            },
            "cpu_s": round(cpu[-1] - cpu[0], 2) if len(cpu) > 1 else None,
            "ping_ms": stats(latency.get("ping", [])),
            "push_ms": stats(latency.get("push", [])),
            **({k: v for k, v in notes.get(name, {}).items()} if name != IDLE else {}),
        }
    print(
        f"daemon open-file limit {args.nofile}; frame_timeout {args.frame_timeout:g} s, "
        f"idle_timeout {args.idle_timeout:g} s; export page {notes.get('page_mb', '-')} MB"
    )
    print(
        f"{'':<12} {'up':<4} {'RSS MiB first/peak/last':<26} "
        f"{'ping p50/p99 ms':<18} {'push p50/p99 ms':<18} {'daemon CPU s':<12}"
    )
    for name, row in rows.items():
        up = "yes" if row.get("up", True) else "NO"
        rss = "/".join(str(row["rss_mib"][k]) for k in ("first", "peak", "last"))
        ping = "/".join(str(row["ping_ms"][k]) for k in ("p50", "p99"))
        push = "/".join(str(row["push_ms"][k]) for k in ("p50", "p99"))
        print(f"{name:<12} {up:<4} {rss:<26} {ping:<18} {push:<18} {row['cpu_s']!s:<12}")
    for name in chosen:
        extra = {k: v for k, v in notes[name].items() if k != "up"}
        print(f"  {name}: {json.dumps(extra, ensure_ascii=False)}")
    if phases.failures:
        print("failures: " + "; ".join(phases.failures))
    if crashed:
        print("children crashed: " + ", ".join(crashed))
    targets = []

    def target(what: str, value: Any, ok: bool) -> None:
        targets.append({"target": what, "value": value, "pass": bool(ok)})

    up = alive and not crashed and not phases.failures and all(notes[n]["up"] for n in chosen)
    target("daemon up through every attack", "yes" if up else "no", up)
    if "pipeliner" in chosen:
        peak = rows["pipeliner"]["rss_mib"]["peak"]
        target(
            "RSS under the non-reading pipeliner <= 256 MiB", peak, peak is not None and peak <= 256
        )
    if "gate flood" in chosen:
        idle, flood = rows[IDLE]["push_ms"]["p99"], rows["gate flood"]["push_ms"]["p99"]
        ok = idle is not None and flood is not None and flood <= 2 * idle
        target("timed soul's push p99 during the gate flood <= 2x idle", f"{flood} vs {idle}", ok)
    for name in ("descriptors", "slow-loris"):
        if name in chosen:
            p99 = rows[name]["ping_ms"]["p99"]
            target(f"ping p99 during {name} <= 50 ms", p99, p99 is not None and p99 <= 50)
    for t in targets:
        print(f"{'PASS' if t['pass'] else 'MISS'}  {t['target']}: {t['value']}")
    return {"args": vars(args), "phases": rows, "targets": targets, "crashed": crashed}


if __name__ == "__main__":
    sys.exit(main())
