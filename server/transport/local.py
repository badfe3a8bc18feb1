"""The local transport: a managed bot's stream over a socket pair it inherits as fd 3.

The same BotMessage/RefereeMessage stream as Referee.Play, each message preceded by its
length as a protobuf varint ("delimited" framing), with no HTTP/2 under it. The server makes
a socket pair per managed bot, keeps one end and hands the other to the process as its file
descriptor 3 (CARDSHARK_SERVER=fd:3). Everything after the bytes are framed is shared with
the gRPC service (server/transport/service.py: check_hello, route): the hub and the referee see a
BotSession and do not know which transport carries it. docs/protocol.md §1.2 is the spec.
"""

from __future__ import annotations

import asyncio
import logging
import os
import selectors
import socket
import time
from collections import deque
from collections.abc import Callable

from cardshark.v1 import referee_pb2 as pb
from server.codec import protocol
from server.match.hub import BotHub
from server.match.sessions import BotSession, Outgoing
from server.transport import service
from server.transport.frames import FrameBuffer, FrameError, varint

log = logging.getLogger(__name__)
# Bytes queued for a bot that does not read them; past this the connection is closed (the
# bot is disconnected) rather than the server's memory filled.
MAX_UNREAD_BYTES = 64 * 1024 * 1024
IDLE_WAIT_S = 0.1  # take_reply's longest wait when the loop has no timer at all
# Waking a process that sleeps costs tens of microseconds on a VM, more than a bot's answer
# takes: with a core to spare the referee polls this long for the answer first.
SPIN_S = 100e-6
Idle = Callable[[], float | None]  # how long the loop could wait now; None: not at all


def loop_wait(loop: asyncio.AbstractEventLoop) -> tuple[selectors.BaseSelector, Idle] | None:
    """The selector of a selector event loop and a function telling how long the loop could
    wait now (None while a callback is ready); None for a loop without them (uvloop)."""
    selector = getattr(loop, "_selector", None)
    ready, timers = getattr(loop, "_ready", None), getattr(loop, "_scheduled", None)
    if not isinstance(selector, selectors.BaseSelector):
        return None
    if not isinstance(ready, deque) or not isinstance(timers, list):
        return None

    def idle() -> float | None:
        if ready:
            return None
        if not timers:
            return IDLE_WAIT_S
        wait: float = timers[0].when() - loop.time()
        return wait if wait > 0 else None

    return selector, idle


FAST_PATH_ENV = "CARDSHARK_LOCAL_FAST_PATH"  # "0" turns take_reply's read-ahead off


def fast_path_off(loop: asyncio.AbstractEventLoop, transport: object) -> str | None:
    """Why take_reply cannot read a local reply ahead of the loop here, or None where it can.

    It is active on asyncio's selector event loop (the default on Linux) with its socket
    transport, as in CPython 3.11 to 3.13, whose private `_selector`, `_ready`, `_scheduled`
    and `_read_ready` it uses (tests/server/test_take_reply.py fails if that changes); off
    on another loop (uvloop), or with CARDSHARK_LOCAL_FAST_PATH=0. Off, a reply waits for the
    loop's next turn: the same play, about a tenth slower a local decision."""
    if os.environ.get(FAST_PATH_ENV, "1") == "0":
        return f"{FAST_PATH_ENV}=0"
    if loop_wait(loop) is None:
        return f"the event loop ({type(loop).__name__}) is not asyncio's selector loop"
    if not hasattr(transport, "_read_ready"):
        return f"the transport ({type(transport).__name__}) is not asyncio's socket transport"
    return None


def spin_seconds() -> float:
    """How long take_reply polls before it sleeps: SPIN_S when this process may run on more
    than one core, else 0 (polling on the core the bot needs would only delay the bot)."""
    return SPIN_S if len(os.sched_getaffinity(0)) > 1 else 0.0


class LocalSession(BotSession):
    """A bot session whose messages are written as frames straight to its socket."""

    transport: asyncio.WriteTransport | None = None
    # Set when the loop and the transport allow take_reply (a selector loop's socket).
    selector: selectors.BaseSelector | None = None
    idle: Idle | None = None
    fd = -1
    spin = 0.0  # seconds take_reply polls before it sleeps; 0 on a single core
    writes_at_once = True

    def send(self, msg: Outgoing) -> None:
        """Write a message as a frame at once (dropped once the connection is closed)."""
        if self.closed or self.transport is None:
            return
        data = msg if isinstance(msg, bytes) else msg.SerializeToString()
        self.transport.write(varint(len(data)) + data)
        if self.transport.get_write_buffer_size() > MAX_UNREAD_BYTES:
            log.warning("closed the stream of %s: it reads nothing", self.identity.name)
            self.transport.abort()

    def take_reply(self) -> None:
        """While the loop has no callback ready, wait in a select of every descriptor it
        watches, for no longer than its next timer, as its own next turn would; when this
        bot's socket is readable, let its transport read it now. The reply then settles its
        request without the loop's turn (a Handle, a task wake-up, a second select): about
        a tenth of a local decision's time. Whatever else is ready is left for the loop
        (epoll is level-triggered: a select consumes nothing). With a core to spare, it
        polls for up to `spin` seconds before it sleeps (docs/performance.md)."""
        idle, selector = self.idle, self.selector
        if idle is None or selector is None or self.transport is None:
            return
        wait = idle()
        if wait is None:
            return
        events: list[tuple[selectors.SelectorKey, int]] = []
        if self.spin:  # on one core the bot has not run yet: no use looking before it has
            until = time.perf_counter() + min(self.spin, wait)
            while not events and time.perf_counter() < until:
                events = selector.select(0)
            if not events:
                wait = idle()  # the spin took some of it
                if wait is None:
                    return
        if not events:
            events = selector.select(wait)
        for key, mask in events:
            if key.fd == self.fd and mask & selectors.EVENT_READ:
                self.transport._read_ready()  # type: ignore[attr-defined]
                return

    def close(self) -> None:
        """End the stream: what is written is flushed, then the socket is closed."""
        if not self.closed:
            self.closed = True
            if self.transport is not None:
                self.transport.close()


class LocalConnection(asyncio.BufferedProtocol):
    """The server's end of one managed bot's socket pair: Hello, then frames both ways."""

    def __init__(
        self,
        hub: BotHub,
        authenticate: service.Authenticator,
        token: str,
        server_version: str,
        name: str,
    ) -> None:
        self.hub = hub
        self.authenticate = authenticate
        self.token = token  # the only token this socket admits: the one it was issued for
        self.server_version = server_version
        self.name = name
        self.transport: asyncio.Transport | None = None
        self.session: LocalSession | None = None
        self._frames = FrameBuffer()
        self._hello_timer: asyncio.TimerHandle | None = None
        self.closed = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:  # noqa: D102
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self._hello_timer = asyncio.get_running_loop().call_later(
            service.HELLO_TIMEOUT_S, self._refuse, f"no Hello within {service.HELLO_TIMEOUT_S:g} s"
        )

    def get_buffer(self, sizehint: int) -> memoryview:  # noqa: D102
        return self._frames.space()

    def buffer_updated(self, nbytes: int) -> None:  # noqa: D102
        frames = self._frames
        frames.wrote(nbytes)
        transport = self.transport
        while True:
            try:
                payload = frames.next_frame()
            except FrameError as err:
                self._lost_framing(str(err))
                return
            if payload is None:
                return
            if transport is None or transport.is_closing():
                return
            msg = service.parse_bot_message(payload)
            if self.session is None:
                self._hello(msg)
            elif not service.route(self.hub, self.session, msg):
                self.session.close()
                return

    def _hello(self, msg: pb.BotMessage | service.Malformed) -> None:
        if self._hello_timer is not None:
            self._hello_timer.cancel()
        checked = service.check_hello(msg, self.authenticate)
        if isinstance(checked, service.Refusal):
            self._refuse(checked.message)
            return
        assert not isinstance(msg, service.Malformed)
        if msg.hello.token != self.token:
            self._refuse("a Hello with another bot's token: this socket is not that bot's")
            return
        session = LocalSession(checked)
        if not self.hub.attach(session, f"local socket of {self.name}"):
            self._refuse(service.SECOND_STREAM.message)
            return
        transport = session.transport = self.transport
        loop = asyncio.get_running_loop()
        waits = loop_wait(loop)
        off = fast_path_off(loop, transport)
        if off is None and waits is not None and transport is not None:
            session.selector, session.idle = waits
            session.fd = transport.get_extra_info("socket").fileno()
            session.spin = spin_seconds()
        else:
            log.debug("local fast path off for %s: %s", self.name, off)
        self.session = session
        session.send(protocol.welcome(checked.name, self.server_version))

    def _refuse(self, why: str) -> None:
        """Close the socket before any Welcome: the bot is not seated."""
        log.warning("managed bot %s refused on its local socket: %s", self.name, why)
        if self.transport is not None:
            self.transport.close()

    def _lost_framing(self, why: str) -> None:
        """Bytes that cannot be framed: a malformed fault, then the connection is closed
        (nothing after them can be trusted to start a frame)."""
        self._frames.clear()
        if self.session is None:
            self._refuse(why)
            return
        self.hub.on_malformed(self.session, why)
        log.warning("closed the stream of %s: %s", self.session.identity.name, why)
        assert self.transport is not None
        self.session.closed = True
        self.transport.abort()  # nothing more is read; what is queued for it is dropped

    def eof_received(self) -> bool:  # noqa: D102
        return False  # the bot closed its end: the connection is over

    def connection_lost(self, exc: Exception | None) -> None:  # noqa: D102
        if self._hello_timer is not None:
            self._hello_timer.cancel()
        self._frames = FrameBuffer(size=1)  # nothing more is read: let the buffer go
        if self.session is not None:
            self.session.closed = True
            self.hub.detach(self.session)
        if not self.closed.done():
            self.closed.set_result(None)

    def close(self) -> None:
        """Close the socket now, dropping what is queued (the server is stopping); never raises."""
        transport = self.transport
        if transport is None or self.closed.done():
            # connection_lost has run. A selector transport closed with data queued that has
            # since flushed has let go of its loop without counting itself lost: its abort()
            # would call None.call_soon (CPython's _SelectorTransport; still so in 3.13).
            return
        if self.closed.get_loop().is_closed():
            return  # abort() could only raise; the transport closes its socket when collected
        transport.abort()


async def serve_socket(
    sock: socket.socket,
    hub: BotHub,
    authenticate: service.Authenticator,
    token: str,
    server_version: str,
    name: str,
) -> LocalConnection:
    """Serve the server's end of a managed bot's socket pair on the running loop."""
    loop = asyncio.get_running_loop()
    factory: Callable[[], LocalConnection] = lambda: LocalConnection(  # noqa: E731
        hub, authenticate, token, server_version, name
    )
    _, connection = await loop.connect_accepted_socket(factory, sock)
    return connection


def socket_pair() -> tuple[socket.socket, socket.socket]:
    """A connected pair: the server's end and the bot's (inheritable, given as its fd 3)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    return ours, theirs
