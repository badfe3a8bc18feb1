"""Delimited framing: each message preceded by its length as a protobuf varint (the local
transport's wire, docs/protocol.md §1.2), read from a growing buffer without copies."""

from __future__ import annotations

from google.protobuf.internal.decoder import _DecodeVarint  # type: ignore[attr-defined]
from google.protobuf.internal.encoder import _VarintBytes  # type: ignore[attr-defined]
from google.protobuf.message import DecodeError

from server.match.limits import MAX_MESSAGE_BYTES

MAX_VARINT_BYTES = 10  # a 64-bit varint's longest encoding
READ_BYTES = 64 * 1024  # a connection's read buffer; it grows for a longer frame, up to the cap


class FrameError(Exception):
    """Bytes that cannot be framed: the stream is lost (a fault, then the connection closes)."""


def varint(n: int) -> bytes:
    """n as a protobuf varint (what _VarintBytes gives, without its generic encoder)."""
    if n < 0x80:
        return bytes((n,))
    if n < 0x4000:
        return bytes((n & 0x7F | 0x80, n >> 7))
    return bytes(_VarintBytes(n))


def frame(data: bytes) -> bytes:
    """data as one frame: its length as a varint, then the bytes."""
    return varint(len(data)) + data


def split_frames(
    buf: bytes | bytearray, max_bytes: int = MAX_MESSAGE_BYTES
) -> tuple[list[bytes], int]:
    """The whole frames at the start of buf and how many bytes they took. A length over
    max_bytes or a varint over 10 bytes raises FrameError as soon as its bytes arrive, before
    any of the announced payload is waited for (nothing is ever allocated for it)."""
    frames: list[bytes] = []
    pos, end = 0, len(buf)
    while pos < end:
        try:
            length, start = _DecodeVarint(buf, pos)
        except IndexError:  # the varint is not all here yet
            if end - pos >= MAX_VARINT_BYTES:
                raise FrameError(f"a frame length of more than {MAX_VARINT_BYTES} bytes") from None
            break
        except DecodeError:
            raise FrameError(f"a frame length of more than {MAX_VARINT_BYTES} bytes") from None
        if length > max_bytes:
            raise FrameError(f"a frame of {length} bytes, over the {max_bytes}-byte cap")
        stop = start + length
        if stop > end:
            break
        frames.append(bytes(buf[start:stop]))
        pos = stop
    return frames, pos


class FrameBuffer:
    """A stream's unread bytes and the whole frames at their start. Reads land in its buffer
    (recv_into: nothing is allocated per read). A length over max_bytes or a varint over 10
    bytes raises FrameError as soon as its bytes are in, before any room is made for the
    announced payload."""

    def __init__(self, max_bytes: int = MAX_MESSAGE_BYTES, size: int = READ_BYTES) -> None:
        self.max_bytes = max_bytes
        self._buf = bytearray(size)
        self._view = memoryview(self._buf)
        self._start = 0  # the first byte not yet framed
        self._end = 0  # the end of the bytes read
        self._need = 0  # the length of the frame that starts at _start, once known

    def space(self) -> memoryview:
        """Where the next read goes: never empty, room for the whole of an announced frame."""
        start, end = self._start, self._end
        if start == end:
            self._start = self._end = self._need = 0
        elif len(self._buf) - start < max(self._need, READ_BYTES // 4) or end == len(self._buf):
            self._make_room()
        return self._view[self._end :]

    def _make_room(self) -> None:
        """Move the unframed bytes to the front, into a larger buffer if a frame needs it."""
        kept = self._end - self._start
        size = max(len(self._buf), self._need + READ_BYTES // 4)
        if size > len(self._buf):
            old = self._view[self._start : self._end]
            self._buf = bytearray(size)
            self._buf[:kept] = old
            self._view = memoryview(self._buf)
        else:
            self._buf[:kept] = self._buf[self._start : self._end]
        self._start, self._end = 0, kept

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
                    raise FrameError(f"a frame length of more than {MAX_VARINT_BYTES} bytes")
                byte = buf[head]
                length |= (byte & 0x7F) << shift
                shift += 7
                head += 1
                if byte < 0x80:
                    break
        if length > self.max_bytes:
            raise FrameError(f"a frame of {length} bytes, over the {self.max_bytes}-byte cap")
        stop = head + length
        if stop > end:
            self._need = stop - pos
            return None
        self._start, self._need = stop, 0
        return bytes(self._view[head:stop])

    def clear(self) -> None:
        """Forget every unread byte."""
        self._start = self._end = self._need = 0
