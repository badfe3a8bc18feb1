"""Seat 0 through the stdio bridge: every line a bridged bot reads, in one short match of each
game, is the engine's view of its seat, default values included (seat 0, a trick led or won
by seat 0, integer options as integers).

Every seat is a reader bot (tests/clients/bots/reader.py) behind the real bridge process,
dialling the referee over gRPC; each keeps the lines it read. The match is replayed through
the game's engine and every request, event and option the bots read is compared with it, types
included: 0 must be there, and 3 is not 3.0.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from games.registry import all_games, get_game
from server.codec.protocol import view_field
from server.match.records import ClockSettings, MatchRecord
from server.play.arena import Arena

PYTHON = sys.executable
READER = Path(__file__).parent / "bots" / "reader.py"
BRIDGE = [PYTHON, "-m", "cardshark_bot.bridge"]
CLOCK = ClockSettings(move_ms=5000, no_show_s=20)  # generous: the machine is small and busy
SEED = 7
# One short match per game: its fewest seats, and its fewest hands where an option says so.
SHORT: dict[str, tuple[int, dict[str, Any]]] = {
    "kansas-city": (4, {"hands": 1}),
    "kill": (3, {"max_rounds": 3}),
    "knaves": (3, {}),
    "knives": (5, {"target": 10}),
    "ninja-whist": (3, {}),
}


def test_every_game_has_a_short_match() -> None:
    assert set(SHORT) == set(all_games())


async def play(tmp_path: Path, game: str) -> MatchRecord:
    """One match of bridged reader bots, seat i keeping its lines in reader<i>.jsonl."""
    seats, options = SHORT[game]
    async with Arena(log_dir=tmp_path, transport="grpc") as arena:
        bots = []
        for seat in range(seats):
            name = f"reader{seat}"
            token = arena.register(name)
            reader = [PYTHON, str(READER), str(tmp_path / f"{name}.jsonl"), str(seat)]
            await arena.spawn(name, [*BRIDGE, "--", *reader], token)
            bots.append(arena.identity(token))
        return await arena.play(game, bots, seed=SEED, options=options, clock=CLOCK)


def mismatch(expected: Any, got: Any, path: str) -> str | None:
    """Where got differs from expected, types included; None when it does not."""
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return f"{path}: {got!r}, the engine has {expected!r}"
        for key, value in expected.items():
            if key not in got:
                return f"{path}.{key}: missing; the engine has {value!r}"
            found = mismatch(value, got[key], f"{path}.{key}")
            if found:
                return found
        extra = sorted(set(got) - set(expected))
        return f"{path}: fields the engine has not: {extra}" if extra else None
    if isinstance(expected, list | tuple):
        if not isinstance(got, list) or len(got) != len(expected):
            return f"{path}: {got!r}, the engine has {list(expected)!r}"
        for i, (value, item) in enumerate(zip(expected, got, strict=True)):
            found = mismatch(value, item, f"{path}[{i}]")
            if found:
                return found
        return None
    if type(got) is not type(expected) or got != expected:
        return f"{path}: {got!r} ({type(got).__name__}), the engine has {expected!r}"
    return None


def engine_requests(record: MatchRecord, seat: int) -> list[tuple[dict[str, Any], list[str]]]:
    """The view and legal action ids of every decision of seat, replayed through the engine."""
    game = get_game(record.game)
    state = game.new_match(record.seed, len(record.seats), record.options)
    asked = []
    for action_id in record.actions:
        if game.to_act(state) == seat:
            asked.append((game.view(state, seat), [a.id for a in game.legal_actions(state)]))
        game.apply(state, action_id)
    return asked


def lines_read(path: Path, match_id: str) -> dict[str, list[dict[str, Any]]]:
    """The messages of one match a reader bot read, by kind, in order."""
    kinds: dict[str, list[dict[str, Any]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        ((kind, body),) = json.loads(line).items()
        if body.get("match_id", match_id) == match_id:
            kinds.setdefault(kind, []).append(body)
    return kinds


def led_or_won_by_zero(views: list[dict[str, Any]]) -> tuple[bool, bool]:
    """Whether seat 0 leads a trick in any view, and wins one of the tricks listed."""
    led = any(view.get("leader") == 0 for view in views)
    won = any(trick.get("winner") == 0 for view in views for trick in view.get("tricks", ()))
    return led, won


def logs(tmp_path: Path) -> str:
    return "\n".join(
        f"--- {log.name}\n{log.read_text(errors='replace')[-2000:]}"
        for log in sorted(tmp_path.glob("*.stderr.log"))
    )


@pytest.mark.parametrize("game", sorted(SHORT))
def test_a_bridged_bot_reads_the_engines_view_of_its_seat(tmp_path: Path, game: str) -> None:
    record = asyncio.run(play(tmp_path, game))
    assert record.status == "finished", f"{record.reason}\n{logs(tmp_path)}"
    assert record.faults == [], f"{record.faults}\n{logs(tmp_path)}"
    engine = get_game(game)
    field = view_field(game)
    state = engine.replay(record.seed, len(record.seats), record.options, record.actions)
    options = engine.spec.resolve(record.options)
    for seat in range(len(record.seats)):
        where = f"{game}, seat {seat}"
        read = lines_read(tmp_path / f"reader{seat}.jsonl", record.match_id)
        (started,) = read["match_started"]
        assert started.get("seat") == seat, f"{where}: match_started {started}"
        assert [s.get("seat") for s in started["seats"]] == list(range(len(record.seats)))
        found = mismatch(options, started["options"], "options")
        assert found is None, f"{where}: {found}"
        asked = engine_requests(record, seat)
        requests = read.get("request", [])
        assert len(requests) == len(asked), f"{where}: {len(requests)} requests read"
        for n, (request, (view, legal)) in enumerate(zip(requests, asked, strict=True)):
            assert request.get("seat") == seat, f"{where}, request {n}: {request}"
            assert [a["id"] for a in request["legal_actions"]] == legal, f"{where}, request {n}"
            found = mismatch(view, request.get(field), field)
            assert found is None, f"{where}, request {n}: {found}"
        hands = engine.hand_records(state)
        ended = read.get("hand_ended", [])
        assert [h["hand_number"] for h in ended] == list(range(len(hands))), where
        for n, (hand, expected) in enumerate(zip(ended, hands, strict=True)):
            found = mismatch(expected, hand["record"], "record")
            assert found is None, f"{where}, hand {n}: {found}"
        (last,) = read["match_ended"]
        assert last["scores"] == record.scores and last["ranks"] == record.ranks, where
        if seat == 0 and "leader" in asked[0][0]:
            led, won = led_or_won_by_zero([v for v, _ in asked])
            assert led and won, f"{where}: seat 0 never led ({led}) or won ({won}) a trick"
