"""The Referee gRPC service: the handshake and the bot's stream, converted and routed."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, NamedTuple

import grpc
from google.protobuf.message import DecodeError

from cardshark.v1 import referee_pb2 as pb
from server.codec import protocol
from server.match.hub import BotHub
from server.match.sessions import BotIdentity, BotSession, Outgoing
from server.transport.connections import Connection, ConnectionGuard, Refused

log = logging.getLogger(__name__)
# A stream without a Hello by then is closed, and so is every call of a TCP connection none of
# whose streams has said one by then after its first call (server/transport/connections.py).
HELLO_TIMEOUT_S = 10.0
MAX_UNAUTHENTICATED = 64  # streams waiting for their Hello at once; more are refused
# Unparseable messages one stream may send; past it the stream is closed (a flood of garbage,
# or a bot printing its debug output to the local transport, must not fill the match record).
MALFORMED_PER_STREAM = 16
SERVICE_NAME = "cardshark.v1.Referee"


class Refusal(NamedTuple):
    """Why a stream is refused before its bot is seated: a gRPC status and a message."""

    code: grpc.StatusCode
    message: str


# The bot a token admits; None for an unknown token, or a Refusal saying why not.
Authenticator = Callable[[str], BotIdentity | Refusal | None]


NOT_HELLO = Refusal(grpc.StatusCode.FAILED_PRECONDITION, "the first message must be a Hello")
UNKNOWN_TOKEN = Refusal(
    grpc.StatusCode.UNAUTHENTICATED,
    "unknown bot token; register the bot with `cardshark bot add NAME`",
)
SECOND_STREAM = Refusal(
    grpc.StatusCode.ALREADY_EXISTS,
    "this bot already has a live stream; one bot, one stream (a dead connection "
    "is noticed within about 30 s: retry)",
)


class Malformed:
    """A message from a bot that did not parse as a BotMessage."""

    def __init__(self, detail: str) -> None:
        self.detail = detail


def parse_bot_message(data: bytes) -> pb.BotMessage | Malformed:
    """Deserialize leniently: garbage becomes a fault for the bot, not a broken stream."""
    try:
        return pb.BotMessage.FromString(data)
    except DecodeError as exc:
        return Malformed(f"message of {len(data)} bytes does not parse: {exc}")


def encode_outgoing(msg: Outgoing) -> bytes:
    """The wire bytes of a message for a bot (a broadcast arrives already encoded)."""
    return msg if isinstance(msg, bytes) else msg.SerializeToString()


def check_hello(
    first: pb.BotMessage | Malformed, authenticate: Authenticator
) -> BotIdentity | Refusal:
    """The bot a stream's first message identifies, or why the stream is refused."""
    if isinstance(first, Malformed) or first.WhichOneof("kind") != "hello":
        return NOT_HELLO
    hello = first.hello
    if hello.protocol_version != protocol.PROTOCOL_VERSION:
        return Refusal(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"protocol version {hello.protocol_version} is not supported; "
            f"this server speaks {protocol.PROTOCOL_VERSION}",
        )
    identity = authenticate(hello.token)
    if identity is None:
        return UNKNOWN_TOKEN
    if isinstance(identity, Refusal):
        return identity
    return dataclasses.replace(identity, games=tuple(hello.games))


def route(hub: BotHub, session: BotSession, msg: pb.BotMessage | Malformed) -> bool:
    """Hand one message of a seated bot's stream to the hub, whatever the transport.
    False once the stream has sent more garbage than MALFORMED_PER_STREAM: close it."""
    if isinstance(msg, Malformed):
        hub.on_malformed(session, msg.detail)
    elif msg.WhichOneof("kind") == "decision":
        hub.on_decision(session, msg.decision)
        return True
    else:
        hub.on_malformed(session, "a second Hello on an open stream")
    session.malformed += 1
    if session.malformed > MALFORMED_PER_STREAM:
        log.warning(
            "closed the stream of %s: more than %d malformed messages",
            session.identity.name,
            MALFORMED_PER_STREAM,
        )
        return False
    return True


class RefereeService:
    """Serves Referee.Play: authenticates a bot and relays its stream to the hub."""

    def __init__(
        self,
        hub: BotHub,
        authenticate: Authenticator,
        server_version: str,
        hello_timeout_s: float | None = None,
        max_unauthenticated: int | None = None,
    ) -> None:
        self.hub = hub
        self.authenticate = authenticate
        self.server_version = server_version
        # The module's values unless given: read here, so a test can set them before a start.
        self.hello_timeout_s = HELLO_TIMEOUT_S if hello_timeout_s is None else hello_timeout_s
        self.max_unauthenticated = (
            MAX_UNAUTHENTICATED if max_unauthenticated is None else max_unauthenticated
        )
        self.unauthenticated = 0  # streams open now that have not completed their Hello
        self.guard = ConnectionGuard(self.hello_timeout_s)  # start_server gives it other calls

    def handler(self) -> grpc.GenericRpcHandler:
        """A generic handler with the lenient deserializer."""
        play = grpc.stream_stream_rpc_method_handler(
            self.play,
            request_deserializer=parse_bot_message,
            response_serializer=encode_outgoing,
        )
        return grpc.method_handlers_generic_handler(SERVICE_NAME, {"Play": play})

    async def play(
        self, requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Outgoing]:
        """One bot's stream: Hello, Welcome, then requests out and decisions in."""
        try:
            conn = self.guard.enter(context.peer())
        except Refused as refused:
            await context.abort(refused.code, refused.message)
            raise AssertionError("abort returned") from refused  # abort always raises
        try:
            if self.unauthenticated >= self.max_unauthenticated:
                await context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    "too many connections are waiting to say Hello; try again shortly",
                )
            self.unauthenticated += 1
            try:
                identity = await self._hello(requests, context, conn)
            finally:
                self.unauthenticated -= 1
            session = BotSession(identity)
            if not self.hub.attach(session, context.peer()):
                await context.abort(*SECOND_STREAM)
            self.guard.authenticate(conn)
            reader = asyncio.create_task(self._read(requests, session))
            try:
                yield protocol.welcome(identity.name, self.server_version)
                while (msg := await session.outbox.get()) is not None:
                    yield msg
            finally:
                reader.cancel()
                session.closed = True
                self.hub.detach(session)
        finally:
            self.guard.leave(conn)

    async def _hello(
        self,
        requests: AsyncIterator[Any],
        context: grpc.aio.ServicerContext[Any, Any],
        conn: Connection,
    ) -> BotIdentity:
        now = asyncio.get_running_loop().time()
        deadline = now + self.hello_timeout_s
        if conn.deadline is not None:  # the connection's first call started the clock
            deadline = min(deadline, conn.deadline)
        try:
            async with asyncio.timeout_at(deadline):
                first = await anext(requests)
        except (TimeoutError, StopAsyncIteration):
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"expected a Hello within {self.hello_timeout_s:g} s",
            )
        checked = check_hello(first, self.authenticate)
        if isinstance(checked, Refusal):
            await context.abort(checked.code, checked.message)
            raise AssertionError("abort returned")  # abort always raises
        return checked

    async def _read(self, requests: AsyncIterator[Any], session: BotSession) -> None:
        try:
            async for msg in requests:
                if not route(self.hub, session, msg):
                    break
        except (asyncio.CancelledError, grpc.aio.AioRpcError):
            pass
        except Exception:  # a broken stream ends the session, never the server
            log.exception("stream of %s ended", session.identity.name)
        finally:
            session.close()
