"""A zoo of misbehaving bots for the referee's fault tests (lichess-bot's buggy engines).

Usage: hostile.py MODE [N] [forced|any] [LOG]; CARDSHARK_SERVER and CARDSHARK_TOKEN as for any bot.
Modes: slow, sleepy, stuck, illegal, unknown, huge, garbage, other_seat, crash, reconnect, vanish,
duplicate, stray (see STRAY_FROM below), oversize (a message announced at 100 MB, then silence),
flood (garbage messages without end), noise (text, not frames, without end: local only).
Over gRPC (CARDSHARK_SERVER=HOST:PORT or unix:PATH) or the local transport (fd:N), alike:
what the bot does is the same on both; after oversize and flood it never reconnects.
The bot plays legally except on its first N requests (default 2), where it misbehaves; with
"forced", only requests with a single legal action count. With a LOG path, it appends
each request it gets to that file (hex of the serialized DecisionRequest, one per line).
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
from collections.abc import AsyncIterator

import grpc

from cardshark.v1 import referee_pb2 as pb
from cardshark_bot.local import LocalLink, frame, open_link, parse_fd

MODE = sys.argv[1]
BAD = int(sys.argv[2]) if len(sys.argv) > 2 else 2
FORCED_ONLY = len(sys.argv) > 3 and sys.argv[3] == "forced"
LOG = sys.argv[4] if len(sys.argv) > 4 else None
# Mode "stray": after each answer, a reply to the latest request logged in the next file of
# from=PATH,PATH,... (other bots' LOGs), each file once; the ids sent go to strays=PATH.
OPTS = dict(a.split("=", 1) for a in sys.argv[5:] if "=" in a)
STRAY_FROM = [p for p in OPTS.get("from", "").split(",") if p]
STRAY_LOG = OPTS.get("strays")
SERVER = os.environ["CARDSHARK_SERVER"]
TOKEN = os.environ["CARDSHARK_TOKEN"]
random.seed(MODE)  # the same moves on every run and transport: its matches can be compared


def encode(msg: pb.BotMessage | bytes) -> bytes:
    return msg if isinstance(msg, bytes) else msg.SerializeToString()


def latest_request(path: str) -> int | None:
    """The id of the last complete request line another bot logged, if any."""
    try:
        with open(path) as f:
            lines = [line for line in f.read().split("\n")[:-1] if line]
    except FileNotFoundError:
        return None
    return pb.DecisionRequest.FromString(bytes.fromhex(lines[-1])).request_id if lines else None


OVERSIZE = 100 * 1024 * 1024  # the length an oversize message announces
GARBAGE = b"\xff\xff\xff\xff"  # bytes that do not parse as a BotMessage


class Stream:
    """One stream to the referee, over gRPC or the local transport: send, read, drop."""

    def __init__(self) -> None:
        self.outbox: asyncio.Queue[pb.BotMessage | bytes | None] = asyncio.Queue()
        self.fd = parse_fd(SERVER)
        self.link: LocalLink | None = None
        self.channel: grpc.aio.Channel | None = None
        self.call = None

    async def messages(self) -> AsyncIterator[pb.RefereeMessage]:
        if self.fd is not None:
            inbox: asyncio.Queue[pb.RefereeMessage | None] = asyncio.Queue()
            self.link = await open_link(self.fd, inbox.put_nowait)
            self.link.done.add_done_callback(lambda _: inbox.put_nowait(None))
            while (m := self.outbox.get_nowait() if not self.outbox.empty() else None) is not None:
                self.put_nowait(m)
            while (msg := await inbox.get()) is not None:
                yield msg
            return

        async def outgoing():  # type: ignore[no-untyped-def]
            while (m := await self.outbox.get()) is not None:
                yield m

        async with grpc.aio.insecure_channel(SERVER) as channel:
            play = channel.stream_stream(
                "/cardshark.v1.Referee/Play",
                request_serializer=encode,
                response_deserializer=pb.RefereeMessage.FromString,
            )
            self.call = play(outgoing())
            async for msg in self.call:
                yield msg

    def put_nowait(self, msg: pb.BotMessage | bytes) -> None:
        """Send a message (bytes: sent as one message, serialized or not)."""
        if self.link is not None:
            self.link.send(msg)
        else:
            self.outbox.put_nowait(msg)

    def drop(self) -> None:
        """Drop the stream: cancel the call, or close the descriptor."""
        if self.link is not None:
            self.link.close()
        elif self.call is not None:
            self.call.cancel()

    async def oversize(self) -> None:
        """Announce a 100 MB message, then send as much of it as the server takes."""
        if self.link is None:
            # gRPC frames each message itself: one over the server's 4 MB cap is refused by
            # the length in its header, as the local transport refuses the announced length
            self.outbox.put_nowait(b"\0" * (5 << 20))
            await asyncio.sleep(1.0)
            return
        assert self.link.transport is not None
        self.link.write_raw(_varint(OVERSIZE))
        chunk = b"\0" * (1 << 20)
        for _ in range(OVERSIZE >> 20):
            if self.link.transport.is_closing():
                return
            self.link.write_raw(chunk)
            while self.link.transport.get_write_buffer_size() > (8 << 20):
                if self.link.done.done():
                    return
                await asyncio.sleep(0.01)

    async def flood(self, data: bytes) -> None:
        """Send data as fast as the stream takes it, until it is closed."""
        while True:
            if self.link is not None:
                if self.link.transport is None or self.link.transport.is_closing():
                    return
                self.link.write_raw(data)
                if self.link.transport.get_write_buffer_size() > (1 << 20):
                    await asyncio.sleep(0.001)
            else:
                if self.call is not None and self.call.done():
                    return
                self.outbox.put_nowait(data)
                await asyncio.sleep(0)


def _varint(n: int) -> bytes:
    from google.protobuf.internal.encoder import _VarintBytes  # type: ignore[attr-defined]

    return bytes(_VarintBytes(n))


async def stray_target_ready(limit_s: float) -> None:
    """Hold this answer until the next log has a request, for at most limit_s (under move_ms).

    Another match's bot may log its first request later than this match's moves come (a loaded
    machine): without the wait this bot's match could end before it has a request to stray to.
    """
    deadline = asyncio.get_running_loop().time() + limit_s
    while STRAY_FROM and latest_request(STRAY_FROM[0]) is None:
        if asyncio.get_running_loop().time() > deadline:
            return
        await asyncio.sleep(0.01)


def stray(outbox: Stream) -> None:
    """Reply to the latest request of the next bot whose log has one (each log once)."""
    rid = latest_request(STRAY_FROM[0]) if STRAY_FROM else None
    if rid is None:
        return
    STRAY_FROM.pop(0)
    outbox.put_nowait(pb.BotMessage(decision=pb.Decision(request_id=rid, action_id="play:2S")))
    if STRAY_LOG:
        with open(STRAY_LOG, "a") as log:
            log.write(f"{rid}\n")


async def session(seen: list[int]) -> str:
    """One stream; returns why it ended."""
    outbox = Stream()
    outbox.put_nowait(pb.BotMessage(hello=pb.Hello(token=TOKEN, protocol_version=1)))
    async for msg in outbox.messages():
        if msg.WhichOneof("kind") != "request":
            continue
        req = msg.request
        if LOG:
            with open(LOG, "a") as log:
                log.write(req.SerializeToString().hex() + "\n")
        legal = [a.id for a in req.legal_actions]
        counted = not FORCED_ONLY or len(legal) == 1
        if counted:
            seen.append(req.request_id)
        bad = counted and len(seen) <= BAD
        answer = pb.Decision(request_id=req.request_id, action_id=random.choice(legal))
        if bad and MODE == "stray":
            await stray_target_ready(0.6)
        if bad and MODE == "stuck":  # never answers: only the wall-time cap ends it
            continue
        if bad and MODE in ("slow", "sleepy"):
            limit = req.clock.move_ms / 1000 + req.clock.bank_ms / 1000
            # Past the wall cap (docs/protocol.md §6): late however much of the server's own
            # lag, on a loaded machine, is given back to the bot.
            late = max(3 * limit, limit + 0.5) + 0.3
            if MODE == "sleepy":  # 450 ms per move: over move_ms, drawn from the bank
                late = 0.45
            asyncio.get_running_loop().call_later(
                late, outbox.put_nowait, pb.BotMessage(decision=answer)
            )
            continue
        elif bad and MODE == "illegal":
            answer.action_id = "play:" + ("2S" if "play:2S" not in legal else "3S")
        elif bad and MODE == "unknown":
            answer.action_id = "castle:kingside"
        elif bad and MODE == "huge":
            answer.action_id = "é" + "x" * 999_999  # ~1 MB, a two-byte character first
        elif bad and MODE == "garbage":
            outbox.put_nowait(GARBAGE)
            continue
        elif bad and MODE == "oversize":
            await outbox.oversize()
            outbox.drop()
            await asyncio.sleep(3600)
        elif bad and MODE == "flood":
            await outbox.flood(frame(GARBAGE) if outbox.fd is not None else GARBAGE)
            outbox.drop()
            await asyncio.sleep(3600)
        elif bad and MODE == "noise":
            await outbox.flood(b"debug: thinking about my next move...\n" * 100)
            outbox.drop()
            await asyncio.sleep(3600)
        elif bad and MODE == "other_seat":
            answer.seat = req.seat + 1
        elif bad and MODE == "crash":
            os._exit(3)
        elif bad and MODE == "reconnect" and len(seen) == 1:
            outbox.drop()
            return "dropped"
        elif bad and MODE == "vanish":
            outbox.drop()
            await asyncio.sleep(3600)
        outbox.put_nowait(pb.BotMessage(decision=answer))
        if bad and MODE == "duplicate":
            outbox.put_nowait(pb.BotMessage(decision=answer))
        if bad and MODE == "stray":
            stray(outbox)
    return "ended"


async def main() -> None:
    seen: list[int] = []
    while True:
        try:
            why = await session(seen)
        except grpc.aio.AioRpcError:
            why = "error"
        if parse_fd(SERVER) is not None:
            await asyncio.sleep(3600)  # the descriptor was the one way in: no reconnecting
        if why == "dropped":
            await asyncio.sleep(0.3)  # back within the grace period
            continue
        await asyncio.sleep(0.2)


if __name__ == "__main__":
    asyncio.run(main())
