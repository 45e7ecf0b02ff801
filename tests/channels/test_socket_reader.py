"""Reading a real socket pair with the descriptor watched: bytes, deadlines, the end,
cancellation, and what the selector is left with."""

from __future__ import annotations

import asyncio
import gc
import socket
from collections.abc import Iterator

import anyio
import pytest
from e2e.chatter import turns

from channels.socket_reader import SocketReader


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.setblocking(False)
    yield ours, theirs
    ours.close()
    theirs.close()


def watched(sock: socket.socket) -> bool:
    selector = asyncio.get_running_loop()._selector  # type: ignore[attr-defined]
    try:
        key = selector.get_key(sock.fileno())
    except KeyError:
        return False
    return bool(key.events & 1)  # EVENT_READ


async def test_a_conversation_arrives_in_order_whatever_the_pace(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    reader = SocketReader(ours, 4096)
    lines = "\n".join(turns(2, 40)).encode()
    got = bytearray()

    async def send() -> None:
        for start in range(0, len(lines), 97):
            theirs.sendall(lines[start : start + 97])
            await anyio.sleep(0.001 if start % 3 else 0)
        theirs.shutdown(socket.SHUT_WR)

    async with anyio.create_task_group() as tg:
        tg.start_soon(send)
        while True:
            try:
                chunk = await reader.receive()
            except anyio.EndOfStream:
                break
            assert 0 < len(chunk) <= 4096
            got += chunk
    assert bytes(got) == lines
    assert not watched(ours)  # the end stops the watch


async def test_a_deadline_raises_timeout_and_can_be_moved_while_waiting(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    reader = SocketReader(ours, 4096)
    now = anyio.current_time()
    with pytest.raises(TimeoutError):
        await reader.receive(now + 0.05)
    assert anyio.current_time() - now >= 0.05
    assert reader.deadline == float("inf")  # nothing armed once the receive is over

    async def extend_then_send() -> None:
        await anyio.sleep(0.05)
        reader.deadline = anyio.current_time() + 5  # as a settled request re-arms idle
        await anyio.sleep(0.1)
        theirs.sendall(b"late but in time\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(extend_then_send)
        assert await reader.receive(anyio.current_time() + 0.08) == b"late but in time\n"


async def test_bytes_are_taken_only_for_a_waiting_receive(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    reader = SocketReader(ours, 4096)
    theirs.sendall(b"first\n")
    assert await reader.receive() == b"first\n"
    assert watched(ours)
    # Nobody waits now: what comes next stays in the kernel and the watch stops.
    theirs.sendall(b"second\n")
    await anyio.sleep(0.02)
    assert not watched(ours)
    assert ours.recv(100, socket.MSG_PEEK) == b"second\n"
    assert await reader.receive() == b"second\n"
    reader.close()
    assert not watched(ours)


async def test_a_cancelled_receive_loses_nothing(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    reader = SocketReader(ours, 4096)
    for _ in range(20):
        with anyio.move_on_after(0.001):
            await reader.receive()
    # The chunk came and the receive was cancelled in the same moment (before the
    # waiting task ran again): the chunk waits for the next receive.
    waiting = asyncio.create_task(reader.receive())
    await asyncio.sleep(0)
    theirs.sendall(b"after the cancels\n")
    reader._readable()  # what the selector's callback does when the bytes arrive
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert await reader.receive() == b"after the cancels\n"
    theirs.sendall(b"more\n")
    assert await reader.receive() == b"more\n"


async def test_a_reset_peer_is_a_broken_resource(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    reader = SocketReader(ours, 4096)
    theirs.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    ours.sendall(b"unread by the peer")
    theirs.close()
    with pytest.raises((anyio.BrokenResourceError, anyio.EndOfStream)):
        await reader.receive()
    assert not watched(ours)


async def test_a_finished_reader_is_freed_without_the_cyclic_collector(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    # A future keeps its exception, the exception its traceback, the traceback the
    # receive's frame: the reader must not leave that cycle behind (it held whole
    # connections, begun frames and all, until a full collection).
    ours, theirs = pair
    gc.collect()
    gc.disable()
    try:
        reader = SocketReader(ours, 4096)
        with pytest.raises(TimeoutError):
            await reader.receive(anyio.current_time() + 0.01)
        theirs.shutdown(socket.SHUT_WR)
        with pytest.raises(anyio.EndOfStream):
            await reader.receive()
        del reader
        assert gc.collect() == 0
    finally:
        gc.enable()
