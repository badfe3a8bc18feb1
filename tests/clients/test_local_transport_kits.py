"""Every kit (Python, Node, C++, Perl through the stdio bridge) speaks the local transport:
frames on an inherited fd 3.

First with the test as the server: each kit's example bot is started as the server starts a
managed bot (one end of a socket pair on its descriptor 3, CARDSHARK_SERVER=fd:3); the test
reads the bot's Hello frame off the socket, answers Welcome, then plays a whole Knaves match
from the real engine through the bot (every seat's request sent as a frame, each Decision
checked against the legal actions), and ends with a Goodbye: the bot must print its one line
and exit 0. A server that closes the socket is gone for good: one line and exit 1 after a
Welcome, a refusal (exit 2) before one.

Then through the arena, unsandboxed and under bwrap: the kit's bot is spawned as a managed
bot over the local transport and plays a Knaves match against two Python bots; the recorded
scores are the engine's for the recorded actions, and at the arena's end the bot exits 0 with
the server's Goodbye line.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.internal.decoder import _DecodeVarint32  # type: ignore[attr-defined]
from google.protobuf.internal.encoder import _VarintBytes  # type: ignore[attr-defined]

from cardshark.v1 import referee_pb2 as pb
from games.registry import get_game
from server.bots.sandbox import NO_SANDBOX, SandboxPolicy
from server.codec.bot_env import FD3_LAUNCHER, SERVER_ADDRESS
from server.codec.protocol import decision_request
from server.match.records import ClockSettings, MatchRecord
from server.play.arena import Arena
from server.transport.local import LocalSession
from tests.clients.kits import KITS, PYTHON, ROOT, kit_commands

NAMES = {
    "python": "random",
    "node": "random-js",
    "cpp": "random-cpp",
    "perl-bridge": "perl random_bot.pl",
}
REFUSED = (
    "refused by fd:3: the server closed descriptor 3 without a Welcome (refused: its log says why)"
)
TOKEN = "local-token"
FINISHED = "cardshark: tournament finished; nothing more to play"
LOST = "cardshark: the server closed fd:3 without a Goodbye; stopping"
SHUTTING_DOWN = "cardshark: server shutting down; nothing more to play"
WAIT_S = 60.0  # a bound on a hung bot, never a pause: every read returns as bytes arrive
PYTHON_BOT = [PYTHON, str(ROOT / "clients" / "python" / "examples" / "random_bot.py")]
CLOCK = ClockSettings(move_ms=5000, no_show_s=30)  # generous: the machine is small and busy
SANDBOXES = {"unsandboxed": NO_SANDBOX, "bwrap": SandboxPolicy("bwrap")}


@pytest.fixture(scope="module")
def commands() -> dict[str, list[str]]:
    """The command of each kit's example bot (random legal actions), built first."""
    return kit_commands()


class FrameSocket:
    """The server's end of the pair: delimited BotMessage frames in, RefereeMessage out."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buf += chunk
        return bool(chunk)

    def read(self) -> pb.BotMessage | None:
        """The next frame the bot sent, or None at a clean EOF."""
        while True:
            try:
                length, start = _DecodeVarint32(self.buf, 0)
            except IndexError:  # the varint is not all here yet
                length, start = -1, 0
            if length >= 0 and len(self.buf) >= start + length:
                payload, self.buf = self.buf[start : start + length], self.buf[start + length :]
                return pb.BotMessage.FromString(payload)
            if not self._fill():
                assert not self.buf, f"EOF inside a frame: {self.buf!r}"
                return None

    def send(self, msg: pb.RefereeMessage) -> None:
        data = msg.SerializeToString()
        self.sock.sendall(_VarintBytes(len(data)) + data)


@pytest.fixture(params=KITS)
def kit(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def bot(
    kit: str, commands: dict[str, list[str]]
) -> Iterator[tuple[FrameSocket, subprocess.Popen[str]]]:
    """The kit's bot started with its end of a socket pair as fd 3, and the test's end."""
    command = commands[kit]
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.settimeout(WAIT_S)
    env = dict(os.environ, CARDSHARK_SERVER=SERVER_ADDRESS, CARDSHARK_TOKEN=TOKEN)
    env.pop("CARDSHARK_DEBUG", None)
    with theirs:  # as the server starts a managed bot: the socket lands on fd 3
        process = subprocess.Popen(
            [*FD3_LAUNCHER, *command],
            stdin=theirs.fileno(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
    try:
        with ours:
            yield FrameSocket(ours), process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


def said(kit: str, line: str) -> str:
    """line as the kit prints it: the bridge names itself on every line but the Goodbye's."""
    if kit == "perl-bridge":
        return "cardshark bridge: " + line.removeprefix("cardshark: ")
    return line


def finish(process: subprocess.Popen[str]) -> tuple[int, list[str]]:
    """The bot's exit status and its stderr's non-blank lines."""
    _, err = process.communicate(timeout=WAIT_S)
    return process.returncode, [line for line in err.splitlines() if line.strip()]


def welcome(frames: FrameSocket, kit: str) -> None:
    hello = frames.read()
    assert hello is not None and hello.WhichOneof("kind") == "hello", hello
    assert hello.hello.token == TOKEN
    assert hello.hello.protocol_version == 1
    assert hello.hello.bot_name == NAMES[kit]
    frames.send(
        pb.RefereeMessage(
            welcome=pb.Welcome(bot_name="b", protocol_version=1, server_version="test")
        )
    )


def play_knaves(frames: FrameSocket, seed: int) -> tuple[int, Any]:
    """A whole Knaves match whose every decision the bot makes over the socket."""
    game = get_game("knaves")
    state = game.new_match(seed, None, None)
    decisions = 0
    while not game.is_over(state):
        seat = game.to_act(state)
        assert seat is not None
        actions = game.legal_actions(state)
        decisions += 1
        frames.send(
            decision_request(
                game_name="knaves",
                request_id=decisions,
                match_id="m1",
                seat=seat,
                view=game.view(state, seat),
                actions=actions,
                move_ms=1000,
                bank_ms=0,
            )
        )
        answer = frames.read()
        assert answer is not None and answer.WhichOneof("kind") == "decision", answer
        assert answer.decision.request_id == decisions
        legal = [action.id for action in actions]
        assert answer.decision.action_id in legal, (answer.decision.action_id, legal)
        game.apply(state, answer.decision.action_id)
    return decisions, game.result(state)


def test_a_kit_plays_a_knaves_match_over_fd3_and_exits_0_on_goodbye(
    kit: str, bot: tuple[FrameSocket, subprocess.Popen[str]]
) -> None:
    frames, process = bot
    welcome(frames, kit)
    decisions, result = play_knaves(frames, seed=11)
    assert decisions > 20 and len(result.scores) == len(result.ranks) >= 3
    frames.send(pb.RefereeMessage(goodbye=pb.Goodbye(reason="tournament finished")))
    assert frames.read() is None  # the bot closes its end after the Goodbye
    code, lines = finish(process)
    assert (code, lines) == (0, [FINISHED])


def test_a_kit_whose_server_closes_the_socket_exits_1_with_a_line(
    kit: str, bot: tuple[FrameSocket, subprocess.Popen[str]]
) -> None:
    frames, process = bot
    welcome(frames, kit)
    frames.sock.shutdown(socket.SHUT_RDWR)
    code, lines = finish(process)
    assert (code, lines) == (1, [said(kit, LOST)])


def test_a_kit_closed_before_its_welcome_is_refused(
    kit: str, bot: tuple[FrameSocket, subprocess.Popen[str]]
) -> None:
    frames, process = bot
    hello = frames.read()
    assert hello is not None and hello.hello.token == TOKEN
    frames.sock.shutdown(socket.SHUT_RDWR)
    code, lines = finish(process)
    assert (code, lines) == (2, [said(kit, REFUSED)])


async def arena_match(
    tmp_path: Path, command: list[str], sandbox: SandboxPolicy
) -> tuple[MatchRecord, type, int | None, str]:
    """A Knaves match of the kit's bot and two Python bots, all managed over the local
    transport: its record, the kit's session type, and the kit's exit status and stderr once
    the arena has closed."""
    async with Arena(log_dir=tmp_path, transport="local", sandbox=sandbox) as arena:
        tokens = {name: arena.register(name) for name in ("kit", "py-1", "py-2")}
        commands = {"kit": command, "py-1": PYTHON_BOT, "py-2": PYTHON_BOT}
        spawned = {name: await arena.spawn(name, commands[name], t) for name, t in tokens.items()}
        bots = [arena.identity(token) for token in tokens.values()]
        record = await arena.play("knaves", bots, seed=21, clock=CLOCK)
        assert arena.running is not None
        session = type(arena.running.hub.live(bots[0].bot_id))
    kit = spawned["kit"]
    assert kit.process is not None
    return record, session, kit.process.returncode, kit.log_path.read_text(errors="replace")


@pytest.mark.parametrize("sandbox", list(SANDBOXES))
def test_a_kit_plays_an_arena_match_over_the_local_transport(
    tmp_path: Path, kit: str, sandbox: str, commands: dict[str, list[str]]
) -> None:
    record, session, code, log = asyncio.run(
        arena_match(tmp_path, commands[kit], SANDBOXES[sandbox])
    )
    assert record.status == "finished", f"{record.reason}\n{log}"
    assert record.faults == [] and not any(record.forfeited), (record.faults, log)
    assert session is LocalSession
    game = get_game("knaves")
    state = game.new_match(record.seed, len(record.seats), record.options)
    for action in record.actions:
        game.apply(state, action)
    assert game.is_over(state)
    result = game.result(state)
    assert record.scores == list(result.scores) and record.ranks == list(result.ranks)
    assert sum(record.scores) > 0 and len(record.actions) > 20
    assert (code, [line for line in log.splitlines() if line.strip()]) == (0, [SHUTTING_DOWN])
