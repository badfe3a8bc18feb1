"""The end of play is in the protocol: a Goodbye on every open stream, then status OK.

Real servers (server.play.arena.Arena) and real bot processes over real gRPC: at the end of a
tournament its remote and managed bots are told "tournament finished" and exit 0 by
themselves, printing one line, well before the 30 s an SDK waits for a server that is gone;
a server shutting down tells every connected bot so; a bot that ignores its Goodbye is
stopped after a bounded wait.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from cardshark.v1 import referee_pb2 as pb
from cardshark_bot import BotClient
from server.bots.process import ManagedBot
from server.play.arena import GOODBYE_EXIT_S, Arena
from server.play.tournament import database_authenticator, run_tournament
from tests.server.conftest import RANDOM_BOT
from tournaments.models import MatchStatus
from tournaments.store import Store

FINISHED = "cardshark: tournament finished; nothing more to play"
SHUTTING_DOWN = "cardshark: server shutting down; nothing more to play"
RECONNECT_S = 30.0  # what an SDK waits for a server that is gone: the old end of a bot
PROMPT_S = 10.0  # "well before" that, on a loaded machine
# A bot that reads its Goodbye and the end of its stream, then never exits (an old kit).
DEAF_BOT = """
import asyncio, os, signal, sys
from cardshark_bot import BotClient

client = BotClient(
    lambda r: r.legal_actions[0].id,
    server=os.environ["CARDSHARK_SERVER"],
    token=os.environ["CARDSHARK_TOKEN"],
    on_event=lambda m: print("got", m.WhichOneof("kind"), file=sys.stderr, flush=True),
)
asyncio.run(client.run())
print("ignoring the goodbye", file=sys.stderr, flush=True)
signal.pause()
"""


async def start_remote(address: str, token: str) -> asyncio.subprocess.Process:
    """The Python SDK's example bot as a remote bot: its own process, dialing over TCP."""
    env = dict(os.environ, CARDSHARK_SERVER=address, CARDSHARK_TOKEN=token)
    return await asyncio.create_subprocess_exec(
        *RANDOM_BOT,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )


async def exit_of(proc: asyncio.subprocess.Process, timeout: float) -> tuple[int | None, str]:
    """The process's exit status and stderr once it exits by itself within timeout; on a
    timeout it is killed and the status is None."""
    try:
        _, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        _, err = await proc.communicate()
        return None, err.decode(errors="replace")
    return proc.returncode, err.decode(errors="replace")


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def record_spawns(arena: Arena) -> list[ManagedBot]:
    """Every managed bot the arena starts from now on."""
    spawned: list[ManagedBot] = []
    real = arena.spawn

    async def spawn(*args: Any, **kwargs: Any) -> ManagedBot:
        bot = await real(*args, **kwargs)
        spawned.append(bot)
        return bot

    arena.spawn = spawn  # type: ignore[method-assign]
    return spawned


def test_a_finished_tournament_says_goodbye_and_its_remote_and_managed_bots_exit_0(
    tmp_path: Path,
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'cs.db'}")
    store.add_bot("managed", shlex.join(RANDOM_BOT))
    tokens = {name: store.add_bot(name)[1] for name in ("remote1", "remote2")}
    tournament = store.create_tournament("knaves", ["managed", "remote1", "remote2"], seed=5)
    assert tournament.id is not None

    async def run() -> dict[str, Any]:
        async with Arena(log_dir=tmp_path, authenticate=database_authenticator(store)) as arena:
            spawned = record_spawns(arena)
            remotes = {n: await start_remote(arena.address, t) for n, t in tokens.items()}
            recorded = await asyncio.wait_for(
                run_tournament(store, tournament.id or 0, arena=arena, log_dir=tmp_path), 240
            )
            ended = time.monotonic()
            exits = {n: await exit_of(p, PROMPT_S) for n, p in remotes.items()}
            took = time.monotonic() - ended
            running = arena.running  # the bots left while the server was up
            serving = running is not None
            connected = [i.name for i in running.hub.connected()] if running else []
            return {
                "recorded": recorded,
                "exits": exits,
                "took": took,
                "serving": serving,
                "connected": connected,
                "spawned": spawned,
            }

    got = asyncio.run(run())
    store.close()
    assert got["recorded"] == 6
    for name, (code, err) in got["exits"].items():
        assert code == 0, f"{name}: exit {code}\n{err}"
        assert lines(err) == [FINISHED], f"{name}: {err}"
    assert got["took"] < PROMPT_S < RECONNECT_S
    assert got["serving"] and got["connected"] == []
    (managed,) = got["spawned"]
    assert managed.process is not None
    assert managed.process.returncode == 0, "the managed bot should exit by itself, not by SIGTERM"
    log = (tmp_path / f"tournament-{tournament.id}" / "managed.stderr.log").read_text()
    assert lines(log) == [FINISHED], log


def test_a_server_shutting_down_says_goodbye_to_every_connected_bot(tmp_path: Path) -> None:
    async def run() -> tuple[tuple[int | None, str], ManagedBot, float]:
        arena = Arena(log_dir=tmp_path)
        await arena.start()
        try:
            remote = await start_remote(arena.address, arena.register("remote"))
            managed = await arena.spawn("managed", RANDOM_BOT, arena.register("managed"))
            assert arena.running is not None
            for name in ("remote", "managed"):
                assert await arena.running.hub.wait_for(name, 20), f"{name} never connected"
        finally:
            started = time.monotonic()
            await arena.close()
            took = time.monotonic() - started
        return await exit_of(remote, PROMPT_S), managed, took

    (code, err), managed, took = asyncio.run(run())
    assert code == 0, f"exit {code}\n{err}"
    assert lines(err) == [SHUTTING_DOWN], err
    assert managed.process is not None and managed.process.returncode == 0
    assert lines((tmp_path / "managed.stderr.log").read_text()) == [SHUTTING_DOWN]
    assert took < GOODBYE_EXIT_S, f"close waited {took:.1f} s for bots that had left"


def test_a_managed_bot_that_ignores_its_goodbye_is_stopped_after_a_bounded_wait(
    tmp_path: Path,
) -> None:
    script = tmp_path / "deaf_bot.py"
    script.write_text(DEAF_BOT)

    async def run() -> tuple[int | None, float, str]:
        async with Arena(log_dir=tmp_path) as arena:
            bot = await arena.spawn("deaf", [sys.executable, str(script)], arena.register("deaf"))
            assert arena.running is not None
            assert await arena.running.hub.wait_for("deaf", 20), "deaf never connected"
            started = time.monotonic()
            await arena.stop_bots([bot])
            took = time.monotonic() - started
            assert bot.process is not None
            return bot.process.returncode, took, (tmp_path / "deaf.stderr.log").read_text()

    code, took, log = asyncio.run(run())
    assert code is not None and code < 0, f"it should have been signalled, exit {code}"
    assert GOODBYE_EXIT_S <= took < GOODBYE_EXIT_S + 5, f"stopped after {took:.1f} s"
    assert lines(log) == ["got welcome", "got goodbye", "ignoring the goodbye"], log


def test_farewell_sends_goodbye_ends_the_stream_and_the_client_returns() -> None:
    async def run() -> tuple[list[str], list[str], list[str | None], str, list[str]]:
        events: list[pb.RefereeMessage] = []
        async with Arena() as arena:
            token = arena.register("sdk")
            client = BotClient(
                lambda r: r.legal_actions[0].id,
                server=arena.address,
                token=token,
                on_event=events.append,
            )
            serving = asyncio.create_task(client.run())
            assert arena.running is not None
            hub = arena.running.hub
            assert await hub.wait_for("sdk", 20)
            told = await hub.farewell(["sdk", "nobody"], "tournament finished")
            await asyncio.wait_for(serving, PROMPT_S)  # returns: no reconnecting
            again = await hub.farewell(["sdk"], "twice")
            connected = [i.name for i in hub.connected()]
        kinds = [e.WhichOneof("kind") for e in events]
        return told, again, kinds, client.goodbye.reason if client.goodbye else "", connected

    told, again, kinds, reason, connected = asyncio.run(run())
    assert told == ["sdk"] and again == []
    assert kinds == ["welcome", "goodbye"]
    assert reason == "tournament finished"
    assert connected == []


def test_a_remote_bot_two_running_tournaments_hold_is_told_only_when_both_are_done() -> None:
    async def run() -> tuple[list[str], list[str], bool, str]:
        async with Arena() as arena:
            client = BotClient(lambda r: "", server=arena.address, token=arena.register("r"))
            serving = asyncio.create_task(client.run())
            assert arena.running is not None
            assert await arena.running.hub.wait_for("r", 20)
            arena.hold(["r"])
            arena.hold(["r", "r"])  # one tournament holds a bot once
            first = await arena.release(["r"], "tournament finished")
            still = arena.running.hub.live("r") is not None and not serving.done()
            second = await arena.release(["r"], "tournament finished")
            await asyncio.wait_for(serving, PROMPT_S)
        return first, second, still, client.goodbye.reason if client.goodbye else ""

    first, second, still, reason = asyncio.run(run())
    assert first == [] and still
    assert second == ["r"] and reason == "tournament finished"


def test_a_cancelled_tournament_tells_its_remote_bot_it_stopped(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'cs.db'}")
    for name in ("a", "b"):
        store.add_bot(name, shlex.join(RANDOM_BOT))
    _, token = store.add_bot("remote")
    tournament = store.create_tournament("knaves", ["a", "b", "remote"], seed=3)
    assert tournament.id is not None

    async def run() -> tuple[int | None, str, bool]:
        async with Arena(log_dir=tmp_path, authenticate=database_authenticator(store)) as arena:
            remote = await start_remote(arena.address, token)
            first = asyncio.Event()
            running = asyncio.create_task(
                run_tournament(
                    store,
                    tournament.id or 0,
                    arena=arena,
                    log_dir=tmp_path,
                    on_progress=lambda _: first.set(),
                )
            )
            await asyncio.wait_for(first.wait(), 120)
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
            code, err = await exit_of(remote, PROMPT_S)
            return code, err, arena.running is not None

    code, err, serving = asyncio.run(run())
    finished = MatchStatus.FINISHED.value
    done = len([m for m in store.matches(tournament.id) if m.status == finished])
    store.close()
    assert 1 <= done < 3, "the run should have been cancelled part way"
    assert code == 0, f"exit {code}\n{err}"
    assert lines(err) == ["cardshark: tournament stopped; nothing more to play"], err
    assert serving
