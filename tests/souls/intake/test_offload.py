"""Long texts gated and tokenised in a worker process (souls.intake.offload): the same
answer as on the loop, in a real anyio worker process."""

from __future__ import annotations

import os

import pytest

from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from souls.intake.offload import checked_words
from souls.text.tokenize import tokens
from supervisor.errors import RejectedInput
from supervisor.pace import OFFLOAD_CHARS

FILLER = "ok so um the standup moved to thursday, 那个发布改到周五吧 lol. "
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def long(text: str = "") -> str:
    body = (FILLER * (OFFLOAD_CHARS // len(FILLER) + 2))[: OFFLOAD_CHARS + 100]
    return body + text


def inline(config: HygieneConfig, text: str) -> list[str] | tuple[str, str]:
    try:
        HygieneGate(config).check(text)
    except RejectedInput as refused:
        return refused.code, str(refused)
    return tokens(text)


async def offloaded(config: HygieneConfig, text: str) -> list[str] | tuple[str, str]:
    try:
        return await checked_words(config, HygieneGate(config), text)
    except RejectedInput as refused:
        return refused.code, str(refused)


@pytest.mark.parametrize(
    ("config", "text"),
    [
        (HygieneConfig(), long()),
        (HygieneConfig(), long(f" my token is {TOKEN} ok")),
        (HygieneConfig(), long("\x07")),
        (HygieneConfig(max_chars=OFFLOAD_CHARS + 50), long()),
        (HygieneConfig(extra_patterns=["ACME-[0-9]{6}"]), long(" key ACME-123456")),
        (HygieneConfig(credentials=False), long(f" {TOKEN}")),
        (HygieneConfig(), long("\nsame line\nsame line\nsame line\nsame line")),
        (HygieneConfig(), "short, on the loop: " + TOKEN),
        (HygieneConfig(), "short and clean, on the loop"),
    ],
)
async def test_a_long_text_gets_the_loops_answer(config: HygieneConfig, text: str) -> None:
    assert await offloaded(config, text) == inline(config, text)


def workers() -> set[int]:
    """This process's children that are anyio worker processes (``python -m
    anyio.to_process``), from /proc."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                args = cmdline.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"anyio.to_process" in args:
            found.add(int(entry))
    return found


async def test_long_texts_go_to_a_worker_process_and_short_ones_stay() -> None:
    gate = HygieneGate(HygieneConfig())
    before = workers()
    await checked_words(HygieneConfig(), gate, "short and clean " * 10)
    assert workers() == before  # a short text never starts one
    await checked_words(HygieneConfig(), gate, long())
    assert workers()  # the long text went to a worker process, which idles on
