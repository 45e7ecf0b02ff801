"""The README's first steps with the CLI ("First event, recall, context") run as a new
user runs them: each command of its ``sh`` block in order, against a daemon with
nothing in it (the ``default`` soul). Each succeeds, prints what the comment under it
says, and the narrowed recall (``--sender ci --since ...``) finds the event the block
sent as ``ci``."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

from .harness import SOUPD, Home, StartSoupd

README = Path(__file__).resolve().parents[2] / "README.md"


def first_steps() -> list[tuple[str, list[str]]]:
    """The block's commands, each with the output lines its comments promise."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## First event, recall, context\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("# "):
            steps[-1][1].append(line[2:])
        elif line.strip():
            steps.append((line, []))
    return steps


def test_the_first_steps_run_as_written(soupd_home: Home, start_soupd: StartSoupd) -> None:
    start_soupd()
    steps = first_steps()
    assert len(steps) >= 8
    outputs: dict[str, str] = {}
    for command, promised in steps:
        assert command.startswith(".venv/bin/soupd "), command
        # The command as a shell reads it (its trailing comment gone), run by our soupd.
        argv = shlex.split(command, comments=True)[1:]
        done = subprocess.run(
            [str(SOUPD), *argv],
            env=soupd_home.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert (done.returncode, done.stderr) == (0, ""), (command, done.stderr)
        assert done.stdout.splitlines()[: len(promised)] == promised, (command, done.stdout)
        outputs[" ".join(argv)] = done.stdout

    (narrowed,) = [
        out for argv, out in outputs.items() if argv.startswith("recall") and "--sender" in argv
    ]
    assert re.match(r"\[m1\] \d\.\d{3} .*deploy failed: database migration timeout", narrowed)
    assert "(nothing recalled)" not in narrowed
