"""Referee throughput against a raw gRPC bidi ping-pong with the same messages and processes.

Usage: python bench/referee.py [--games knaves,knives] [--matches 6] [--repeat 5] [--json]
The referee side plays full matches against real random-bot processes over loopback. The raw
side sends the same serialized DecisionRequests (captured from a match) to the same number of
client processes, one at a time, each answering with a Decision — gRPC's floor for this traffic.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from cardshark.v1 import referee_pb2 as pb  # noqa: E402
from games.registry import get_game  # noqa: E402
from server import protocol  # noqa: E402
from server.arena import Arena  # noqa: E402

RANDOM_BOT = [sys.executable, str(ROOT / "clients" / "python" / "examples" / "random_bot.py")]
RAW_METHOD = "/bench.PingPong/Play"


def captured_requests(game_name: str, seed: int) -> list[bytes]:
    """Serialized DecisionRequests of one seeded random match, as the referee would send them."""
    game = get_game(game_name)
    state = game.new_match(seed)
    rng = random.Random(seed)
    out = []
    while (seat := game.to_act(state)) is not None:
        legal = game.legal_actions(state)
        msg = protocol.decision_request(
            game_name=game_name,
            request_id=len(out) + 1,
            match_id="bench",
            seat=seat,
            view=game.view(state, seat),
            actions=legal,
            move_ms=1000,
            bank_ms=0,
        )
        out.append(msg.SerializeToString())
        game.apply(state, rng.choice(legal))
    return out


async def referee_run(game_name: str, matches: int) -> dict[str, float]:
    """Decisions/s of the real referee against random-bot processes."""
    seats = get_game(game_name).spec.default_seats
    async with Arena(log_dir="/tmp/cardshark-bench") as arena:
        tokens = [arena.register(f"bench{i}") for i in range(seats)]
        for i, token in enumerate(tokens):
            await arena.spawn(f"bench{i}", RANDOM_BOT, token)
        bots = [arena.identity(t) for t in tokens]
        await arena.play(game_name, bots, seed=999)  # warm-up: connections, imports
        decisions, start = 0, time.perf_counter()
        for m in range(matches):
            record = await arena.play(game_name, bots, seed=m)
            assert record.status == "finished" and not record.faults, record.faults
            decisions += len(record.actions)
        elapsed = time.perf_counter() - start
    return {"decisions": decisions, "seconds": elapsed, "decisions_per_s": decisions / elapsed}


async def raw_client(address: str) -> None:
    """A minimal bot: parse each request, answer its first legal action."""
    outbox: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def outgoing() -> AsyncIterator[bytes]:
        while (m := await outbox.get()) is not None:
            yield m

    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(
            RAW_METHOD,
            request_serializer=lambda b: b,
            response_deserializer=pb.RefereeMessage.FromString,
        )(outgoing())
        outbox.put_nowait(b"")
        async for msg in call:
            req = msg.request
            choice = random.choice(req.legal_actions).id
            decision = pb.BotMessage(
                decision=pb.Decision(request_id=req.request_id, action_id=choice)
            )
            outbox.put_nowait(decision.SerializeToString())


async def raw_run(game_name: str, matches: int) -> dict[str, float]:
    """Decisions/s of a bare ping-pong: same message bytes, same number of processes."""
    seats = get_game(game_name).spec.default_seats
    streams: list[tuple[asyncio.Queue[bytes | None], asyncio.Queue[bytes]]] = []
    ready = asyncio.Event()

    async def play(requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
        out: asyncio.Queue[bytes | None] = asyncio.Queue()
        back: asyncio.Queue[bytes] = asyncio.Queue()
        streams.append((out, back))
        if len(streams) == seats:
            ready.set()

        async def read() -> None:
            async for m in requests:
                back.put_nowait(m)

        task = asyncio.create_task(read())
        await back.get()  # the hello
        while (m := await out.get()) is not None:
            yield m
        task.cancel()

    server = grpc.aio.server()
    handler = grpc.stream_stream_rpc_method_handler(
        play, request_deserializer=lambda b: b, response_serializer=lambda b: b
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("bench.PingPong", {"Play": handler}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--client", f"127.0.0.1:{port}"
        )
        for _ in range(seats)
    ]
    await ready.wait()
    warm = captured_requests(game_name, 999)[0]
    for _ in range(100):  # same warm-up role as the referee's first match
        for out, back in streams:
            out.put_nowait(warm)
            await back.get()
    captured = [captured_requests(game_name, m) for m in range(matches)]
    decisions, start = 0, time.perf_counter()
    for requests in captured:
        for i, data in enumerate(requests):
            out, back = streams[i % seats]
            out.put_nowait(data)
            await back.get()
        decisions += len(requests)
    elapsed = time.perf_counter() - start
    for out, _ in streams:
        out.put_nowait(None)  # ends each stream; its client then exits by itself
    for proc in procs:
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            proc.kill()
            await proc.wait()
    await server.stop(0)
    return {"decisions": decisions, "seconds": elapsed, "decisions_per_s": decisions / elapsed}


def compare(game: str, matches: int, repeat: int) -> dict[str, float]:
    """Both sides for one game, run in adjacent pairs; the ratio is the median of the pairs'
    ratios, so a burst of load from elsewhere on the machine moves one pair, not the figure."""
    raws, referees = [], []
    for _ in range(repeat):
        raws.append(asyncio.run(raw_run(game, matches))["decisions_per_s"])
        referees.append(asyncio.run(referee_run(game, matches))["decisions_per_s"])
    ratios = [ref / raw for ref, raw in zip(referees, raws, strict=True)]
    return {
        "seats": get_game(game).spec.default_seats,
        "referee_decisions_per_s": statistics.median(referees),
        "raw_decisions_per_s": statistics.median(raws),
        "ratio": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "runs": repeat,
    }


def main() -> None:
    """Run both sides per game and print the figures and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", default="knaves,knives", help="3-seat and 5-seat games")
    parser.add_argument("--matches", type=int, default=6, help="matches per run")
    parser.add_argument("--repeat", type=int, default=5, help="paired runs (raw, referee)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--client", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        asyncio.run(raw_client(args.client))
        return
    games = [g for g in args.games.split(",") if g]
    results = {g: compare(g, args.matches, args.repeat) for g in games}
    if args.json:
        # Top-level figures are the last game's (the 5-seat one by default).
        print(json.dumps({**results[games[-1]], "game": games[-1], "by_game": results}))
        return
    print(f"{'game':<10}{'bots':>5}{'referee/s':>12}{'raw gRPC/s':>12}{'ratio':>8}  pairs' range")
    for game, r in results.items():
        print(
            f"{game:<10}{r['seats']:>5.0f}{r['referee_decisions_per_s']:>12.0f}"
            f"{r['raw_decisions_per_s']:>12.0f}{r['ratio']:>8.2f}"
            f"  {r['ratio_min']:.2f}-{r['ratio_max']:.2f}"
        )


if __name__ == "__main__":
    main()
