"""Every kit exits 0 with one line when its tournament ends (the server's Goodbye).

For each kit (Python, Node, C++, Perl through the stdio bridge) a Knaves tournament on a
live server seats the kit's example bot twice: once managed (started by the server from its
command, over each transport: the local one's inherited socket, or gRPC on the referee's
Unix socket) and once remote (started here, dialing the server's TCP port), with a managed
Python bot in the third seat. When the tournament ends the remote bot must exit by itself
with status 0 and the one line, while the server still runs, well before the 30 s a kit
waits for a server that is gone; the managed one must exit 0 before its SIGTERM would come.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

from server.bots.process import ManagedBot
from server.play.arena import TRANSPORTS, Arena
from server.play.tournament import database_authenticator, run_tournament
from tests.clients.kits import KITS, PYTHON, ROOT, kit_commands
from tournaments.store import Store

FINISHED = "cardshark: tournament finished; nothing more to play"
PROMPT_S = 10.0  # well before the 30 s of the old end
FILLER = [PYTHON, str(ROOT / "clients" / "python" / "examples" / "random_bot.py")]


@pytest.fixture(scope="module")
def commands() -> dict[str, list[str]]:
    """The command of each kit's example bot, built first where that is needed."""
    return kit_commands()


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


async def tournament(tmp_path: Path, command: list[str], transport: str) -> dict[str, Any]:
    store = Store(f"sqlite:///{tmp_path / 'cs.db'}")
    store.add_bot("managed", shlex.join(command))
    store.add_bot("filler", shlex.join(FILLER))
    _, token = store.add_bot("remote")
    created = store.create_tournament("knaves", ["managed", "remote", "filler"], seed=9)
    assert created.id is not None
    try:
        async with Arena(
            log_dir=tmp_path, authenticate=database_authenticator(store), transport=transport
        ) as arena:
            spawned: list[ManagedBot] = []
            real_spawn = arena.spawn

            async def spawn(*args: Any, **kwargs: Any) -> ManagedBot:
                bot = await real_spawn(*args, **kwargs)
                spawned.append(bot)
                return bot

            arena.spawn = spawn  # type: ignore[method-assign]
            env = dict(os.environ, CARDSHARK_SERVER=arena.address, CARDSHARK_TOKEN=token)
            remote = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                env=env,
            )
            try:
                recorded = await asyncio.wait_for(
                    run_tournament(store, created.id, arena=arena, log_dir=tmp_path), 300
                )
                ended = time.monotonic()
                _, err = await asyncio.wait_for(remote.communicate(), PROMPT_S)
                took = time.monotonic() - ended
            finally:
                if remote.returncode is None:
                    remote.kill()
                    await remote.wait()
            serving = arena.running is not None
    finally:
        store.close()
    managed = next(b for b in spawned if b.name == "managed")
    log = (tmp_path / f"tournament-{created.id}" / "managed.stderr.log").read_text()
    return {
        "recorded": recorded,
        "remote": (remote.returncode, err.decode(errors="replace")),
        "took": took,
        "serving": serving,
        "managed": (managed.process.returncode if managed.process else None, log),
    }


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("kit", KITS)
def test_every_kit_exits_0_with_one_line_when_its_tournament_ends(
    tmp_path: Path, kit: str, transport: str, commands: dict[str, list[str]]
) -> None:
    got = asyncio.run(tournament(tmp_path, commands[kit], transport))
    assert got["recorded"] == 6  # three seats: every rotation in both seating directions
    code, err = got["remote"]
    assert code == 0, f"{kit} remote: exit {code}\n{err}"
    assert lines(err) == [FINISHED], f"{kit} remote: {err}"
    assert got["took"] < PROMPT_S and got["serving"]
    code, log = got["managed"]
    assert code == 0, f"{kit} managed: exit {code} (a SIGTERM is negative)\n{log}"
    assert lines(log) == [FINISHED], f"{kit} managed: {log}"
