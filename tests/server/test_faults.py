"""One test per fault kind: a hostile bot process against honest ones on a live server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cardshark.v1 import referee_pb2 as pb
from games.registry import get_game
from server.match.records import ClockSettings, MatchRecord
from server.play.arena import Arena
from tests.server.conftest import HOSTILE_BOT, RANDOM_BOT, TRANSPORTS

CLOCK = ClockSettings(move_ms=400, bank_ms=0, fault_limit=3, grace_s=1.5, no_show_s=8)


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    """Every fault test runs over both transports, with the same assertions."""
    return str(request.param)


# Reconnecting needs a way back in; a local bot's only one is the socket it inherited, so the
# reconnect tests run over gRPC alone (a lost local socket is a disconnect: test_vanished...).
RECONNECTING = "grpc"


async def match_with_hostile(
    transport: str,
    tmp_path: Path,
    mode: str,
    bad: int,
    clock: ClockSettings = CLOCK,
    forced: bool = False,
    log: Path | None = None,
) -> MatchRecord:
    async with Arena(log_dir=tmp_path, transport=transport) as arena:
        bots = []
        for seat, name in enumerate(["hostile", "honest1", "honest2"]):
            token = arena.register(name)
            hostile = [*HOSTILE_BOT, mode, str(bad), "forced" if forced else "any"]
            hostile += [str(log)] if log else []
            command = hostile if seat == 0 else RANDOM_BOT
            await arena.spawn(name, command, token)
            bots.append(arena.identity(token))
        return await arena.play("knaves", bots, seed=11, clock=clock)


def play(
    transport: str,
    tmp_path: Path,
    mode: str,
    bad: int,
    clock: ClockSettings = CLOCK,
    forced: bool = False,
    log: Path | None = None,
) -> MatchRecord:
    record = asyncio.run(match_with_hostile(transport, tmp_path, mode, bad, clock, forced, log))
    assert record.status == "finished", record.reason
    replayed = get_game("knaves").replay(record.seed, 3, record.options, record.actions)
    assert list(get_game("knaves").result(replayed).scores) == record.scores
    assert not record.faults_of(1) and not record.faults_of(2), "honest seats were charged"
    return record


def kinds(record: MatchRecord, seat: int = 0) -> list[str]:
    return [f.kind for f in record.faults_of(seat)]


def assert_not_forfeited(record: MatchRecord) -> None:
    assert record.forfeited == [False, False, False]
    s = record.scores
    assert record.ranks[0] == 1 + sum(1 for o in s if o > s[0])


def assert_forfeited_last(record: MatchRecord) -> None:
    assert record.forfeited == [True, False, False]
    assert record.ranks[0] == 3 and sorted(record.ranks[1:]) in ([1, 2], [1, 1])


def test_slow_bot_is_cut_off_at_the_deadline(transport: str, tmp_path: Path) -> None:
    record = play(transport, tmp_path, "slow", 2)
    assert kinds(record) == ["timeout", "timeout"]
    first = record.faults_of(0)[0]
    assert record.move_ms[first.decision] == pytest.approx(400, abs=1)
    assert first.fallback == record.actions[first.decision]
    assert_not_forfeited(record)


def test_time_beyond_the_move_is_drawn_from_the_bank_until_it_runs_out(
    transport: str, tmp_path: Path
) -> None:
    # 200 ms per move plus a 600 ms bank; the bot takes 450 ms on its first three moves:
    # ~250 ms overdraft each, so the third reply finds ~300 ms left and is cut off (with
    # room for the server's own lag, which is given back to the bot).
    clock = ClockSettings(move_ms=200, bank_ms=600, grace_s=1.5)
    record = play(transport, tmp_path, "sleepy", 3, clock)
    assert kinds(record) == ["timeout"]
    mine = sorted(_seat0(record))
    assert record.move_ms[mine[0]] > 380 and record.move_ms[mine[1]] > 380, "bank not used"
    assert record.faults_of(0)[0].decision == mine[2]
    assert record.faults_of(0)[0].detail.startswith("no reply within")
    assert_not_forfeited(record)


def _seat0(record: MatchRecord) -> set[int]:
    """Decision indices where seat 0 acted, from a replay of the record."""
    game = get_game("knaves")
    state = game.new_match(record.seed, 3, record.options)
    mine = set()
    for i, action in enumerate(record.actions):
        if game.to_act(state) == 0:
            mine.add(i)
        game.apply(state, action)
    return mine


def test_illegal_action_is_a_fault_and_past_the_limit_forfeits(
    transport: str, tmp_path: Path
) -> None:
    record = play(transport, tmp_path, "illegal", 1000)
    assert kinds(record)[:4] == ["illegal_action"] * 4
    assert "not legal now" in record.faults_of(0)[0].detail
    assert_forfeited_last(record)


def test_unknown_action_id_is_its_own_fault(transport: str, tmp_path: Path) -> None:
    record = play(transport, tmp_path, "unknown", 2)
    assert kinds(record) == ["unknown_action", "unknown_action"]
    assert "castle:kingside" in record.faults_of(0)[0].detail
    assert_not_forfeited(record)


def test_garbage_bytes_are_a_malformed_fault(transport: str, tmp_path: Path) -> None:
    record = play(transport, tmp_path, "garbage", 3)
    assert kinds(record) == ["malformed"] * 3
    assert_not_forfeited(record)


def test_reply_for_another_seat_is_not_yours(transport: str, tmp_path: Path) -> None:
    record = play(transport, tmp_path, "other_seat", 2)
    assert kinds(record) == ["not_yours", "not_yours"]
    assert_not_forfeited(record)


def test_duplicate_reply_is_a_fault(transport: str, tmp_path: Path) -> None:
    record = play(transport, tmp_path, "duplicate", 2)
    assert kinds(record) == ["duplicate", "duplicate"]
    assert_not_forfeited(record)


def test_crash_mid_match_forfeits_after_the_grace_period(transport: str, tmp_path: Path) -> None:
    record = play(transport, tmp_path, "crash", 1)
    assert kinds(record) == ["disconnected"]
    assert_forfeited_last(record)


def test_vanished_bot_forfeits(transport: str, tmp_path: Path) -> None:
    record = play(transport, tmp_path, "vanish", 1)
    assert kinds(record) == ["disconnected"]
    assert_forfeited_last(record)


def test_reconnect_within_grace_resumes_the_seat(tmp_path: Path) -> None:
    record = play(RECONNECTING, tmp_path, "reconnect", 1)
    assert kinds(record) == []
    assert_not_forfeited(record)
    assert len(record.actions) > 100


def test_bot_that_never_connects_is_a_no_show(transport: str, tmp_path: Path) -> None:
    async def run() -> MatchRecord:
        async with Arena(log_dir=tmp_path, transport=transport) as arena:
            bots = []
            for seat, name in enumerate(["ghost", "a", "b"]):
                token = arena.register(name)
                if seat:
                    await arena.spawn(name, RANDOM_BOT, token)
                bots.append(arena.identity(token))
            clock = ClockSettings(move_ms=400, no_show_s=1.0)
            return await arena.play("knaves", bots, seed=5, clock=clock)

    record = asyncio.run(run())
    assert kinds(record) == ["no_show"]
    assert_forfeited_last(record)


# A decision with a single legal action is applied, and the next request built, while its bot
# is still answering (MatchRunner._look_ahead); these misbehave on exactly such decisions.


def play_forced(
    transport: str, tmp_path: Path, mode: str, bad: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[MatchRecord, list[pb.DecisionRequest]]:
    """A match whose hostile seat misbehaves on its first forced decisions, and every
    request that seat was sent."""
    log = tmp_path / "hostile-requests.log"
    record = play(transport, tmp_path, mode, bad, forced=True, log=log)
    sent = [pb.DecisionRequest.FromString(bytes.fromhex(h)) for h in log.read_text().split()]
    return record, sent


def test_a_wrong_answer_to_a_forced_decision_is_charged_and_the_match_stays_whole(
    transport: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, sent = play_forced(transport, tmp_path, "illegal", 2, monkeypatch)
    assert kinds(record) == ["illegal_action", "illegal_action"]
    by_id = {r.request_id: r for r in sent}
    for fault in record.faults_of(0):
        assert len(by_id[fault.request_id].legal_actions) == 1
        assert fault.fallback == record.actions[fault.decision]
    assert_not_forfeited(record)


def test_a_forced_decision_is_asked_again_unchanged_after_a_reconnect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, sent = play_forced(RECONNECTING, tmp_path, "reconnect", 1, monkeypatch)
    assert kinds(record) == []
    assert_not_forfeited(record)
    first = next(i for i, r in enumerate(sent) if len(r.legal_actions) == 1)
    dropped, again = sent[first], sent[first + 1]
    assert again.request_id != dropped.request_id
    assert again.knaves == dropped.knaves  # the view before the move, not after it
    assert list(again.legal_actions) == list(dropped.legal_actions)


def test_a_forced_decision_that_times_out_is_cut_off_at_the_deadline(
    transport: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, sent = play_forced(transport, tmp_path, "slow", 1, monkeypatch)
    assert kinds(record) == ["timeout"]
    fault = record.faults_of(0)[0]
    assert record.move_ms[fault.decision] == pytest.approx(400, abs=1)
    assert fault.fallback == record.actions[fault.decision]
    assert_not_forfeited(record)
