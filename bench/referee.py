"""Referee throughput against a raw gRPC bidi ping-pong with the same messages and processes.

Usage: python bench/referee.py [--games knaves,knives] [--rounds 80] [--cpu N] [--json]
       python bench/referee.py --referee-only [--profile] [--games knaves] [--rounds 60]
The referee side plays full matches against real random-bot processes, as managed bots: over
the referee's Unix socket (gRPC), once unsandboxed and once each in its bubblewrap sandbox,
and over the local transport (frames on an inherited socket pair, unsandboxed). The raw
side sends the same serialized DecisionRequests (captured from a match) over a Unix socket to
the same number of client processes, one at a time, each answering with a Decision — gRPC's
floor for this traffic. Start-up is the time from spawning a bot to its stream being live.
Both sides stay up for the whole run and take turns, one match each per round, so a change in
the machine's speed over the run (common on shared VMs) moves both sides of a round alike; the
ratio is the median of the rounds' ratios.

--referee-only plays just the (unsandboxed) referee side, for a sampling profiler such as
`py-spy record --native -- python bench/referee.py --referee-only`; with --profile it runs
under cProfile and prints the functions with the most time of their own (cProfile slows
Python code about 2x, gRPC's C code not at all: read shares, not microseconds).
docs/performance.md has the profile and where the time goes.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from cardshark.v1 import referee_pb2 as pb  # noqa: E402
from games.registry import all_games, get_game  # noqa: E402
from server.bots.cpu_pin import CpuChoiceError, parse_cpu, pin_process  # noqa: E402
from server.bots.sandbox import NO_SANDBOX, SandboxPolicy  # noqa: E402
from server.codec import protocol  # noqa: E402
from server.play.arena import Arena  # noqa: E402

RANDOM_BOT = [sys.executable, str(ROOT / "clients" / "python" / "examples" / "random_bot.py")]
RAW_METHOD = "/bench.PingPong/Play"


def captured_requests(game_name: str, seed: int) -> list[bytes]:
    """Serialized DecisionRequests of one seeded random match, as the referee would send them."""
    game = get_game(game_name)
    state = game.new_match(seed)
    rng = random.Random(seed)
    out: list[bytes] = []
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


class RefereeSide:
    """A referee with one random-bot process per seat, playing one match at a time."""

    def __init__(
        self, game_name: str, sandbox: SandboxPolicy = NO_SANDBOX, transport: str = "grpc"
    ) -> None:
        self.game_name = game_name
        self.arena = Arena(log_dir="/tmp/cardshark-bench", sandbox=sandbox, transport=transport)
        self.bots: list[Any] = []
        self.startup_ms: list[float] = []

    async def start(self) -> None:
        """Start the server and the bot processes one by one (timed), and play a warm-up."""
        await self.arena.start()
        assert self.arena.running is not None
        tokens = [self.arena.register(f"bench{i}") for i in range(self.seats)]
        for i, token in enumerate(tokens):
            began = time.perf_counter()
            await self.arena.spawn(f"bench{i}", RANDOM_BOT, token)
            live = await self.arena.running.hub.wait_for(self.arena.identity(token).bot_id, 30)
            assert live is not None, f"bench{i} never connected"
            self.startup_ms.append((time.perf_counter() - began) * 1000)
        self.bots = [self.arena.identity(t) for t in tokens]
        await self.play(999)  # warm-up: connections, imports

    @property
    def seats(self) -> int:
        """Bots in a match."""
        return get_game(self.game_name).spec.default_seats

    async def play(self, seed: int) -> tuple[int, float]:
        """Decisions and seconds of one full match."""
        start = time.perf_counter()
        record = await self.arena.play(self.game_name, self.bots, seed=seed)
        elapsed = time.perf_counter() - start
        assert record.status == "finished" and not record.faults, record.faults
        return len(record.actions), elapsed

    async def close(self) -> None:
        """Stop the bots and the server."""
        await self.arena.close()


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


class RawSide:
    """A bare ping-pong server with one minimal client process per seat."""

    def __init__(self, seats: int) -> None:
        self.seats = seats
        self.streams: list[tuple[asyncio.Queue[bytes | None], asyncio.Queue[bytes]]] = []
        self.ready = asyncio.Event()
        self.server = grpc.aio.server()
        self.procs: list[asyncio.subprocess.Process] = []
        self.socket_dir = tempfile.mkdtemp(prefix="cardshark-bench-")

    async def _serve(self, requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
        out: asyncio.Queue[bytes | None] = asyncio.Queue()
        back: asyncio.Queue[bytes] = asyncio.Queue()
        self.streams.append((out, back))
        if len(self.streams) == self.seats:
            self.ready.set()

        async def read() -> None:
            async for m in requests:
                back.put_nowait(m)

        task = asyncio.create_task(read())
        await back.get()  # the hello
        while (m := await out.get()) is not None:
            yield m
        task.cancel()

    async def start(self, warm: bytes) -> None:
        """Start the server and the clients, and warm up as the referee's first match does."""
        handler = grpc.stream_stream_rpc_method_handler(
            self._serve, request_deserializer=lambda b: b, response_serializer=lambda b: b
        )
        self.server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("bench.PingPong", {"Play": handler}),)
        )
        address = f"unix:{self.socket_dir}/raw.sock"  # as the referee's managed bots dial
        self.server.add_insecure_port(address)
        await self.server.start()
        for _ in range(self.seats):
            self.procs.append(
                await asyncio.create_subprocess_exec(sys.executable, __file__, "--client", address)
            )
        await self.ready.wait()
        for _ in range(100):
            for out, back in self.streams:
                out.put_nowait(warm)
                await back.get()

    async def play(self, requests: list[bytes]) -> tuple[int, float]:
        """Decisions and seconds of one match's requests, each answered before the next."""
        start = time.perf_counter()
        for i, data in enumerate(requests):
            out, back = self.streams[i % self.seats]
            out.put_nowait(data)
            await back.get()
        return len(requests), time.perf_counter() - start

    async def close(self) -> None:
        """End each stream (its client then exits by itself) and stop the server."""
        for out, _ in self.streams:
            out.put_nowait(None)
        for proc in self.procs:
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await self.server.stop(0)


async def compare(game: str, rounds: int) -> dict[str, float]:
    """All three sides for one game, a match each per round; rates and ratios are medians."""
    seats = get_game(game).spec.default_seats
    raw = RawSide(seats)
    referee, boxed = RefereeSide(game), RefereeSide(game, SandboxPolicy())
    local = RefereeSide(game, transport="local")
    await raw.start(captured_requests(game, 999)[0])
    await referee.start()
    await boxed.start()
    await local.start()
    raws, referees, boxeds, ratios, boxed_ratios = [], [], [], [], []
    locals_, local_ratios = [], []
    try:
        for seed in range(rounds):
            requests = captured_requests(game, seed)  # built before any side's clock runs
            n, seconds = await raw.play(requests)
            raw_rate = n / seconds
            n, seconds = await referee.play(seed)
            referee_rate = n / seconds
            n, seconds = await boxed.play(seed)
            boxed_rate = n / seconds
            n, seconds = await local.play(seed)
            local_rate = n / seconds
            locals_.append(local_rate)
            local_ratios.append(local_rate / referee_rate)
            raws.append(raw_rate)
            referees.append(referee_rate)
            boxeds.append(boxed_rate)
            ratios.append(referee_rate / raw_rate)
            boxed_ratios.append(boxed_rate / raw_rate)
            if (seed + 1) % 10 == 0 or seed + 1 == rounds:
                print(f"{game}: {seed + 1}/{rounds} rounds", file=sys.stderr, flush=True)
    finally:
        await local.close()
        await boxed.close()
        await referee.close()
        await raw.close()
    quartiles = statistics.quantiles(ratios, n=4)
    return {
        "seats": seats,
        "referee_decisions_per_s": statistics.median(referees),
        "sandboxed_decisions_per_s": statistics.median(boxeds),
        "raw_decisions_per_s": statistics.median(raws),
        "local_decisions_per_s": statistics.median(locals_),
        "local_referee_ratio": statistics.median(local_ratios),  # local / gRPC referee
        "ratio": statistics.median(ratios),
        "ratio_q1": quartiles[0],
        "ratio_q3": quartiles[2],
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "sandboxed_ratio": statistics.median(boxed_ratios),
        "startup_ms": statistics.median(referee.startup_ms),
        "sandboxed_startup_ms": statistics.median(boxed.startup_ms),
        "local_startup_ms": statistics.median(local.startup_ms),
        "rounds": rounds,
    }


async def referee_only(game: str, rounds: int, profile: bool, transport: str) -> None:
    """The referee side alone, optionally under cProfile; prints decisions/s (and the top)."""
    side = RefereeSide(game, transport=transport)
    await side.start()
    profiler = cProfile.Profile() if profile else None
    decisions, start = 0, time.perf_counter()
    try:
        if profiler is not None:
            profiler.enable()
        for seed in range(rounds):
            decisions += (await side.play(seed))[0]
        if profiler is not None:
            profiler.disable()
    finally:
        await side.close()
    seconds = time.perf_counter() - start
    print(f"{game}: {decisions / seconds:.0f} decisions/s ({decisions} in {seconds:.1f} s)")
    if profiler is not None:
        stats = pstats.Stats(profiler)
        total = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
        rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])  # type: ignore[attr-defined]
        print(f"{'own %':>6}  function (of {total:.2f} s profiled, waiting in epoll included)")
        for (path, line, name), row in rows[:25]:
            where = f"{Path(path).name}:{line}" if line else path
            print(f"{100 * row[2] / total:>6.1f}  {name} ({where})")


def main() -> None:
    """Run both sides per game and print the figures and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", default="knaves,knives", help="3-seat and 5-seat games")
    parser.add_argument("--rounds", type=int, default=80, help="matches per side, alternating")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--referee-only", action="store_true", help="the referee side alone")
    parser.add_argument("--profile", action="store_true", help="with --referee-only: cProfile")
    parser.add_argument(
        "--transport",
        choices=("grpc", "local"),
        default="grpc",
        help="with --referee-only: the bots' transport",
    )
    parser.add_argument(
        "--cpu",
        type=int,
        help="run everything (referee, bots, raw clients) on core N, as a `cardshark worker` "
        "runs a match on its core",
    )
    parser.add_argument("--client", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        asyncio.run(raw_client(args.client))
        return
    if args.cpu is not None:
        try:
            parse_cpu(str(args.cpu))  # a core this process may use, or a one-line error
        except CpuChoiceError as err:
            parser.error(str(err))
        pin_process(args.cpu)
    if args.referee_only:
        for game in [g for g in args.games.split(",") if g]:
            asyncio.run(referee_only(game, args.rounds, args.profile, args.transport))
        return
    if args.rounds < 2:
        parser.error(f"--rounds {args.rounds}: need at least 2 rounds for a median and quartiles")
    games = [g for g in args.games.split(",") if g]
    unknown = [g for g in games if g not in all_games()]
    if unknown or not games:
        what = f"unknown {', '.join(unknown)}" if unknown else "no game named"
        known = ", ".join(sorted(all_games()))
        parser.error(f"--games {args.games!r}: {what}; known: {known}")
    results = {g: asyncio.run(compare(g, args.rounds)) for g in games}
    if args.json:
        # Top-level figures are the last game's (the 5-seat one by default).
        top = {**results[games[-1]], "game": games[-1], "cpu": args.cpu}
        print(json.dumps({**top, "by_game": results}))
        return
    print(
        f"{'game':<10}{'bots':>5}{'referee/s':>11}{'sandboxed/s':>13}{'raw gRPC/s':>12}"
        f"{'ratio':>7}{'sandboxed':>11}{'start ms':>10}{'sandboxed':>11}"
        f"{'local/s':>10}{'local/ref':>11}"
    )
    for game, r in results.items():
        print(
            f"{game:<10}{r['seats']:>5.0f}{r['referee_decisions_per_s']:>11.0f}"
            f"{r['sandboxed_decisions_per_s']:>13.0f}{r['raw_decisions_per_s']:>12.0f}"
            f"{r['ratio']:>7.2f}{r['sandboxed_ratio']:>11.2f}"
            f"{r['startup_ms']:>10.0f}{r['sandboxed_startup_ms']:>11.0f}"
            f"{r['local_decisions_per_s']:>10.0f}{r['local_referee_ratio']:>11.2f}"
        )


if __name__ == "__main__":
    main()
