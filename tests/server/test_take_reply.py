"""A local seat's reply read without a turn of the event loop, and only while the loop is idle."""

from __future__ import annotations

import asyncio
import os
import socket
import time

import pytest

from cardshark.v1 import referee_pb2 as pb
from server.match.hub import BotHub
from server.match.sessions import BotIdentity, BotSession, PendingRequest, Reply
from server.transport.frames import frame
from server.transport.local import (
    FAST_PATH_ENV,
    IDLE_WAIT_S,
    SPIN_S,
    LocalSession,
    fast_path_off,
    loop_wait,
    serve_socket,
    spin_seconds,
)

BOT = BotIdentity("b1", "bot")


class Match:
    """The MatchContext the hub notifies (nothing is charged here)."""

    match_id = "m1"

    def charge(self, seat: int, kind: str, detail: str, request_id: int, fallback: str) -> None:
        raise AssertionError(f"charged {kind}: {detail}")


async def seated() -> tuple[BotHub, LocalSession, socket.socket]:
    """A hub with one bot seated over a real socket pair; the bot's end, Welcome read."""
    hub = BotHub()
    ours, theirs = socket.socketpair()
    await serve_socket(ours, hub, lambda t: BOT if t == "tok" else None, "tok", "test", "bot")
    hello = pb.BotMessage(hello=pb.Hello(token="tok", protocol_version=1))
    theirs.sendall(frame(hello.SerializeToString()))
    session = await hub.wait_for(BOT.bot_id, 5)
    assert isinstance(session, LocalSession)
    theirs.setblocking(False)
    loop = asyncio.get_running_loop()
    assert (await loop.sock_recv(theirs, 1024))[1:] == pb.RefereeMessage(
        welcome=pb.Welcome(bot_name="bot", protocol_version=1, server_version="test")
    ).SerializeToString()
    return hub, session, theirs


def asked(hub: BotHub, session: LocalSession, limit_s: float = 5.0) -> PendingRequest:
    """A request open to the bot, its clock running."""
    req = hub.open_request(session, Match(), 0)
    hub.arm(req, limit_s)
    return req


def answer(theirs: socket.socket, request_id: int, action: str) -> None:
    decision = pb.BotMessage(decision=pb.Decision(request_id=request_id, action_id=action))
    theirs.sendall(frame(decision.SerializeToString()))


def test_a_reply_already_sent_settles_its_request_in_the_call() -> None:
    async def run() -> None:
        hub, session, theirs = await seated()
        req = asked(hub, session)
        answer(theirs, req.request_id, "a1")
        session.take_reply()
        assert req.future.done()  # no await between: the loop never ran
        assert req.future.result() == Reply("decision", action_id="a1")
        theirs.close()

    asyncio.run(run())


def test_nothing_is_read_while_a_callback_is_ready() -> None:
    async def run() -> None:
        hub, session, theirs = await seated()
        req = asked(hub, session)
        answer(theirs, req.request_id, "a1")
        ran: list[bool] = []
        asyncio.get_running_loop().call_soon(ran.append, True)
        session.take_reply()
        assert not req.future.done() and not ran  # the ready callback goes first, by the loop
        assert await req.future == Reply("decision", action_id="a1")
        assert ran == [True]
        theirs.close()

    asyncio.run(run())


def test_the_wait_ends_at_the_loops_next_timer_and_leaves_other_descriptors_to_it() -> None:
    async def run() -> None:
        hub, session, theirs = await seated()
        loop = asyncio.get_running_loop()
        # Its deadline timer is far off; the lag heartbeat is the loop's next timer.
        req = asked(hub, session, 60.0)
        fired: list[float] = []
        other, other_peer = socket.socketpair()
        other_peer.sendall(b"x")  # another descriptor the loop watches, readable at once
        loop.add_reader(other.fileno(), lambda: fired.append(loop.time()) or other.recv(1))
        began = time.monotonic()
        session.take_reply()  # returns at once: the other descriptor is ready, not this one
        assert time.monotonic() - began < 0.05 and not req.future.done() and not fired
        loop.remove_reader(other.fileno())
        timer = loop.call_later(0.02, fired.append, 0.0)
        wait = session.idle() if session.idle is not None else None
        assert wait is not None and wait <= 0.02
        session.take_reply()  # no bytes: waits until the next timer is due, then returns
        assert time.monotonic() - began < IDLE_WAIT_S and not req.future.done()
        timer.cancel()
        answer(theirs, req.request_id, "b2")
        assert await req.future == Reply("decision", action_id="b2")
        for s in (other, other_peer, theirs):
            s.close()

    asyncio.run(run())


def test_a_loop_without_a_selector_gets_no_fast_path_and_a_grpc_session_does_nothing() -> None:
    class Bare(asyncio.AbstractEventLoop):
        pass

    assert loop_wait(Bare()) is None
    session = BotSession(BOT)
    session.take_reply()  # the base: no read, no error
    assert session.outbox.qsize() == 0 and session.pending == {}


def test_a_closed_socket_is_left_to_the_loop_and_disconnects_the_bot() -> None:
    async def run() -> None:
        hub, session, theirs = await seated()
        req = asked(hub, session)
        theirs.close()
        session.take_reply()  # reads the end of the stream: the loop finishes the teardown
        assert await req.future == Reply("disconnected")
        assert hub.live(BOT.bot_id) is None

    asyncio.run(run())


def test_it_polls_before_it_sleeps_only_with_a_core_to_spare() -> None:
    cores = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(cores)})  # a pinned worker: the bot needs this core
        assert spin_seconds() == 0.0
    finally:
        os.sched_setaffinity(0, cores)
    assert spin_seconds() == (SPIN_S if len(cores) > 1 else 0.0)
    assert 0 < SPIN_S <= 0.001  # a poll, never a wait that a timer would notice


def test_a_local_send_is_on_the_socket_when_it_returns() -> None:
    # What writes_at_once promises the referee: it skips yielding to the loop before its
    # look-ahead, so nothing may wait for a loop turn to go out.
    async def run() -> None:
        _, session, theirs = await seated()
        assert session.writes_at_once and not BotSession.writes_at_once
        goodbye = pb.RefereeMessage(goodbye=pb.Goodbye(reason="done"))
        session.send(goodbye)
        theirs.setblocking(True)
        theirs.settimeout(1)
        assert theirs.recv(1024) == frame(goodbye.SerializeToString())  # no await in between
        theirs.close()

    asyncio.run(run())


def test_the_fast_path_is_active_on_the_supported_python_and_has_one_off_switch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # On CPython 3.11+ with asyncio's default loop the read-ahead must be on: if a new Python
    # renames the private parts it uses, this fails instead of every local match silently
    # running a tenth slower.
    async def run() -> tuple[str | None, bool, Reply]:
        hub, session, theirs = await seated()
        off = fast_path_off(asyncio.get_running_loop(), session.transport)
        req = asked(hub, session)
        answer(theirs, req.request_id, "play:2C")
        session.take_reply()
        settled = req.future.done()  # read in the call only where the fast path is on
        reply = await req.future
        theirs.close()
        return off, settled, reply

    off, settled, reply = asyncio.run(run())
    assert off is None and settled and reply == Reply("decision", action_id="play:2C")
    monkeypatch.setenv(FAST_PATH_ENV, "0")
    off, settled, reply = asyncio.run(run())
    assert off == f"{FAST_PATH_ENV}=0" and not settled
    assert reply == Reply("decision", action_id="play:2C")  # the same play, a turn later
