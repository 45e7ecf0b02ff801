"""The README's "Python client" section runs as written: each of its ```python blocks,
in a fresh interpreter, against a real daemon with nothing in it (the ``default``
soul), found through ``$SOUPD_SOCKET`` as a user's would be through the XDG default."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from e2e.harness import Home, StartSoupd

README = Path(__file__).resolve().parents[2] / "README.md"


def _blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = re.search(r"^## Python client\n(.*?)^## ", text, flags=re.S | re.M)
    assert section is not None, "README.md has no '## Python client' section"
    return re.findall(r"^```python\n(.*?)^```", section.group(1), flags=re.S | re.M)


BLOCKS = _blocks()


def test_the_quickstart_is_at_most_ten_lines() -> None:
    assert len(BLOCKS) == 2
    assert len(BLOCKS[0].strip().splitlines()) <= 10


# What each block prints, in order: the recalled memory, then what the context holds;
# the async one's recall of Ana's words, then the reflect its push caused.
EXPECTED = [
    [r"^1\.00 \[m1\] deploy failed: database migration timeout$", r"^## MEMORY$"],
    [r"^\['I moved to Lisbon last spring'\]$", r"^Output\(soul='default', kind='reflect'"],
]


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_a_readme_block_runs_as_written(
    index: int, soupd_home: Home, start_soupd: StartSoupd
) -> None:
    start_soupd()
    script = soupd_home.root / f"readme_{index}.py"
    script.write_text(BLOCKS[index], encoding="utf-8")
    env = {**soupd_home.env, "SOUPD_SOCKET": str(soupd_home.socket)}
    ran = subprocess.run(
        [sys.executable, str(script)],
        env=env,
        cwd=soupd_home.root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    for pattern in EXPECTED[index]:
        assert re.search(pattern, ran.stdout, flags=re.M), (pattern, ran.stdout)
