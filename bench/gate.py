"""The hygiene gate against hostile text: its worst time per event, and what a flood of
such text at one soul does to another soul's pushes.

1. *per input*: ``HygieneGate.check`` in this process on adversarial texts of
   ``max_chars`` (8,000) characters — repeated prefixes of every rule ("sk-" * N,
   "ghp_" * N, "password=" * N...), long runs, a soul's own ``extra_patterns`` with its
   worst text. ``first`` is the first call (the automaton still being built), ``warm``
   the best of the next calls; the maximum of both is the gate's worst case.
2. *bystander*: a real daemon with three souls. One client pushes to ``bystander`` one
   event at a time and times each ack, first idle, then during attacks: another client
   pipelines ``--flood`` pushes at once at ``target`` (the adversarial texts the gate
   refuses; then those it lets through, which are stored) or at ``custom`` (``(a+)+$``
   in its ``extra_patterns``). The figure is the bystander's latency during each kind
   of attack against its idle latency.

    python bench/gate.py [--pushes 300] [--flood 400] [--rounds 12] [--json -]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from _daemon import Client, machine, percentile, running_daemon, write_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from supervisor.errors import RejectedInput

MAX = 8000
# Each is repeated to MAX characters: the prefix of a rule over and over makes every
# position a start that fails late, which is what made the old regexes quadratic.
PREFIXES = [
    "sk-", "sk-ant-", "sk-proj-", "ghp_", "github_pat_", "glpat-", "xoxb-", "AKIA", "AIza",
    "eyJ", "eyJa.", "Bearer ", "Basic ", "://", "://a:", "-----BEGIN ", "MIIEpAIBAAKC",
    "password=", "password: ", "password = ", "token=", "key=", "api_key: ", "secret:",
    "my password is ", "the password for ", "密码是", "密码\uff1a", "令牌是 ", "--password ",
    "<password>", "1234567890:", "a", "a ", "A1", "=", ":", "\u200b", "ab\u200b",
    "hooks.slack.com/services/", "AGE-SECRET-KEY-1", "pypi-AgEI", "curl -u ", "mysql -p",
]  # fmt: skip
CUSTOM = r"(a+)+$"  # the pattern from the issue; catastrophic on Python's re
CUSTOM_TEXT = "a" * (MAX - 1) + "!"


def adversarial() -> dict[str, str]:
    texts = {p: (p * (MAX // len(p) + 1))[:MAX] for p in PREFIXES}
    texts["a*26+!"] = "a" * 26 + "!"
    texts["a*7999+!"] = CUSTOM_TEXT
    return texts


def time_check(gate: HygieneGate, text: str) -> float:
    started = time.perf_counter()
    with contextlib.suppress(RejectedInput):
        gate.check(text)
    return (time.perf_counter() - started) * 1000


def per_input() -> dict[str, Any]:
    builtin = HygieneGate(HygieneConfig())
    custom = HygieneGate(HygieneConfig(credentials=False, extra_patterns=[CUSTOM]))
    rows = []
    for name, text in adversarial().items():
        for label, gate in (("builtin", builtin), ("extra", custom)):
            first = time_check(gate, text)
            warm = min(time_check(gate, text) for _ in range(5))
            rows.append({"input": name, "gate": label, "first_ms": first, "warm_ms": warm})
    worst = max(rows, key=lambda r: max(r["first_ms"], r["warm_ms"]))
    return {"rows": rows, "worst": worst}


def attack(path: Path, soul: str, texts: list[str], count: int, tag: str) -> None:
    """``count`` pushes to ``soul`` pipelined on one connection; returns at the last ack."""
    blob = b"".join(
        json.dumps(
            {
                "id": i,
                "method": "event.push",
                "params": {"soul": soul, "text": texts[i % len(texts)][: MAX - 9] + f" {tag}"},
            }
        ).encode()
        + b"\n"
        for i in range(count)
    )
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(path))
        writer = threading.Thread(target=sock.sendall, args=(blob,), daemon=True)
        writer.start()
        stream = sock.makefile("rb")
        for _ in range(count):
            stream.readline()
        writer.join()


def latencies(
    client: Client, pushes: int, tag: str, until: threading.Thread | None = None
) -> list[float]:
    """Push to the bystander one at a time: ``pushes`` times, or while ``until`` runs."""
    out = []
    i = 0
    while (until is not None and until.is_alive()) or (until is None and i < pushes):
        frame = client.frame(
            "event.push", {"soul": "bystander", "text": f"{tag} note {i}: the harbour crane moved"}
        )
        started = time.perf_counter()
        client.send(frame)
        out.append((time.perf_counter() - started) * 1000)
        i += 1
    return out


def attack_kinds() -> dict[str, tuple[str, list[str]]]:
    """Soul and texts per kind of attack: hostile texts the gate refuses (its own cost),
    hostile texts it lets through (then stored: the write path's cost, beyond the
    gate), and the issue's ``(a+)+$`` on a soul that has it in ``extra_patterns``."""
    gate = HygieneGate(HygieneConfig())
    refused, stored = [], []
    for text in adversarial().values():
        try:
            gate.check(text)
            stored.append(text)
        except RejectedInput:
            refused.append(text)
    return {
        "refused": ("target", refused),
        "stored": ("target", stored),
        "extra_patterns": ("custom", ["a" * 26 + "!", CUSTOM_TEXT[: MAX - 9]]),
    }


def bystander(pushes: int, count: int, rounds: int) -> dict[str, Any]:
    """The bystander's latency idle, then during ``rounds`` attacks of ``count``
    pipelined pushes of each kind."""
    souls = {
        "bystander": "",
        "target": "",
        "custom": f"[hygiene]\ncredentials = false\nextra_patterns = [{json.dumps(CUSTOM)}]\n",
    }
    kinds = attack_kinds()
    figures: dict[str, Any] = {"attack_pushes": count, "attack_rounds": rounds}
    with running_daemon(souls) as daemon, Client(daemon.socket) as client:
        latencies(client, 50, "warm")
        idle = latencies(client, pushes, "idle")
        figures["idle_p50_ms"] = statistics.median(idle)
        figures["idle_p95_ms"] = percentile(idle, 95)
        for kind, (soul, texts) in kinds.items():
            during: list[float] = []
            longest = 0.0
            for r in range(rounds):
                started = time.perf_counter()
                thread = threading.Thread(
                    target=attack, args=(daemon.socket, soul, texts, count, f"{kind}{r}")
                )
                thread.start()
                during += latencies(client, 0, f"{kind}{r}", until=thread)
                thread.join()
                longest = max(longest, time.perf_counter() - started)
            figures[kind] = {
                "texts": len(texts),
                "attack_s_max": longest,
                "bystander_pushes": len(during),
                "p50_ms": statistics.median(during) if during else 0.0,
                "p95_ms": percentile(during, 95) if during else 0.0,
                "max_ms": max(during, default=0.0),
                "ratio_p50": (statistics.median(during) if during else 0.0)
                / figures["idle_p50_ms"],
            }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pushes", type=int, default=300, help="bystander pushes when idle")
    parser.add_argument("--flood", type=int, default=400, help="pushes per attack and soul")
    parser.add_argument("--rounds", type=int, default=12, help="attacks")
    parser.add_argument("--json", help="also write the figures as JSON to this path (- stdout)")
    args = parser.parse_args()
    gate = per_input()
    print(f"{'input':<28} {'gate':<8} {'first ms':>9} {'warm ms':>9}")
    for row in gate["rows"]:
        print(f"{row['input']!r:<28} {row['gate']:<8} {row['first_ms']:9.3f} {row['warm_ms']:9.3f}")
    worst = gate["worst"]
    print(
        f"worst: {worst['input']!r} ({worst['gate']}) "
        f"{max(worst['first_ms'], worst['warm_ms']):.3f} ms per {MAX}-character text"
    )
    other = bystander(args.pushes, args.flood, args.rounds)
    print(
        f"bystander push latency idle: p50 {other['idle_p50_ms']:.2f} ms  "
        f"p95 {other['idle_p95_ms']:.2f} ms"
    )
    for kind in ("refused", "stored", "extra_patterns"):
        f = other[kind]
        print(
            f"during {args.rounds} attacks of {args.flood} {kind} pushes ({f['texts']} texts, "
            f"longest {f['attack_s_max']:.2f} s, {f['bystander_pushes']} bystander pushes): "
            f"p50 {f['p50_ms']:.2f} ms  p95 {f['p95_ms']:.2f} ms  max {f['max_ms']:.2f} ms  "
            f"ratio p50 {f['ratio_p50']:.2f}x"
        )
    write_json(args.json, {"gate": gate, "bystander": other, "machine": machine()})


if __name__ == "__main__":
    main()
