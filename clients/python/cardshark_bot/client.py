"""Connect, say hello, answer requests concurrently, and reconnect after a lost stream."""

from __future__ import annotations

import argparse
import asyncio
import inspect
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import grpc

from cardshark.v1 import referee_pb2 as pb
from cardshark.v1 import referee_pb2_grpc

log = logging.getLogger("cardshark_bot")
PROTOCOL_VERSION = 1
DEFAULT_SERVER = "127.0.0.1:50051"

Answer = str | pb.Decision  # an action id, or a whole Decision sent as given
Decide = Callable[[pb.DecisionRequest], "Answer | Awaitable[Answer]"]
EventHandler = Callable[[pb.RefereeMessage], None]


class BotRefused(Exception):
    """The server refused the bot (bad token or protocol version); retrying will not help."""


class BotClient:
    """A bot's connection to a cardshark server."""

    def __init__(
        self,
        decide: Decide,
        *,
        server: str = DEFAULT_SERVER,
        token: str,
        name: str = "",
        games: Sequence[str] = (),
        on_event: EventHandler | None = None,
        reconnect_s: float = 30.0,
    ) -> None:
        self.decide = decide
        self.server = server
        self.token = token
        self.name = name
        self.games = list(games)
        self.on_event = on_event
        self.reconnect_s = reconnect_s
        self.welcome: pb.Welcome | None = None
        self._outbox: asyncio.Queue[pb.BotMessage | None] | None = None

    async def run(self) -> None:
        """Serve until the server is gone for longer than reconnect_s (or refuses the bot)."""
        lost_at: float | None = None
        delay = 0.05
        while True:
            try:
                await self._serve_once()
                lost_at, delay = None, 0.05
            except grpc.aio.AioRpcError as err:
                if err.code() in (
                    grpc.StatusCode.UNAUTHENTICATED,
                    grpc.StatusCode.FAILED_PRECONDITION,
                ):
                    raise BotRefused(err.details() or str(err.code())) from None
                log.info("stream lost: %s", err.code())
            now = time.monotonic()
            lost_at = lost_at or now
            if now - lost_at > self.reconnect_s:
                log.info("server gone for %.0f s; stopping", now - lost_at)
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def _serve_once(self) -> None:
        outbox: asyncio.Queue[pb.BotMessage | None] = asyncio.Queue()
        hello = pb.Hello(
            token=self.token,
            bot_name=self.name,
            protocol_version=PROTOCOL_VERSION,
            games=self.games,
        )
        outbox.put_nowait(pb.BotMessage(hello=hello))

        async def outgoing() -> AsyncIterator[pb.BotMessage]:
            while (msg := await outbox.get()) is not None:
                yield msg

        tasks: set[asyncio.Task[None]] = set()
        self._outbox = outbox
        async with grpc.aio.insecure_channel(self.server) as channel:
            stub = referee_pb2_grpc.RefereeStub(channel)  # type: ignore[no-untyped-call]
            call = stub.Play(outgoing())
            try:
                async for msg in call:
                    kind = msg.WhichOneof("kind")
                    if kind == "request":
                        answer = self.decide(msg.request)
                        if inspect.isawaitable(answer):
                            # a slow async decision must not hold up other matches' requests
                            task = asyncio.create_task(self._finish(msg.request, answer, outbox))
                            tasks.add(task)
                            task.add_done_callback(tasks.discard)
                        else:
                            self._send(msg.request, answer, outbox)
                    elif kind == "welcome":
                        self.welcome = msg.welcome
                    if kind != "request" and self.on_event is not None:
                        self.on_event(msg)
            finally:
                if self._outbox is outbox:
                    self._outbox = None
                outbox.put_nowait(None)
                for task in tasks:
                    task.cancel()

    async def _finish(
        self,
        request: pb.DecisionRequest,
        answer: Awaitable[Answer],
        outbox: asyncio.Queue[pb.BotMessage | None],
    ) -> None:
        self._send(request, await answer, outbox)

    def send(self, decision: pb.Decision) -> bool:
        """Send a Decision as given on the current stream; False when there is none."""
        if self._outbox is None:
            return False
        self._outbox.put_nowait(pb.BotMessage(decision=decision))
        return True

    @staticmethod
    def _send(
        request: pb.DecisionRequest, answer: Answer, outbox: asyncio.Queue[pb.BotMessage | None]
    ) -> None:
        if isinstance(answer, pb.Decision):
            decision = answer
        else:
            decision = pb.Decision(request_id=request.request_id, action_id=str(answer))
        outbox.put_nowait(pb.BotMessage(decision=decision))


def run(
    decide: Decide,
    *,
    name: str = "",
    games: Sequence[str] = (),
    on_event: EventHandler | None = None,
) -> None:
    """Run a bot from the command line: --server/--token or CARDSHARK_SERVER/CARDSHARK_TOKEN."""
    parser = argparse.ArgumentParser(description=f"cardshark bot {name}".strip())
    parser.add_argument("--server", default=os.environ.get("CARDSHARK_SERVER", DEFAULT_SERVER))
    parser.add_argument("--token", default=os.environ.get("CARDSHARK_TOKEN", ""))
    args = parser.parse_args()
    if not args.token:
        parser.error("no token: pass --token or set CARDSHARK_TOKEN (see `cardshark bot add`)")
    client = BotClient(
        decide, server=args.server, token=args.token, name=name, games=games, on_event=on_event
    )
    try:
        asyncio.run(client.run())
    except BotRefused as err:
        print(f"refused by {args.server}: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        pass
