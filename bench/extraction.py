"""Rule extraction against hostile text: the time of ``extract_rules`` per event.

Every event (up to the hygiene gate's 8,000 characters) is read by the claim rules on
the event loop that every soul shares (issue 19: one soul never stalls the others).
Each fragment (the trigger of a rule, English or Chinese, or what a match asks of its
sentence) is repeated to 1,000 and to 8,000 characters, one sentence with no end, and
timed in this process, best of ``--runs``; then the same for ordinary text, LoCoMo turns
joined to 8,000 characters when ``--data`` is given. Printed per fragment: ms at 1k and
8k and their ratio (about 8 for linear code); the worst and the median close the table.

    python bench/extraction.py [--runs 7] [--data ../shared/data/locomo/locomo10-dev.json]
        [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _daemon import write_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from souls.knowledge.claims import extract_rules

SHORT, LONG = 1_000, 8_000
FRAGMENTS = [
    *("my name is |call me |my cat is called Tuanzi and |we have a dog named Rex and "
      "|we renamed the |we renamed the cat Mochi and she is now called Mochi |my wife "
      "|my daughter |my brother Sam and |I'm allergic to |Bob is allergic to "
      "|I have a peanut allergy and |I live in |I moved to Lisbon and |I grew up in "
      "|I work as a |I'm a nurse at |I got a job at |I love |I like |I don't like "
      "|my birthday is |please reply in |I promise |I promised you I'd |I'm planning to "
      "|I'm going to |I will |I'll call you tomorrow |I want to |we cancelled the "
      "|the party is cancelled and |I'm not going to |I painted |I went to Paris and "
      "|I've been to |I'm taking |I used to |my sister and I went |last year "
      "|two weeks ago |next Monday |I think |apparently |if I |what I love |\"I love "
      "|not Tom, but |I |I|a|a |and |the |Mochi |called |sk-|, |? |。|Dr. ").split("|"),
    *("我叫|我的猫叫团子|我把猫改名叫|我养了一只猫叫|我老婆叫|我女儿叫|我对花生过敏|我住在|我老家是"
      "|我在腾讯工作|我是一名|我喜欢|我爱吃|我不喜欢|请用中文回答|我答应你|说好了|我打算|我要"
      "|我明天要去|我们取消了|成都不去了|我们上周去了|我去过|五月八号|我").split("|"),
]  # fmt: skip


def best(read: Callable[[str], object], text: str, runs: int) -> float:
    """The fastest of ``runs`` calls of ``read`` on ``text``, in seconds."""
    fastest = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        read(text)
        fastest = min(fastest, time.perf_counter() - start)
    return fastest


def _rules(text: str) -> object:
    return extract_rules(text, sender="u", ts=1.7e9, kind="message")


def repeated(fragment: str, length: int) -> str:
    return (fragment * (length // len(fragment) + 1))[:length]


def ordinary(path: str) -> list[str]:
    """LoCoMo turns, one speaker's joined to texts of LONG characters."""
    with open(path) as handle:
        samples = json.load(handle)
    said: dict[str, list[str]] = {}
    for sample in samples:
        for key, turns in sample["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    said.setdefault(turn["speaker"], []).append(turn["text"])
    texts = []
    for turns in said.values():
        text = ""
        for turn in turns:
            text += turn + " "
            if len(text) >= LONG:
                texts.append(text[:LONG])
                text = ""
    return texts


def report(
    read: Callable[[str], object], fragments: Sequence[str], warm: str, over_ms: float
) -> None:
    """Time ``read`` on every fragment repeated to 1k and 8k characters (and on ordinary
    LoCoMo text with ``--data``) and print the table; shared by bench/goal_talk.py."""
    parser = argparse.ArgumentParser(
        description=(sys.modules["__main__"].__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--data", help="a LoCoMo file: time ordinary text too")
    parser.add_argument("--json", help="write the figures as JSON to this file (- for stdout)")
    args = parser.parse_args()
    read(repeated(warm, SHORT))  # compile the patterns
    rows: list[dict[str, Any]] = []
    print(f"{'fragment':38s} {'1k ms':>8s} {'8k ms':>8s} {'ratio':>6s}")
    for fragment in fragments:
        a = best(read, repeated(fragment, SHORT), args.runs)
        b = best(read, repeated(fragment, LONG), args.runs)
        rows.append({"fragment": fragment, "ms_1k": a * 1e3, "ms_8k": b * 1e3})
        print(f"{fragment!r:38s} {a * 1e3:8.2f} {b * 1e3:8.2f} {b / max(a, 1e-6):6.1f}")
    eights = [row["ms_8k"] for row in rows]
    worst = max(rows, key=lambda row: row["ms_8k"])
    print(f"\nhostile, 8k: worst {worst['ms_8k']:.2f} ms ({worst['fragment']!r}),", end=" ")
    over = sum(e > over_ms for e in eights)
    print(f"median {statistics.median(eights):.2f} ms, over {over_ms:g} ms: {over}")
    figures: dict[str, Any] = {"fragments": rows}
    if args.data:
        times = [best(read, text, args.runs) * 1e3 for text in ordinary(args.data)]
        figures["ordinary_ms_8k"] = times
        print(
            f"ordinary, 8k ({len(times)} texts of LoCoMo turns): worst {max(times):.2f} ms,"
            f" median {statistics.median(times):.2f} ms"
        )
    if args.json:
        write_json(args.json, figures)


def main() -> None:
    report(_rules, FRAGMENTS, "I love ", 5.0)


if __name__ == "__main__":
    main()
