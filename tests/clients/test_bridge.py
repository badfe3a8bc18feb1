"""The stdio bridge: its JSON lines, and a misbehaving bot behind it charged the right fault."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from cardshark.v1 import referee_pb2 as pb
from cardshark_bot.bridge import bridge_main, parse_decision, to_json_line
from server.bots.process import ManagedBot
from server.match.records import ClockSettings, MatchRecord
from server.play.arena import Arena

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
RANDOM_BOT = [PYTHON, str(ROOT / "clients" / "python" / "examples" / "random_bot.py")]
SCRIPTED = [PYTHON, str(Path(__file__).parent / "bots" / "scripted.py")]
BRIDGE = [PYTHON, "-m", "cardshark_bot.bridge"]
CLOCK = ClockSettings(move_ms=1000, bank_ms=0, fault_limit=3, grace_s=1.5, no_show_s=8)


def test_requests_go_to_the_bot_as_one_json_line_with_proto_field_names() -> None:
    msg = pb.RefereeMessage(
        request=pb.DecisionRequest(
            request_id=5,
            match_id="m",
            game="knaves",
            legal_actions=[pb.Action(id="play:QH", kind="play", card="QH")],
        )
    )
    line = to_json_line(msg)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    data = json.loads(line)
    assert data["request"]["request_id"] == 5
    # every field is there, empty or not; an optional one (number, seat) only when it is set
    empty = {"card": "", "cards": [], "suit": "", "token": ""}
    assert data["request"]["legal_actions"] == [
        {**empty, "id": "play:QH", "kind": "play", "card": "QH"}
    ]


def test_seat_0_a_trick_led_and_won_by_seat_0_and_whole_numbers_are_in_the_line() -> None:
    request = pb.RefereeMessage(
        request=pb.DecisionRequest(
            seat=0,
            legal_actions=[pb.Action(id="give:0", kind="give", seat=0), pb.Action(id="pass")],
            knaves={
                "seat": 0,
                "leader": 0,
                "tricks": [{"leader": 0, "cards": ["QH"], "winner": 0}],
            },
        )
    )
    data = json.loads(to_json_line(request))["request"]
    assert data["seat"] == 0 and data["knaves"]["seat"] == 0 and data["knaves"]["leader"] == 0
    assert data["knaves"]["tricks"] == [{"leader": 0, "cards": ["QH"], "winner": 0}]
    assert data["legal_actions"][0]["seat"] == 0 and "seat" not in data["legal_actions"][1]
    started = pb.RefereeMessage(match_started=pb.MatchStarted(seat=0, seats=[pb.SeatInfo(seat=0)]))
    started.match_started.options.update({"hands": 3, "share": 0.5, "big": 2**40, "on": True})
    data = json.loads(to_json_line(started))["match_started"]
    assert data["seat"] == 0 and data["seats"] == [{"seat": 0, "bot_name": ""}]
    assert data["options"] == {"hands": 3, "share": 0.5, "big": 2**40, "on": True}
    kinds = {name: type(value) for name, value in data["options"].items()}
    assert kinds == {"hands": int, "share": float, "big": int, "on": bool}  # 3, not 3.0


def test_answers_parse_as_decisions_and_junk_does_not() -> None:
    decision = parse_decision(b'{"request_id": 5, "action_id": "play:QH"}\n')
    assert decision == pb.Decision(request_id=5, action_id="play:QH")
    assert parse_decision(b'{"requestId": 6, "actionId": "bid:3", "seat": 0}') == pb.Decision(
        request_id=6, action_id="bid:3", seat=0
    )
    for junk in [b"play:QH", b'"play:QH"', b"[5]", b'{"request_id": "x"}', b'{"nope": 1}', b"\xff"]:
        assert parse_decision(junk) is None, junk


def test_a_bot_command_that_does_not_exist_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = bridge_main(["--token", "t", "--server", "127.0.0.1:9", "--", "/no/such/bot"])
    assert code == 127
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "/no/such/bot" in err


async def match_with_bridged(
    tmp_path: Path, mode: str, bad: int
) -> tuple[MatchRecord, ManagedBot, int | None]:
    """Seat 0: the scripted bot behind the bridge; seats 1 and 2: honest Python bots.

    Returns the record, the bridge's ManagedBot and its exit code (None: still running, so
    stopped with SIGTERM after the match, which must also end it cleanly with code 0).
    """
    async with Arena(log_dir=tmp_path) as arena:
        bots = []
        bridged: ManagedBot | None = None
        for seat, name in enumerate(["bridged", "honest1", "honest2"]):
            token = arena.register(name)
            command = [*BRIDGE, "--", *SCRIPTED, mode, str(bad)] if seat == 0 else RANDOM_BOT
            managed = await arena.spawn(name, command, token)
            bridged = bridged or managed
            bots.append(arena.identity(token))
        record = await arena.play("knaves", bots, seed=11, clock=CLOCK)
        assert bridged is not None and bridged.process is not None
        exited_by_itself = not bridged.running()
        code = await bridged.stop(timeout=5.0)
        return record, bridged, code if exited_by_itself else None


def play(tmp_path: Path, mode: str, bad: int) -> tuple[MatchRecord, str, int | None]:
    record, bridged, code = asyncio.run(match_with_bridged(tmp_path, mode, bad))
    assert record.status == "finished", record.reason
    assert not record.faults_of(1) and not record.faults_of(2), "honest seats were charged"
    log = bridged.log_path.read_text(errors="replace")
    assert "Traceback" not in log, log
    return record, log, code


def kinds(record: MatchRecord) -> list[str]:
    return [f.kind for f in record.faults_of(0)]


def test_junk_lines_are_malformed(tmp_path: Path) -> None:
    record, log, code = play(tmp_path, "junk", 2)
    assert kinds(record) == ["malformed", "malformed"]
    assert record.forfeited == [False, False, False]
    assert "not a Decision" in log and "I fold!" in log
    assert code is None  # still serving after the match


def test_an_empty_action_id_is_malformed(tmp_path: Path) -> None:
    record, _, _ = play(tmp_path, "empty", 2)
    assert kinds(record) == ["malformed", "malformed"]


def test_a_slow_answer_is_a_timeout_and_the_late_answer_is_ignored(tmp_path: Path) -> None:
    record, _, code = play(tmp_path, "slow", 2)
    assert kinds(record) == ["timeout", "timeout"]
    assert record.forfeited == [False, False, False]
    assert code is None


def test_a_bot_that_exits_disconnects_and_the_bridge_exits_with_one_line(tmp_path: Path) -> None:
    record, log, code = play(tmp_path, "exit", 1)
    assert kinds(record) == ["disconnected"]
    assert record.forfeited == [True, False, False]
    assert code == 3, f"the bridge should exit with the bot's code by itself, got {code}"
    lines = [line for line in log.splitlines() if line.strip()]
    assert lines == ["cardshark bridge: the bot process exited with code 3; disconnecting"], log
