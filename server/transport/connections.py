"""Connections that have not said Hello: one deadline for all their calls, and caps on them.

gRPC closes a connection only when it is told GOAWAY (by age or idleness, server/match/limits.py)
and then has no call left open; this module makes every call of a connection that has not
seated a bot end by one deadline, counted from the connection's first call, so that whatever
streams a peer opens, its connection closes soon after. gRPC shows a call only its peer's
address (`ipv4:1.2.3.4:5678`), which for TCP names the connection; a Unix socket's peers all
read `unix:`, so their calls are timed one by one and not counted.
"""

from __future__ import annotations

import asyncio
import inspect
import ipaddress
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

import grpc

from server.match.limits import MAX_CONNECTION_AGE_MS

MAX_PENDING_PER_ADDRESS = 8  # connections of one address with a call open and no Hello yet
MAX_PENDING = 64  # such connections from all addresses
# A connection is told GOAWAY at most 110 % of its max age after it started, so no call of it
# arrives later than that after its first (plus a round trip): a call later than this, on an
# address whose calls had all ended, is a new connection that reuses the port.
FORGET_AFTER_S = MAX_CONNECTION_AGE_MS * 1.1 / 1000 + 1.0
SWEEP_EVERY_S = 1.0
# Calls that check their own credentials first: Play (its Hello) and Admin (its token).
SELF_GUARDED = ("/cardshark.v1.Referee/", "/cardshark.v1.Admin/")

Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


class Refused(Exception):
    """A call refused before it starts: a gRPC status and a message for the peer."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(eq=False)
class Connection:
    """One peer connection as its calls see it."""

    peer: str  # as gRPC names it: `ipv4:1.2.3.4:5678`
    address: str | None  # what the per-address cap counts; None for a Unix socket's peer
    first: float  # loop time of its first call
    hello_timeout_s: float
    calls: int = 0
    authenticated: bool = False  # a stream on it said a valid Hello and was seated

    @property
    def deadline(self) -> float | None:
        """Loop time by which its calls end; None once it has said Hello."""
        return None if self.authenticated else self.first + self.hello_timeout_s


def address_of(peer: str) -> str | None:
    """The address a TCP peer is counted under (IPv6 by /64, which one user holds); None
    for a peer that names no connection (a Unix socket's)."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return None
    host = rest.rsplit(":", 1)[0].strip("[]")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{ip}/64", strict=False))
    return str(ip)


class ConnectionGuard:
    """The connections of one server that have calls: their Hello deadline and the caps."""

    def __init__(
        self,
        hello_timeout_s: float,
        max_per_address: int | None = None,
        max_pending: int | None = None,
    ) -> None:
        self.hello_timeout_s = hello_timeout_s  # a connection's calls end this long after its first
        # The module's values unless given: read here, so a test can set them before a start.
        self.max_per_address = (
            MAX_PENDING_PER_ADDRESS if max_per_address is None else max_per_address
        )
        self.max_pending = MAX_PENDING if max_pending is None else max_pending
        self.connections: dict[str, Connection] = {}  # by peer (ip:port)
        self.pending: Counter[str] = Counter()  # per address: connections with a call, no Hello
        self._swept = 0.0

    @property
    def pending_total(self) -> int:
        """Connections with a call open and no Hello, from all addresses."""
        return sum(self.pending.values())

    def enter(self, peer: str) -> Connection:
        """Count a call starting on peer's connection; Refused when it may not start."""
        now = asyncio.get_running_loop().time()
        address = address_of(peer)
        if address is None:
            return Connection(peer, None, now, self.hello_timeout_s, calls=1)
        self._sweep(now)
        conn = self.connections.get(peer)
        if conn is None or (conn.calls == 0 and now > conn.first + FORGET_AFTER_S):
            conn = Connection(peer, address, now, self.hello_timeout_s)
            self.connections[peer] = conn
        deadline = conn.deadline
        if deadline is not None:
            if now >= deadline:
                raise Refused(
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    f"expected a Hello within {self.hello_timeout_s:g} s of this "
                    "connection's first call",
                )
            if conn.calls == 0:
                if self.pending[address] >= self.max_per_address:
                    raise Refused(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        "too many connections from your address are waiting to say Hello; "
                        "try again shortly",
                    )
                if self.pending_total >= self.max_pending:
                    raise Refused(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        "too many connections are waiting to say Hello; try again shortly",
                    )
                self.pending[address] += 1
        conn.calls += 1
        return conn

    def leave(self, conn: Connection) -> None:
        """Count a call of conn ending."""
        conn.calls -= 1
        if conn.address is None or conn.calls > 0:
            return
        if conn.authenticated:
            # Its next call, if any, is timed afresh: a reused port inherits nothing.
            if self.connections.get(conn.peer) is conn:
                del self.connections[conn.peer]
        else:
            self._release(conn.address)

    def authenticate(self, conn: Connection) -> None:
        """conn has seated a bot: its calls are no longer timed or counted."""
        if conn.authenticated:
            return
        conn.authenticated = True
        if conn.address is not None and conn.calls > 0:
            self._release(conn.address)

    def _release(self, address: str) -> None:
        self.pending[address] -= 1
        if self.pending[address] <= 0:
            del self.pending[address]

    def _sweep(self, now: float) -> None:
        if now - self._swept < SWEEP_EVERY_S:
            return
        self._swept = now
        stale = [
            peer
            for peer, conn in self.connections.items()
            if conn.calls == 0 and now > conn.first + FORGET_AFTER_S
        ]
        for peer in stale:
            del self.connections[peer]


Behavior = Callable[[Any, Context], Any]


class HelloDeadline(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # grpc has no types
    """Every call but Play and Admin's (which check credentials first) is counted by the guard
    and ends at its connection's Hello deadline: health, reflection and the like."""

    def __init__(self, guard: ConnectionGuard) -> None:
        self.guard = guard

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        """The handler, its behavior bounded unless the method guards itself."""
        handler = await continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or method.startswith(SELF_GUARDED):
            return handler
        if handler.request_streaming and handler.response_streaming:
            assert handler.stream_stream is not None
            make: Any = grpc.stream_stream_rpc_method_handler
            behavior: Behavior = handler.stream_stream
        elif handler.request_streaming:
            assert handler.stream_unary is not None
            make, behavior = grpc.stream_unary_rpc_method_handler, handler.stream_unary
        elif handler.response_streaming:
            assert handler.unary_stream is not None
            make, behavior = grpc.unary_stream_rpc_method_handler, handler.unary_stream
        else:
            assert handler.unary_unary is not None
            make, behavior = grpc.unary_unary_rpc_method_handler, handler.unary_unary
        bounded = make(
            self._bounded(behavior),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
        assert isinstance(bounded, grpc.RpcMethodHandler)
        return bounded

    def _bounded(self, behavior: Behavior) -> Callable[[Any, Context], Awaitable[Any]]:
        guard = self.guard

        async def run(request: Any, context: Context) -> Any:
            try:
                conn = guard.enter(context.peer())
            except Refused as refused:
                await context.abort(refused.code, refused.message)
                raise AssertionError("abort returned") from refused  # abort always raises
            try:
                deadline = conn.deadline
                async with asyncio.timeout_at(deadline):
                    if inspect.isasyncgenfunction(behavior):
                        # Written here, not yielded: a timeout then never lands in gRPC's code.
                        responses: AsyncIterator[Any] = behavior(request, context)
                        async for response in responses:
                            await context.write(response)
                        return None
                    return await behavior(request, context)
            except TimeoutError:
                await context.abort(
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    f"no Hello on this connection within {guard.hello_timeout_s:g} s "
                    "of its first call",
                )
            finally:
                guard.leave(conn)

        return run
