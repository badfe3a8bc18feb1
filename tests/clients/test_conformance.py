"""Every client kit's example bot plays full matches of every registered game on a live server.

The kits: Python (the SDK), Node.js (@grpc/grpc-js), C++ (grpc++) and Perl through the stdio
bridge. Seat i of a game's m-th match gets kit (m * seats + i) % 4, with as many matches as it
takes for every kit to play every game, over each transport the server starts bots with (the
local one: frames on an inherited socket; gRPC). The Node and C++ kits are built here when needed
(npm ci; cmake); a missing toolchain fails the test with the packages to install.
"""

from __future__ import annotations

import asyncio
import math
import os
from pathlib import Path

import pytest

from games.registry import all_games, get_game
from server.match.records import ClockSettings, MatchRecord
from server.play.arena import TRANSPORTS, Arena
from tests.clients.kits import KITS, kit_commands

# generous: the machine is small and a full test run keeps it busy
CLOCK = ClockSettings(move_ms=5000, no_show_s=20)


@pytest.fixture(scope="module")
def commands() -> dict[str, list[str]]:
    """The command of each kit's example bot, built first where that is needed."""
    return kit_commands()


def tables(seats: int) -> list[list[str]]:
    """The kit of every seat in each match, so that every kit plays at least once."""
    matches = math.ceil(len(KITS) / seats)
    return [[KITS[(m * seats + i) % len(KITS)] for i in range(seats)] for m in range(matches)]


def test_tables_seat_every_kit() -> None:
    assert tables(3) == [["python", "node", "cpp"], ["perl-bridge", "python", "node"]]
    assert tables(5) == [["python", "node", "cpp", "perl-bridge", "python"]]


async def play_all(
    tmp_path: Path, game: str, commands: dict[str, list[str]], transport: str
) -> list[tuple[list[str], MatchRecord]]:
    """Every table of the game, played one after the other by the same bot processes."""
    plan = tables(get_game(game).spec.default_seats)
    async with Arena(log_dir=tmp_path, transport=transport) as arena:
        identities: dict[tuple[str, int], str] = {}  # (kit, copy) -> token
        for table in plan:
            for seat, kit in enumerate(table):
                key = (kit, table[:seat].count(kit))
                if key not in identities:
                    name = f"{kit}-{key[1]}"
                    identities[key] = arena.register(name)
                    await arena.spawn(name, commands[kit], identities[key])
        results = []
        for m, table in enumerate(plan):
            bots = [
                arena.identity(identities[(kit, table[:seat].count(kit))])
                for seat, kit in enumerate(table)
            ]
            results.append((table, await arena.play(game, bots, seed=100 + m, clock=CLOCK)))
        return results


def logs(tmp_path: Path) -> str:
    parts = []
    for log in sorted(tmp_path.glob("*.stderr.log")):
        text = log.read_text(errors="replace").strip()
        if text:
            parts.append(f"--- {log.name}\n{text[-2000:]}")
    return "\n".join(parts)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("game", sorted(all_games()))
def test_every_kit_plays_a_full_match(
    tmp_path: Path, game: str, transport: str, commands: dict[str, list[str]]
) -> None:
    results = asyncio.run(play_all(tmp_path, game, commands, transport))
    played = {kit for table, _ in results for kit in table}
    assert played == set(KITS)
    for table, record in results:
        where = f"{game} with seats {table}"
        assert record.status == "finished", f"{where}: {record.reason}\n{logs(tmp_path)}"
        faults = [(table[f.seat], f.kind, f.detail) for f in record.faults]
        assert faults == [], f"{where}: faults charged {faults}\n{logs(tmp_path)}"
        assert not any(record.forfeited), where
        assert len(record.actions) > 0, where


async def run_refused(command: list[str], tmp_path: Path) -> tuple[int, str]:
    """Run a kit's bot with a token the server does not know; its exit code and stderr."""
    async with Arena(log_dir=tmp_path) as arena:
        env = dict(os.environ, CARDSHARK_SERVER=arena.address, CARDSHARK_TOKEN="not-a-token")
        proc = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=env
        )
        try:
            _, err = await asyncio.wait_for(proc.communicate(), 20)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return -1, "still running after 20 s"
        return proc.returncode or 0, err.decode(errors="replace")


@pytest.mark.parametrize("kit", KITS)
def test_every_kit_reports_a_refused_token_and_exits_2(
    tmp_path: Path, kit: str, commands: dict[str, list[str]]
) -> None:
    code, err = asyncio.run(run_refused(commands[kit], tmp_path))
    assert code == 2, f"{kit}: exit {code}\n{err}"
    assert "refused by" in err and "unknown bot token" in err, err
    assert "Traceback" not in err, err
