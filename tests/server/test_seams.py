"""Tests at the seams between modules (issue 37): each pins a boundary a plausible one-line
bug would move without any single module's own tests noticing.

The bots here are scripted and in process: every message still goes through the real wire
encoding of both transports (protobuf bytes; for the local transport, framed and split
again) and back through the service's parser and the hub, but no process is started."""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cardshark.v1 import referee_pb2 as pb
from games.base import Action
from games.registry import get_game
from server.bots.sandbox import SandboxPolicy, confine
from server.match.hub import BotHub
from server.match.records import ClockSettings, MatchRecord
from server.match.runner import MatchRunner
from server.match.sessions import BotIdentity, BotSession, Outgoing
from server.transport import frames as framing
from server.transport import service

Chooser = Callable[[pb.DecisionRequest], str]


@dataclass(eq=False)
class WireBot(BotSession):
    """A seated bot answering at once through the wire bytes of one transport."""

    hub: BotHub | None = None
    choose: Chooser | None = None
    framed: bool = False  # the local transport's framing around the protobuf bytes
    requests: list[pb.DecisionRequest] = field(default_factory=list)
    inbox: list[pb.RefereeMessage] = field(default_factory=list)  # every message, in order

    def _wire(self, data: bytes) -> bytes:
        if not self.framed:
            return data
        frames, used = framing.split_frames(framing.frame(data))
        assert used > len(data) and len(frames) == 1
        return frames[0]

    def receive(self, msg: Outgoing) -> pb.RefereeMessage:
        """What the referee sent, read off the wire as the bot reads it (and kept)."""
        got = pb.RefereeMessage.FromString(self._wire(service.encode_outgoing(msg)))
        self.inbox.append(got)
        return got

    def reply(self, data: bytes, after_s: float = 0.0) -> None:
        """Send bytes to the hub as this bot's next message, after_s seconds from now."""
        assert self.hub is not None
        parsed = service.parse_bot_message(self._wire(data))
        if after_s:
            self.hub.loop.call_later(after_s, service.route, self.hub, self, parsed)
        else:
            self.hub.loop.call_soon(service.route, self.hub, self, parsed)

    def send(self, msg: Outgoing) -> None:
        """Read what the referee sent as the bot would, and answer a request at once."""
        got = self.receive(msg)
        if got.WhichOneof("kind") != "request" or self.closed:
            return
        request = got.request
        self.requests.append(request)
        assert self.choose is not None
        answer = pb.BotMessage(
            decision=pb.Decision(request_id=request.request_id, action_id=self.choose(request))
        )
        self.reply(answer.SerializeToString())


def seeded(seed: int) -> Chooser:
    rng = random.Random(seed)
    return lambda request: rng.choice(request.legal_actions).id


async def play(
    game: str,
    choosers: list[Chooser],
    *,
    seed: int = 5,
    framed: bool = False,
    clock: ClockSettings | None = None,
    options: dict[str, Any] | None = None,
) -> tuple[MatchRecord, list[WireBot]]:
    hub = BotHub()
    bots = []
    for seat, choose in enumerate(choosers):
        identity = BotIdentity(f"b{seat}", f"bot{seat}")
        bot = WireBot(identity, hub=hub, choose=choose, framed=framed)
        assert hub.attach(bot)
        bots.append(bot)
    runner = MatchRunner(
        hub,
        get_game(game),
        "m1",
        seed,
        [b.identity for b in bots],
        options=options,
        clock=clock or ClockSettings(move_ms=5000),
    )
    return await runner.run(), bots


# -- the fault limit: a seat forfeits at limit + 1 faults, not before ----------------------


@pytest.mark.parametrize("faults", [2, 3])
def test_a_seat_forfeits_exactly_one_fault_past_the_limit(faults: int) -> None:
    limit = 2
    told = 0

    def hostile(request: pb.DecisionRequest) -> str:
        nonlocal told
        told += 1
        return "not-an-action" if told <= faults else request.legal_actions[0].id

    clock = ClockSettings(move_ms=5000, fault_limit=limit)
    record, _ = asyncio.run(play("knaves", [hostile, seeded(1), seeded(2)], clock=clock))
    assert record.status == "finished"
    assert len(record.faults_of(0)) == faults
    assert record.forfeited == [faults > limit, False, False]
    assert record.ranks[0] == 3 if faults > limit else record.ranks[0] >= 1


# -- the hub's one timer: deadlines of two matches armed in either order both fire on time -


class FakeMatch:
    """A match context that only notes charges."""

    def __init__(self, name: str) -> None:
        self.match_id = name
        self.charged: list[tuple[int, str]] = []

    def charge(self, seat: int, kind: str, detail: str, request_id: int, fallback: str) -> None:
        """Note a charge."""
        self.charged.append((seat, kind))


@pytest.mark.parametrize("early_first", [True, False])
def test_two_matches_deadlines_both_fire_on_time_in_either_order(early_first: bool) -> None:
    async def run() -> tuple[float, bool]:
        hub = BotHub()
        bot = BotSession(BotIdentity("b", "b"))
        hub.attach(bot)
        early = hub.open_request(bot, FakeMatch("one"), 0)
        late = hub.open_request(bot, FakeMatch("two"), 0)
        for req, limit in [(early, 0.05), (late, 5.0)][:: 1 if early_first else -1]:
            hub.arm(req, limit)
        opened = hub.loop.time()
        reply = await asyncio.wait_for(early.future, 10)
        assert reply.kind == "timeout"
        return hub.loop.time() - opened, late.future.done()

    waited, late_done = asyncio.run(run())
    # Re-armed for the later deadline, the early one would wait the full 5 s.
    assert waited < 2.5 and not late_done


# -- zero and multi-card fields cross the wire intact on both transports and come back legal


def engine_fields(action: Action) -> dict[str, Any]:
    return {
        "id": action.id,
        "kind": action.kind,
        "card": action.card,
        "cards": list(action.cards),
        "suit": action.suit,
        "number": action.number if action.number >= 0 else None,
        "seat": action.seat if action.seat >= 0 else None,
        "token": action.token,
    }


def wire_fields(action: pb.Action) -> dict[str, Any]:
    return {
        "id": action.id,
        "kind": action.kind,
        "card": action.card,
        "cards": list(action.cards),
        "suit": action.suit,
        "number": action.number if action.HasField("number") else None,
        "seat": action.seat if action.HasField("seat") else None,
        "token": action.token,
    }


def prefer(test: Callable[[pb.Action], bool], seed: int) -> Chooser:
    """Choose an action passing `test` whenever one is offered, else a seeded random one."""
    rng = random.Random(seed)

    def choose(request: pb.DecisionRequest) -> str:
        wanted = [a for a in request.legal_actions if test(a)]
        return (wanted[0] if wanted else rng.choice(request.legal_actions)).id

    return choose


CASES = {
    # Ninja Whist's bid of 0 is the number 0, set; Kill's two-card action has two cards.
    "ninja-whist": lambda a: a.kind == "bid" and a.HasField("number") and a.number == 0,
    "kill": lambda a: len(a.cards) == 2,
}


@pytest.mark.parametrize("framed", [False, True], ids=["grpc-bytes", "local-frames"])
@pytest.mark.parametrize("game", sorted(CASES))
def test_zero_and_multi_card_fields_reach_the_bot_intact_and_come_back_legal(
    game: str, framed: bool
) -> None:
    engine = get_game(game)
    seats = engine.spec.default_seats
    found = False
    for seed in range(1, 30):
        choosers = [prefer(CASES[game], seed * 10 + s) for s in range(seats)]
        record, bots = asyncio.run(play(game, choosers, seed=seed, framed=framed))
        assert record.status == "finished" and record.faults == [], record.faults
        # Every request, rebuilt from the engine at its step, matches what the bot read.
        state = engine.new_match(record.seed, seats, record.options)
        asked = {b.identity.name: iter(b.requests) for b in bots}
        for action_id in record.actions:
            seat = engine.to_act(state)
            assert seat is not None
            legal = engine.legal_actions(state)
            read = next(asked[record.seats[seat]])
            assert [wire_fields(a) for a in read.legal_actions] == [engine_fields(a) for a in legal]
            chosen = next(a for a in legal if a.id == action_id)
            if CASES[game](next(a for a in read.legal_actions if a.id == chosen.id)):
                found = True
            engine.apply(state, chosen)
        if found:
            break
    assert found, f"no seeded {game} match offered the action under test"


# -- the sandbox: every mount read-only but the bot's tmp and home; exactly its variables --

INSPECTOR = Path(__file__).resolve().parent / "bots" / "sandbox_inspector.py"
# Mounts the kernel or bwrap make writable by design: bwrap's empty root (root's own, the
# bot's uid cannot write it), /proc, /dev and its device nodes; the bot's tmp and home.
WRITABLE_BY_DESIGN = {"/", "/tmp", "/home/bot", "/proc", "/dev"}
DEVICES = ("/dev/",)
ENVIRONMENT = {"CARDSHARK_SERVER", "CARDSHARK_TOKEN", "HOME", "LANG", "PATH", "PWD", "TMPDIR"}


def test_every_sandbox_mount_is_read_only_but_tmp_and_home_and_the_environment_is_exact(
    tmp_path: Path,
) -> None:
    assert shutil.which("bwrap") is not None, "bubblewrap is needed (.ci/run installs it)"
    assert os.geteuid() == 0, "the sandbox drops to a uid of its own only when run as root"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "referee.sock"))
        launch = confine(SandboxPolicy(), [sys.executable, str(INSPECTOR)], sock.getsockname(), "t")
        try:
            done = subprocess.run(
                launch.argv,
                env=launch.env,
                capture_output=True,
                text=True,
                timeout=60,
                pass_fds=launch.pass_fds,
            )
        finally:
            launch.release()
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    writable = {
        m["point"]
        for m in seen["mounts"]
        if m["rw"] and not (m["point"].startswith(DEVICES) and m["fstype"] == "devtmpfs")
    }
    writable -= {"/dev/pts"}
    assert writable == WRITABLE_BY_DESIGN, seen["mounts"]
    real = [m for m in seen["mounts"] if m["fstype"] not in ("tmpfs", "proc", "devtmpfs", "devpts")]
    assert real and all(not m["rw"] for m in real), real  # the host's files: read-only
    assert seen["uid"] >= 200_000  # a uid of its own, not root
    assert set(seen["writable"]) == {"/tmp", "/home/bot"}
    assert set(seen["env"]) == ENVIRONMENT
