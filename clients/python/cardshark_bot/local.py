"""The local transport, bot side: frames over a socket the server handed down as a descriptor.

A managed bot started by the server finds CARDSHARK_SERVER=fd:3: its end of a socket pair.
Each message is a protobuf message preceded by its length as a varint (protobuf's "delimited"
format): BotMessage frames out, RefereeMessage frames in, the same sequence as the gRPC
stream (Hello, Welcome, requests and decisions, Goodbye). No reconnecting: the descriptor is
the only way in, and its end is the end of play. docs/protocol.md §1.2 is the spec.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

from google.protobuf.internal.decoder import _DecodeVarint  # type: ignore[attr-defined]
from google.protobuf.internal.encoder import _VarintBytes  # type: ignore[attr-defined]
from google.protobuf.message import DecodeError

from cardshark.v1 import referee_pb2 as pb

MAX_VARINT_BYTES = 10
MAX_FRAME_BYTES = 64 * 1024 * 1024  # the server sends far less; more is a broken stream


class FrameError(Exception):
    """Bytes that cannot be framed: the connection is unusable."""


def parse_fd(server: str) -> int | None:
    """The descriptor of a server address "fd:N", or None for any other address."""
    if not server.startswith("fd:"):
        return None
    number = server[3:]
    if not number.isdigit():
        raise ValueError(f"bad server address {server!r}: fd: takes a descriptor number, fd:3")
    return int(number)


def frame(msg: pb.BotMessage | bytes) -> bytes:
    """A message (or bytes already serialized) as one frame: varint length, then the bytes."""
    data = msg if isinstance(msg, bytes) else msg.SerializeToString()
    return bytes(_VarintBytes(len(data))) + data


def split_frames(
    buf: bytes | bytearray, max_bytes: int = MAX_FRAME_BYTES
) -> tuple[list[bytes], int]:
    """The whole frames at the start of buf and the number of bytes they took."""
    frames: list[bytes] = []
    pos, end = 0, len(buf)
    while pos < end:
        try:
            length, start = _DecodeVarint(buf, pos)
        except IndexError:
            if end - pos >= MAX_VARINT_BYTES:
                raise FrameError("a frame length over 10 bytes") from None
            break
        except DecodeError:
            raise FrameError("a frame length over 10 bytes") from None
        if length > max_bytes:
            raise FrameError(f"a frame of {length} bytes")
        stop = start + length
        if stop > end:
            break
        frames.append(bytes(buf[start:stop]))
        pos = stop
    return frames, pos


class LocalLink(asyncio.Protocol):
    """One end of a framed connection: each RefereeMessage goes to on_message; `done` is
    set when the connection ends."""

    def __init__(self, on_message: Callable[[pb.RefereeMessage], None]) -> None:
        self.on_message = on_message
        self.transport: asyncio.Transport | None = None
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._buf = bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:  # noqa: D102
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def send(self, msg: pb.BotMessage | bytes) -> bool:
        """Write one frame; False once the connection is closing."""
        if self.transport is None or self.transport.is_closing():
            return False
        self.transport.write(frame(msg))
        return True

    def write_raw(self, data: bytes) -> None:
        """Write bytes as they are (tests use this to misbehave)."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def data_received(self, data: bytes) -> None:  # noqa: D102
        if self._buf:
            self._buf += data
            buf: bytes | bytearray = self._buf
        else:
            buf = data
        try:
            frames, used = split_frames(buf)
        except FrameError as err:
            self._fail(err)
            return
        if buf is self._buf:
            del self._buf[:used]
        elif used < len(data):
            self._buf += data[used:]
        for payload in frames:
            try:
                msg = pb.RefereeMessage.FromString(payload)
            except DecodeError as err:
                self._fail(FrameError(f"a message that does not parse: {err}"))
                return
            self.on_message(msg)
            if self.done.done():
                return

    def _fail(self, err: Exception) -> None:
        if not self.done.done():
            self.done.set_exception(err)
        self.close()

    def eof_received(self) -> bool:  # noqa: D102
        return False

    def connection_lost(self, exc: Exception | None) -> None:  # noqa: D102
        if not self.done.done():
            self.done.set_result(None)

    def close(self) -> None:
        """Flush what is written, then close the socket."""
        if self.transport is not None:
            self.transport.close()

    def finish(self) -> None:
        """Stop reading: the conversation is over (a Goodbye)."""
        if not self.done.done():
            self.done.set_result(None)


async def open_link(fd: int, on_message: Callable[[pb.RefereeMessage], None]) -> LocalLink:
    """A LocalLink on descriptor fd (it takes the descriptor over and closes it at the end)."""
    sock = socket.socket(fileno=fd)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    _, link = await loop.connect_accepted_socket(lambda: LocalLink(on_message), sock)
    return link
