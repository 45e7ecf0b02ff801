"""Cutting the byte stream into frames: chat pushes in chunks of any size."""

from __future__ import annotations

import json
import random

import pytest
from e2e.chatter import conversation, turns

from channels.framing import FrameSplitter


def pushes(n: int) -> list[bytes]:
    lines = turns(4, n)
    return [
        json.dumps(
            {"id": i, "method": "event.push", "params": {"soul": "a", "text": line}},
            ensure_ascii=False,
        ).encode()
        for i, line in enumerate(lines)
    ]


@pytest.mark.parametrize("seed", range(5))
def test_frames_come_out_whole_whatever_the_chunking(seed: int) -> None:
    frames = pushes(60)
    stream = b"\n".join(frames) + b"\n"
    rng = random.Random(seed)
    splitter = FrameSplitter(1 << 20)
    got: list[bytes | None] = []
    start = 0
    while start < len(stream):
        size = rng.choice([1, 7, 64, 500, 4096])
        got += splitter.feed(stream[start : start + size])
        start += size
    assert got == frames
    assert not splitter.begun
    assert splitter.finish() is None


def test_a_frame_over_the_cap_is_reported_once_and_its_line_skipped() -> None:
    splitter = FrameSplitter(4096)
    big = json.dumps({"id": 1, "method": "event.push", "params": {"text": conversation(1, 9000)}})
    ok = pushes(1)[0]
    got: list[bytes | None] = []
    data = big.encode() + b"\n" + ok + b"\n"
    for start in range(0, len(data), 1000):
        got += splitter.feed(data[start : start + 1000])
        assert splitter.held <= 4096 + 1000
    assert got == [None, ok]


def test_blank_lines_are_left_out_and_the_tail_is_kept_for_the_end() -> None:
    splitter = FrameSplitter(1 << 20)
    first, second = pushes(2)
    assert splitter.feed(b"\n  \n" + first + b"\r\n\n" + second[:10]) == [first + b"\r"]
    assert splitter.begun
    assert splitter.fresh
    assert splitter.held == 10
    assert splitter.feed(second[10:20]) == []
    assert not splitter.fresh  # the same frame goes on
    assert splitter.finish() == second[:20]
    assert not splitter.begun


def test_a_frame_begun_after_a_newline_is_fresh() -> None:
    splitter = FrameSplitter(1 << 20)
    first, second = pushes(2)
    splitter.feed(first[:30])
    assert splitter.fresh
    splitter.feed(first[30:] + b"\n" + second[:5])
    assert splitter.fresh  # the old frame ended; this one began in this chunk
    assert splitter.held == 5


@pytest.mark.parametrize("seed", range(3))
def test_large_frames_in_mixed_pieces_come_out_whole_and_are_counted(seed: int) -> None:
    # Small pieces are gathered, large ones kept as they came: both end up in order.
    rng = random.Random(seed)
    frames = [
        json.dumps({"id": i, "params": {"text": conversation(seed + i, 150_000)}}).encode()
        for i in range(3)
    ]
    stream = b"\n".join(frames) + b"\n"
    splitter = FrameSplitter(1 << 20)
    got: list[bytes | None] = []
    start = 0
    while start < len(stream):
        size = rng.choice([1, 3, 4095, 4096, 65536, 70000])
        piece = stream[start : start + size]
        got += splitter.feed(piece)
        start += len(piece)
        since_newline = len(stream[:start]) - (stream.rfind(b"\n", 0, start) + 1)
        assert splitter.held == since_newline
    assert got == frames
    assert splitter.held == 0
