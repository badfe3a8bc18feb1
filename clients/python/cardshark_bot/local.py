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

from google.protobuf.internal.encoder import _VarintBytes  # type: ignore[attr-defined]
from google.protobuf.message import DecodeError

from cardshark.v1 import referee_pb2 as pb

MAX_VARINT_BYTES = 10
MAX_FRAME_BYTES = 64 * 1024 * 1024  # the server sends far less; more is a broken stream
READ_BYTES = 64 * 1024  # the read buffer; it grows for a longer frame


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
    n = len(data)
    if n < 0x80:
        return bytes((n,)) + data
    if n < 0x4000:
        return bytes((n & 0x7F | 0x80, n >> 7)) + data
    return bytes(_VarintBytes(n)) + data


class FrameBuffer:
    """A stream's unread bytes and the whole frames at their start. Reads land in its buffer
    (recv_into: nothing is allocated per read); a length over max_bytes or a varint over 10
    bytes raises FrameError as soon as its bytes are in."""

    def __init__(self, max_bytes: int = MAX_FRAME_BYTES, unread: bytes = b"") -> None:
        self.max_bytes = max_bytes
        self._buf = bytearray(max(READ_BYTES, 2 * len(unread)))
        self._buf[: len(unread)] = unread
        self._view = memoryview(self._buf)
        self._start = 0  # the first byte not yet framed
        self._end = len(unread)  # the end of the bytes read
        self._need = 0  # the length of the frame that starts at _start, once known

    def space(self) -> memoryview:
        """Where the next read goes: never empty, room for the whole of an announced frame."""
        start, end = self._start, self._end
        if start == end:
            self._start = self._end = self._need = 0
        elif len(self._buf) - start < max(self._need, READ_BYTES // 4) or end == len(self._buf):
            kept = end - start
            size = max(len(self._buf), self._need + READ_BYTES // 4)
            if size > len(self._buf):
                old = self._view[start:end]
                self._buf = bytearray(size)
                self._buf[:kept] = old
                self._view = memoryview(self._buf)
            else:
                self._buf[:kept] = self._buf[start:end]
            self._start, self._end = 0, kept
        return self._view[self._end :]

    def wrote(self, nbytes: int) -> None:
        """Count nbytes read into space()."""
        self._end += nbytes

    def next_frame(self) -> bytes | None:
        """The next whole frame's payload, or None until more bytes arrive."""
        pos, end, buf = self._start, self._end, self._buf
        if pos == end:
            return None
        first = buf[pos]
        if first < 0x80:  # a length under 128: one byte
            length, head = first, pos + 1
        else:
            length, shift, head = 0, 0, pos
            while True:
                if head == end:
                    return None  # the varint is not all here yet
                if head - pos == MAX_VARINT_BYTES:
                    raise FrameError("a frame length over 10 bytes")
                byte = buf[head]
                length |= (byte & 0x7F) << shift
                shift += 7
                head += 1
                if byte < 0x80:
                    break
        if length > self.max_bytes:
            raise FrameError(f"a frame of {length} bytes")
        stop = head + length
        if stop > end:
            self._need = stop - pos
            return None
        self._start, self._need = stop, 0
        return bytes(self._view[head:stop])

    def unread(self) -> bytes:
        """The bytes read and not yet framed."""
        return bytes(self._view[self._start : self._end])


class LocalLink(asyncio.BufferedProtocol):
    """One end of a framed connection: each RefereeMessage goes to on_message; `done` is
    set when the connection ends."""

    def __init__(
        self, on_message: Callable[[pb.RefereeMessage], None], unread: bytes = b""
    ) -> None:
        self.on_message = on_message
        self.transport: asyncio.Transport | None = None
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._frames = FrameBuffer(unread=unread)  # starting with what was read before it

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

    def get_buffer(self, sizehint: int) -> memoryview:  # noqa: D102
        return self._frames.space()

    def buffer_updated(self, nbytes: int) -> None:  # noqa: D102
        self._frames.wrote(nbytes)
        self.take_frames()

    def take_frames(self) -> None:
        """Hand every whole frame read so far to on_message."""
        frames = self._frames
        while not self.done.done():
            try:
                payload = frames.next_frame()
                if payload is None:
                    return
                msg = pb.RefereeMessage.FromString(payload)
            except FrameError as err:
                self._fail(err)
                return
            except DecodeError as err:
                self._fail(FrameError(f"a message that does not parse: {err}"))
                return
            self.on_message(msg)

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


async def open_link(
    fd: int | socket.socket, on_message: Callable[[pb.RefereeMessage], None]
) -> LocalLink:
    """A LocalLink on descriptor fd, or on a socket (it takes it over and closes it at the
    end)."""
    sock = fd if isinstance(fd, socket.socket) else socket.socket(fileno=fd)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    _, link = await loop.connect_accepted_socket(lambda: LocalLink(on_message), sock)
    return link


class BlockingLink:
    """The local transport with blocking reads and writes: no event loop turn per message, for
    a bot whose answers are ready as soon as it is asked. `hand_over` moves the rest of the
    conversation to a LocalLink on the running loop, for a bot that has something to await."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(True)
        self.sock = sock
        self.broken = False  # a write failed: the server's end is gone
        self.link: LocalLink | None = None  # the loop's link, once handed over
        self._queued: list[pb.BotMessage | bytes] | None = None  # sent while handing over
        self._frames = FrameBuffer()

    def send(self, msg: pb.BotMessage | bytes) -> bool:
        """Write one frame; False once the connection is broken."""
        if self._queued is not None:
            self._queued.append(msg)
            return True
        if self.link is not None:
            return self.link.send(msg)
        if self.broken:
            return False
        try:
            self.sock.sendall(frame(msg))
        except OSError:
            self.broken = True
            return False
        return True

    def read(self) -> list[bytes] | None:
        """The payloads of the whole frames the next reads complete (at least one), or None at
        the end of the stream; FrameError on bytes that are not frames."""
        frames = self._frames
        while True:
            try:
                nbytes = self.sock.recv_into(frames.space())
            except OSError:
                return None
            if not nbytes:
                return None
            frames.wrote(nbytes)
            payloads = []
            while (payload := frames.next_frame()) is not None:
                payloads.append(payload)
            if payloads:
                return payloads

    async def hand_over(self, on_message: Callable[[pb.RefereeMessage], None]) -> LocalLink:
        """Serve the rest on the running loop: a LocalLink on this socket, starting with the
        bytes read and not yet framed; what is sent meanwhile goes out after, in order."""
        self._queued = []
        unread = self._frames.unread()

        def make() -> LocalLink:
            self.link = LocalLink(on_message, unread)
            return self.link

        try:
            await asyncio.get_running_loop().connect_accepted_socket(make, self.sock)
        finally:
            queued, self._queued = self._queued, None
        assert self.link is not None
        for msg in queued:
            self.link.send(msg)
        return self.link

    def finish(self) -> None:
        """Stop reading once handed over (the conversation is over)."""
        if self.link is not None:
            self.link.finish()

    def close(self) -> None:
        """Close the socket (once handed over: flush what is written first)."""
        if self.link is not None:
            self.link.close()
        else:
            self.sock.close()
