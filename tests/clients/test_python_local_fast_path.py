"""The Python kit's local transport without an event loop turn per message, and the framing
both ends read into one buffer.

A plain decide function is served with blocking reads and writes on fd 3; once an answer has
to be awaited (or a task is started) the rest of the conversation moves to the event loop,
with no message lost, reordered or answered twice, and no request held up by the awaited one.
A decide that raises ends the run as it does on the loop: exit 1 with the kit's one line.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cardshark.v1 import referee_pb2 as pb
from cardshark_bot.local import FrameBuffer as KitFrames
from cardshark_bot.local import FrameError as KitFrameError
from server.codec.bot_env import FD3_LAUNCHER
from server.match.limits import MAX_MESSAGE_BYTES
from server.transport.frames import FrameBuffer, FrameError, frame, split_frames

LOST = "cardshark: the server closed fd:3 without a Goodbye; stopping"
FINISHED = "cardshark: tournament finished; nothing more to play"
WAIT_S = 30.0  # a bound on a hung bot, never a pause

# Answers request 3 only after a pause (an awaitable from a plain function); every other
# request at once. Request 99 makes it raise.
BOT = """
import asyncio
from cardshark_bot import run

async def later(action):
    await asyncio.sleep(0.3)
    return action

def decide(request):
    if request.request_id == 99:
        raise RuntimeError("a bug in the bot")
    action = request.legal_actions[0].id
    return later(action) if request.request_id == 3 else action

run(decide, name="fast")
"""


def feed(frames: FrameBuffer | KitFrames, data: bytes, sizes: list[int]) -> list[bytes]:
    """data read in chunks of the given sizes (as recv_into would), and the frames taken."""
    out: list[bytes] = []
    pos = 0
    for size in sizes:
        chunk = data[pos : pos + size]
        pos += len(chunk)
        while chunk:
            space = frames.space()
            assert len(space) > 0
            n = min(len(space), len(chunk))
            space[:n] = chunk[:n]
            frames.wrote(n)
            chunk = chunk[n:]
            while (payload := frames.next_frame()) is not None:
                out.append(payload)
    return out


@pytest.mark.parametrize("reader", [FrameBuffer, KitFrames])
def test_frames_come_out_whole_however_the_bytes_arrive(
    reader: type[FrameBuffer] | type[KitFrames],
) -> None:
    rng = random.Random(7)
    payloads = [
        bytes([i % 256]) * n for i, n in enumerate([0, 1, 127, 128, 300, 70_000, 5, 200_000])
    ]
    data = b"".join(frame(p) for p in payloads)
    assert split_frames(data)[0] == payloads
    for sizes in ([1] * len(data), [len(data)], [rng.randint(1, 90_000) for _ in range(len(data))]):
        assert feed(reader(), data, sizes) == payloads


def test_a_length_over_the_cap_or_a_long_varint_is_refused_when_its_bytes_are_in() -> None:
    with pytest.raises(FrameError, match="over the 4194304-byte cap"):
        feed(FrameBuffer(), bytes([0x80, 0x80, 0x80, 0x32]), [4])  # 100 MiB announced
    assert feed(FrameBuffer(), frame(b"x" * MAX_MESSAGE_BYTES)[:10], [10]) == []  # waits
    with pytest.raises(FrameError, match="more than 10 bytes"):
        feed(FrameBuffer(), b"\x80" * 11, [11])
    assert feed(FrameBuffer(), b"\x80" * 9, [9]) == []
    with pytest.raises(KitFrameError):
        feed(KitFrames(max_bytes=100), frame(b"x" * 101), [200])


def start_bot(tmp_path: Path) -> tuple[socket.socket, subprocess.Popen[str]]:
    script = tmp_path / "fast_bot.py"
    script.write_text(BOT)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.settimeout(WAIT_S)
    env = dict(os.environ, CARDSHARK_SERVER="fd:3", CARDSHARK_TOKEN="tok")
    with theirs:
        process = subprocess.Popen(
            [*FD3_LAUNCHER, sys.executable, str(script)],
            stdin=theirs.fileno(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
    return ours, process


def read_frame(sock: socket.socket, buf: bytearray) -> pb.BotMessage | None:
    while True:
        frames, used = split_frames(buf)
        if frames:
            del buf[: len(frame(frames[0]))]
            return pb.BotMessage.FromString(frames[0])
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buf += chunk


def request(rid: int) -> bytes:
    req = pb.DecisionRequest(request_id=rid, legal_actions=[pb.Action(id=f"a{rid}")])
    return frame(pb.RefereeMessage(request=req).SerializeToString())


def welcomed(sock: socket.socket, buf: bytearray) -> None:
    hello = read_frame(sock, buf)
    assert hello is not None and hello.hello.token == "tok" and hello.hello.bot_name == "fast"
    welcome = pb.Welcome(bot_name="fast", protocol_version=1, server_version="t")
    sock.sendall(frame(pb.RefereeMessage(welcome=welcome).SerializeToString()))


def test_an_awaited_answer_moves_the_bot_to_its_loop_without_losing_a_message(
    tmp_path: Path,
) -> None:
    sock, process = start_bot(tmp_path)
    buf = bytearray()
    with sock:
        welcomed(sock, buf)
        for rid in (1, 2):  # one at a time: the blocking path
            sock.sendall(request(rid))
            answer = read_frame(sock, buf)
            assert answer is not None and answer.decision.request_id == rid
        # 3 is awaited; 4 arrives with it and 5 with half a frame still to come
        tail = request(5)
        sock.sendall(request(3) + request(4) + tail[:3])
        sock.sendall(tail[3:])
        sock.sendall(request(6))
        answers = [read_frame(sock, buf) for _ in range(4)]
        assert [a.decision.request_id for a in answers if a is not None] == [4, 5, 6, 3]
        assert [a.decision.action_id for a in answers if a is not None] == ["a4", "a5", "a6", "a3"]
        bye = pb.Goodbye(reason="tournament finished")
        sock.sendall(frame(pb.RefereeMessage(goodbye=bye).SerializeToString()))
        assert read_frame(sock, buf) is None  # it closes its end
    _, err = process.communicate(timeout=WAIT_S)
    lines = [line for line in err.splitlines() if line.strip()]
    assert (process.returncode, lines) == (0, [FINISHED])


def test_a_decide_that_raises_ends_the_run_with_the_kits_line(tmp_path: Path) -> None:
    sock, process = start_bot(tmp_path)
    buf = bytearray()
    with sock:
        welcomed(sock, buf)
        sock.sendall(request(1))
        answer = read_frame(sock, buf)
        assert answer is not None and answer.decision.request_id == 1
        sock.sendall(request(99))
        assert read_frame(sock, buf) is None  # the bot's connection ends
    _, err = process.communicate(timeout=WAIT_S)
    lines = [line for line in err.splitlines() if line.strip()]
    assert process.returncode == 1 and lines[-1] == LOST
    assert "a bug in the bot" in err
