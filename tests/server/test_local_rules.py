"""The local transport's rules as a bot on the other end of its socket sees them (issue 37:
server.transport.local under mutmut): the Hello and every way it is refused, frames both
ways, bytes that cannot be framed, a bot that reads nothing, and the end of the stream. A
real socket pair, no process; time is virtual (tests/server/virtual_time.py), so the Hello's
10 s run out at once. test_take_reply.py covers the read-ahead; its helpers are used here."""

from __future__ import annotations

import asyncio
import logging
import selectors
import socket
from collections import deque
from typing import Any

import pytest

from cardshark.v1 import referee_pb2 as pb
from server.codec import protocol
from server.match.hub import BotHub
from server.match.sessions import BotIdentity, Reply
from server.transport import local, service
from server.transport.frames import frame, varint
from server.transport.local import (
    FAST_PATH_ENV,
    IDLE_WAIT_S,
    LocalConnection,
    LocalSession,
    fast_path_off,
    loop_wait,
    serve_socket,
    socket_pair,
    spin_seconds,
)
from tests.server.test_take_reply import BOT, answer, asked, seated
from tests.server.virtual_time import VirtualClock, VirtualLoop, run_virtual

OTHER = BotIdentity("b2", "other")


def tokens(token: str) -> BotIdentity | service.Refusal | None:
    known: dict[str, BotIdentity | service.Refusal] = {
        "tok": BOT,
        "tok2": OTHER,
        "banned": service.Refusal(service.NOT_HELLO.code, "banned"),
    }
    return known.get(token)


def hello(token: str = "tok", version: int = protocol.PROTOCOL_VERSION) -> bytes:
    return frame(
        pb.BotMessage(hello=pb.Hello(token=token, protocol_version=version)).SerializeToString()
    )


async def served(hub: BotHub | None = None) -> tuple[BotHub, LocalConnection, socket.socket]:
    hub = hub or BotHub()
    ours, theirs = socket_pair()
    connection = await serve_socket(ours, hub, tokens, "tok", "v9", "bot")
    theirs.setblocking(False)
    return hub, connection, theirs


async def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes its end."""
    loop, data = asyncio.get_running_loop(), b""
    while chunk := await loop.sock_recv(sock, 1 << 16):
        data += chunk
    return data


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "server.transport.local"]


WELCOME = frame(
    pb.RefereeMessage(
        welcome=pb.Welcome(
            bot_name="bot", protocol_version=protocol.PROTOCOL_VERSION, server_version="v9"
        )
    ).SerializeToString()
)


# -- the Hello: welcomed, or refused before any Welcome --------------------------------


@pytest.mark.parametrize(
    ("first", "why"),
    [
        (hello("tok2"), "a Hello with another bot's token: this socket is not that bot's"),
        (hello("nobody"), service.UNKNOWN_TOKEN.message),
        (hello("banned"), "banned"),
        (hello(version=99), "protocol version 99 is not supported; this server speaks 1"),
        (
            frame(pb.BotMessage(decision=pb.Decision(request_id=1)).SerializeToString()),
            service.NOT_HELLO.message,
        ),
        (frame(b"\xff\xff"), service.NOT_HELLO.message),
        (b"\x80" * 11, "a frame length of more than 10 bytes"),
    ],
)
def test_a_bad_first_message_closes_the_socket_without_a_welcome(
    first: bytes, why: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go(clock: VirtualClock) -> tuple[bytes, BotHub, float]:
        hub, connection, theirs = await served()
        start = clock.now
        theirs.sendall(first)
        got = await read_all(theirs)
        await connection.closed
        theirs.close()
        return got, hub, clock.now - start

    with caplog.at_level(logging.WARNING, "server.transport.local"):
        got, hub, took = run_virtual(go, monkeypatch)
    assert got == b"" and hub.live(BOT.bot_id) is None and took == 0.0
    assert said(caplog) == [f"managed bot bot refused on its local socket: {why}"]


def test_frames_after_a_refused_hello_are_not_read_even_in_the_same_write(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go(clock: VirtualClock) -> tuple[bytes, BotHub]:
        hub, connection, theirs = await served()
        theirs.sendall(hello("tok2") + hello("tok"))  # a thief's Hello, then the right one
        got = await read_all(theirs)
        await connection.closed
        theirs.close()
        return got, hub

    with caplog.at_level(logging.WARNING, "server.transport.local"):
        got, hub = run_virtual(go, monkeypatch)
    assert got == b"" and BOT.bot_id not in hub.disconnected_at and hub.live(BOT.bot_id) is None
    assert said(caplog) == [
        "managed bot bot refused on its local socket: "
        "a Hello with another bot's token: this socket is not that bot's"
    ]


def test_no_hello_within_ten_seconds_closes_the_socket(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go(clock: VirtualClock) -> tuple[bytes, float]:
        _, connection, theirs = await served()
        start = clock.now
        got = await read_all(theirs)
        await connection.closed
        theirs.close()
        return got, clock.now - start

    with caplog.at_level(logging.WARNING, "server.transport.local"):
        got, took = run_virtual(go, monkeypatch)
    assert got == b"" and took == pytest.approx(10.0)
    assert said(caplog) == ["managed bot bot refused on its local socket: no Hello within 10 s"]


def test_a_hello_is_welcomed_and_the_hello_timer_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    async def go(clock: VirtualClock) -> tuple[bytes, bool, float]:
        hub, connection, theirs = await served()
        theirs.sendall(hello()[:3])  # a frame in pieces is read whole
        await asyncio.sleep(0)
        assert connection.session is None
        theirs.sendall(hello()[3:])
        session = await hub.wait_for(BOT.bot_id, 1)
        assert isinstance(session, LocalSession) and session is connection.session
        got = await asyncio.get_running_loop().sock_recv(theirs, 1 << 16)
        await asyncio.sleep(60)  # long past the Hello's 10 s: still connected
        alive = hub.live(BOT.bot_id) is session and not connection.closed.done()
        theirs.close()
        await connection.closed
        return got, alive, clock.now

    got, alive, _ = run_virtual(go, monkeypatch)
    assert got == WELCOME and alive


def test_a_second_stream_of_a_live_bot_is_refused(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go(clock: VirtualClock) -> tuple[bytes, bytes]:
        hub, first, theirs = await served()
        theirs.sendall(hello())
        session = await hub.wait_for(BOT.bot_id, 1)
        _, second, theirs2 = await served(hub)
        theirs2.sendall(hello())
        refused = await read_all(theirs2)
        await second.closed
        assert hub.live(BOT.bot_id) is session
        assert [i.detail for i in hub.incidents[BOT.bot_id]] == [
            "a second stream from local socket of bot was refused: one is live"
        ]
        theirs.shutdown(socket.SHUT_WR)
        welcomed = await read_all(theirs)
        theirs.close()
        theirs2.close()
        return refused, welcomed

    with caplog.at_level(logging.WARNING, "server.transport.local"):
        refused, welcomed = run_virtual(go, monkeypatch)
    assert refused == b"" and welcomed == WELCOME
    assert said(caplog) == [
        f"managed bot bot refused on its local socket: {service.SECOND_STREAM.message}"
    ]


# -- frames after the Hello ---------------------------------------------------------------


def test_frames_go_out_with_their_length_and_messages_as_their_bytes() -> None:
    async def run() -> bytes:
        _, session, theirs = await seated()
        msg = pb.RefereeMessage(goodbye=pb.Goodbye(reason="r" * 300))
        session.send(msg)
        session.send(b"abc")
        session.send(b"")
        session.close()
        session.close()  # twice is once
        session.send(b"after")  # dropped: the stream is closed
        got = await read_all(theirs)
        theirs.close()
        return got

    data = pb.RefereeMessage(goodbye=pb.Goodbye(reason="r" * 300)).SerializeToString()
    assert asyncio.run(run()) == varint(len(data)) + data + b"\x03abc" + b"\x00"
    LocalSession(BOT).send(b"nothing to write to")  # no transport: dropped, no error
    LocalSession(BOT).close()


def test_decisions_in_one_write_all_settle_and_garbage_is_charged_then_the_stream_cut(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go(clock: VirtualClock) -> None:
        hub, connection, theirs = await served()
        theirs.sendall(hello())
        session = await hub.wait_for(BOT.bot_id, 1)
        assert isinstance(session, LocalSession)
        match = Charges()
        reqs = [hub.open_request(session, match, seat) for seat in range(3)]
        decisions = [
            frame(
                pb.BotMessage(
                    decision=pb.Decision(request_id=r.request_id, action_id=f"a{i}")
                ).SerializeToString()
            )
            for i, r in enumerate(reqs[:2])
        ]
        theirs.sendall(b"".join(decisions) + frame(b"\xff\xff"))
        assert await reqs[0].future == Reply("decision", action_id="a0")
        assert await reqs[1].future == Reply("decision", action_id="a1")
        reply = await reqs[2].future  # garbage that frames: malformed, the stream lives
        assert reply.kind == "fault" and reply.fault_kind == "malformed"
        assert hub.live(BOT.bot_id) is session
        late = hub.open_request(session, match, 0)
        theirs.sendall(b"\x80" * 11)  # bytes that cannot be framed: charged, then cut
        assert await late.future == Reply(
            "fault", fault_kind="malformed", detail="a frame length of more than 10 bytes"
        )
        await connection.closed
        assert session.closed and hub.live(BOT.bot_id) is None
        assert connection._frames.space().nbytes == 1  # its buffer let go
        assert await read_all(theirs) == WELCOME  # nothing after: the connection was cut
        theirs.close()

    with caplog.at_level(logging.WARNING):
        run_virtual(go, monkeypatch)
    assert said(caplog) == ["closed the stream of bot: a frame length of more than 10 bytes"]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


class Charges:
    """A match noting its charges."""

    match_id = "m1"

    def __init__(self) -> None:
        self.charged: list[tuple[int, str, str]] = []

    def charge(self, seat: int, kind: str, detail: str, request_id: int, fallback: str) -> None:
        self.charged.append((seat, kind, detail))


class Transport:
    """A write transport that keeps what it is given and counts it as unread."""

    def __init__(self) -> None:
        self.data = b""
        self.aborted = False

    def write(self, data: bytes) -> None:
        self.data += data

    def get_write_buffer_size(self) -> int:
        return len(self.data)

    def abort(self) -> None:
        self.aborted = True


def test_a_stream_is_cut_only_once_more_than_the_limit_is_unread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(local, "MAX_UNREAD_BYTES", 10)
    transport = Transport()
    session = LocalSession(BOT)
    session.transport = transport  # type: ignore[assignment]
    session.send(b"x" * 9)  # a frame of 10 bytes: at the limit, not past it
    assert transport.data == b"\x09" + b"x" * 9 and not transport.aborted
    session.send(b"")
    assert transport.data.endswith(b"\x00") and transport.aborted


def test_nothing_is_written_after_close_even_while_the_queue_still_flushes() -> None:
    queued = 8 << 20  # more than a socket pair holds: most of it waits in the transport

    async def run() -> bytes:
        _, session, theirs = await seated()
        session.send(b"q" * queued)
        session.close()
        session.send(b"after")  # dropped: the stream is closed, though not yet flushed
        got = await read_all(theirs)
        theirs.close()
        return got

    assert asyncio.run(run()) == frame(b"q" * queued)


def test_a_bot_cut_off_for_garbage_may_connect_again_at_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go(clock: VirtualClock) -> None:
        hub, connection, theirs = await served()
        theirs.sendall(hello())
        session = await hub.wait_for(BOT.bot_id, 1)
        assert session is not None
        connection.buffer_updated(0)  # nothing new: no frame, nothing happens
        assert not session.closed
        connection._lost_framing("bad bytes")
        assert session.closed  # at once, not when the loop reports the socket lost
        again = LocalSession(BOT)
        assert hub.attach(again) and hub.live(BOT.bot_id) is again
        await connection.closed
        theirs.close()

    with caplog.at_level(logging.WARNING):
        run_virtual(go, monkeypatch)
    assert said(caplog) == ["closed the stream of bot: bad bytes"]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


def test_a_flood_of_garbage_closes_the_stream_after_the_allowance(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def go(clock: VirtualClock) -> tuple[int, bool]:
        hub, connection, theirs = await served()
        theirs.sendall(hello())
        session = await hub.wait_for(BOT.bot_id, 1)
        assert session is not None
        match = Charges()
        hub.seat(match, [BOT.bot_id])
        theirs.sendall(frame(b"\xff") * (service.MALFORMED_PER_STREAM + 5))
        await read_all(theirs)  # the server closes its end
        await connection.closed
        theirs.close()
        return len(match.charged), session.closed

    charged, closed = run_virtual(go, monkeypatch)
    assert charged == service.MALFORMED_PER_STREAM + 1 and closed  # nothing read after


def test_a_bot_that_reads_nothing_is_cut_off_past_the_unread_limit(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local, "MAX_UNREAD_BYTES", 1 << 16)

    async def go() -> tuple[int, bool]:
        hub, session, theirs = await seated()
        req = asked(hub, session)
        assert session.transport is not None
        sent = 0
        while not session.transport.is_closing() and sent < 1000:
            session.send(b"x" * 4096)
            sent += 1
        assert session.transport.is_closing()
        assert await req.future == Reply("disconnected")
        theirs.close()
        return sent, hub.live(BOT.bot_id) is None

    with caplog.at_level(logging.WARNING, "server.transport.local"):
        sent, gone = asyncio.run(go())
    assert gone and sent > 16  # the socket's own buffer took some first
    assert "closed the stream of bot: it reads nothing" in said(caplog)


def test_the_bot_closing_its_end_disconnects_it(monkeypatch: pytest.MonkeyPatch) -> None:
    async def go(clock: VirtualClock) -> None:
        hub, connection, theirs = await served()
        theirs.sendall(hello())
        session = await hub.wait_for(BOT.bot_id, 1)
        assert session is not None
        req = hub.open_request(session, Charges(), 0)
        theirs.shutdown(socket.SHUT_WR)  # EOF, the bot's end still open for reading
        assert await req.future == Reply("disconnected")
        await connection.closed
        assert session.closed and hub.live(BOT.bot_id) is None
        assert BOT.bot_id in hub.disconnected_at
        theirs.close()

    run_virtual(go, monkeypatch)


def test_a_lost_connection_before_the_hello_stops_its_timer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def go(clock: VirtualClock) -> float:
        _, connection, theirs = await served()
        theirs.close()
        await connection.closed
        assert connection._hello_timer is not None and connection._hello_timer.cancelled()
        start = clock.now
        await asyncio.sleep(0)
        return clock.now - start

    assert run_virtual(go, monkeypatch) == 0.0


# -- the read-ahead's parts --------------------------------------------------------------


def test_the_read_ahead_is_set_up_on_the_selector_loop_and_off_with_its_switch(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go() -> LocalSession:
        _, session, theirs = await seated()
        theirs.close()
        return session

    session = asyncio.run(go())
    assert isinstance(session.selector, selectors.BaseSelector) and session.idle is not None
    assert session.fd >= 0 and session.spin == spin_seconds()
    monkeypatch.setenv(FAST_PATH_ENV, "0")
    with caplog.at_level(logging.DEBUG, "server.transport.local"):
        session = asyncio.run(go())
    assert (session.selector, session.idle, session.fd, session.spin) == (None, None, -1, 0.0)
    assert f"local fast path off for bot: {FAST_PATH_ENV}=0" in said(caplog)


def test_the_documented_limits_and_switch() -> None:
    # docs/protocol.md: a bot with 64 MiB queued for it is disconnected; docs/performance.md:
    # the poll lasts up to 100 µs, CARDSHARK_LOCAL_FAST_PATH=0 turns the read-ahead off.
    assert local.MAX_UNREAD_BYTES == 64 * 1024 * 1024
    assert (local.SPIN_S, FAST_PATH_ENV) == (100e-6, "CARDSHARK_LOCAL_FAST_PATH")


def test_fast_path_off_says_why() -> None:
    class Bare(asyncio.AbstractEventLoop):
        pass

    loop = asyncio.new_event_loop()
    try:
        bare = Bare()  # type: ignore[abstract]
        assert fast_path_off(bare, object()) == (
            "the event loop (Bare) is not asyncio's selector loop"
        )
        assert fast_path_off(loop, object()) == (
            "the transport (object) is not asyncio's socket transport"
        )
    finally:
        loop.close()


@pytest.mark.parametrize("value", ["1", "", "yes"])
def test_only_zero_turns_the_fast_path_off(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    class Transport:
        def _read_ready(self) -> None:
            pass

    monkeypatch.setenv(FAST_PATH_ENV, value)
    loop = asyncio.new_event_loop()
    try:
        assert fast_path_off(loop, Transport()) is None
    finally:
        loop.close()


def test_loop_wait_needs_a_selector_a_ready_deque_and_a_timer_list() -> None:
    class Fake:
        def __init__(self, selector: Any, ready: Any, scheduled: Any) -> None:
            self._selector, self._ready, self._scheduled = selector, ready, scheduled

    selector = selectors.DefaultSelector()
    try:
        fakes = [
            Fake(None, deque(), []),
            Fake(selector, [], []),
            Fake(selector, deque(), ()),
        ]
        assert [loop_wait(f) for f in fakes] == [None, None, None]  # type: ignore[arg-type]
        found = loop_wait(Fake(selector, deque(), []))  # type: ignore[arg-type]
        assert found is not None and found[0] is selector
    finally:
        selector.close()


def test_idle_is_the_time_to_the_next_timer_none_while_anything_is_due() -> None:
    clock = VirtualClock()
    loop = VirtualLoop(clock)
    try:
        found = loop_wait(loop)
        assert found is not None
        _, idle = found
        assert idle() == IDLE_WAIT_S == 0.1  # nothing scheduled: a tenth of a second at most
        later = loop.call_at(clock.now + 2.0, print)
        assert idle() == 2.0
        clock.advance(2.0)
        assert idle() is None  # due now
        clock.advance(0.5)
        assert idle() is None  # overdue
        later.cancel()
        loop.call_soon(print)
        assert idle() is None  # a callback is ready
    finally:
        loop.close()


def test_take_reply_waits_no_longer_than_the_next_timer_when_nothing_comes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def go(clock: VirtualClock) -> list[float]:
        hub, connection, theirs = await served()
        theirs.sendall(hello())
        session = await hub.wait_for(BOT.bot_id, 1)
        assert isinstance(session, LocalSession)
        await asyncio.get_running_loop().sock_recv(theirs, 1 << 16)  # the Welcome
        req = hub.open_request(session, Charges(), 0)
        hub.arm(req, 0.75)  # the lag heartbeat is due in 5 ms
        waited = []
        for spin in (0.0, 0.0005):
            session.spin = spin
            await asyncio.sleep(0.001)
            start, due = clock.now, session.idle() if session.idle else None
            session.take_reply()  # nothing comes: the select "waits" until the next timer
            assert due is not None and 0 < due <= 0.005
            waited.append(clock.now - start - due)
        await asyncio.sleep(0.001)
        answer(theirs, req.request_id, "a1")
        session.spin = 0.0005
        session.take_reply()
        assert req.future.done()
        theirs.close()
        await connection.closed
        return waited

    assert run_virtual(go, monkeypatch) == [0.0, 0.0]
