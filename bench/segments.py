"""Where a decision's wall time goes: timestamps at the referee's seams, medians per segment.

Usage: python bench/segments.py [--games knaves,knives] [--rounds 20] [--json]

Plays the referee side of bench/referee.py (random-bot processes, one match at a time) over
gRPC and over the local transport, with a timestamp taken at each seam a decision crosses,
and prints each segment's median in µs. Over gRPC: the reply parsed (gRPC's deserializer),
routed to its request (`BotHub.on_decision`), the match's task resumed (`_check`), the next
request handed to the stream (`BotSession.send`), and serialized by gRPC; from there to the
next reply parsed is the bot's side (gRPC's write and read at both ends included); the raw
ping-pong of bench/referee.py is timed from a request queued to its answer. Over the
local transport: the request written (`LocalSession.send`) and the reply read
(`LocalConnection.buffer_updated`). The hooks cost a little themselves: read the shares.
docs/performance.md has the figures and what they say.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from referee import ROOT, RawSide, RefereeSide, captured_requests  # bench/referee.py

from server.match import hub, sessions
from server.match import runner as referee
from server.transport import local as local_transport
from server.transport import service

assert ROOT.is_dir()
Marks = list[tuple[str, float]]
GRPC_NAMES = {
    "r>d": "reply parsed -> routed",
    "d>a": "routed -> match task resumed",
    "a>q": "resumed -> next request queued",
    "q>s": "queued -> serialized by gRPC",
    "s>r": "serialized -> next reply parsed (the bot's side)",
}
LOCAL_NAMES = {
    "r>s": "reply read -> next request written",
    "s>r": "request written -> reply read (the bot's side)",
}


def _hook(owner: Any, name: str, mark: str, marks: Marks, skip_bytes: bool = False) -> None:
    """Wrap owner.name so that each call first notes (mark, now); bytes (broadcasts) skipped."""
    inner: Callable[..., Any] = getattr(owner, name)

    def wrapped(*args: Any) -> Any:
        if not (skip_bytes and isinstance(args[-1], bytes)):
            marks.append((mark, time.perf_counter()))
        return inner(*args)

    setattr(owner, name, wrapped)


def _after(owner: Any, name: str, mark: str, marks: Marks) -> None:
    """Wrap owner.name so that each call notes (mark, now) once it returns a non-broadcast."""
    inner: Callable[..., Any] = getattr(owner, name)

    def wrapped(msg: Any) -> Any:
        data = inner(msg)
        if not isinstance(msg, bytes):
            marks.append((mark, time.perf_counter()))
        return data

    setattr(owner, name, wrapped)


def medians(marks: Marks, names: dict[str, str]) -> dict[str, float]:
    """Median µs of each named segment (a mark followed directly by the next)."""
    gaps: dict[str, list[float]] = {key: [] for key in names}
    seams = {mark for key in names for mark in key.split(">")}
    marks = [m for m in marks if m[0] in seams]
    for (first, at), (then, until) in zip(marks, marks[1:], strict=False):
        key = f"{first}>{then}"
        if key in gaps:
            gaps[key].append(until - at)
    return {names[k]: round(statistics.median(v) * 1e6, 1) for k, v in gaps.items() if v}


async def measure(game: str, transport: str, rounds: int, marks: Marks) -> float:
    """Play rounds matches (after the warm-up) with marks cleared first; decisions per s."""
    side = RefereeSide(game, transport=transport)
    await side.start()
    marks.clear()
    decisions, began = 0, time.perf_counter()
    try:
        for seed in range(rounds):
            decisions += (await side.play(seed))[0]
    finally:
        elapsed = time.perf_counter() - began
        await side.close()
    return decisions / elapsed


async def raw_round_trips(game: str, rounds: int) -> list[float]:
    """Seconds per request of the raw ping-pong: queued for its stream until answered."""
    side = RawSide(RefereeSide(game).seats)
    await side.start(captured_requests(game, 999)[0])
    trips: list[float] = []
    try:
        for seed in range(rounds):
            for i, data in enumerate(captured_requests(game, seed)):
                out, back = side.streams[i % side.seats]
                began = time.perf_counter()
                out.put_nowait(data)
                await back.get()
                trips.append(time.perf_counter() - began)
    finally:
        await side.close()
    return trips


def main() -> None:
    """Measure each game over both transports and print the segments' medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", default="knaves,knives")
    parser.add_argument("--rounds", type=int, default=20, help="matches per game and transport")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    marks: Marks = []
    _hook(service, "parse_bot_message", "r", marks)
    _after(service, "encode_outgoing", "s", marks)
    _hook(hub.BotHub, "on_decision", "d", marks)
    _hook(referee.MatchRunner, "_check", "a", marks)
    _hook(sessions.BotSession, "send", "q", marks, skip_bytes=True)
    _hook(local_transport.LocalSession, "send", "s", marks, skip_bytes=True)
    _hook(local_transport.LocalConnection, "buffer_updated", "r", marks)
    out: dict[str, Any] = {}
    for game in [g for g in args.games.split(",") if g]:
        rate = asyncio.run(measure(game, "grpc", args.rounds, marks))
        out[f"{game} grpc"] = {"decisions_per_s": round(rate), **medians(marks, GRPC_NAMES)}
        trips = asyncio.run(raw_round_trips(game, args.rounds))
        out[f"{game} raw gRPC"] = {
            "decisions_per_s": round(len(trips) / sum(trips)),
            "the whole round trip": round(statistics.median(trips) * 1e6, 1),
        }
        rate = asyncio.run(measure(game, "local", args.rounds, marks))
        out[f"{game} local"] = {"decisions_per_s": round(rate), **medians(marks, LOCAL_NAMES)}
    if args.json:
        print(json.dumps(out))
        return
    for run, figures in out.items():
        print(f"{run}: {figures['decisions_per_s']} decisions/s")
        for what, us in figures.items():
            if what != "decisions_per_s":
                print(f"  {us:>7.1f} µs  {what}")


if __name__ == "__main__":
    main()
