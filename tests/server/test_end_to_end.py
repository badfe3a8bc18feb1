"""Full matches of every registered game over real sockets with real bot processes."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest
from google.protobuf import json_format

from cardshark.v1 import referee_pb2 as pb
from cardshark_bot import BotClient
from games.registry import all_games, get_game
from server.codec import protocol
from server.match.records import ClockSettings, MatchRecord
from server.play.arena import Arena
from server.transport.local import serve_socket, socket_pair
from tests.server.conftest import RANDOM_BOT, TRANSPORTS

CLOCK = ClockSettings(move_ms=2000)


async def play_game(
    tmp_path: Path, name: str, seed: int, transport: str = "local"
) -> tuple[MatchRecord, list[pb.RefereeMessage], list[pb.DecisionRequest]]:
    """Seat 0 is an in-process SDK bot that keeps every event and request, over `transport`
    too (gRPC as a remote bot, or a socket pair as a managed one); the rest are processes,
    managed bots over `transport`."""
    game = get_game(name)
    seats = game.spec.default_seats
    events: list[pb.RefereeMessage] = []
    requests: list[pb.DecisionRequest] = []
    rng = random.Random(seed)

    def decide(request: pb.DecisionRequest) -> str:
        requests.append(request)
        return str(rng.choice(request.legal_actions).id)

    async with Arena(log_dir=tmp_path, transport=transport) as arena:
        bots = []
        tokens = [arena.register(f"{name}-bot{i}") for i in range(seats)]
        for i, token in enumerate(tokens[1:], start=1):
            await arena.spawn(f"{name}-bot{i}", RANDOM_BOT, token)
        server = arena.address
        if transport == "local":
            assert arena.running is not None
            ours, theirs = socket_pair()
            await serve_socket(
                ours, arena.running.hub, arena.authenticate_local, tokens[0], "test", "bot0"
            )
            server = f"fd:{theirs.detach()}"  # the client takes the descriptor over
        client = BotClient(decide, server=server, token=tokens[0], on_event=events.append)
        task = asyncio.create_task(client.run())
        bots = [arena.identity(t) for t in tokens]
        record = await arena.play(name, bots, seed=seed, clock=CLOCK)
        async with asyncio.timeout(10):  # until seat 0 has read the match's last message
            while not events or events[-1].WhichOneof("kind") != "match_ended":
                await asyncio.sleep(0.005)
        task.cancel()
    return record, events, requests


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("name", sorted(all_games()))
def test_full_match_over_grpc_replays_to_the_same_result(
    tmp_path: Path, name: str, transport: str
) -> None:
    record, events, requests = asyncio.run(play_game(tmp_path, name, seed=3, transport=transport))
    assert record.status == "finished", record.reason
    assert record.faults == []
    game = get_game(name)
    state = game.replay(record.seed, len(record.seats), record.options, record.actions)
    assert game.is_over(state)
    assert list(game.result(state).scores) == record.scores
    assert len(record.move_ms) == len(record.actions)
    kinds = [e.WhichOneof("kind") for e in events]
    assert kinds[0] == "welcome" and kinds[1] == "match_started" and kinds[-1] == "match_ended"
    hands = [e.hand_ended for e in events if e.WhichOneof("kind") == "hand_ended"]
    assert len(hands) == len(game.hand_records(state))
    assert list(hands[-1].scores) == record.scores
    on_wire = [json_format.MessageToDict(h.record) for h in hands]
    assert on_wire == json.loads(json.dumps(game.hand_records(state)))
    # every view seat 0 was sent is the engine's view at that point, field for field
    replay = game.new_match(record.seed, len(record.seats), record.options)
    seen = iter(requests)
    for action in record.actions:
        if game.to_act(replay) == 0:
            sent = json_format.MessageToDict(
                getattr(next(seen), protocol.view_field(name)),
                preserving_proto_field_name=True,
                always_print_fields_with_no_presence=True,
            )
            assert sent == json.loads(json.dumps(game.view(replay, 0)))
        game.apply(replay, action)
    assert next(seen, None) is None
    assert list(events[-1].match_ended.scores) == record.scores
    assert list(events[-1].match_ended.ranks) == record.ranks
    started = events[1].match_started
    assert started.game == name and [s.bot_name for s in started.seats] == record.seats


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_one_stream_serves_two_matches_at_once(tmp_path: Path, transport: str) -> None:
    async def run() -> list[MatchRecord]:
        async with Arena(log_dir=tmp_path, transport=transport) as arena:
            tokens = [arena.register(f"b{i}") for i in range(3)]
            for i, token in enumerate(tokens):
                await arena.spawn(f"b{i}", RANDOM_BOT, token)
            bots = [arena.identity(t) for t in tokens]
            return list(
                await asyncio.gather(
                    arena.play("knaves", bots, seed=1), arena.play("knaves", bots[::-1], seed=2)
                )
            )

    first, second = asyncio.run(run())
    assert first.status == second.status == "finished"
    assert first.faults == second.faults == []
    assert first.seats == second.seats[::-1]


def test_bad_token_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    from cardshark_bot import BotRefused

    async def run() -> str:
        async with Arena(log_dir=tmp_path) as arena:
            client = BotClient(lambda r: "", server=arena.address, token="wrong")
            try:
                await client.run()
            except BotRefused as err:
                return str(err)
        return ""

    assert "unknown bot token" in asyncio.run(run())
