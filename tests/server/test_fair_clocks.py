"""Fair clocks: the server's load is never the bot's time, and results do not depend on it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cardshark.v1 import referee_pb2 as pb
from server.bots.sandbox import SandboxPolicy
from server.match.clocks import wall_cap
from server.match.hub import BotHub
from server.match.records import ClockSettings
from server.match.sessions import BotIdentity, BotSession, Reply
from server.play.arena import Arena
from server.play.load import (
    AdaptiveLimit,
    StormWatch,
    concurrency_warning,
    cores,
    fitting_concurrency,
)
from tests.server.conftest import HOSTILE_BOT, RANDOM_BOT, ROOT

CARDSHARK = str(Path(sys.executable).with_name("cardshark"))
EXAMPLES = ROOT / "clients" / "python" / "examples"


def tournament(
    cwd: Path,
    game: str,
    script: str,
    bots: int,
    tables: int,
    move_ms: int,
    concurrency: int,
    *extra: str,
) -> tuple[dict[str, float], tuple[int, int], str, int, str]:
    """Per-bot score totals, (faults, forfeits), stderr, matches voided for load and the
    rankings' output of a CLI round robin."""
    cwd.mkdir()
    env = dict(os.environ, CARDSHARK_DB=f"sqlite:///{cwd / 'cs.db'}", GRPC_VERBOSITY="NONE")
    names = [f"copy{i}" for i in range(bots)]
    command = shlex.join([sys.executable, str(EXAMPLES / script)])
    for name in names:
        subprocess.run(
            [CARDSHARK, "bot", "add", name, "--command", command],
            cwd=cwd,
            env=env,
            check=True,
            capture_output=True,
        )
    run = subprocess.run(
        [
            CARDSHARK,
            "tournament",
            "run",
            game,
            "--bots",
            ",".join(names),
            "--seed",
            "5",
            "--tables",
            str(tables),
            "--move-ms",
            str(move_ms),
            "--concurrency",
            str(concurrency),
            *extra,
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    with sqlite3.connect(cwd / "cs.db") as db:
        scores = dict(
            db.execute(
                "SELECT b.name, SUM(s.score) FROM seat_results s JOIN bots b ON b.id = s.bot_id "
                "GROUP BY b.name"
            ).fetchall()
        )
        faults, forfeits = db.execute(
            "SELECT SUM(faults), SUM(forfeited) FROM seat_results"
        ).fetchone()
        voids = db.execute(
            "SELECT COUNT(*) FROM matches WHERE status = 'voided' AND result LIKE '%load:%'"
        ).fetchone()[0]
    rankings = subprocess.run(
        [CARDSHARK, "rankings", game], cwd=cwd, env=env, capture_output=True, text=True
    )
    return scores, (faults, forfeits), run.stderr, voids, rankings.stdout


@pytest.mark.parametrize(
    ("game", "script", "bots", "tables", "move_ms", "concurrency", "extra"),
    [
        ("knaves", "knaves_bot.py", 16, 45, 20, 32, ()),
        ("ninja-whist", "ninja_whist_bot.py", 8, 6, 30, 24, ("--seats", "4")),
    ],
    ids=["knaves-16-bots", "ninja-whist-4-seats"],
)
def test_identical_deterministic_bots_give_the_same_result_at_any_concurrency(
    tmp_path: Path,
    game: str,
    script: str,
    bots: int,
    tables: int,
    move_ms: int,
    concurrency: int,
    extra: tuple[str, ...],
) -> None:
    alone = tournament(tmp_path / "one", game, script, bots, tables, move_ms, 1, *extra)
    crowded = tournament(
        tmp_path / "many", game, script, bots, tables, move_ms, concurrency, *extra
    )
    assert alone[1] == (0, 0), alone[2]
    assert crowded[1] == (0, 0), "the server's load was charged to the bots"
    assert crowded[0] == alone[0]
    assert f"--concurrency {concurrency} is more than" in crowded[2]
    voids = crowded[3]
    if voids:
        assert f"{voids} match(es) voided for the server's load" in crowded[2]
        assert f"tournament 1: {voids} match(es) voided for the server's load" in crowded[4]


WAITED = re.compile(r"\((CPU|wall) clock; cut off after (\d+) ms of wall time\)")


@pytest.mark.parametrize("matches", [1, 6], ids=["alone", "six-at-once"])
def test_a_bot_that_never_answers_is_charged_within_the_clock_plus_the_cap(
    tmp_path: Path, matches: int
) -> None:
    clock = ClockSettings(move_ms=100, fault_limit=10, grace_s=1.5, no_show_s=8)

    async def run() -> list[list[tuple[int, str, str]]]:
        async with Arena(log_dir=tmp_path, sandbox=SandboxPolicy()) as arena:
            bots = []
            for seat, name in enumerate(["stuck", "honest1", "honest2"]):
                token = arena.register(name)
                command = [*HOSTILE_BOT, "stuck", "2", "any"] if seat == 0 else RANDOM_BOT
                await arena.spawn(name, command, token)
                bots.append(arena.identity(token))
            records = await asyncio.gather(
                *(arena.play("knaves", bots, seed=s, clock=clock) for s in range(matches))
            )
        return [[(f.seat, f.kind, f.detail) for f in r.faults] for r in records]

    # The bot ignores its first two requests, whichever matches they belong to.
    faults = [f for per_match in asyncio.run(run()) for f in per_match]
    assert [(seat, kind) for seat, kind, _ in faults] == [(0, "timeout"), (0, "timeout")]
    for _, _, detail in faults:
        found = WAITED.search(detail)
        assert found is not None, detail
        assert found.group(1) == "CPU"
        waited_s = int(found.group(2)) / 1000
        assert 0.1 <= waited_s <= wall_cap(0.1) + 0.25, detail


class FakeMatch:
    """A match context that records charges."""

    match_id = "m"

    def __init__(self) -> None:
        self.charged: list[tuple[int, str]] = []

    def charge(self, seat: int, kind: str, detail: str, request_id: int, fallback: str) -> None:
        self.charged.append((seat, kind))


def test_server_lag_is_given_back_to_a_quiet_bot_but_not_to_one_that_floods() -> None:
    async def run() -> tuple[Reply, Reply, list[tuple[int, str]]]:
        hub = BotHub()
        match = FakeMatch()
        quiet = BotSession(BotIdentity("q", "quiet"))
        flood = BotSession(BotIdentity("f", "flood"))
        hub.attach(quiet)
        hub.attach(flood)
        answered = hub.open_request(flood, match, 1)
        hub.arm(answered, 1.0)
        hub.on_decision(flood, pb.Decision(request_id=answered.request_id, action_id="a"))
        waiting = hub.open_request(quiet, match, 0)
        flooded = hub.open_request(flood, match, 1)
        hub.arm(waiting, 0.05)
        hub.arm(flooded, 0.05)
        for _ in range(20):  # replies to a settled request: each a duplicate, none an answer
            hub.on_decision(flood, pb.Decision(request_id=answered.request_id, action_id="a"))
        loop = asyncio.get_running_loop()
        # The server's own stall: 150 ms of blocked loop while both requests are open.
        loop.call_soon(time.sleep, 0.15)
        late = loop.time() + 0.17  # after the stall, past 50 ms of wall time for both

        def answer() -> None:
            hub.on_decision(quiet, pb.Decision(request_id=waiting.request_id, action_id="b"))
            hub.on_decision(flood, pb.Decision(request_id=flooded.request_id, action_id="c"))

        loop.call_at(late, answer)
        return await waiting.future, await flooded.future, match.charged

    quiet_reply, flood_reply, charged = asyncio.run(run())
    assert quiet_reply == Reply("decision", action_id="b"), "the server's stall was charged"
    assert flood_reply == Reply("timeout"), "a flooding bot was given the lag it caused"
    assert charged == [(1, "duplicate")] * 20


def test_a_wall_clock_bot_still_times_out_when_the_server_is_idle() -> None:
    async def run() -> tuple[Reply, float]:
        hub = BotHub()
        session = BotSession(BotIdentity("s", "slow"))
        hub.attach(session)
        req = hub.open_request(session, FakeMatch(), 0)
        began = asyncio.get_running_loop().time()
        hub.arm(req, 0.05)
        reply = await req.future
        return reply, asyncio.get_running_loop().time() - began

    reply, waited = asyncio.run(run())
    assert reply == Reply("timeout")
    assert 0.05 <= waited < 0.05 + 0.1


def test_storms_are_many_bots_at_once_not_one_slow_bot() -> None:
    watch = StormWatch()
    watch.note("slow", now=0.0)
    assert watch.is_storm({"slow"}, now=0.1) is False
    watch.note("slow", now=1.0)
    watch.note("other", now=2.0)
    assert watch.is_storm({"slow"}, now=2.1) is False, "two bots are not yet a storm"
    # A match that ends early sees the timeouts its neighbours were charged meanwhile.
    watch.note("third", now=3.0)
    assert watch.is_storm({"slow"}, now=3.1) is True
    assert watch.is_storm(set(), now=3.5) is False, "a match without timeouts is never voided"
    watch.note("slow", now=20.0)
    assert watch.is_storm({"slow"}, now=20.1) is False, "old timeouts leave the window"


def test_the_limit_halves_under_lag_and_climbs_back() -> None:
    async def run() -> list[int]:
        limit = AdaptiveLimit(8)
        lags = iter([0.05, 0.05, 0.001, 0.001, 0.001])
        seen: list[int] = []

        def lag() -> float:
            value = next(lags, None)
            if value is None:
                raise asyncio.CancelledError
            return value

        async def watch() -> None:
            await limit.follow(lambda: (seen.append(limit.limit), lag())[1], period_s=0)

        with contextlib.suppress(asyncio.CancelledError):
            await watch()
        seen.append(limit.limit)
        return seen

    assert asyncio.run(run()) == [8, 4, 2, 3, 4, 5, 5]


def test_a_held_place_waits_under_a_lowered_limit() -> None:
    async def run() -> list[str]:
        limit = AdaptiveLimit(2)
        order: list[str] = []
        release = asyncio.Event()

        async def holder() -> None:
            async with limit:
                order.append("holder in")
                await release.wait()
            order.append("holder out")

        async def replayer() -> None:
            async with limit:
                limit.shrink()
                await limit.requeue()  # the limit is 1 and the holder has it: wait
                order.append("replay")

        first = asyncio.create_task(holder())
        await asyncio.sleep(0)
        second = asyncio.create_task(replayer())
        for _ in range(5):
            await asyncio.sleep(0)
        release.set()
        await asyncio.gather(first, second)
        return order

    assert asyncio.run(run()) == ["holder in", "holder out", "replay"]


def test_every_freed_place_is_taken_at_once_by_the_next_in_arrival_order() -> None:
    async def settle() -> None:
        for _ in range(10):  # a few turns of the loop: no real time passes
            await asyncio.sleep(0)

    async def run() -> None:
        limit = AdaptiveLimit(3)
        entered: list[int] = []
        gates = [asyncio.Event() for _ in range(40)]

        async def match(i: int) -> None:
            async with limit:
                entered.append(i)
                await gates[i].wait()

        tasks = [asyncio.create_task(match(i)) for i in range(40)]
        await settle()
        assert entered == [0, 1, 2] and limit.in_flight == 3
        for i in range(20):
            gates[i].set()
            await settle()
            assert entered == list(range(i + 4)) and limit.in_flight == 3
        limit.shrink()  # 1: the holders over it finish, none enters
        for i in (20, 21):
            gates[i].set()
            await settle()
            assert entered == list(range(23)) and limit.in_flight == 3 - (i - 19)
        gates[22].set()  # the last holder over the limit: one enters
        await settle()
        assert entered == list(range(24)) and limit.in_flight == 1
        await limit.grow()  # 2: one more place, taken at once
        await settle()
        assert entered == list(range(25)) and limit.in_flight == 2
        for gate in gates:
            gate.set()
        await asyncio.gather(*tasks)
        assert entered == list(range(40)) and limit.in_flight == 0

    asyncio.run(run())


def test_a_cancelled_waiter_leaves_no_place_taken() -> None:
    async def run() -> tuple[list[str], int]:
        limit = AdaptiveLimit(1)
        entered: list[str] = []
        release = asyncio.Event()

        async def match(name: str) -> None:
            async with limit:
                entered.append(name)
                await release.wait()

        first = asyncio.create_task(match("first"))
        await asyncio.sleep(0)
        waiting = asyncio.create_task(match("cancelled while waiting"))
        handed = asyncio.create_task(match("cancelled when handed a place"))
        last = asyncio.create_task(match("last"))
        await asyncio.sleep(0)
        waiting.cancel()
        release.set()  # first leaves: its place is handed to the next in line...
        await asyncio.sleep(0)
        handed.cancel()  # ...which is cancelled before it runs: the place goes on to last
        await asyncio.gather(first, last)
        await asyncio.gather(waiting, handed, return_exceptions=True)
        return entered, limit.in_flight

    assert asyncio.run(run()) == (["first", "last"], 0)


def test_concurrency_within_the_machine_says_nothing() -> None:
    assert concurrency_warning(fitting_concurrency(), 5) is None
    warning = concurrency_warning(fitting_concurrency() * 8, 3)
    assert warning is not None and f"{cores()} cores" in warning
