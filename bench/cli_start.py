"""How long ``soupd`` takes to start: ``soupd --help`` (the parser and nothing else) and
``soupd status`` against no daemon (a client command up to its first connect), against
a bare ``python -c pass`` on the same interpreter. Median and 90th percentile of
``--runs`` fresh processes each, wall-clock; the target is ``--help`` <= 150 ms.

    python bench/cli_start.py [--runs 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOUPD = Path(sys.executable).with_name("soupd")


def timed(argv: list[str], runs: int, env: dict[str, str]) -> dict[str, float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=False)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {
        "median_ms": round(statistics.median(times), 1),
        "p90_ms": round(times[int(0.9 * (len(times) - 1))], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sd-bench-") as root:
        env = {
            **os.environ,
            "XDG_CONFIG_HOME": f"{root}/config",
            "XDG_STATE_HOME": f"{root}/state",
            "XDG_RUNTIME_DIR": root,
        }
        env.pop("SOUPD_SOCKET", None)
        env.pop("SOUPD_CONFIG", None)
        figures = {
            "python -c pass": timed([sys.executable, "-c", "pass"], args.runs, env),
            "soupd --help": timed([str(SOUPD), "--help"], args.runs, env),
            "soupd status (no daemon)": timed([str(SOUPD), "status"], args.runs, env),
        }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{'command':<28} {'median':>8} {'p90':>8}   ({args.runs} runs)")
    for name, f in figures.items():
        print(f"{name:<28} {f['median_ms']:>6.1f}ms {f['p90_ms']:>6.1f}ms")


if __name__ == "__main__":
    main()
