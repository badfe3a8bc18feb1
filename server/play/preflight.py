"""Before a tournament's first match: every bot started or connected, and playing this game."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from server.bots.process import ManagedBot
from server.bots.sandbox import SandboxError
from server.bots.start import BotToStart, StartFailure
from server.play.arena import Arena
from tournaments.errors import TournamentError

SANDBOX_RETRIES = 2  # more starts of a bot whose start the sandbox itself failed
RETRY_PAUSE_S = 0.5  # times the attempt number, before a retry
SANDBOX_TOOLS = ("bwrap: ", "setpriv: ")  # how the sandbox's own failures read on stderr
# ... unless they say the bot's own program could not be run: `setpriv: failed to execute
# PROG: No such file or directory`, `bwrap: execvp PROG: ...`.
BOT_NOT_EXECUTED = (": failed to execute ", "bwrap: execvp ")


class BotsDidNotStart(TournamentError):
    """Bots failed the preflight: nothing of this run was played or rated."""

    def __init__(
        self, tournament_id: int, failures: Sequence[StartFailure], played_before: int = 0
    ) -> None:
        self.failures = tuple(failures)
        server = any(f.server_fault for f in failures)
        advice = (
            "this is the server's fault, not the bots'"
            if server
            else "fix the bot(s) and resume"
            if any(f.refused for f in failures)
            else "fix the bot(s) and resume, or play on with their forfeits using --allow-absent"
        )
        what = (
            f"tournament {tournament_id} did not start: nothing was played or rated"
            if not played_before
            else f"tournament {tournament_id} stopped before this run's first match: "
            f"{played_before} match(es) played and rated before it stand, nothing more was played"
        )
        super().__init__(
            what
            + "\n"
            + "\n".join(f.message() for f in failures)
            + f"\n{advice}: cardshark tournament resume {tournament_id}"
        )


@dataclass
class Preflight:
    """The managed bots started, and those that failed to."""

    started: list[ManagedBot]
    failures: list[StartFailure]
    seconds: float


async def start_managed(
    arena: Arena, bots: Sequence[BotToStart], connect_timeout: float, log_dir: Path | None = None
) -> Preflight:
    """Start every bot at once; each must connect and say Hello within connect_timeout.

    A bot that exits first fails at once, with its exit status; one still silent at the
    timeout is stopped. The server's own failures (the sandbox could not be built) are
    marked as such: they are never charged to the bot.
    """
    loop = asyncio.get_running_loop()
    began = loop.time()
    started: list[ManagedBot] = []
    outcomes = await asyncio.gather(
        *(_start_one(arena, bot, connect_timeout, log_dir, started) for bot in bots)
    )
    failures = [f for f in outcomes if f is not None]
    return Preflight(started, failures, loop.time() - began)


async def _start_one(
    arena: Arena,
    bot: BotToStart,
    timeout: float,
    log_dir: Path | None,
    started: list[ManagedBot],
) -> StartFailure | None:
    """Start one bot and wait for its Hello; a start the sandbox itself failed is tried again
    (SANDBOX_RETRIES times), since that is the machine's passing trouble, not the bot's."""
    failure: StartFailure | None = None
    for attempt in range(1 + SANDBOX_RETRIES):
        if attempt:
            await asyncio.sleep(RETRY_PAUSE_S * attempt)
        token = arena.register(bot.name, bot_id=bot.bot_id)
        try:
            process = await arena.spawn(
                bot.name, bot.command, token, log_dir, workdir=bot.workdir, hold=bot.hold
            )
        except (FileNotFoundError, PermissionError) as exc:
            # Unsandboxed, the bot's own program is exec'd here: a missing file is its fault.
            return StartFailure(bot.name, bot.bot_id, f"could not be started: {exc}")
        except (SandboxError, OSError, ValueError) as exc:
            reason = f"could not be started by the server: {exc}"
            return StartFailure(bot.name, bot.bot_id, reason, server_fault=True)
        started.append(process)
        failure = await _hello_or_failure(arena, bot, process, timeout)
        if failure is None or not sandbox_failed(failure.stderr):
            return failure
    assert failure is not None
    tries = 1 + SANDBOX_RETRIES
    return replace(failure, reason=f"{failure.reason} ({tries} tries; the sandbox failed)")


def sandbox_failed(stderr: Sequence[str]) -> bool:
    """Whether a bot's stderr ends with the sandbox's own error: the bot never ran. A tool
    that could not execute the bot's program (missing, not executable) is the bot's error."""
    # A bot could print this itself; it gains only the retries: its failure stays its own.
    if not stderr or not stderr[-1].startswith(SANDBOX_TOOLS):
        return False
    return not any(words in stderr[-1] for words in BOT_NOT_EXECUTED)


async def _hello_or_failure(
    arena: Arena, bot: BotToStart, process: ManagedBot, timeout: float
) -> StartFailure | None:
    assert arena.running is not None
    hub = arena.hub
    if await hub.wait_for(bot.bot_id, timeout) is not None:
        return None
    if process.exited:
        await process.drained()
        reason = f"{process.exit_description()} before saying Hello"
    else:
        reason = f"did not connect in {timeout:g} s"
        await process.stop()
        hub.mark_gone(bot.bot_id, f"did not connect in {timeout:g} s at the start")
    return StartFailure(
        bot.name, bot.bot_id, reason, tuple(process.stderr_tail()), process.log_path
    )


async def await_remote(
    arena: Arena,
    bots: Sequence[tuple[str, str]],
    timeout: float,
    on_waiting: Callable[[list[str]], None] | None = None,
) -> list[StartFailure]:
    """Wait up to `timeout` for every remote bot (name, bot id) to connect; the rest fail.

    on_waiting hears the names of those not connected yet, once, before the wait.
    """
    assert arena.running is not None
    hub = arena.hub
    missing = [(name, bot_id) for name, bot_id in bots if hub.live(bot_id) is None]
    if not missing:
        return []
    if on_waiting is not None:
        on_waiting([name for name, _ in missing])
    sessions = await asyncio.gather(*(hub.wait_for(bot_id, timeout) for _, bot_id in missing))
    return [
        StartFailure(name, bot_id, f"did not connect in {timeout:g} s")
        for (name, bot_id), session in zip(missing, sessions, strict=True)
        if session is None
    ]


def wrong_game(arena: Arena, bots: Sequence[tuple[str, str]], game: str) -> list[StartFailure]:
    """The connected bots (name, bot id) whose Hello named games, none of them this one."""
    assert arena.running is not None
    hub = arena.hub
    failures = []
    for name, bot_id in bots:
        session = hub.live(bot_id)
        games = session.identity.games if session is not None else ()
        if games and game not in games:
            said = ", ".join(games)
            reason = f"said in its Hello that it plays {said}, not {game}: it was not seated"
            failures.append(StartFailure(name, bot_id, reason, refused=True))
    return failures
